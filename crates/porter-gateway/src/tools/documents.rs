//! The `Documents` tool: search, read, list and delete the documents that
//! `File import` made.
//!
//! Every op works within one tenant: the tenant of the run's owner for the
//! run's model, the key's own tenant for a caller from outside. A document
//! of another tenant is answered exactly like one that does not exist, and
//! `delete` by anyone but the document's owner is answered the same way, so
//! neither an id nor a refusal tells anything about documents that are not
//! the caller's.

use std::sync::Arc;

use porter_fileview::{Cancel, FileInput, Options, WindowRequest};
use porter_inbox::documents::{QueryError, SearchQuery};
use porter_inbox::{Documents as Store, Inbox, Owner, RunInfo};
use porter_mcp::tool::{Hints, NoOut, ToolError, parse_args_naming};
use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::access::Caller;
use crate::context::Turn;

/// `DOCUMENTS_TOOL` is the name the tool is listed under.
pub const DOCUMENTS_TOOL: &str = "Documents";
/// `SEARCH_LIMIT` is how many hits one search answers by default.
pub const SEARCH_LIMIT: usize = 10;
/// `SEARCH_MAX` is the most hits one search answers.
pub const SEARCH_MAX: usize = 50;
/// `LIST_LIMIT` is how many documents one list answers by default.
pub const LIST_LIMIT: usize = 50;
/// `LIST_MAX` is the most documents one list answers.
pub const LIST_MAX: usize = 200;
/// `CURSOR_MAX` is the furthest a cursor may page, so that a made-up
/// cursor cannot ask the index to skip without end.
pub const CURSOR_MAX: usize = 100_000;

/// `Reader` is who a Documents call reads as: the tenant whose documents
/// it sees, and the key name that owns what it may delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reader {
    /// The tenant whose documents are seen.
    pub tenant: String,
    /// The key whose documents may be deleted.
    pub key_name: String,
}

impl Reader {
    /// The reader of `caller` on `run`: the run's owner for the run's model,
    /// the key itself from outside.
    #[must_use]
    pub fn of(caller: &Caller, run: &RunInfo) -> Self {
        match caller {
            Caller::Model { .. } => Self::owner(&run.owner),
            Caller::Key { name, tenant, .. } => Self {
                tenant: tenant.clone(),
                key_name: name.clone(),
            },
        }
    }

    /// The reader that `owner` is.
    #[must_use]
    pub fn owner(owner: &Owner) -> Self {
        Self {
            tenant: owner.tenant.clone(),
            key_name: owner.key_name.clone(),
        }
    }
}

/// `Op` is one Documents operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Op {
    /// Full-text search, best first.
    Search,
    /// One document's Markdown, a window of lines.
    Get,
    /// The documents, newest first.
    List,
    /// Remove a document (its owner only).
    Delete,
}

/// `DocumentsArgs` is the tool's arguments: one flat object whose `op` says
/// what to do, like the `File` tool's.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DocumentsArgs {
    /// What to do: `search`, `get`, `list` or `delete`.
    op: Op,
    /// search only: words (all must occur), "quoted phrases", word* for any
    /// word starting so.
    #[serde(default)]
    query: Option<String>,
    /// get and delete: the document's id.
    #[serde(default)]
    id: Option<String>,
    /// search and list: how many to answer (search: default 10, at most 50;
    /// list: default 50, at most 200).
    #[serde(default)]
    #[schemars(range(min = 1))]
    limit: Option<usize>,
    /// search and list: where to go on, from the previous answer's
    /// next_cursor.
    #[serde(default)]
    cursor: Option<String>,
    /// get only: the first line of the window, from 1 (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    start_line: Option<u64>,
    /// get only: how many lines to show (default 500, at most 2000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    line_count: Option<u64>,
}

const DESCRIPTION: &str = "\
Searches and reads the documents imported with File import (Word, Excel, PowerPoint, HTML, PDF and text \
files turned into Markdown), each with where it came from.\n\
Ops:\n\
- search {query, limit?, cursor?}: full-text search, best first; each hit has the document's id and title, \
a snippet with the matched words in **bold**, and the Markdown heading it falls under. Words must all \
occur; \"quoted phrases\" match in order; word* matches any word starting so.\n\
- get {id, start_line?, line_count?}: the document's Markdown in numbered line windows (continue at the \
next start_line it names).\n\
- list {limit?, cursor?}: the documents, newest first.\n\
- delete {id}: remove a document you imported.";

