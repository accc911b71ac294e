//! The tools, filed by noun: each file holds its tools' arguments, their
//! questions and their calls.

pub(crate) mod channels;
pub(crate) mod drafts;
pub(crate) mod files;
pub(crate) mod posts;
pub(crate) mod status;
pub(crate) mod teams;
pub(crate) mod threads;
pub(crate) mod users;
