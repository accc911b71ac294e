//! Who may do what. SKELETON: types agreed; rules and tests by helper
//! "filetool" (issue 5 brief).

use crate::config::{Grant, Role};

/// `Caller` is who is asking for a File operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Caller {
    /// The run's own model, through the `File` tool: its profile's grants and
    /// volumes apply.
    Model {
        grants: Vec<Grant>,
        volumes: Vec<String>,
    },
    /// An API key from outside (the HTTP API or the admin MCP `file` tool).
    Key {
        name: String,
        tenant: String,
        role: Role,
        grants: Vec<Grant>,
        volumes: Vec<String>,
    },
}
