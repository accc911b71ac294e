//! The Document stores' answers, the same on every backend: SQLite's FTS5
//! and PostgreSQL's full-text search (a real server the harness starts;
//! skipped only with `PORTER_SKIP_POSTGRES=1`).

use std::fmt::Write as _;
use std::sync::Arc;

use porter_inbox::documents::{DocumentSummary, Hit, SearchQuery};
use porter_inbox::{Document, Documents, Owner, RunId};

use super::records::places;

fn document(id: &str, tenant: &str, title: &str, markdown: &str) -> Document {
    Document {
        id: id.to_owned(),
        title: title.to_owned(),
        markdown: markdown.to_owned(),
        source_path: format!("volume:inbox:{id}.docx"),
        source_sha256: "ab".repeat(32),
        origin: "mcp:files/get".to_owned(),
        call: "{}".to_owned(),
        run: RunId::new(),
        owner: Owner {
            key_name: "alice".to_owned(),
            tenant: tenant.to_owned(),
        },
        created_at: 5,
    }
}

fn search(store: &Arc<dyn Documents>, tenant: &str, text: &str) -> Vec<Hit> {
    let query = SearchQuery::parse(text).expect("a query");
    store.search(tenant, &query, 10, 0).expect("searches")
}

fn ids(hits: &[Hit]) -> Vec<&str> {
    hits.iter().map(|hit| hit.id.as_str()).collect()
}

#[test]
fn hostile_search_text_finds_nothing_rather_than_failing() {
    for (backend, place) in places() {
        let store = place.documents();
        store
            .add(&document(
                "d1",
                "acme",
                "Plain",
                "# Plain\n\nnothing to see\n",
            ))
            .expect("adds");
        for text in [
            "\"\"\"\" x",
            "'; DROP TABLE documents; --",
            "a AND OR NOT",
            "*",
            "x*y*",
            "o'brien*",
            "back\\slash*",
            "a:* | !b & (c",
            "'*",
            "NEAR(nothing see, 1)",
            "^nothing",
        ] {
            if let Ok(query) = SearchQuery::parse(text) {
                store
                    .search("acme", &query, 10, 0)
                    .unwrap_or_else(|e| panic!("{backend}: {text:?}: {e}"));
            }
        }
        assert_eq!(ids(&search(&store, "acme", "nothing")), ["d1"], "{backend}");
    }
}

#[test]
fn a_hit_names_the_heading_it_falls_under_and_marks_the_match() {
    let markdown = "# Report\n\nIntro text.\n\n## Budget\n\n| item | cost |\n|---|---|\n| \
                    zeppelin | 12 |\n\n## Slide 2: Plans\n\nBody.\n\n### Notes\n\nmention \
                    quokka here\n";
    for (backend, place) in places() {
        let store = place.documents();
        store
            .add(&document("d1", "acme", "Report", markdown))
            .expect("adds");
        let [hit] = &search(&store, "acme", "zeppelin")[..] else {
            panic!("{backend}: one hit")
        };
        assert_eq!(hit.heading.as_deref(), Some("## Budget"), "{backend}");
        assert_eq!(hit.trail, ["# Report", "## Budget"], "{backend}");
        assert!(
            hit.snippet.contains("**zeppelin**"),
            "{backend}: {}",
            hit.snippet
        );
        let [hit] = &search(&store, "acme", "QUOKKA")[..] else {
            panic!("{backend}: one hit")
        };
        assert_eq!(
            hit.trail,
            ["# Report", "## Slide 2: Plans", "### Notes"],
            "{backend}"
        );
        assert_eq!(
            search(&store, "acme", "zeppelin quokka").len(),
            1,
            "{backend}"
        );
        assert!(
            search(&store, "acme", "zeppelin absent").is_empty(),
            "{backend}"
        );
        assert_eq!(search(&store, "acme", "zepp*").len(), 1, "{backend}");
        assert!(search(&store, "acme", "zeppo*").is_empty(), "{backend}");
    }
}

#[test]
fn a_phrase_matches_its_words_in_order_only() {
    for (backend, place) in places() {
        let store = place.documents();
        store
            .add(&document("in-order", "acme", "A", "the net revenue rose\n"))
            .expect("adds");
        store
            .add(&document(
                "reversed",
                "acme",
                "B",
                "revenue was net of tax\n",
            ))
            .expect("adds");
        assert_eq!(
            ids(&search(&store, "acme", "\"net revenue\"")),
            ["in-order"],
            "{backend}"
        );
        let mut both = ids(&search(&store, "acme", "net revenue"))
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>();
        both.sort();
        assert_eq!(both, ["in-order", "reversed"], "{backend}");
    }
}

