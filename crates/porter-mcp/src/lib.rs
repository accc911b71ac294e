//! What `porter mattermost` and `porter gateway` share about being an MCP
//! server, so that each rule is written once: the HTTP guards in front of
//! the streamable HTTP endpoint ([`http`]) and the tool schemas a client's
//! validator reads without warnings ([`schema`]).
//!
//! It knows nothing of Mattermost, inboxes or files: a rule belongs here
//! only when both servers apply it the same way.

pub mod http;
pub mod schema;
