//! The Document store: Markdown made from kept files (`File import`), each
//! with where it came from, searchable in full text.
//!
//! Documents outlive runs (a run's inbox is purged; what was imported from
//! it stays) and belong to a tenant: every read names the tenant it reads
//! in, and a document of another tenant is answered exactly like one that
//! does not exist. The store sits behind the [`Documents`] trait; the local
//! one, [`SqliteDocuments`], keeps them in the records database with an
//! FTS5 index (bm25 ranking, `snippet()` excerpts).
//!
//! Search text from a model or a person never reaches FTS5 as syntax:
//! [`SearchQuery::parse`] takes words, `"quoted phrases"` and `word*`
//! prefixes and writes each as a quoted FTS5 string, so no input can make
//! an SQL or FTS5 syntax error.

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::model::{InboxError, Owner, RunId};
use crate::store::row::{StoredRow, owner_at, run_id};
use crate::store::{as_i64, failed, open_wal};

/// `QUERY_MAX_TERMS` is the most terms one search may hold, so that a
/// pasted page cannot become a query that scans the index for each word.
pub const QUERY_MAX_TERMS: usize = 32;
/// `QUERY_MAX_CHARS` is the longest search text accepted.
pub const QUERY_MAX_CHARS: usize = 1000;
/// `SNIPPET_TOKENS` is how many tokens a search hit's snippet shows.
pub const SNIPPET_TOKENS: u32 = 24;

/// `Document` is one imported document with where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Document {
    /// Its id (a UUIDv7), which `get` and `delete` take.
    pub id: String,
    /// Its title: the one given, else the document's own, else the file's
    /// name.
    pub title: String,
    /// The Markdown.
    pub markdown: String,
    /// Where it was imported from (`volume:inbox:documents/report.pdf`).
    pub source_path: String,
    /// The source file's SHA-256, lower-case hex.
    pub source_sha256: String,
    /// The origin of the source file (`mcp:files/get_attachment`).
    pub origin: String,
    /// The call that produced the source file, as JSON text (empty when
    /// unknown).
    pub call: String,
    /// The run it was imported in.
    pub run: RunId,
    /// Who owns it (the run's owner); its tenant is the document's tenant.
    pub owner: Owner,
    /// Unix milliseconds.
    pub created_at: i64,
}

impl Document {
    /// This document as both stores keep it: PostgreSQL's text cannot hold
    /// a NUL, so each becomes U+FFFD (a character that could not be read)
    /// in every stored text, in SQLite too, and the two answer alike.
    pub(crate) fn storable(&self) -> Self {
        let keep = |text: &str| text.replace('\0', "\u{fffd}");
        Self {
            id: keep(&self.id),
            title: keep(&self.title),
            markdown: keep(&self.markdown),
            source_path: keep(&self.source_path),
            source_sha256: keep(&self.source_sha256),
            origin: keep(&self.origin),
            call: keep(&self.call),
            run: self.run,
            owner: Owner {
                key_name: keep(&self.owner.key_name),
                tenant: keep(&self.owner.tenant),
            },
            created_at: self.created_at,
        }
    }
}

/// `DocumentSummary` is a document without its Markdown, for lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentSummary {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Where it was imported from.
    pub source_path: String,
    /// The origin of the source file.
    pub origin: String,
    /// Bytes of Markdown.
    pub markdown_bytes: u64,
    /// Unix milliseconds.
    pub created_at: i64,
}

/// `Hit` is one search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    /// The document's id.
    pub id: String,
    /// The document's title.
    pub title: String,
    /// An excerpt around the match, matched terms between `**`, cut ends
    /// marked `…`.
    pub snippet: String,
    /// The Markdown heading line the excerpt falls under (`## Budget`), if
    /// any.
    pub heading: Option<String>,
    /// The headings above it, outermost first, ending with `heading`.
    pub trail: Vec<String>,
    /// The score: lower is better (bm25 on SQLite, minus `ts_rank` on
    /// PostgreSQL; compare ranks of one store only).
    pub rank: f64,
}

/// `SearchQuery` is search text made safe for FTS5; only
/// [`SearchQuery::parse`] makes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    expression: String,
    /// Each term, and whether it is a `word*` prefix.
    terms: Vec<(String, bool)>,
}

