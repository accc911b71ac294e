//! `porter-git` does git in-process for porter's `Git` tool, so that a
//! model can clone, read, commit and push without a shell, a `git` process
//! or a token it could read.
//!
//! The engine is libgit2 (through `git2`, built from source with neither
//! its own https nor ssh). [`init`] runs once per process: it empties the
//! system, global and XDG config search paths, registers a smart-HTTP
//! transport for `https` whose every request goes through
//! [`porter_net::Net`] (host policy, private-address guard) and refuses
//! `http`, `git`, `ssh` and `file` URLs outright. libgit2 runs no hooks, no
//! external filter, no fsmonitor and no credential helper, and porter never
//! starts a process.
//!
//! Operations take the repository's folder (the gateway resolves it inside
//! a volume and decides read-only or read-write): [`read`] (status, log,
//! show, diff, blame, grep, ls_files, branch_list, tag_list, rev_parse),
//! [`change`] (init, add, rm, commit, checkout, branch_create/delete,
//! tag_create, fast-forward merge, reset), [`network`] (clone, fetch,
//! pull, push, ls_remote) and [`submodule`] (submodule_update: URLs from
//! `.gitmodules` judged like any remote before anything is fetched). Long
//! outputs come in [`Page`]s. Before any
//! checkout the tree is walked by [`paths::check_tree`]: every name checked
//! for `.git` aliases, `..`, devices and control characters, symlinks kept
//! inside, and the walk stopped at a file count and 1 GiB. The checkout
//! itself is porter's own: libgit2 says what changes, and every file is
//! written through directory handles opened beneath the work tree, never
//! through a symlink and never under `.git`.
//!
//! Commits and annotated tags can carry an SSH signature by the operator's
//! ed25519 key ([`sign::Signer`], [`change::signed_commit`],
//! [`change::signed_tag_create`]) that `git verify-commit` accepts. A
//! credential is a static token or a [`GithubApp`] whose write-scoped
//! installation token is minted only for pushes.
//!
//! It deliberately reads no configuration: the caller hands in the
//! [`Access`] (host lists, credentials), the operator's [`Identity`] and
//! signer.
//! Network operations block: run them on `spawn_blocking`.
//!
//! ```no_run
//! use porter_git::{read, page::Window};
//!
//! # fn demo() -> Result<(), porter_git::GitError> {
//! let page = read::log("/volumes/work/repo".as_ref(), None, None, Window::default())?;
//! println!("{page}");
//! # Ok(())
//! # }
//! ```

pub mod change;
mod error;
pub mod github_app;
pub mod network;
pub mod page;
pub mod paths;
pub mod read;
mod remote;
pub mod sign;
pub mod submodule;
mod transport;
mod worktree;

pub use change::{Identity, ResetMode};
pub use error::{GitError, NetClass};
pub use github_app::{AppKeyError, GithubApp};
pub use page::{Page, Window};
pub use paths::Bounds;
pub use remote::{Access, Credential, CredentialSource, Direction, Refusal, Secret};
pub use sign::{SignError, Signer};
pub use transport::{Network, init};

/// `AUDIT_TARGET` is the `tracing` target of the operator's audit lines:
/// every network request and its outcome, the credential's name, a refusal's
/// detail and a server's own words, which the model sees only as a class.
/// It is a target of its own, outside this crate's, so that a binary can
/// show it by default (`porter::audit=info`) while it hides the rest of
/// porter-git's chatter.
pub const AUDIT_TARGET: &str = "porter::audit";
