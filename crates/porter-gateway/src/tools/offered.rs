//! To whom `tools/list` offers each of the gateway's own tools.

use crate::config::Grant;

/// `Offered` says to whom `tools/list` offers one of the gateway's own
/// tools: every caller, or one holding any of the grants its check asks
/// for, so that a tool is listed exactly when a call of it could be
/// allowed. Each tool's check is written with the same value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    /// To every caller (`Documents`: its store is the caller's tenant's).
    Always,
    /// To a caller holding any of these grants.
    AnyOf(&'static [Grant]),
}

impl Offered {
    /// Whether a caller holding `grants` is offered the tool.
    #[must_use]
    pub fn to(self, grants: &[Grant]) -> bool {
        match self {
            Offered::Always => true,
            Offered::AnyOf(needed) => needed.iter().any(|grant| grants.contains(grant)),
        }
    }
}
