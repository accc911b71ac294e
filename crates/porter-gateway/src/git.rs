//! The `Git` tool: git work on a repository in a volume, in-process through
//! `porter-git`, so the model never gets a shell, a `git` process that
//! would run a hostile repository's hooks or filters, or a token.
//!
//! One tool, `op`-discriminated. Read ops (`status`, `log`, `show`, `diff`,
//! `blame`, `grep`, `ls_files`, `branch_list`, `tag_list`, `rev_parse`) work
//! on any of the profile's volumes; change ops (`init`, `add`, `rm`,
//! `commit`, `checkout`, `branch_create`, `branch_delete`, `tag_create`,
//! `merge`, `reset`) and the network ops that write (`clone`, `fetch`,
//! `pull`, `submodule_update`) need a read-write volume; `push` and
//! `ls_remote` also reach the network. `submodule_update` fetches only from
//! submodule URLs that pass the same checks as any remote. Network ops go only to the operator's `git.fetch_hosts` /
//! `git.push_hosts` (push off until set, and only for a profile with
//! `git_remote: [fetch, push]`), over https, with the operator's
//! credentials; the model sees a failure's class, the log its detail.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use porter_git::change::{self, ResetMode};
use porter_git::read::{self, DiffArgs, GrepArgs};
use porter_git::{
    Access, Bounds, Credential, GitError, Identity, Network, Secret, Window, network, submodule,
};
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::{Volume, VolumeMode};

/// `GIT_TOOL` is the name the `Git` tool is listed under.
pub const GIT_TOOL: &str = "Git";

/// `RemoteDirection` is one entry of a profile's `git_remote`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RemoteDirection {
    /// clone, fetch, pull, ls_remote.
    Fetch,
    /// push.
    Push,
}

/// `GitConfig` is the operator's `git:` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct GitConfig {
    /// Hosts the Git tool may fetch from (like `http.allow_hosts`); empty:
    /// none.
    pub fetch_hosts: Vec<String>,
    /// Hosts the Git tool may push to; unset: push is off for everyone.
    pub push_hosts: Option<Vec<String>>,
    /// The author and committer of every commit.
    pub identity: Option<GitIdentity>,
    /// Credentials, each sent only to the URLs it covers.
    pub credentials: Vec<GitCredential>,
    /// Most files one checkout writes (default 200,000).
    pub max_checkout_files: Option<usize>,
}

/// `GitIdentity` is the operator's name and email for commits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitIdentity {
    /// The name.
    pub name: String,
    /// The email.
    pub email: String,
}

/// `GitCredential` is one credential as configured; `token` may be
/// `${ENV_NAME}`, resolved by the binary before the gateway starts.
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitCredential {
    /// Shown in the audit log instead of the token.
    pub name: String,
    /// URL prefixes the credential may be sent to.
    pub allowed_urls: Vec<String>,
    /// The Basic-auth user name (default `x-access-token`).
    #[serde(default)]
    pub username: Option<String>,
    /// The token.
    pub token: String,
}

impl std::fmt::Debug for GitCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitCredential")
            .field("name", &self.name)
            .field("allowed_urls", &self.allowed_urls)
            .finish_non_exhaustive()
    }
}

/// `GitTool` serves the `Git` tool.
pub struct GitTool {
    net: porter_net::Net,
    config: GitConfig,
    volumes: BTreeMap<String, Volume>,
}

impl GitTool {
    /// The tool over `net` (a client whose allow list admits the git hosts;
    /// see [`GitTool::net_policy`]), the operator's `config` and volumes.
    #[must_use]
    pub fn new(
        net: porter_net::Net,
        config: GitConfig,
        volumes: BTreeMap<String, Volume>,
    ) -> GitTool {
        GitTool {
            net,
            config,
            volumes,
        }
    }

    /// `net_policy` is the gateway's policy with its allow list replaced by
    /// the git hosts (fetch and push), keeping the private-address guard,
    /// the private hosts and the extra roots.
    #[must_use]
    pub fn net_policy(base: &porter_net::Policy, config: &GitConfig) -> porter_net::Policy {
        let mut hosts = config.fetch_hosts.clone();
        hosts.extend(config.push_hosts.iter().flatten().cloned());
        porter_net::Policy {
            allow_hosts: hosts,
            ..base.clone()
        }
    }

    /// The tool's definition.
    #[must_use]
    pub fn tool() -> Tool {
        let schema = rmcp::handler::server::tool::schema_for_type::<GitArgs>();
        Tool::new(GIT_TOOL, DESCRIPTION, schema).with_title("Git")
    }