/// `DocumentsTool` serves the `Documents` tool over the inbox's Document
/// store.
pub struct DocumentsTool {
    inbox: Arc<Inbox>,
    view: Options,
}

/// A failure the caller reads: one sentence naming the next step.
type Answer = Result<CallToolResult, ToolError>;

impl DocumentsTool {
    /// The tool over `inbox`'s Document store.
    #[must_use]
    pub fn new(inbox: Arc<Inbox>) -> Self {
        Self {
            inbox,
            view: Options::default(),
        }
    }

    /// Runs one operation for `reader`. Every failure the caller should
    /// read is a `CallToolResult` with `is_error`.
    pub async fn call(&self, reader: &Reader, arguments: Value) -> CallToolResult {
        // Without a store there is nothing to call, whatever the arguments.
        if let Err(text) = store(&self.inbox) {
            return CallToolResult::error(vec![ContentBlock::text(text.to_string())]);
        }
        match parse(arguments) {
            Ok(args) => self.run(reader, args).await,
            Err(text) => CallToolResult::error(vec![ContentBlock::text(text.to_string())]),
        }
    }

    /// Runs one operation like [`DocumentsTool::call`], its arguments read.
    async fn run(&self, reader: &Reader, args: DocumentsArgs) -> CallToolResult {
        let inbox = Arc::clone(&self.inbox);
        let view = self.view.clone();
        let reader = reader.clone();
        // SQLite and the window are blocking work.
        let joined =
            tokio::task::spawn_blocking(move || run(store(&inbox)?, &view, &reader, &args)).await;
        let answer = joined.unwrap_or_else(|error| {
            tracing::error!(%error, "a Documents operation stopped unexpectedly");
            Err(ToolError::tool(
                "the Documents operation stopped unexpectedly; try it again",
            ))
        });
        answer.unwrap_or_else(|text| {
            CallToolResult::error(vec![ContentBlock::text(text.to_string())])
        })
    }
}

porter_mcp::tool! {
    /// `Documents` is the `Documents` tool; it needs a gateway that keeps a
    /// document store.
    pub(crate) Documents { pub(crate) documents: Arc<DocumentsTool> } for Turn {
        // `delete` removes a document for good.
        name: DOCUMENTS_TOOL, title: "Imported documents", hints: Hints::write(true, false),
        args: DocumentsArgs, out: NoOut,
        description: DESCRIPTION,
        parse: |arguments| parse(Value::Object(arguments.unwrap_or_default())),
        check: |_turn, _call| store(&documents.inbox).map(|_| ()),
        call: |turn, args, _call| {
            let reader = Reader::of(&turn.caller, &turn.run);
            Ok(documents.run(&reader, args).await.into())
        },
    }
}

/// The inbox's document store, or why there is none to call.
fn store(inbox: &Inbox) -> Result<&dyn Store, ToolError> {
    inbox.documents().ok_or_else(|| {
        ToolError::tool("this gateway keeps no document store; there are no documents to search")
    })
}

/// The Documents arguments, or what was wrong with them and what to pass.
fn parse(arguments: Value) -> Result<DocumentsArgs, ToolError> {
    if !arguments.is_object() {
        return Err(ToolError::tool(
            r#"Documents takes an object with an op, e.g. {"op": "list"}"#,
        ));
    }
    parse_args_naming(
        arguments,
        DOCUMENTS_TOOL,
        "pass op (search, get, list or delete) and the fields that op takes",
    )
}

fn run(store: &dyn Store, view: &Options, reader: &Reader, args: &DocumentsArgs) -> Answer {
    match args.op {
        Op::Search => {
            let query = args.query.as_deref().ok_or_else(|| ToolError::tool("search needs a query: the words to look for, e.g. {\"op\": \"search\", \"query\": \"budget 2026\"}",))?;
            search(store, reader, query, args)
        }
        Op::Get => get(store, view, reader, id(args.id.as_deref(), "get")?, args),
        Op::List => list(store, reader, args),
        Op::Delete => delete(store, reader, id(args.id.as_deref(), "delete")?),
    }
}

