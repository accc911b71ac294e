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
use std::path::{Path, PathBuf};
use std::sync::Arc;

use porter_git::change::{self, ResetMode};
use porter_git::read::{self, DiffArgs, GrepArgs};
use porter_git::{
    Access, Bounds, Credential, CredentialSource, GitError, Identity, Network, Signer, Window,
    network, submodule,
};
use porter_inbox::Owner;
use porter_mcp::tool::{Hints, NoOut, ToolError, parse_args_naming};
use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::access::Caller;
use crate::config::{Config, GitConfig, Grant, RemoteDirection, Volume, VolumeMode};
use crate::context::Turn;
use crate::tools::file::grants::{self, Need};
use crate::tools::file::reference::Place;
use crate::tools::offered::Offered;

/// `GIT_TOOL` is the name the `Git` tool is listed under.
pub const GIT_TOOL: &str = "Git";

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
    /// the git hosts (fetch and push, and the API hosts GitHub App tokens
    /// are minted at), keeping the private-address guard,
    /// the private hosts and the extra roots.
    #[must_use]
    pub fn net_policy(base: &porter_net::Policy, config: &GitConfig) -> porter_net::Policy {
        let mut hosts = config.fetch_hosts.clone();
        hosts.extend(config.push_hosts.iter().flatten().cloned());
        hosts.extend(
            config
                .credentials
                .iter()
                .filter_map(|c| c.github_app.as_ref()?.api_host()),
        );
        porter_net::Policy {
            allow_hosts: hosts,
            ..base.clone()
        }
    }

    /// Runs one call for `caller` (the run's model, with its profile's
    /// grants and volumes) in the run `run_id` owned by `owner` (whose
    /// tenant a tenant volume must match), with `remote` (its profile's
    /// `git_remote`).
    pub async fn call(
        &self,
        caller: &Caller,
        owner: &Owner,
        remote: &[RemoteDirection],
        run_id: &str,
        arguments: serde_json::Value,
    ) -> CallToolResult {
        match parse(arguments) {
            Ok(args) => self.run(caller, owner, remote, run_id, args).await,
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_string())]),
        }
    }

    /// Runs one call like [`GitTool::call`], its arguments read.
    async fn run(
        &self,
        caller: &Caller,
        owner: &Owner,
        remote: &[RemoteDirection],
        run_id: &str,
        args: GitArgs,
    ) -> CallToolResult {
        let network = Network {
            net: self.net.clone(),
            handle: tokio::runtime::Handle::current(),
            access: self.access(remote),
        };
        let operator = Operator {
            identity: self.config.identity.as_ref().map(|i| Identity {
                name: i.name.clone(),
                email: i.email.clone(),
            }),
            signer: self.config.signer.clone(),
        };
        let bounds = Bounds {
            max_files: self
                .config
                .max_checkout_files
                .unwrap_or(porter_git::paths::MAX_CHECKOUT_FILES),
            ..Bounds::default()
        };
        let resolved = self.resolve(caller, owner, &args);
        let run_id = run_id.to_owned();
        let answer = tokio::task::spawn_blocking(move || {
            let repo = resolved?;
            if reads_work_tree(&args) && !repo.allow_hard_links {
                refuse_hard_links(&repo, args.op)?;
            }
            run(
                &args,
                &repo.dir,
                repo.writable,
                &network,
                &operator,
                &run_id,
                bounds,
            )
            .map(|text| repo.shown.text(&text))
            .map_err(|error| ToolError::tool(repo.shown.text(&error.to_string())))
        })
        .await;
        match answer {
            Ok(Ok(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Ok(Err(error)) => {
                tracing::info!(tool = GIT_TOOL, %error, "a Git call failed");
                CallToolResult::error(vec![ContentBlock::text(error.to_string())])
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
                .filter_map(|c| {
                    let source = match (&c.token, &c.app) {
                        (Some(token), _) => CredentialSource::Token(token.clone()),
                        (None, Some(app)) => CredentialSource::GithubApp(app.clone()),
                        (None, None) => {
                            tracing::warn!(credential = %c.name, "a git credential with neither a token nor a loaded GitHub App is not used");
                            return None;
                        }
                    };
                    Some(Credential {
                        name: c.name.clone(),
                        allowed_urls: c
                            .allowed_urls
                            .iter()
                            .filter_map(|u| url::Url::parse(u).ok())
                            .collect(),
                        username: c.username.clone(),
                        source,
                    })
                })
                .collect(),
        }
    }

    /// The folder `repo` names (`volume:<name>:<path>`), checked by the
    /// one volume door ([`crate::tools::file::grants::resolve`]): the caller's
    /// list, the volume's tenant, the `Read` grant for a read op and the
    /// `Write` grant and a read-write volume for one that writes. A volume
    /// the caller may not use is answered exactly like a missing one. The
    /// folder, once resolved, must still lie beneath the volume's root.
    fn resolve(&self, caller: &Caller, owner: &Owner, args: &GitArgs) -> Result<Repo, ToolError> {
        let text = args.repo.as_deref().unwrap_or("").trim();
        if !text.starts_with("volume:")
            || text.starts_with("volume:inbox:")
            || text == "volume:inbox"
        {
            return Err(ToolError::tool(
                "name the repository as volume:<name>:<path> (a folder in one of your volumes; the inbox holds no repositories)",
            ));
        }
        let need = if args.op.writes() {
            Need::Keep
        } else {
            Need::Look
        };
        let (reference, volume) = grants::resolve(caller, owner, &self.volumes, text, need)?;
        let (Place::Volume(name), Some(volume)) = (&reference.place, volume) else {
            return Err(ToolError::tool(
                "name the repository as volume:<name>:<path>",
            ));
        };
        let root = volume.path.canonicalize().map_err(|e| {
            tracing::warn!(volume = %name, path = %volume.path.display(), error = %e, "a volume's folder cannot be opened");
            ToolError::tool(format!(
                "volume {name} cannot be opened on this machine; tell the operator"
            ))
        })?;
        let shown = Shown {
            name: name.clone(),
            roots: vec![volume.path.clone(), root.clone()],
        };
        let dir = volume.path.join(&reference.rel);
        let mut existing = dir.as_path();
        while !existing.exists() {
            existing = existing.parent().unwrap_or(&volume.path);
        }
        let real = existing.canonicalize().map_err(|e| {
            ToolError::tool(shown.text(&format!("{} cannot be opened: {e}", reference.shown())))
        })?;
        if !real.starts_with(&root) {
            return Err(ToolError::tool(
                "the path leads out of the volume through a symlink",
            ));
        }
        // A `.git` file (or a linked work tree's commondir) may name a
        // repository anywhere on the machine: its data must lie in the
        // volume too.
        for folder in read::git_folders(&dir).unwrap_or_default() {
            let inside = folder.canonicalize().is_ok_and(|f| f.starts_with(&root));
            if !inside {
                return Err(ToolError::tool(
                    "this repository keeps its data outside the volume (a .git file or commondir points out of it); porter works only on repositories whose .git lies in the volume",
                ));
            }
        }
        Ok(Repo {
            dir,
            writable: volume.mode == VolumeMode::Rw,
            allow_hard_links: volume.allow_hard_links,
            shown,
        })
    }
}

/// `Repo` is a repository folder the caller may use.
#[derive(Debug)]
struct Repo {
    dir: PathBuf,
    writable: bool,
    /// The volume's `allow_hard_links`.
    allow_hard_links: bool,
    shown: Shown,
}

/// Whether `args` reads the content of work-tree files: `add` (into the
/// object store, where `show` reads it back) and a `diff` against the work
/// tree. Other ops read committed objects, or only compare sizes and times.
fn reads_work_tree(args: &GitArgs) -> bool {
    match args.op {
        GitOp::Add => true,
        GitOp::Diff => !args.cached && args.to.is_none(),
        _ => false,
    }
}

/// Refuses `op` when a regular file of the work tree has more than one name:
/// a hard link planted in a volume can be a second name of a file outside
/// every volume, so, as `File read` does, Git does not read one unless the
/// volume sets `allow_hard_links: true`. `.git` is not walked (porter never
/// reads its files as content) and symlinks are not followed.
fn refuse_hard_links(repo: &Repo, op: GitOp) -> Result<(), ToolError> {
    use std::os::unix::fs::MetadataExt as _;
    let mut folders = vec![repo.dir.clone()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(metadata) = entry.path().symlink_metadata() else {
                continue;
            };
            if metadata.is_dir() {
                if !(folder == repo.dir && entry.file_name() == ".git") {
                    folders.push(entry.path());
                }
            } else if metadata.is_file() && metadata.nlink() > 1 {
                let path = entry.path();
                let relative = path.strip_prefix(&repo.dir).unwrap_or(&path);
                return Err(ToolError::tool(format!(
                    "{op:?} is refused: {} in the work tree is a hard link (the file has {} names), and its other name may be a file outside every volume; \
                     an operator who means volume {} to hold hard links can set allow_hard_links: true on it",
                    relative.display(),
                    metadata.nlink(),
                    repo.shown.name
                )));
            }
        }
    }
    Ok(())
}

/// `Shown` names a volume's folder the way the model knows it: every
/// answer (porter-git's and libgit2's words, errors included) has the
/// volume's root on this machine replaced by `volume:<name>:`, so no host
/// path reaches the model.
#[derive(Debug)]
struct Shown {
    name: String,
    /// The root as configured and as resolved (symlinks followed).
    roots: Vec<PathBuf>,
}

impl Shown {
    fn text(&self, text: &str) -> String {
        let mut text = text.to_owned();
        let mut roots: Vec<String> = self
            .roots
            .iter()
            .map(|r| r.to_string_lossy().trim_end_matches('/').to_owned())
            .filter(|r| !r.is_empty())
            .collect();
        // The longer root first, so that one root inside another is
        // replaced whole.
        roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
        roots.dedup();
        let volume = format!("volume:{}:", self.name);
        for root in roots {
            text = text.replace(&format!("{root}/"), &volume);
            text = replace_whole(&text, &root, &volume);
        }
        text
    }
}

/// `text` with each `path` that is not the start of a longer name
/// (`/srv/gx` but not `/srv/gx2`) replaced by `with`.
fn replace_whole(text: &str, path: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(path) {
        let after = &rest[at + path.len()..];
        let longer = after
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
        out.push_str(&rest[..at]);
        out.push_str(if longer { path } else { with });
        rest = after;
    }
    out.push_str(rest);
    out
}

const DESCRIPTION: &str = "Git on a repository in one of your volumes, without a shell. \
    repo is volume:<name>:<path>. Read ops (any of your volumes): status, log, show, diff, blame, grep, \
    ls_files, branch_list, tag_list, rev_parse. Change ops (read-write volume): init, add, rm, \
    commit, checkout, branch_create, branch_delete, tag_create, merge (fast-forward only), reset \
    (soft/mixed/hard). Network ops: clone (url into repo), fetch, pull (fast-forward), push, \
    ls_remote, submodule_update (paths: which submodules; default all; not recursive) — https \
    only, to the operator's hosts, with the operator's credentials. Long \
    outputs come in windows: ask again with offset. commit and tag_create take sign: true to \
    sign with the operator's SSH key.";

porter_mcp::tool! {
    /// `Git` is the `Git` tool. It is open only to a run's own model, and only
    /// with the `Git` grant.
    pub Git { pub(crate) git: Arc<GitTool>, pub(crate) config: Arc<Config> } for Turn {
        // It commits, resets and pushes, and fetches from and pushes to remotes.
        name: GIT_TOOL, title: "Git", hints: Hints::open_world(true, false),
        args: GitArgs, out: NoOut,
        description: DESCRIPTION,
        parse: |arguments| parse(Value::Object(arguments.unwrap_or_default())),
        check: |turn, _call| need_git_grant(&turn.caller),
        call: |turn, args, _call| {
            let run = &turn.run;
            let remote = config.git_remote_of(&run.owner.key_name);
            let id = run.id.to_string();
            Ok(git.run(&turn.caller, &run.owner, &remote, &id, args).await.into())
        },
    }
}

/// `OFFERED` is to whom `Git` is listed: the callers [`need_git_grant`]
/// lets through (a key from outside never calls it, nor lists it).
pub(crate) const OFFERED: Offered = Offered::AnyOf(&[Grant::Git]);

/// Whether `caller` may use Git: a run's own model whose profile grants it.
pub(crate) fn need_git_grant(caller: &Caller) -> Result<(), ToolError> {
    let Caller::Model { grants, .. } = caller else {
        return Err(ToolError::tool(
            "the Git tool is open only to a run's own model",
        ));
    };
    if OFFERED.to(grants) {
        return Ok(());
    }
    Err(ToolError::tool(
        "this run may not use Git: its profile has no Git grant; an operator can \
         add Git to the profile's grants in the gateway's config",
    ))
}

/// The Git arguments, or what was wrong with them and how to call the tool.
fn parse(arguments: Value) -> Result<GitArgs, ToolError> {
    parse_args_naming(
        arguments,
        GIT_TOOL,
        r#"call it like {"op": "log", "repo": "volume:work:project"}"#,
    )
}

/// `GitArgs` are the tool's arguments; which apply depends on `op`.
// Each flag is a separate, optional argument of one op, as the model sends it.
// The field docs are the schema's descriptions, which the model reads as
// plain text (`volume:<name>:<path>`), not as rustdoc's HTML.
#[allow(clippy::struct_excessive_bools, rustdoc::invalid_html_tags)]
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
    /// commit, tag_create: sign with the operator's SSH key (the answer
    /// names its public key as signed_by); a signed tag needs a message.
    #[serde(default)]
    pub sign: bool,
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

/// `Kind` is what an op does: read the repository, change it, or reach a
/// remote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Change,
    Network,
}