    /// Runs one call for a caller with `volumes` (its profile's) and
    /// `remote` (its profile's `git_remote`) in run `run_id`.
    pub async fn call(
        &self,
        volumes: &[String],
        remote: &[RemoteDirection],
        run_id: &str,
        arguments: serde_json::Value,
    ) -> CallToolResult {
        let args: GitArgs = match serde_json::from_value(arguments) {
            Ok(args) => args,
            Err(error) => {
                return CallToolResult::error(vec![ContentBlock::text(format!(
                    "the Git arguments are not valid: {error}; call it like {{\"op\": \"log\", \"repo\": \"volume:work:project\"}}"
                ))]);
            }
        };
        let network = Network {
            net: self.net.clone(),
            handle: tokio::runtime::Handle::current(),
            access: self.access(remote),
        };
        let identity = self.config.identity.as_ref().map(|i| Identity {
            name: i.name.clone(),
            email: i.email.clone(),
        });
        let bounds = Bounds {
            max_files: self
                .config
                .max_checkout_files
                .unwrap_or(porter_git::paths::MAX_CHECKOUT_FILES),
            ..Bounds::default()
        };
        let resolved = self.resolve(volumes, &args);
        let run_id = run_id.to_owned();
        let answer = tokio::task::spawn_blocking(move || {
            let (dir, writable) = resolved?;
            run(
                &args,
                &dir,
                writable,
                &network,
                identity.as_ref(),
                &run_id,
                bounds,
            )
        })
        .await;
        match answer {
            Ok(Ok(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Ok(Err(text)) => {
                tracing::info!(tool = GIT_TOOL, error = %text, "a Git call failed");
                CallToolResult::error(vec![ContentBlock::text(text)])
            }
            Err(error) => {
                tracing::error!(%error, "a Git call panicked or was cancelled");
                CallToolResult::error(vec![ContentBlock::text(
                    "the Git call failed inside the gateway; try again",
                )])
            }
        }
    }

    fn access(&self, remote: &[RemoteDirection]) -> Access {
        let may_fetch =
            remote.contains(&RemoteDirection::Fetch) || remote.contains(&RemoteDirection::Push);
        Access {
            fetch_hosts: if may_fetch {
                self.config.fetch_hosts.clone()
            } else {
                Vec::new()
            },
            push_hosts: self.config.push_hosts.clone(),
            may_push: remote.contains(&RemoteDirection::Push),
            credentials: self
                .config
                .credentials
                .iter()
                .map(|c| Credential {
                    name: c.name.clone(),
                    allowed_urls: c
                        .allowed_urls
                        .iter()
                        .filter_map(|u| url::Url::parse(u).ok())
                        .collect(),
                    username: c.username.clone(),
                    token: Secret::new(c.token.clone()),
                })
                .collect(),
        }
    }

    /// The folder `repo` names (`volume:<name>:<path>`), and whether it
    /// may be written. Only the caller's volumes; no `..`; the folder, once
    /// resolved, must still lie beneath the volume's root.
    fn resolve(&self, volumes: &[String], args: &GitArgs) -> Result<(PathBuf, bool), String> {
        let reference = args.repo.as_deref().unwrap_or("");
        let Some(rest) = reference.strip_prefix("volume:") else {
            return Err(
                "name the repository as volume:<name>:<path> (a folder in one of your volumes)"
                    .to_owned(),
            );
        };
        let (name, path) = rest.split_once(':').unwrap_or((rest, ""));
        if !volumes.iter().any(|v| v == name) {
            return Err(format!(
                "the volume {name:?} is not one of this run's volumes"
            ));
        }
        let volume = self
            .volumes
            .get(name)
            .ok_or_else(|| format!("no volume {name:?}"))?;
        let relative = Path::new(path.trim_start_matches('/'));
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err("the path must stay inside the volume (no .. or absolute path)".to_owned());
        }
        let dir = volume.path.join(relative);
        let root = volume
            .path
            .canonicalize()
            .map_err(|e| format!("the volume {name:?} cannot be opened: {e}"))?;
        let mut existing = dir.as_path();
        while !existing.exists() {
            existing = existing.parent().unwrap_or(&volume.path);
        }
        let real = existing.canonicalize().map_err(|e| format!("{e}"))?;
        if !real.starts_with(&root) {
            return Err("the path leads out of the volume through a symlink".to_owned());
        }
        Ok((dir, volume.mode == VolumeMode::Rw))
    }
}

const DESCRIPTION: &str = "Git on a repository in one of your volumes, without a shell. \
    repo is volume:<name>:<path>. Read ops (any volume): status, log, show, diff, blame, grep, \
    ls_files, branch_list, tag_list, rev_parse. Change ops (read-write volume): init, add, rm, \
    commit, checkout, branch_create, branch_delete, tag_create, merge (fast-forward only), reset \
    (soft/mixed/hard). Network ops: clone (url into repo), fetch, pull (fast-forward), push, \
    ls_remote, submodule_update (paths: which submodules; default all; not recursive) — https \
    only, to the operator's hosts, with the operator's credentials. Long \
    outputs come in windows: ask again with offset.";

/// `GitArgs` are the tool's arguments; which apply depends on `op`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitArgs {
    /// The operation.
    pub op: GitOp,
    /// The repository folder: volume:<name>:<path>.
    #[serde(default)]
    pub repo: Option<String>,
    /// A revision (log start, show, blame, grep tree, checkout/merge/reset
    /// target, branch start, tag target).
    #[serde(default)]
    pub rev: Option<String>,
    /// Paths (add, rm, diff, submodule_update) inside the repository.
    #[serde(default)]
    pub paths: Vec<String>,
    /// One path (log filter, blame file, grep and ls_files prefix).
    #[serde(default)]
    pub path: Option<String>,
    /// Commit or annotated tag message.
    #[serde(default)]
    pub message: Option<String>,
    /// Branch or tag name.
    #[serde(default)]
    pub name: Option<String>,
    /// grep: the regular expression.
    #[serde(default)]
    pub pattern: Option<String>,
    /// grep: match regardless of case.
    #[serde(default)]
    pub ignore_case: bool,
    /// diff: compare from this revision.
    #[serde(default)]
    pub from: Option<String>,
    /// diff: compare to this revision.
    #[serde(default)]
    pub to: Option<String>,
    /// diff: compare HEAD with the index; rm: only from the index.
    #[serde(default)]
    pub cached: bool,
    /// checkout: create the branch first.
    #[serde(default)]
    pub create: bool,
    /// reset: soft, mixed (default) or hard.
    #[serde(default)]
    pub mode: Option<String>,
    /// clone, ls_remote: the https URL.
    #[serde(default)]
    pub url: Option<String>,
    /// fetch, push, ls_remote: the remote's name (default origin).
    #[serde(default)]
    pub remote: Option<String>,
    /// push: refspecs (default: the current branch).
    #[serde(default)]
    pub refspecs: Vec<String>,
    /// Windowed outputs: the first line (from 0).
    #[serde(default)]
    pub offset: usize,
    /// Windowed outputs: how many lines (default 200).
    #[serde(default)]
    pub lines: Option<usize>,
}

