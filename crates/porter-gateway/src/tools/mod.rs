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
pub mod offered;
pub mod web;
pub(crate) mod webfetch;

pub use offered::Offered;

#[cfg(test)]
mod tests {
    /// The gateway's own tools as a client lists them (name, title,
    /// description, annotations and both schemas), and the admin endpoint's
    /// `file` tool: any change to what a client sees shows up as a changed
    /// snapshot to review (CONTRIBUTING.md says how).
    use super::Offered;
    use crate::config::Grant;

    /// Every set of grants a profile can hold.
    fn every_grant_set() -> Vec<Vec<Grant>> {
        let all = [
            Grant::File,
            Grant::Read,
            Grant::Write,
            Grant::Http,
            Grant::Git,
        ];
        (0..1u32 << all.len())
            .map(|bits| {
                all.iter()
                    .enumerate()
                    .filter(|(i, _)| bits & (1 << i) != 0)
                    .map(|(_, g)| *g)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_tool_is_offered_exactly_to_the_callers_its_check_lets_through() {
        let model = |grants: &[Grant]| crate::access::Caller::Model {
            grants: grants.to_vec(),
            volumes: Vec::new(),
        };
        for grants in every_grant_set() {
            let caller = model(&grants);
            assert_eq!(
                super::web::OFFERED.to(&grants),
                super::web::need_http_grant("HTTP", &caller).is_ok(),
                "HTTP and WebFetch with {grants:?}"
            );
            assert_eq!(
                super::git::OFFERED.to(&grants),
                super::git::need_git_grant(&caller).is_ok(),
                "Git with {grants:?}"
            );
            // File is of use with the inbox (File) or a volume (Read, Write).
            assert_eq!(
                super::file::OFFERED.to(&grants),
                grants
                    .iter()
                    .any(|g| matches!(g, Grant::File | Grant::Read | Grant::Write)),
                "File with {grants:?}"
            );
        }
        assert!(Offered::Always.to(&[]));
    }

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
