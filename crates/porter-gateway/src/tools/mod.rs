//! The gateway's own tools, one file (or folder) per noun, each holding its
//! arguments, the grant it checks and its call, and each a
//! [`porter_mcp::Tool`] over the gateway's [`Turn`](crate::context::Turn):
//!
//! - [`mod@file`]: `File`, the run's inbox and the operator's volumes;
//! - [`documents`]: `Documents`, search and read what `File import` added;
//! - `http`: `HTTP`, one request under the network policy;
//! - `webfetch`: `WebFetch`, a page as Markdown (and its assets kept);
//! - [`git`]: `Git`, clone, commit and push inside a volume.
//!
//! [`web`] is what `HTTP` and `WebFetch` share: the client and inbox they
//! use, their grant and how a response body is judged and kept.

pub mod documents;
pub mod file;
pub mod git;
pub(crate) mod http;
pub mod web;
pub(crate) mod webfetch;

#[cfg(test)]
mod tests {
    /// The gateway's own tools as a client lists them (name, title,
    /// description, annotations and both schemas), and the admin endpoint's
    /// `file` tool: any change to what a client sees shows up as a changed
    /// snapshot to review (CONTRIBUTING.md says how).
    #[test]
    fn the_tool_listing_is_the_reviewed_one() {
        let data = tempfile::tempdir().expect("a temporary data dir");
        let gateway = crate::Gateway::new(
            crate::config::Config::default(),
            data.path(),
            crate::access::Keys::default(),
        )
        .expect("a gateway on the default config");
        insta::assert_json_snapshot!("gateway_tools", gateway.tools.list());
        insta::assert_json_snapshot!("admin_file_tool", crate::admin::AdminServer::tool());
    }
}