/// `QueryError` is search text that cannot be searched for; its message
/// says how to write one that can.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// Nothing searchable: empty, or only punctuation.
    #[error("the query has no words to search for; pass one or more words, e.g. budget 2026")]
    Empty,
    /// Longer than [`QUERY_MAX_CHARS`].
    #[error("the query is {0} characters long; keep it under {QUERY_MAX_CHARS}")]
    TooLong(usize),
    /// More than [`QUERY_MAX_TERMS`] terms.
    #[error("the query has {0} terms; use at most {QUERY_MAX_TERMS} of the most telling words")]
    TooManyTerms(usize),
    /// A `"` that opens a phrase and never closes it.
    #[error("a quoted phrase is not closed; end it with another \"")]
    OpenQuote,
}

impl SearchQuery {
    /// Reads search text: words (all must occur), `"quoted phrases"` (the
    /// words in that order) and `word*` (any word starting so). Everything
    /// else is a word: `OR`, `NEAR`, `-` and `:` have no power here.
    pub fn parse(text: &str) -> Result<Self, QueryError> {
        let chars = text.chars().count();
        if chars > QUERY_MAX_CHARS {
            return Err(QueryError::TooLong(chars));
        }
        // Control characters separate words, as both indexes read them; a
        // NUL would end the expression early in FTS5 (an unterminated
        // string) and is refused in a PostgreSQL text.
        let text: String = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let mut terms: Vec<(String, bool)> = Vec::new();
        let mut rest = text.as_str();
        loop {
            rest = rest.trim_start();
            if rest.is_empty() {
                break;
            }
            if let Some(after) = rest.strip_prefix('"') {
                let end = after.find('"').ok_or(QueryError::OpenQuote)?;
                terms.push((after[..end].to_owned(), false));
                rest = &after[end + 1..];
            } else {
                let end = rest
                    .find(|c: char| c.is_whitespace() || c == '"')
                    .unwrap_or(rest.len());
                let word = &rest[..end];
                match word.strip_suffix('*') {
                    Some(stem) => terms.push((stem.to_owned(), true)),
                    None => terms.push((word.to_owned(), false)),
                }
                rest = &rest[end..];
            }
        }
        // A term that holds no letter or digit matches nothing and, quoted,
        // would be an FTS5 error for an empty phrase.
        terms.retain(|(term, _)| term.chars().any(char::is_alphanumeric));
        if terms.is_empty() {
            return Err(QueryError::Empty);
        }
        if terms.len() > QUERY_MAX_TERMS {
            return Err(QueryError::TooManyTerms(terms.len()));
        }
        let expression = terms
            .iter()
            .map(|(term, prefix)| {
                let quoted = format!("\"{}\"", term.replace('"', "\"\""));
                if *prefix { quoted + "*" } else { quoted }
            })
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Self { expression, terms })
    }

    /// The FTS5 expression (every term a quoted string).
    #[must_use]
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// Each term (a word or a phrase, or a prefix's stem) and whether it is
    /// a `word*` prefix.
    pub fn terms_with_prefix(&self) -> impl Iterator<Item = (&str, bool)> {
        self.terms
            .iter()
            .map(|(term, prefix)| (term.as_str(), *prefix))
    }
}