impl GitOp {
    /// What the op does; each op is named here once.
    fn kind(self) -> Kind {
        match self {
            GitOp::Status
            | GitOp::Log
            | GitOp::Show
            | GitOp::Diff
            | GitOp::Blame
            | GitOp::Grep
            | GitOp::LsFiles
            | GitOp::BranchList
            | GitOp::TagList
            | GitOp::RevParse => Kind::Read,
            GitOp::Clone
            | GitOp::Fetch
            | GitOp::Pull
            | GitOp::Push
            | GitOp::SubmoduleUpdate
            | GitOp::LsRemote => Kind::Network,
            GitOp::Init
            | GitOp::Add
            | GitOp::Rm
            | GitOp::Commit
            | GitOp::Checkout
            | GitOp::BranchCreate
            | GitOp::BranchDelete
            | GitOp::TagCreate
            | GitOp::Merge
            | GitOp::Reset => Kind::Change,
        }
    }

    /// Whether the op writes to the repository (every op but the reads and
    /// `ls_remote`), and so needs a read-write volume.
    fn writes(self) -> bool {
        self.kind() != Kind::Read && self != GitOp::LsRemote
    }
}

fn need<'a>(value: Option<&'a String>, what: &str, op: GitOp) -> Result<&'a str, ToolError> {
    value
        .map(String::as_str)
        .ok_or_else(|| ToolError::tool(format!("{op:?} needs {what}")))
}