#[test]
fn a_long_documents_excerpt_is_cut_with_ellipses_around_the_match() {
    let mut markdown = String::from("# Minutes\n\n");
    for n in 0..400 {
        let _ = write!(markdown, "filler{n} ");
    }
    markdown.push_str("the capybara budget was approved ");
    for n in 0..400 {
        let _ = write!(markdown, "later{n} ");
    }
    for (backend, place) in places() {
        let store = place.documents();
        store
            .add(&document("long", "acme", "Minutes", &markdown))
            .expect("adds");
        let [hit] = &search(&store, "acme", "capybara")[..] else {
            panic!("{backend}: one hit")
        };
        assert!(hit.snippet.starts_with('…'), "{backend}: {}", hit.snippet);
        assert!(hit.snippet.ends_with('…'), "{backend}: {}", hit.snippet);
        assert!(
            hit.snippet.contains("**capybara**"),
            "{backend}: {}",
            hit.snippet
        );
        assert!(
            hit.snippet.chars().count() < 400,
            "{backend}: {}",
            hit.snippet
        );
        assert_eq!(hit.trail, ["# Minutes"], "{backend}");
    }
}

/// A document of two million characters of distinct words (past what one
/// PostgreSQL `tsvector` can hold whole) is stored, read back whole and
/// found by a word near its start.
#[test]
fn a_very_long_document_is_stored_whole_and_found() {
    let mut markdown = String::from("# Dump\n\nokapi ");
    let mut n: u64 = 0;
    while markdown.len() < 2_000_000 {
        n += 1;
        let _ = write!(markdown, "w{:x} ", n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
    for (backend, place) in places() {
        let store = place.documents();
        store
            .add(&document("big", "acme", "Dump", &markdown))
            .unwrap_or_else(|e| panic!("{backend}: {e}"));
        let back = store.get("acme", "big").expect("reads").expect("exists");
        assert_eq!(back.markdown.len(), markdown.len(), "{backend}");
        assert_eq!(ids(&search(&store, "acme", "okapi")), ["big"], "{backend}");
    }
}

#[test]
fn another_tenants_documents_are_neither_found_read_listed_nor_deleted() {
    for (backend, place) in places() {
        let store = place.documents();
        store
            .add(&document("d1", "acme", "Ours", "secret plans\n"))
            .expect("adds");
        assert_eq!(search(&store, "globex", "secret"), [], "{backend}");
        assert_eq!(store.get("globex", "d1").expect("reads"), None, "{backend}");
        assert_eq!(store.list("globex", 10, 0).expect("lists"), [], "{backend}");
        assert!(!store.delete("globex", "d1").expect("deletes"), "{backend}");
        assert!(
            store.get("acme", "d1").expect("reads").is_some(),
            "{backend}"
        );
        assert!(store.delete("acme", "d1").expect("deletes"), "{backend}");
        assert_eq!(search(&store, "acme", "secret"), [], "{backend}");
        assert_eq!(store.get("acme", "d1").expect("reads"), None, "{backend}");
    }
}

#[test]
fn lists_page_newest_first_and_results_rank_the_title_higher() {
    for (backend, place) in places() {
        let store = place.documents();
        for n in 1..=5 {
            let mut doc = document(&format!("d{n}"), "acme", &format!("Doc {n}"), "text\n");
            doc.created_at = n;
            store.add(&doc).expect("adds");
        }
        let listed =
            |page: Vec<DocumentSummary>| page.into_iter().map(|d| d.id).collect::<Vec<_>>();
        assert_eq!(
            listed(store.list("acme", 2, 0).expect("lists")),
            ["d5", "d4"],
            "{backend}"
        );
        assert_eq!(
            listed(store.list("acme", 2, 4).expect("lists")),
            ["d1"],
            "{backend}"
        );
        assert_eq!(
            store.list("acme", 1, 0).expect("lists")[0].markdown_bytes,
            5,
            "{backend}"
        );
        store
            .add(&document("body", "acme", "Other", "walrus walrus\n"))
            .expect("adds");
        store
            .add(&document("title", "acme", "Walrus", "one walrus\n"))
            .expect("adds");
        assert_eq!(
            ids(&search(&store, "acme", "walrus")),
            ["title", "body"],
            "{backend}"
        );
    }
}

#[test]
fn a_nul_is_kept_as_u_fffd_and_control_characters_in_a_search_break_words() {
    for (backend, place) in places() {
        let store = place.documents();
        store
            .add(&document(
                "d1",
                "acme",
                "Null\0title",
                "# Plain\n\nnothing \0 to see\u{1}here\n",
            ))
            .unwrap_or_else(|e| panic!("{backend}: {e}"));
        let kept = store.get("acme", "d1").expect("reads").expect("is there");
        assert_eq!(kept.title, "Null\u{fffd}title", "{backend}");
        assert_eq!(
            kept.markdown, "# Plain\n\nnothing \u{fffd} to see\u{1}here\n",
            "{backend}"
        );
        for text in ["see\0here", "\0nothing", "\"to\u{7}see\"", "\0her*"] {
            assert_eq!(
                ids(&search(&store, "acme", text)),
                ["d1"],
                "{backend}: {text:?}"
            );
        }
    }
}