/// `Documents` holds the imported documents.
///
/// Every read and delete names a tenant and sees only that tenant's
/// documents, so that a caller can never reach another tenant's by id.
pub trait Documents: Send + Sync {
    /// Stores a new document (its id is new).
    fn add(&self, document: &Document) -> Result<(), InboxError>;
    /// One document of `tenant`.
    fn get(&self, tenant: &str, id: &str) -> Result<Option<Document>, InboxError>;
    /// The documents of `tenant`, newest first, `limit` of them after
    /// skipping `offset`.
    fn list(
        &self,
        tenant: &str,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<DocumentSummary>, InboxError>;
    /// The documents of `tenant` matching `query`, best first, `limit` of
    /// them after skipping `offset`.
    fn search(
        &self,
        tenant: &str,
        query: &SearchQuery,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<Hit>, InboxError>;
    /// Removes one document of `tenant`; `false` when there was none.
    fn delete(&self, tenant: &str, id: &str) -> Result<bool, InboxError>;
}

/// `SqliteDocuments` is the local [`Documents`] store: a table and its FTS5
/// index in the records database (its own connection, WAL).
pub struct SqliteDocuments {
    db: Mutex<Connection>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS documents (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    key_name TEXT NOT NULL,
    run TEXT NOT NULL,
    title TEXT NOT NULL,
    markdown TEXT NOT NULL,
    source_path TEXT NOT NULL,
    source_sha256 TEXT NOT NULL,
    origin TEXT NOT NULL,
    call TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_by_tenant ON documents (tenant, created_at);
CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts USING fts5(
    title, markdown,
    content = 'documents', content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS documents_indexed AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts (rowid, title, markdown) VALUES (new.seq, new.title, new.markdown);
END;
CREATE TRIGGER IF NOT EXISTS documents_unindexed AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, title, markdown)
    VALUES ('delete', old.seq, old.title, old.markdown);
END;
";

/// A document row's columns in the order both stores read them.
pub(crate) const DOCUMENT_COLUMNS: &str = "id, title, markdown, source_path, source_sha256, origin, call, \
                                run, key_name, tenant, created_at";

/// Marks around matched terms in `snippet()`: control characters that
/// Markdown text does not hold, so the excerpt can be found in the text.
pub(crate) const MARK_OPEN: char = '\u{2}';
pub(crate) const MARK_CLOSE: char = '\u{3}';
const ELLIPSIS: &str = "…";

impl SqliteDocuments {
    /// Opens (creating) the document tables in the database at `path` (the
    /// records database; WAL lets both connections share it).
    pub fn open(path: &Path) -> Result<Self, InboxError> {
        let db = open_wal(path)?;
        db.execute_batch(SCHEMA)
            .map_err(failed("create the document tables"))?;
        Ok(Self { db: Mutex::new(db) })
    }

    fn db(&self) -> MutexGuard<'_, Connection> {
        // Each statement is atomic, so a panic elsewhere while holding the
        // lock leaves the connection usable.
        self.db.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A document from a row of [`DOCUMENT_COLUMNS`], in either database.
pub(crate) fn document_from<R: StoredRow>(row: &R) -> Result<Document, R::Error> {
    Ok(Document {
        id: row.text(0)?,
        title: row.text(1)?,
        markdown: row.text(2)?,
        source_path: row.text(3)?,
        source_sha256: row.text(4)?,
        origin: row.text(5)?,
        call: row.text(6)?,
        run: run_id(row, 7)?,
        owner: owner_at(row, 8)?,
        created_at: row.integer(10)?,
    })
}

/// A document's summary from a row of its id, title, source path, origin,
/// the Markdown's length in bytes and its time, in either database.
pub(crate) fn summary_from<R: StoredRow>(row: &R) -> Result<DocumentSummary, R::Error> {
    Ok(DocumentSummary {
        id: row.text(0)?,
        title: row.text(1)?,
        source_path: row.text(2)?,
        origin: row.text(3)?,
        markdown_bytes: u64::try_from(row.integer(4)?).unwrap_or(0),
        created_at: row.integer(5)?,
    })
}

impl Documents for SqliteDocuments {
    fn add(&self, document: &Document) -> Result<(), InboxError> {
        let document = &document.storable();
        self.db()
            .execute(
                &format!(
                    "INSERT INTO documents ({DOCUMENT_COLUMNS})
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
                ),
                params![
                    document.id,
                    document.title,
                    document.markdown,
                    document.source_path,
                    document.source_sha256,
                    document.origin,
                    document.call,
                    document.run.to_string(),
                    document.owner.key_name,
                    document.owner.tenant,
                    document.created_at,
                ],
            )
            .map_err(failed("store a document"))?;
        Ok(())
    }

    fn get(&self, tenant: &str, id: &str) -> Result<Option<Document>, InboxError> {
        self.db()
            .query_row(
                &format!("SELECT {DOCUMENT_COLUMNS} FROM documents WHERE id = ?1 AND tenant = ?2"),
                params![id, tenant],
                |row| document_from(row),
            )
            .optional()
            .map_err(failed("read a document"))
    }

    fn list(
        &self,
        tenant: &str,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<DocumentSummary>, InboxError> {
        let db = self.db();
        let mut statement = db
            .prepare(
                "SELECT id, title, source_path, origin, length(CAST(markdown AS BLOB)), created_at
                 FROM documents WHERE tenant = ?1 ORDER BY created_at DESC, seq DESC
                 LIMIT ?2 OFFSET ?3",
            )
            .map_err(failed("list documents"))?;
        statement
            .query_map(params![tenant, as_i64(limit), as_i64(offset)], |row| {
                summary_from(row)
            })
            .and_then(Iterator::collect)
            .map_err(failed("list documents"))
    }

    fn search(
        &self,
        tenant: &str,
        query: &SearchQuery,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<Hit>, InboxError> {
        let db = self.db();
        // Title matches weigh more than body matches.
        let mut statement = db
            .prepare(&format!(
                "SELECT d.id, d.title, d.markdown,
                        snippet(documents_fts, 1, '{MARK_OPEN}', '{MARK_CLOSE}', '{ELLIPSIS}', {SNIPPET_TOKENS}),
                        bm25(documents_fts, 4.0, 1.0) AS rank
                 FROM documents_fts JOIN documents d ON d.seq = documents_fts.rowid
                 WHERE documents_fts MATCH ?1 AND d.tenant = ?2
                 ORDER BY rank, d.seq DESC LIMIT ?3 OFFSET ?4"
            ))
            .map_err(failed("search documents"))?;
        let rows = statement
            .query_map(
                params![query.expression(), tenant, as_i64(limit), as_i64(offset)],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, String>(3)?,
                        row.get::<_, f64>(4)?,
                    ))
                },
            )
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
            .map_err(failed("search documents"))?;
        Ok(rows
            .into_iter()
            .map(|(id, title, markdown, marked, rank)| {
                hit_from_marked(id, title, &markdown, &marked, query, rank)
            })
            .collect())
    }

    fn delete(&self, tenant: &str, id: &str) -> Result<bool, InboxError> {
        let removed = self
            .db()
            .execute(
                "DELETE FROM documents WHERE id = ?1 AND tenant = ?2",
                params![id, tenant],
            )
            .map_err(failed("delete a document"))?;
        Ok(removed > 0)
    }
}

/// A hit from an excerpt of `markdown` whose matches are between
/// [`MARK_OPEN`] and [`MARK_CLOSE`] and whose cut ends are marked `…`.
fn hit_from_marked(
    id: String,
    title: String,
    markdown: &str,
    marked: &str,
    query: &SearchQuery,
    rank: f64,
) -> Hit {
    let at = match_offset(markdown, marked, &query.terms);
    let trail = at
        .map(|at| headings_above(markdown, at))
        .unwrap_or_default();
    Hit {
        id,
        title,
        snippet: shown_snippet(marked),
        heading: trail.last().cloned(),
        trail,
        rank,
    }
}

/// A hit from an excerpt with marked matches but unmarked cut ends (what
/// PostgreSQL's `ts_headline` writes): `…` is added where the excerpt does
/// not reach the start or the end of `markdown`, then as
/// [`hit_from_marked`].
pub(crate) fn hit_from_excerpt(
    id: String,
    title: String,
    markdown: &str,
    excerpt: &str,
    query: &SearchQuery,
    rank: f64,
) -> Hit {
    let plain: String = excerpt
        .chars()
        .filter(|c| *c != MARK_OPEN && *c != MARK_CLOSE)
        .collect();
    let (cut_start, cut_end) = match markdown.find(&plain) {
        Some(start) => (start > 0, start + plain.len() < markdown.len()),
        None => (true, true),
    };
    let mut marked = String::with_capacity(excerpt.len() + 2 * ELLIPSIS.len());
    if cut_start {
        marked.push_str(ELLIPSIS);
    }
    marked.push_str(excerpt);
    if cut_end {
        marked.push_str(ELLIPSIS);
    }
    hit_from_marked(id, title, markdown, &marked, query, rank)
}

/// The excerpt as shown: matched terms between `**`, one line.
fn shown_snippet(marked: &str) -> String {
    let shown: String = marked
        .chars()
        .map(|c| match c {
            MARK_OPEN | MARK_CLOSE => '\u{0}',
            '\n' | '\r' | '\t' => ' ',
            c => c,
        })
        .collect();
    shown.replace('\u{0}', "**")
}

/// Where in `markdown` the first match of a hit is: found through the
/// snippet (a verbatim cut of the text between its ellipses), else through
/// the first query term found in the text ignoring case. `None` when the
/// match is in the title only.
fn match_offset(markdown: &str, marked: &str, terms: &[(String, bool)]) -> Option<usize> {
    let inner = marked.strip_prefix(ELLIPSIS).unwrap_or(marked);
    let inner = inner.strip_suffix(ELLIPSIS).unwrap_or(inner);
    if let Some(open) = inner.find(MARK_OPEN) {
        let plain: String = inner
            .chars()
            .filter(|c| *c != MARK_OPEN && *c != MARK_CLOSE)
            .collect();
        // No mark comes before the first opening one, so `open` counts
        // only text.
        if !plain.is_empty()
            && let Some(start) = markdown.find(&plain)
        {
            return Some(start + open);
        }
    }
    // ASCII lower-casing keeps every byte offset where it was.
    let lower = markdown.to_ascii_lowercase();
    terms
        .iter()
        .filter_map(|(term, _)| lower.find(&term.to_ascii_lowercase()))
        .min()
}

/// The Markdown headings above byte `at` of `markdown`, outermost first:
/// each `#`…`######` line before it that is not inside a fenced code
/// block, keeping only the latest one of each level and dropping deeper
/// ones when a shallower one starts a new section.
#[must_use]
pub fn headings_above(markdown: &str, at: usize) -> Vec<String> {
    let mut trail: Vec<(usize, String)> = Vec::new();
    let mut fenced = false;
    let mut start = 0;
    for line in markdown.split_inclusive('\n') {
        if start > at {
            break;
        }
        start += line.len();
        let text = line.trim_end();
        let trimmed = text.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(level) = heading_level(text) {
            trail.retain(|(l, _)| *l < level);
            trail.push((level, text.to_owned()));
        }
    }
    trail.into_iter().map(|(_, text)| text).collect()
}

/// The level of an ATX heading line (`## Budget` → 2), if it is one.
fn heading_level(line: &str) -> Option<usize> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.len() - rest.trim_start_matches('#').len();
    let after = &rest[level..];
    ((1..=6).contains(&level) && (after.is_empty() || after.starts_with([' ', '\t'])))
        .then_some(level)
}

// The stores' answers are tested on both backends in
// tests/inbox/documents.rs; these test what needs no store.
#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Search text from pieces FTS5 would read as syntax, and any character.
    fn search_texts() -> impl Strategy<Value = String> {
        porter_test::text_from(
            &[
                " ", "\"", "*", "OR", "AND", "NOT", "NEAR(", ")", "(", "^", ":", "-", "+", "{",
                "}", "'", ",", "\0", "a", "rev", "é", "日本", "\u{0301}", "\u{200b}",
            ],
            any::<char>(),
            0..24,
        )
    }

    #[test]
    fn no_search_text_that_parses_makes_an_fts5_error() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteDocuments::open(&dir.path().join("records.db")).unwrap();
        store
            .add(&Document {
                id: "d1".to_owned(),
                title: "Revenue (draft)".to_owned(),
                markdown: "NEAR the \"end\": 日本 rev*".to_owned(),
                source_path: "a.md".to_owned(),
                source_sha256: String::new(),
                origin: "test".to_owned(),
                call: "test".to_owned(),
                run: RunId::new(),
                owner: Owner {
                    key_name: "k".to_owned(),
                    tenant: "t".to_owned(),
                },
                created_at: 0,
            })
            .unwrap();
        proptest!(ProptestConfig::with_cases(500), |(text in search_texts())| {
            if let Ok(query) = SearchQuery::parse(&text) {
                let found = store.search("t", &query, 10, 0);
                prop_assert!(found.is_ok(), "{text:?}: {found:?}");
            }
        });
    }

    #[test]
    fn search_text_becomes_quoted_fts5_strings_whatever_it_holds() {
        let cases: &[(&str, &str)] = &[
            ("budget", r#""budget""#),
            ("budget 2026", r#""budget" "2026""#),
            (r#""net revenue" q3"#, r#""net revenue" "q3""#),
            ("rev*", r#""rev"*"#),
            ("a OR b", r#""a" "OR" "b""#),
            ("title:x -y", r#""title:x" "-y""#),
            ("NEAR(a b)", r#""NEAR(a" "b)""#),
            ("  ; -- ", ""),
        ];
        for (text, expected) in cases {
            match SearchQuery::parse(text) {
                Ok(query) => assert_eq!(query.expression(), *expected, "{text}"),
                Err(error) => {
                    assert!(expected.is_empty(), "{text}: {error}");
                    assert_eq!(error, QueryError::Empty);
                }
            }
        }
        assert_eq!(SearchQuery::parse(r#"say "hi"#), Err(QueryError::OpenQuote));
        assert_eq!(
            SearchQuery::parse(&"w ".repeat(40)),
            Err(QueryError::TooManyTerms(40))
        );
    }

    #[test]
    fn headings_in_code_fences_and_deeper_siblings_do_not_count() {
        let text = "# A\n## B\n### C\n## D\n```\n# not\n```\nhere\n";
        let at = text.find("here").expect("in the text");
        assert_eq!(headings_above(text, at), ["# A", "## D"]);
        assert_eq!(
            headings_above("#hashtag\n####### seven\nx", 20),
            Vec::<String>::new()
        );
    }
}
