//! What `porter mattermost` and `porter gateway` share about being an MCP
//! server, so that each rule is written once: one shape for a tool and the
//! registry that lists and calls tools ([`mod@tool`]), the file view's answer
//! as content ([`content`]), the HTTP guards in front of the streamable
//! HTTP endpoint ([`http`]), the tool schemas a client's validator reads
//! without warnings ([`schema`]), HTTP sessions that survive a quiet
//! spell ([`sessions`]), the edit distance behind "did you
//! mean" ([`suggest`]) and how a time is shown to the model
//! ([`rfc3339_utc`]).
//!
//! It knows nothing of Mattermost, inboxes or gateways: a rule belongs here
//! only when both servers apply it the same way.

pub mod content;
pub mod http;
pub mod schema;
pub mod sessions;
pub mod suggest;
pub mod tool;

pub use tool::{
    Call, Hints, NoArgs, NoOut, Outcome, Registry, Tool, ToolError, done, finish, parse_args,
    parse_args_naming,
};

/// `rfc3339_utc` shows Unix milliseconds as an RFC 3339 time in UTC, whole
/// seconds (`2026-11-20T10:04:05Z`): how both servers show a time to the
/// model. A time past what a calendar date can say (beyond the year 9999)
/// is shown as its milliseconds.
#[must_use]
pub fn rfc3339_utc(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map_or_else(
        |_| format!("{ms} ms after 1970-01-01"),
        |at| at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    )
}

/// rmcp, for the types [`tool!`] names in what it writes.
#[doc(hidden)]
pub use rmcp;