/// `Operator` is who commits: the operator's identity and signing key,
/// neither chosen by the model.
struct Operator {
    identity: Option<Identity>,
    signer: Option<Signer>,
}

fn run(
    args: &GitArgs,
    dir: &Path,
    writable: bool,
    network: &Network,
    operator: &Operator,
    run_id: &str,
    bounds: Bounds,
) -> Result<String, ToolError> {
    let op = args.op;
    if op.writes() && !writable {
        return Err(ToolError::tool(format!(
            "{op:?} changes the repository, and this volume is read-only"
        )));
    }
    let window = Window {
        offset: args.offset,
        lines: args.lines.unwrap_or(porter_git::page::DEFAULT_PAGE_LINES),
    };
    let result = match op.kind() {
        Kind::Read => read_op(args, dir, window)?,
        Kind::Network => network_op(args, dir, network, bounds)?,
        Kind::Change => change_op(args, dir, operator, run_id, bounds)?,
    };
    Ok(result?)
}

/// A read op: `Ok` with what git answered (or why it failed), `Err` for
/// arguments the op lacks.
fn read_op(
    args: &GitArgs,
    dir: &Path,
    window: Window,
) -> Result<Result<String, GitError>, ToolError> {
    let op = args.op;
    let text = |r: Result<porter_git::Page, GitError>| r.map(|p| p.to_string());
    Ok(match op {
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
        _ => return Err(ToolError::tool(format!("{op:?} is not a read op"))),
    })
}

