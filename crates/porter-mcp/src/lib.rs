//! What `porter mattermost` and `porter gateway` share about being an MCP
//! server, so that each rule is written once: one shape for a tool and the
//! registry that lists and calls tools ([`tool`]), the file view's answer
//! as content ([`content`]), the HTTP guards in front of the streamable
//! HTTP endpoint ([`http`]), the tool schemas a client's validator reads
//! without warnings ([`schema`]) and the edit distance behind "did you
//! mean" ([`suggest`]).
//!
//! It knows nothing of Mattermost, inboxes or gateways: a rule belongs here
//! only when both servers apply it the same way.

pub mod content;
pub mod http;
pub mod schema;
pub mod suggest;
pub mod tool;

pub use tool::{
    Call, Hints, NoArgs, NoOut, Outcome, Registry, Tool, ToolError, done, finish, parse_args,
    parse_args_naming,
};

/// rmcp, for the types [`tool!`] names in what it writes.
#[doc(hidden)]
pub use rmcp;
