//! What one tool call knows besides its arguments: the run it is part of,
//! who asks, the run's redactor, where its progress goes, and whether it was
//! cancelled. What a tool keeps between calls (its client, its store) is the
//! tool's own.

use porter_inbox::RunInfo;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::access::Caller;

/// `Turn` is what one call of a gateway tool (a [`porter_mcp::Tool`] of
/// `Turn`) works with: the run it is part of, who asks, and what the call
/// carries besides its arguments.
pub struct Turn {
    /// The run the call belongs to.
    pub run: RunInfo,
    /// Who asks: the run's model, with its profile's grants and volumes.
    pub caller: Caller,
    /// The run's redactor, where progress goes, the call's cancellation.
    pub cx: CallContext,
}

/// `CallContext` travels with every tool call into the tools that reach the
/// network or move many bytes.
#[derive(Clone, Default)]
pub struct CallContext {
    /// Masks the run's secrets (URL query values seen so far) in every text
    /// the call produces: results, errors, events, records, logs.
    pub redactor: porter_net::Redactor,
    /// Where progress notifications go, when the client asked for them.
    pub progress: Option<Progress>,
    /// Cancelled when the client cancels the call.
    pub cancel: CancellationToken,
}

impl CallContext {
    /// What `work` comes to, unless the client cancels the call first:
    /// then the error "the call was cancelled".
    pub async fn unless_cancelled<T>(
        &self,
        work: impl Future<Output = T>,
    ) -> Result<T, porter_mcp::ToolError> {
        tokio::select! {
            () = self.cancel.cancelled() => Err(porter_mcp::ToolError::tool("the call was cancelled")),
            done = work => Ok(done),
        }
    }
}

/// `Progress` sends progress notifications for one call to its client.
#[derive(Clone)]
pub struct Progress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl Progress {
    #[must_use]
    pub fn new(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        Self { peer, token }
    }

    /// Reports `done` of `total` (when known), with a short message. A client
    /// that went away is not an error of the call.
    pub async fn report(&self, done: f64, total: Option<f64>, message: Option<String>) {
        let mut params = ProgressNotificationParam::new(self.token.clone(), done);
        params.total = total;
        params.message = message;
        if let Err(error) = self.peer.notify_progress(params).await {
            tracing::debug!(%error, "a progress notification was not delivered");
        }
    }
}
