//! `GET /v1/runs` (what the caller may read) and `POST /v1/runs/{id}/file`
//! (the `File` tool on one run, for an outside caller).

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Extension, Path, State};
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;

use super::error::ApiError;
use super::state::{ApiState, blocking, readable_run};
use crate::access::{KeyInfo, can_change, can_read};

/// The ops any reader of a run may run; every other op changes the run (or
/// is unknown, and is treated as changing so that a new op is never open to
/// readers by accident).
const READ_OPS: [&str; 4] = ["stat", "ls", "read", "import"];

/// The ops nobody may run from outside: they fetch from or send to the
/// network on the run's behalf.
const NETWORK_OPS: [&str; 2] = ["download", "upload"];

/// How many characters of one string in a call's arguments the listing
/// shows; a longer one (a data URI, a pasted document) is cut with a note of
/// its length, so that a listing does not repeat it for every file.
const ARGUMENT_CHARS: usize = 200;

/// One run as listed: its record, a summary for telling runs apart, and its
/// files, newest first.
#[derive(Debug, Serialize)]
struct ListedRun {
    #[serde(flatten)]
    run: porter_inbox::RunInfo,
    /// How many files its inbox holds.
    file_count: usize,
    /// Their bytes together.
    total_bytes: u64,
    /// The tool that produced its first file (`mcp__everything__get-tiny-image`).
    first_tool: Option<String>,
    /// When its files will be purged (Unix ms): the end plus `inbox_ttl`;
    /// none while it is going or once purged.
    expires_at: Option<i64>,
    files: Vec<ListedFile>,
}

/// One file as listed: its record and its reference (`volume:inbox:<path>`),
/// the form the model saw in its stub.
#[derive(Debug, Serialize)]
struct ListedFile {
    #[serde(rename = "ref")]
    reference: String,
    #[serde(flatten)]
    record: porter_inbox::FileRecord,
}

/// `GET /v1/runs`: the runs the caller may read, newest first, each with a
/// summary and its files (newest first, each call's long arguments cut), and
/// how long an ended run's files are kept (`inbox_ttl_ms`).
pub(super) async fn list(
    State(state): State<Arc<ApiState>>,
    Extension(key): Extension<KeyInfo>,
) -> Result<Json<Value>, ApiError> {
    let (runs, ttl_ms) = blocking(&state.inbox, move |inbox| {
        let ttl_ms = i64::try_from(inbox.limits().inbox_ttl.as_millis()).unwrap_or(i64::MAX);
        let mut listed = Vec::new();
        for run in inbox.runs()? {
            if !can_read(&key, &run.owner) {
                continue;
            }
            let files = inbox.files(run.id)?;
            listed.push(listed_run(run, files, ttl_ms));
        }
        listed.sort_by_key(|listed| std::cmp::Reverse(listed.run.id));
        Ok((listed, ttl_ms))
    })
    .await?;
    Ok(Json(
        serde_json::json!({ "runs": runs, "inbox_ttl_ms": ttl_ms }),
    ))
}

/// One run's listing from its record and its files' records.
fn listed_run(
    run: porter_inbox::RunInfo,
    mut records: Vec<porter_inbox::FileRecord>,
    ttl_ms: i64,
) -> ListedRun {
    records.sort_by(|a, b| {
        b.created_at
            .cmp(&a.created_at)
            .then_with(|| a.path.cmp(&b.path))
    });
    let first_tool = records.last().and_then(|first| call_tool(&first.call));
    let expires_at = match (run.purged, run.ended_at) {
        (false, Some(ended)) => Some(ended.saturating_add(ttl_ms)),
        _ => None,
    };
    let files: Vec<ListedFile> = records
        .into_iter()
        .map(|mut record| {
            record.call = elide_call(&record.call);
            ListedFile {
                reference: format!("volume:inbox:{}", record.path),
                record,
            }
        })
        .collect();
    ListedRun {
        file_count: files.len(),
        total_bytes: files.iter().map(|file| file.record.size).sum(),
        first_tool,
        expires_at,
        run,
        files,
    }
}

/// The `tool` a recorded call names, if it is the JSON the gateway writes.
fn call_tool(call: &str) -> Option<String> {
    let value: Value = serde_json::from_str(call).ok()?;
    value.get("tool")?.as_str().map(str::to_owned)
}

/// A recorded call with every string longer than [`ARGUMENT_CHARS`] cut to
/// its start and a note of its length; still JSON when it was JSON.
pub(super) fn elide_call(call: &str) -> String {
    porter_inbox::shown::elide_call(call, ARGUMENT_CHARS)
}

