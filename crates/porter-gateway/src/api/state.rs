//! What every route of the API is handed and the two steps most of them
//! take first: running blocking inbox work off the async threads, and
//! finding the run a caller may read.

use std::sync::Arc;

use porter_inbox::{Inbox, RunId, RunInfo};

use super::error::ApiError;
use crate::access::{KeyInfo, Keys, can_read};
use crate::tools::file::Files;

/// `ApiState` is what every route needs: the inbox (runs, records, files,
/// events), the `File` tool the API runs on a caller's behalf, and the keys
/// that may call it.
pub struct ApiState {
    pub inbox: Arc<Inbox>,
    pub files: Arc<Files>,
    pub keys: Keys,
}

/// Runs blocking inbox work (SQLite, the disk) off the async threads.
pub(crate) async fn blocking<T, F>(inbox: &Arc<Inbox>, work: F) -> Result<T, ApiError>
where
    F: FnOnce(&Inbox) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    let inbox = Arc::clone(inbox);
    tokio::task::spawn_blocking(move || work(&inbox))
        .await
        .map_err(ApiError::internal)?
}

/// The run named by `run_id` when `key` may read it. A malformed id, a
/// missing run and a run of someone else all give [`ApiError::NoRun`].
pub(crate) async fn readable_run(
    state: &ApiState,
    key: &KeyInfo,
    run_id: &str,
) -> Result<RunInfo, ApiError> {
    let id: RunId = run_id.parse().map_err(|_| ApiError::NoRun)?;
    let run = blocking(&state.inbox, move |inbox| Ok(inbox.run(id)?)).await?;
    match run {
        Some(run) if can_read(key, &run.owner) => Ok(run),
        _ => Err(ApiError::NoRun),
    }
}