fn id<'a>(id: Option<&'a str>, op: &str) -> Result<&'a str, ToolError> {
    id.map(str::trim)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            ToolError::tool(format!(
                "{op} needs the document's id, as search or list answer it"
            ))
        })
}

/// The answer for a document the reader cannot see: the same whether it
/// does not exist, belongs to another tenant, or (for delete) to another
/// owner.
fn missing(id: &str) -> ToolError {
    ToolError::tool(format!(
        "there is no document {id:?}; list or search the documents to find its id"
    ))
}

fn store_fault(error: &porter_inbox::InboxError) -> ToolError {
    if matches!(error, porter_inbox::InboxError::Unavailable(_)) {
        tracing::warn!(%error, "the document store is not answering");
        return ToolError::tool(error.reason());
    }
    tracing::error!(%error, "the document store failed");
    ToolError::tool(
        "the document store failed; try again, and tell the operator if it keeps failing",
    )
}

/// The page a cursor names (an offset, written as decimal digits).
fn offset(cursor: Option<&str>) -> Result<usize, ToolError> {
    let Some(cursor) = cursor.map(str::trim).filter(|c| !c.is_empty()) else {
        return Ok(0);
    };
    cursor
        .parse::<usize>()
        .ok()
        .filter(|n| *n <= CURSOR_MAX)
        .ok_or_else(|| {
            ToolError::tool(
                "that cursor is not one this tool gave; pass the next_cursor of the previous answer, or none to start over",
            )
        })
}

fn limit(asked: Option<usize>, default: usize, max: usize) -> Result<usize, ToolError> {
    match asked {
        None => Ok(default),
        Some(0) => Err(ToolError::tool(
            "limit counts from 1, so 0 asks for nothing; pass 1 or more",
        )),
        Some(n) => Ok(n.min(max)),
    }
}

fn search(store: &dyn Store, reader: &Reader, text: &str, args: &DocumentsArgs) -> Answer {
    let query = SearchQuery::parse(text).map_err(|error| match error {
        QueryError::Empty => ToolError::tool(format!("{error}")),
        other => ToolError::tool(format!("the query cannot be searched for: {other}")),
    })?;
    let limit = limit(args.limit, SEARCH_LIMIT, SEARCH_MAX)?;
    let offset = offset(args.cursor.as_deref())?;
    // One more than asked tells whether another page follows.
    let mut hits = store
        .search(&reader.tenant, &query, limit + 1, offset)
        .map_err(|e| store_fault(&e))?;
    let more = hits.len() > limit;
    hits.truncate(limit);
    let next_cursor = more.then(|| (offset + limit).to_string());
    let mut lines = vec![match (hits.len(), offset) {
        (0, 0) => format!("no document matches {text:?}"),
        (0, _) => format!("no more documents match {text:?}"),
        (1, _) => format!("1 document matches {text:?}:"),
        (n, _) => format!("{n} documents match {text:?}:"),
    }];
    for (n, hit) in hits.iter().enumerate() {
        let under = hit
            .heading
            .as_deref()
            .map_or_else(String::new, |h| format!(" · under {h:?}"));
        lines.push(format!(
            "{}. {} · {:?}{under}\n   {}",
            offset + n + 1,
            hit.id,
            hit.title,
            hit.snippet
        ));
    }
    if let Some(cursor) = &next_cursor {
        lines.push(format!("more match: search again with cursor {cursor:?}"));
    }
    Ok(answer(
        lines.join("\n"),
        json!({"query": text, "hits": hits, "next_cursor": next_cursor}),
    ))
}

