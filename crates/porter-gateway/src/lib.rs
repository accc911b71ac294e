//! `porter-gateway` is an MCP runtime in front of other MCP servers. SKELETON
//! while issue 5 is built.

pub mod access;
pub mod config;
pub mod file;