/// `GitOp` is every operation the tool offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum GitOp {
    Status,
    Log,
    Show,
    Diff,
    Blame,
    Grep,
    LsFiles,
    BranchList,
    TagList,
    RevParse,
    Init,
    Add,
    Rm,
    Commit,
    Checkout,
    BranchCreate,
    BranchDelete,
    TagCreate,
    Merge,
    Reset,
    Clone,
    Fetch,
    Pull,
    Push,
    LsRemote,
    SubmoduleUpdate,
}

impl GitOp {
    fn writes(self) -> bool {
        !matches!(
            self,
            GitOp::Status
                | GitOp::Log
                | GitOp::Show
                | GitOp::Diff
                | GitOp::Blame
                | GitOp::Grep
                | GitOp::LsFiles
                | GitOp::BranchList
                | GitOp::TagList
                | GitOp::RevParse
                | GitOp::LsRemote
        )
    }
}

fn need<'a>(value: Option<&'a String>, what: &str, op: GitOp) -> Result<&'a str, String> {
    value
        .map(String::as_str)
        .ok_or_else(|| format!("{op:?} needs {what}"))
}

fn run(
    args: &GitArgs,
    dir: &Path,
    writable: bool,
    network: &Network,
    identity: Option<&Identity>,
    run_id: &str,
    bounds: Bounds,
) -> Result<String, String> {
    let op = args.op;
    if op.writes() && !writable {
        return Err(format!(
            "{op:?} changes the repository, and this volume is read-only"
        ));
    }
    let window = Window {
        offset: args.offset,
        lines: args.lines.unwrap_or(porter_git::page::DEFAULT_PAGE_LINES),
    };
    let identity = || {
        identity.ok_or_else(|| {
            "the operator has set no git.identity, so nothing can be committed".to_owned()
        })
    };
    let text = |r: Result<porter_git::Page, GitError>| r.map(|p| p.to_string());
    let result: Result<String, GitError> = match op {
        GitOp::Status => text(read::status(dir, window)),
        GitOp::Log => text(read::log(
            dir,
            args.rev.as_deref(),
            args.path.as_deref(),
            window,
        )),
        GitOp::Show => text(read::show(
            dir,
            args.rev.as_deref().unwrap_or("HEAD"),
            window,
        )),
        GitOp::Diff => text(read::diff(
            dir,
            &DiffArgs {
                from: args.from.clone(),
                to: args.to.clone(),
                cached: args.cached,
                paths: args.paths.clone(),
            },
            window,
        )),
        GitOp::Blame => text(read::blame(
            dir,
            need(args.path.as_ref(), "path", op)?,
            args.rev.as_deref(),
            window,
        )),
        GitOp::Grep => text(read::grep(
            dir,
            &GrepArgs {
                pattern: need(args.pattern.as_ref(), "pattern", op)?.to_owned(),
                rev: args.rev.clone(),
                path: args.path.clone(),
                ignore_case: args.ignore_case,
            },
            window,
        )),
        GitOp::LsFiles => text(read::ls_files(dir, args.path.as_deref(), window)),
        GitOp::BranchList => text(read::branch_list(dir, window)),
        GitOp::TagList => text(read::tag_list(dir, window)),
        GitOp::RevParse => read::rev_parse(dir, need(args.rev.as_ref(), "rev", op)?),
        GitOp::Init => change::init(dir, args.name.as_deref()),
        GitOp::Add => change::add(dir, &args.paths),
        GitOp::Rm => change::rm(dir, &args.paths, args.cached),
        GitOp::Commit => change::commit(
            dir,
            need(args.message.as_ref(), "message", op)?,
            identity()?,
            run_id,
            false,
        )
        .map(|id| format!("committed {id}")),
        GitOp::Checkout => change::checkout(
            dir,
            need(args.rev.as_ref().or(args.name.as_ref()), "rev", op)?,
            args.create,
            bounds,
        ),
        GitOp::BranchCreate => change::branch_create(
            dir,
            need(args.name.as_ref(), "name", op)?,
            args.rev.as_deref(),
        ),
        GitOp::BranchDelete => change::branch_delete(dir, need(args.name.as_ref(), "name", op)?),
        GitOp::TagCreate => change::tag_create(
            dir,
            need(args.name.as_ref(), "name", op)?,
            args.rev.as_deref(),
            args.message.as_deref(),
            identity()?,
        ),
        GitOp::Merge => change::merge(dir, need(args.rev.as_ref(), "rev", op)?, bounds),
        GitOp::Reset => {
            let mode = match args.mode.as_deref().unwrap_or("mixed") {
                "soft" => ResetMode::Soft,
                "mixed" => ResetMode::Mixed,
                "hard" => ResetMode::Hard,
                other => {
                    return Err(format!(
                        "reset mode {other:?} is not one of soft, mixed, hard"
                    ));
                }
            };
            change::reset(dir, need(args.rev.as_ref(), "rev", op)?, mode, bounds)
        }
        GitOp::Clone => network::clone(network, need(args.url.as_ref(), "url", op)?, dir, bounds),
        GitOp::Fetch => network::fetch(network, dir, args.remote.as_deref()),
        GitOp::Pull => network::pull(network, dir, bounds),
        GitOp::Push => network::push(network, dir, args.remote.as_deref(), &args.refspecs),
        GitOp::SubmoduleUpdate => submodule::update(network, dir, &args.paths, bounds),
        GitOp::LsRemote => match (&args.url, &args.remote) {
            (Some(url), _) => network::ls_remote(network, None, url),
            (None, remote) => {
                network::ls_remote(network, Some(dir), remote.as_deref().unwrap_or("origin"))
            }
        },
    };
    result.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_ops_are_allowed_on_read_only_volumes_and_change_ops_are_not() {
        assert!(!GitOp::Log.writes());
        assert!(!GitOp::Grep.writes());
        assert!(GitOp::Commit.writes());
        assert!(GitOp::Clone.writes());
        assert!(GitOp::Push.writes());
        assert!(GitOp::SubmoduleUpdate.writes());
    }

    #[test]
    fn the_tool_schema_is_an_object_with_an_op() {
        let tool = GitTool::tool();
        assert_eq!(
            tool.input_schema.get("type").and_then(|t| t.as_str()),
            Some("object")
        );
        assert!(tool.input_schema["properties"].get("op").is_some());
    }

    #[test]
    fn a_credential_is_never_shown_by_debug() {
        let credential = GitCredential {
            name: "ci".to_owned(),
            allowed_urls: vec!["https://example.org/".to_owned()],
            username: None,
            token: "ghp_secret".to_owned(),
        };
        assert!(!format!("{credential:?}").contains("ghp_secret"));
    }
}
