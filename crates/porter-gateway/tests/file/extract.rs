//! `File extract` and `File import` against a real inbox: the Markdown file
//! is kept and recorded next to its source, and an import becomes a
//! document of the run's tenant that records where it came from.

use porter_gateway::access::Caller;
use porter_gateway::config::{Grant, Role};
use porter_gateway::documents::{DocumentsTool, Reader};
use serde_json::json;

use super::{everything, model, text_of, world};

#[tokio::test]
async fn extract_keeps_the_markdown_next_to_the_file_with_its_own_record() {
    let w = world();
    w.capture("notes.txt", b"first line\nsecond line\n");
    let (text, structured) = w
        .ok(&everything(), json!({"op": "extract", "path": "notes.txt"}))
        .await;
    assert!(
        text.starts_with("[file: volume:inbox:notes.md · text/markdown · "),
        "{text}"
    );
    assert!(text.contains("· from file:extract]"), "{text}");
    assert!(text.contains("     2\tsecond line"), "{text}");
    assert_eq!(structured["path"], "volume:inbox:notes.md");
    let record = w
        .inbox
        .file(w.run.id, "notes.md")
        .expect("the records answer")
        .expect("the Markdown is recorded");
    assert_eq!(record.origin, "file:extract");
    assert!(
        record.call.contains("volume:inbox:notes.txt"),
        "{}",
        record.call
    );
    let on_disk = std::fs::read_to_string(w.inbox_dir().join("notes.md")).expect("on disk");
    assert_eq!(on_disk, "first line\nsecond line\n");
    // A second extract never overwrites the first.
    let (text, _) = w
        .ok(&everything(), json!({"op": "extract", "path": "notes.txt"}))
        .await;
    assert!(text.starts_with("[file: volume:inbox:notes-2.md"), "{text}");
}

#[tokio::test]
async fn extract_and_import_need_a_file_the_caller_may_read() {
    let w = world();
    let cases = [
        (
            everything(),
            json!({"op": "extract"}),
            "extract needs a path",
        ),
        (
            everything(),
            json!({"op": "import", "path": "missing.pdf"}),
            "does not exist",
        ),
        (
            everything(),
            json!({"op": "extract", "path": "volume:inbox:"}),
            "is a folder",
        ),
        (
            model(&[Grant::File]),
            json!({"op": "import", "path": "volume:docs:guide.md"}),
            "no volume \"docs\" you may use",
        ),
        (
            model(&[Grant::Read]),
            json!({"op": "extract", "path": "volume:docs:guide.md"}),
            "needs the File grant",
        ),
        (
            everything(),
            json!({"op": "extract", "path": "../outside.txt"}),
            "",
        ),
    ];
    for (caller, arguments, says) in cases {
        let text = w.refused(&caller, arguments.clone()).await;
        assert!(text.contains(says), "{arguments}: {text}");
        assert!(!text.contains("not yours"), "{text}");
    }
}

#[tokio::test]
async fn an_import_is_a_document_of_the_runs_tenant_that_says_where_it_came_from() {
    let w = world();
    let source = w.capture(
        "minutes.txt",
        b"# Minutes\n\nWe agreed on the axolotl budget.\n",
    );
    let (text, structured) = w
        .ok(
            &everything(),
            json!({"op": "import", "path": "minutes.txt", "title": "  Board   minutes "}),
        )
        .await;
    let id = structured["id"].as_str().expect("an id").to_owned();
    assert!(text.contains(&id), "{text}");
    assert_eq!(structured["title"], "Board minutes");
    let store = w.inbox.documents().expect("a document store");
    let document = store.get("acme", &id).expect("reads").expect("stored");
    assert_eq!(document.source_path, "volume:inbox:minutes.txt");
    assert_eq!(document.source_sha256, source.sha256);
    assert_eq!(document.origin, "mcp:files/get_file");
    assert_eq!(document.call, r#"{"tool":"get_file"}"#);
    assert_eq!(document.run, w.run.id);
    assert_eq!(document.owner.key_name, "alice");
    assert!(document.markdown.contains("axolotl"));
    assert_eq!(store.get("globex", &id).expect("reads"), None);

    // The Documents tool finds it for the run's model, under its heading.
    let tool = DocumentsTool::new(w.inbox.clone());
    let reader = Reader::of(&everything(), &w.run);
    let found = tool
        .call(&reader, json!({"op": "search", "query": "axolotl"}))
        .await;
    let shown = text_of(&found);
    assert!(
        shown.contains(&id) && shown.contains(r##"under "# Minutes""##),
        "{shown}"
    );

    // A volume file's import records the volume as its origin.
    let (_, structured) = w
        .ok(
            &everything(),
            json!({"op": "import", "path": "volume:docs:guide.md"}),
        )
        .await;
    assert_eq!(structured["origin"], "volume:docs");
    // Its title is the Markdown's own first heading.
    assert_eq!(structured["title"], "Guide");
}

#[tokio::test]
async fn a_key_of_another_tenant_sees_none_of_the_runs_documents() {
    let w = world();
    w.capture("plan.txt", b"the pangolin plan\n");
    w.ok(&everything(), json!({"op": "import", "path": "plan.txt"}))
        .await;
    let tool = DocumentsTool::new(w.inbox.clone());
    let key = |name: &str, tenant: &str| Caller::Key {
        name: name.to_owned(),
        tenant: tenant.to_owned(),
        role: Role::User,
        grants: vec![Grant::File],
        volumes: Vec::new(),
    };
    let search = json!({"op": "search", "query": "pangolin"});
    let theirs = tool
        .call(&Reader::of(&key("bob", "globex"), &w.run), search.clone())
        .await;
    assert!(
        text_of(&theirs).starts_with("no document matches"),
        "{}",
        text_of(&theirs)
    );
    let ours = tool
        .call(&Reader::of(&key("carol", "acme"), &w.run), search)
        .await;
    assert!(
        text_of(&ours).starts_with("1 document matches"),
        "{}",
        text_of(&ours)
    );
}
