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

use super::{ApiError, ApiState, blocking, readable_run};
use crate::access::{KeyInfo, can_change, can_read};

/// The ops any reader of a run may run; every other op changes the run (or
/// is unknown, and is treated as changing so that a new op is never open to
/// readers by accident).
const READ_OPS: [&str; 4] = ["stat", "ls", "read", "import"];

/// The ops nobody may run from outside: they fetch from or send to the
/// network on the run's behalf.
const NETWORK_OPS: [&str; 2] = ["download", "upload"];

/// One run as listed: its record and its files.
#[derive(Debug, Serialize)]
struct ListedRun {
    #[serde(flatten)]
    run: porter_inbox::RunInfo,
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

/// `GET /v1/runs`: the runs the caller may read, newest first, with their files.
pub(super) async fn list(
    State(state): State<Arc<ApiState>>,
    Extension(key): Extension<KeyInfo>,
) -> Result<Json<Value>, ApiError> {
    let runs = blocking(&state.inbox, move |inbox| {
        let mut listed = Vec::new();
        for run in inbox.runs()? {
            if !can_read(&key, &run.owner) {
                continue;
            }
            let files = inbox
                .files(run.id)?
                .into_iter()
                .map(|record| ListedFile {
                    reference: format!("volume:inbox:{}", record.path),
                    record,
                })
                .collect();
            listed.push(ListedRun { run, files });
        }
        listed.sort_by_key(|listed| std::cmp::Reverse(listed.run.id));
        Ok(listed)
    })
    .await?;
    Ok(Json(serde_json::json!({ "runs": runs })))
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
    fn read_ops_are_never_refused_here() {
        for op in READ_OPS {
            assert_eq!(refusal(op, &key(Role::User), &run()), None, "{op}");
        }
    }
}