fn get(
    store: &dyn Store,
    view: &Options,
    reader: &Reader,
    id: &str,
    args: &DocumentsArgs,
) -> Answer {
    let document = store
        .get(&reader.tenant, id)
        .map_err(|e| store_fault(&e))?
        .ok_or_else(|| missing(id))?;
    let name = format!("document {}.md", document.id);
    let input = FileInput {
        bytes: document.markdown.as_bytes(),
        name: &name,
        declared_type: Some("text/markdown"),
        link: None,
    };
    let window = WindowRequest {
        start_line: args.start_line,
        line_count: args.line_count,
    };
    let shown = porter_fileview::view(&input, &window, view, &Cancel::new())?;
    let about = format!(
        "{:?} · document {} · from {} (sha256:{}) · {} · imported {}",
        document.title,
        document.id,
        document.source_path,
        document.source_sha256,
        document.origin,
        porter_mcp::rfc3339_utc(document.created_at)
    );
    let mut content = vec![ContentBlock::text(about)];
    content.extend(
        porter_mcp::content::content(&shown.content)
            .map_err(|e| ToolError::tool(format!("the document could not be shown: {e}")))?,
    );
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(json!({
        "id": document.id,
        "title": document.title,
        "source_path": document.source_path,
        "source_sha256": document.source_sha256,
        "origin": document.origin,
        "call": document.call,
        "run": document.run,
        "created_at": porter_mcp::rfc3339_utc(document.created_at),
        "window": shown.structured.window,
    }));
    Ok(result)
}

fn list(store: &dyn Store, reader: &Reader, args: &DocumentsArgs) -> Answer {
    let limit = limit(args.limit, LIST_LIMIT, LIST_MAX)?;
    let offset = offset(args.cursor.as_deref())?;
    let mut documents = store
        .list(&reader.tenant, limit + 1, offset)
        .map_err(|e| store_fault(&e))?;
    let more = documents.len() > limit;
    documents.truncate(limit);
    let next_cursor = more.then(|| (offset + limit).to_string());
    let mut lines = vec![match (documents.len(), offset) {
        (0, 0) => "there are no documents yet; File import adds one".to_owned(),
        (0, _) => "no more documents".to_owned(),
        (1, _) => "1 document:".to_owned(),
        (n, _) => format!("{n} documents:"),
    }];
    for document in &documents {
        lines.push(format!(
            "{} · {:?} · {} of Markdown · from {} · imported {}",
            document.id,
            document.title,
            porter_fileview::human_size(document.markdown_bytes),
            document.source_path,
            porter_mcp::rfc3339_utc(document.created_at)
        ));
    }
    if let Some(cursor) = &next_cursor {
        lines.push(format!("more: list again with cursor {cursor:?}"));
    }
    Ok(answer(
        lines.join("\n"),
        json!({"documents": documents, "next_cursor": next_cursor}),
    ))
}

fn delete(store: &dyn Store, reader: &Reader, id: &str) -> Answer {
    let document = store
        .get(&reader.tenant, id)
        .map_err(|e| store_fault(&e))?
        .filter(|d| d.owner.key_name == reader.key_name)
        .ok_or_else(|| missing(id))?;
    if !store
        .delete(&reader.tenant, &document.id)
        .map_err(|e| store_fault(&e))?
    {
        return Err(missing(id));
    }
    Ok(answer(
        format!("deleted document {} ({:?})", document.id, document.title),
        json!({"deleted": document.id}),
    ))
}