/// A network op, like [`read_op`].
fn network_op(
    args: &GitArgs,
    dir: &Path,
    network: &Network,
    bounds: Bounds,
) -> Result<Result<String, GitError>, ToolError> {
    let op = args.op;
    Ok(match op {
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
        _ => return Err(ToolError::tool(format!("{op:?} is not a network op"))),
    })
}

/// An op that changes the repository, like [`read_op`]; commits and tags
/// are the operator's, signed with the operator's key when asked.
fn change_op(
    args: &GitArgs,
    dir: &Path,
    operator: &Operator,
    run_id: &str,
    bounds: Bounds,
) -> Result<Result<String, GitError>, ToolError> {
    let op = args.op;
    let identity = || {
        operator.identity.as_ref().ok_or_else(|| {
            ToolError::tool("the operator has set no git.identity, so nothing can be committed")
        })
    };
    let signer = || {
        operator.signer.as_ref().ok_or_else(|| {
            ToolError::tool("the operator has set no git.signing.key_file, so nothing can be signed; leave sign out to commit or tag unsigned")
        })
    };
    Ok(match op {
        GitOp::Init => change::init(dir, args.name.as_deref()),
        GitOp::Add => change::add(dir, &args.paths),
        GitOp::Rm => change::rm(dir, &args.paths, args.cached),
        GitOp::Commit if args.sign => {
            let signer = signer()?;
            change::signed_commit(
                dir,
                need(args.message.as_ref(), "message", op)?,
                identity()?,
                run_id,
                false,
                signer,
            )
            .map(|id| format!("committed {id}\nsigned_by: {}", signer.public_key()))
        }
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
        GitOp::TagCreate if args.sign => change::signed_tag_create(
            dir,
            need(args.name.as_ref(), "name", op)?,
            args.rev.as_deref(),
            need(
                args.message.as_ref(),
                "a message (a signed tag is annotated)",
                op,
            )?,
            identity()?,
            signer()?,
        ),
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
                    return Err(ToolError::tool(format!(
                        "reset mode {other:?} is not one of soft, mixed, hard"
                    )));
                }
            };
            change::reset(dir, need(args.rev.as_ref(), "rev", op)?, mode, bounds)
        }
        _ => {
            return Err(ToolError::tool(format!(
                "{op:?} does not change the repository"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GitCredential;

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
        let tool = porter_mcp::tool::describe::<Turn, Git>();
        assert_eq!(tool.output_schema, None);
        assert_eq!(
            tool.input_schema.get("type").and_then(|t| t.as_str()),
            Some("object")
        );
        assert!(tool.input_schema["properties"].get("op").is_some());
    }

    fn operator(signer: Option<Signer>) -> Operator {
        Operator {
            identity: Some(Identity {
                name: "Porter Operator".to_owned(),
                email: "operator@example.org".to_owned(),
            }),
            signer,
        }
    }

    fn args(value: serde_json::Value) -> GitArgs {
        serde_json::from_value(value).expect("valid Git arguments")
    }

    #[tokio::test]
    async fn sign_needs_the_operators_key_and_the_answer_names_its_public_half() {
        use ssh_key::private::{Ed25519Keypair, KeypairData};
        let temp = tempfile::tempdir().expect("a temp dir");
        let dir = temp.path();
        let network = Network {
            net: porter_net::Net::new(porter_net::Policy::default()).expect("a client"),
            handle: tokio::runtime::Handle::current(),
            access: Access::default(),
        };
        change::init(dir, Some("main")).expect("init");
        std::fs::write(dir.join("a.txt"), "a\n").expect("written");
        change::add(dir, &["a.txt".to_owned()]).expect("add");
        let commit = args(serde_json::json!({"op": "commit", "message": "m", "sign": true}));

        let unsigned = run(
            &commit,
            dir,
            true,
            &network,
            &operator(None),
            "r",
            Bounds::default(),
        );
        let refusal = unsigned.expect_err("no key, no signature").to_string();
        assert!(refusal.contains("git.signing.key_file"), "{refusal}");
        assert!(
            read::rev_parse(dir, "HEAD").is_err(),
            "nothing was committed"
        );

        let pair = Ed25519Keypair::from_seed(&[8; 32]);
        let key = ssh_key::PrivateKey::new(KeypairData::Ed25519(pair), "").expect("a key");
        let signer = Signer::from_openssh(&key.to_openssh(ssh_key::LineEnding::LF).expect("pem"))
            .expect("loads");
        let public = signer.public_key().to_owned();
        let signing = operator(Some(signer));
        let answer = run(
            &commit,
            dir,
            true,
            &network,
            &signing,
            "r",
            Bounds::default(),
        )
        .expect("a signed commit");
        assert!(answer.starts_with("committed "), "{answer}");
        assert!(
            answer.ends_with(&format!("\nsigned_by: {public}")),
            "{answer}"
        );
        assert!(!answer.contains("PRIVATE"), "{answer}");

        let bare_tag = args(serde_json::json!({"op": "tag_create", "name": "v1", "sign": true}));
        let refusal = run(
            &bare_tag,
            dir,
            true,
            &network,
            &signing,
            "r",
            Bounds::default(),
        )
        .expect_err("a signed tag needs a message")
        .to_string();
        assert!(refusal.contains("message"), "{refusal}");
        let tag = args(serde_json::json!({
            "op": "tag_create", "name": "v1", "message": "one", "sign": true
        }));
        let answer =
            run(&tag, dir, true, &network, &signing, "r", Bounds::default()).expect("a signed tag");
        assert!(
            answer.ends_with(&format!("signed_by: {public}")),
            "{answer}"
        );
    }

    #[tokio::test]
    async fn add_and_diff_do_not_read_a_hard_link_in_the_work_tree_unless_the_volume_allows_it() {
        let temp = tempfile::tempdir().expect("a temp dir");
        let root = temp.path().join("volume");
        let repo_dir = root.join("repo");
        change::init(&repo_dir, Some("main")).expect("init");
        std::fs::write(temp.path().join("secret.txt"), "outside\n").expect("written");
        std::fs::hard_link(temp.path().join("secret.txt"), repo_dir.join("hard.txt"))
            .expect("a hard link");
        let caller = Caller::Model {
            grants: vec![
                crate::config::Grant::Read,
                crate::config::Grant::Write,
                Grant::Git,
            ],
            volumes: vec!["work".to_owned()],
        };
        let owner = Owner {
            key_name: "local".to_owned(),
            tenant: "local".to_owned(),
        };
        let tool = |allow_hard_links| {
            let volumes = BTreeMap::from([(
                "work".to_owned(),
                Volume {
                    path: root.clone(),
                    mode: VolumeMode::Rw,
                    tenant: None,
                    allow_hard_links,
                },
            )]);
            GitTool::new(
                porter_net::Net::new(porter_net::Policy::default()).expect("a client"),
                GitConfig::default(),
                volumes,
            )
        };
        let text = |r: &CallToolResult| {
            r.content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect::<String>()
        };
        let add =
            serde_json::json!({"op": "add", "repo": "volume:work:repo", "paths": ["hard.txt"]});
        let refusing = tool(false);
        for arguments in [
            add.clone(),
            serde_json::json!({"op": "diff", "repo": "volume:work:repo"}),
        ] {
            let refused = refusing.call(&caller, &owner, &[], "r", arguments).await;
            assert_eq!(refused.is_error, Some(true), "{}", text(&refused));
            assert!(
                text(&refused).contains("allow_hard_links: true"),
                "{}",
                text(&refused)
            );
        }
        assert!(read::rev_parse(&repo_dir, "HEAD").is_err());
        assert_eq!(
            read::ls_files(&repo_dir, None, Window::default())
                .expect("listed")
                .text
                .trim(),
            "",
            "nothing was staged"
        );
        let allowed = tool(true).call(&caller, &owner, &[], "r", add).await;
        assert_eq!(allowed.is_error, Some(false), "{}", text(&allowed));
    }

    #[test]
    fn host_paths_in_an_answer_are_named_as_the_volume() {
        let shown = Shown {
            name: "gx".to_owned(),
            roots: vec![PathBuf::from("/srv/gx"), PathBuf::from("/data/real/gx/")],
        };
        let cases = [
            ("cloned into /srv/gx/app", "cloned into volume:gx:app"),
            (
                "Initialized empty Git repository in /data/real/gx/newrepo/.git/",
                "Initialized empty Git repository in volume:gx:newrepo/.git/",
            ),
            (
                "could not find repository at '/srv/gx'",
                "could not find repository at 'volume:gx:'",
            ),
            ("/srv/gx2/x stays", "/srv/gx2/x stays"),
            ("nothing to name", "nothing to name"),
        ];
        for (text, expected) in cases {
            assert_eq!(shown.text(text), expected, "{text}");
        }
    }

    #[test]
    fn a_credential_is_never_shown_by_debug() {
        let credential = GitCredential {
            name: "ci".to_owned(),
            allowed_urls: vec!["https://example.org/".to_owned()],
            username: None,
            token: Some(porter_net::Secret::new("ghp_secret")),
            github_app: None,
            app: None,
        };
        assert!(!format!("{credential:?}").contains("ghp_secret"));
    }

    #[tokio::test]
    async fn a_repository_whose_git_folder_lies_outside_the_volume_is_refused() {
        let temp = tempfile::tempdir().expect("a temp dir");
        let volume_root = temp.path().join("volume");
        let outside = temp.path().join("secret");
        change::init(&outside, Some("main")).expect("init outside");
        std::fs::create_dir_all(volume_root.join("inside")).expect("made");
        change::init(&volume_root.join("inside"), Some("main")).expect("init inside");
        let pointer = volume_root.join("pointer");
        std::fs::create_dir_all(&pointer).expect("made");
        std::fs::write(
            pointer.join(".git"),
            format!("gitdir: {}\n", outside.join(".git").display()),
        )
        .expect("written");
        let volumes = BTreeMap::from([(
            "work".to_owned(),
            Volume {
                path: volume_root,
                mode: VolumeMode::Rw,
                tenant: None,
                allow_hard_links: false,
            },
        )]);
        let tool = GitTool::new(
            porter_net::Net::new(porter_net::Policy::default()).expect("a client"),
            GitConfig::default(),
            volumes,
        );
        let caller = Caller::Model {
            grants: vec![crate::config::Grant::Read, crate::config::Grant::Git],
            volumes: vec!["work".to_owned()],
        };
        let owner = Owner {
            key_name: "local".to_owned(),
            tenant: "local".to_owned(),
        };
        let status = |repo: &str| {
            tool.resolve(
                &caller,
                &owner,
                &args(serde_json::json!({"op": "status", "repo": repo})),
            )
        };
        let refused = status("volume:work:pointer")
            .expect_err("the git dir is outside")
            .to_string();
        assert!(refused.contains("outside the volume"), "{refused}");
        let repo = status("volume:work:inside").expect("an inside repository");
        assert!(repo.dir.ends_with("inside") && repo.writable);
    }
}