/// `POST /v1/runs/{run_id}/file`: runs the `File` tool on the run for the
/// caller's key and answers its result, `isError` and all, with 200. Only a
/// missing key, a run the key may not read and a body that is not a JSON
/// object are HTTP errors.
pub(super) async fn file_op(
    State(state): State<Arc<ApiState>>,
    Extension(key): Extension<KeyInfo>,
    run_id: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Result<Json<CallToolResult>, ApiError> {
    let Path(run_id) = run_id.map_err(|_| ApiError::NoRun)?;
    let run = readable_run(&state, &key, &run_id).await?;
    let arguments: Value = serde_json::from_slice(&body).map_err(|err| {
        ApiError::BadRequest(format!(
            "The body must be the File tool's arguments as a JSON object, like {{\"op\": \"ls\"}}: {err}"
        ))
    })?;
    let Some(fields) = arguments.as_object() else {
        return Err(ApiError::BadRequest(
            "The body must be a JSON object, like {\"op\": \"ls\"}.".to_owned(),
        ));
    };
    let op = fields.get("op").and_then(Value::as_str).unwrap_or_default();
    if let Some(refusal) = refusal(op, &key, &run) {
        return Ok(Json(CallToolResult::error(vec![ContentBlock::text(
            refusal,
        )])));
    }
    Ok(Json(state.files.call(&key.caller(), &run, arguments).await))
}

/// Why `key` may not run `op` on `run` from outside, if it may not.
fn refusal(op: &str, key: &KeyInfo, run: &porter_inbox::RunInfo) -> Option<String> {
    let lower = op.to_ascii_lowercase();
    if NETWORK_OPS.contains(&lower.as_str()) {
        return Some(format!(
            "`{lower}` is not available from outside a run: it reaches the network on the run's \
             behalf. Ask the run's model to do it with its File tool, or fetch the file yourself \
             with GET /v1/runs/{}/inbox/<path>.",
            run.id
        ));
    }
    if !READ_OPS.contains(&op) && !can_change(key, &run.owner) {
        return Some(format!(
            "`{op}` changes the run, which only its owner, an admin or a tenant operator of its \
             tenant may do; your key may read it ({}).",
            READ_OPS.join(", ")
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Role;
    use porter_inbox::{Owner, RunId, RunInfo};

    fn key(role: Role) -> KeyInfo {
        KeyInfo {
            name: "reader".to_owned(),
            tenant: "acme".to_owned(),
            secret: "s".to_owned(),
            role,
            grants: Vec::new(),
            volumes: Vec::new(),
        }
    }

    fn run() -> RunInfo {
        RunInfo {
            id: RunId::new(),
            owner: Owner {
                key_name: "owner".to_owned(),
                tenant: "acme".to_owned(),
            },
            started_at: 0,
            ended_at: None,
            purged: false,
            client: None,
        }
    }

    #[test]
    fn download_and_upload_are_refused_from_outside_whatever_their_case() {
        for op in ["download", "upload", "Download", "UPLOAD"] {
            // Refused before any access rule is asked, so even an admin gets it.
            let why = refusal(op, &key(Role::Admin), &run()).expect("refused");
            assert!(why.contains("not available from outside"), "{op}: {why}");
        }
    }

    #[test]
    fn a_long_argument_is_cut_with_its_length_and_the_call_stays_json() {
        let uri = format!("data:image/png;base64,{}", "A".repeat(8000));
        let call = serde_json::json!({
            "tool": "mcp__everything__echo",
            "arguments": {"image": uri, "name": "a.png", "list": ["short", "B".repeat(300)]},
        })
        .to_string();
        let cut: Value = serde_json::from_str(&elide_call(&call)).expect("still JSON");
        let image = cut["arguments"]["image"].as_str().expect("a string");
        assert!(image.starts_with("data:image/png;base64,AAAA"), "{image}");
        assert!(image.ends_with("… (8022 characters in all)"), "{image}");
        assert_eq!(
            image.chars().count(),
            ARGUMENT_CHARS + "… (8022 characters in all)".chars().count()
        );
        assert_eq!(cut["arguments"]["name"], "a.png");
        assert_eq!(cut["arguments"]["list"][0], "short");
        assert!(
            cut["arguments"]["list"][1]
                .as_str()
                .expect("a string")
                .ends_with("(300 characters in all)")
        );
        assert_eq!(cut["tool"], "mcp__everything__echo");
        // At the limit nothing is cut; not JSON is cut as text.
        let at_limit = "x".repeat(ARGUMENT_CHARS);
        assert_eq!(
            elide_call(&serde_json::json!([at_limit]).to_string()),
            serde_json::json!([at_limit]).to_string()
        );
        assert!(
            elide_call(&"y".repeat(ARGUMENT_CHARS + 1))
                .ends_with(&format!("({} characters in all)", ARGUMENT_CHARS + 1))
        );
    }

    #[test]
    fn read_ops_are_never_refused_here() {
        for op in READ_OPS {
            assert_eq!(refusal(op, &key(Role::User), &run()), None, "{op}");
        }
    }
}