fn answer(text: String, structured: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use porter_inbox::{Document, RunId, SqliteDocuments};

    fn text(result: &CallToolResult) -> String {
        result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn reader(key_name: &str, tenant: &str) -> Reader {
        Reader {
            tenant: tenant.to_owned(),
            key_name: key_name.to_owned(),
        }
    }

    fn store_with_one() -> (tempfile::TempDir, SqliteDocuments) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteDocuments::open(&dir.path().join("d.sqlite3")).expect("opens");
        let markdown: String =
            std::iter::once("# Plan\n\n## Costs\n\nthe narwhal line\n".to_owned())
                .chain((1..=40).map(|n| format!("line {n}\n")))
                .collect();
        store
            .add(&Document {
                id: "doc-1".to_owned(),
                title: "Plan".to_owned(),
                markdown,
                source_path: "volume:inbox:plan.docx".to_owned(),
                source_sha256: "cd".repeat(32),
                origin: "mcp:files/get".to_owned(),
                call: "{}".to_owned(),
                run: RunId::new(),
                owner: Owner {
                    key_name: "alice".to_owned(),
                    tenant: "acme".to_owned(),
                },
                created_at: 0,
            })
            .expect("adds");
        (dir, store)
    }

    fn call(
        store: &SqliteDocuments,
        reader: &Reader,
        arguments: Value,
    ) -> Result<CallToolResult, String> {
        parse(arguments)
            .and_then(|args| run(store, &Options::default(), reader, &args))
            .map_err(|error| error.to_string())
    }

    #[test]
    fn a_search_names_the_heading_and_get_pages_the_markdown() {
        let (_dir, store) = store_with_one();
        let alice = reader("alice", "acme");
        let found =
            call(&store, &alice, json!({"op": "search", "query": "narwhal"})).expect("searches");
        let shown = text(&found);
        assert!(shown.contains("doc-1"), "{shown}");
        assert!(shown.contains(r###"under "## Costs""###), "{shown}");
        assert!(shown.contains("**narwhal**"), "{shown}");
        let page = call(
            &store,
            &alice,
            json!({"op": "get", "id": "doc-1", "start_line": 5, "line_count": 2}),
        )
        .expect("gets");
        let shown = text(&page);
        assert!(shown.contains("     5\tthe narwhal line"), "{shown}");
        assert!(shown.contains("     6\tline 1"), "{shown}");
        assert!(!shown.contains("line 2\n"), "{shown}");
        let window = &page.structured_content.expect("structured")["window"];
        assert_eq!(window["next_start_line"], 7);
    }

    #[test]
    fn another_tenant_and_another_owner_get_the_answer_of_a_missing_document() {
        let (_dir, store) = store_with_one();
        let missing = call(
            &store,
            &reader("alice", "acme"),
            json!({"op": "get", "id": "nope"}),
        )
        .expect_err("missing");
        let cases = [
            (reader("bob", "globex"), json!({"op": "get", "id": "doc-1"})),
            (
                reader("alice", "globex"),
                json!({"op": "delete", "id": "doc-1"}),
            ),
            (
                reader("carol", "acme"),
                json!({"op": "delete", "id": "doc-1"}),
            ),
        ];
        for (reader, arguments) in cases {
            let refused = call(&store, &reader, arguments).expect_err("refused");
            assert_eq!(
                refused.replace("doc-1", "ID"),
                missing.replace("nope", "ID")
            );
        }
        let hits = call(
            &store,
            &reader("bob", "globex"),
            json!({"op": "search", "query": "narwhal"}),
        )
        .expect("searches");
        assert!(
            text(&hits).starts_with("no document matches"),
            "{}",
            text(&hits)
        );
        let deleted = call(
            &store,
            &reader("alice", "acme"),
            json!({"op": "delete", "id": "doc-1"}),
        )
        .expect("the owner deletes");
        assert!(text(&deleted).contains("deleted document doc-1"));
    }

    #[test]
    fn bad_queries_and_cursors_say_what_to_pass_instead() {
        let (_dir, store) = store_with_one();
        let alice = reader("alice", "acme");
        let cases = [
            (json!({"op": "search", "query": "  "}), "no words"),
            (json!({"op": "search", "query": "\"open"}), "not closed"),
            (json!({"op": "search"}), "needs a query"),
            (
                json!({"op": "search", "query": "x", "cursor": "abc"}),
                "next_cursor",
            ),
            (json!({"op": "list", "limit": 0}), "counts from 1"),
            (json!({"op": "get"}), "needs the document's id"),
            (json!({"op": "grep"}), "search, get, list or delete"),
        ];
        for (arguments, says) in cases {
            let error = call(&store, &alice, arguments.clone()).expect_err("refused");
            assert!(error.contains(says), "{arguments}: {error}");
            assert!(!error.to_lowercase().contains("sql"), "{error}");
        }
    }

    #[test]
    fn the_tool_lists_its_four_ops() {
        let tool = porter_mcp::tool::describe::<Turn, Documents>();
        assert_eq!(tool.name, DOCUMENTS_TOOL);
        let schema = tool.schema_as_json_value();
        let text = schema.to_string();
        for op in ["search", "get", "list", "delete"] {
            assert!(
                text.contains(&format!("\"{op}\"")),
                "{op} missing from {text}"
            );
        }
        assert_eq!(schema["required"], json!(["op"]));
    }
}
