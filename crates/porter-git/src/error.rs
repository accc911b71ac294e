//! What went wrong, said so that the model knows what to do next. Network
//! failures carry only a class: the server's own words (which may echo a
//! token or a private URL) go to the operator log, never into a message.

/// `NetClass` is all the model learns about a failed network operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetClass {
    /// The server wanted credentials, or refused the ones sent.
    Auth,
    /// The server has no such repository.
    NotFound,
    /// Porter's own policy refused the URL (scheme, host list, push off,
    /// private address).
    Refused,
    /// No answer, or not a git smart-HTTP answer.
    Unreachable,
    /// The server refused the pushed update (not a fast-forward, protected
    /// branch, hook said no).
    Rejected,
}

impl NetClass {
    /// `advice` is the sentence the model reads for this class.
    #[must_use]
    pub fn advice(self) -> &'static str {
        match self {
            NetClass::Auth => {
                "the server refused the credentials (or wanted some and none covers this URL); an operator can add or fix a credential for it"
            }
            NetClass::NotFound => "the server has no such repository; check the URL",
            NetClass::Refused => {
                "refused by policy: the URL is not https or its host is not on the operator's list for this direction"
            }
            NetClass::Unreachable => {
                "the server could not be reached or did not answer as a git smart-HTTP server; try again later"
            }
            NetClass::Rejected => {
                "the server rejected the pushed update; fetch, fast-forward and push again"
            }
        }
    }
}

impl std::fmt::Display for NetClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NetClass::Auth => "auth",
            NetClass::NotFound => "not found",
            NetClass::Refused => "refused by policy",
            NetClass::Unreachable => "unreachable",
            NetClass::Rejected => "rejected push",
        })
    }
}

/// `GitError` is every failure of a Git operation.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The directory holds no repository.
    #[error(
        "{path} is not a git repository; give the folder that holds .git, or init or clone one"
    )]
    NotARepository {
        /// The folder asked for, as given.
        path: String,
    },
    /// A path (from the model or from a tree) is not one porter writes.
    #[error("refused: the path {path:?} {reason}")]
    UnsafePath {
        /// The path, as found.
        path: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A tree names more files than the limit.
    #[error(
        "refused: the tree holds more than {limit} files; nothing was written (an operator can raise the limit)"
    )]
    TooManyFiles {
        /// The limit in force.
        limit: usize,
    },
    /// A tree holds more content than the limit.
    #[error(
        "refused: the tree holds more than {limit} bytes of content; nothing was written (an operator can raise the limit)"
    )]
    TooLarge {
        /// The limit in force, in bytes.
        limit: u64,
    },
    /// A network operation failed; the detail went to the operator log.
    #[error("{op} failed ({class}): {}", reason.unwrap_or(class.advice()))]
    Network {
        /// The operation (`clone`, `push`, ...).
        op: &'static str,
        /// What kind of failure it was.
        class: NetClass,
        /// Porter's own reason for a policy refusal (never a server's
        /// words): which rule said no, so the model knows what to ask the
        /// operator for.
        reason: Option<&'static str>,
    },
    /// The request itself cannot be carried out as asked.
    #[error("{0}")]
    Invalid(String),
    /// libgit2 said no.
    #[error("git: {}", .0.message())]
    Git(#[from] git2::Error),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The engine could not be set up (libgit2 options or transports).
    #[error("the git engine could not be set up: {0}")]
    Setup(String),
}

impl GitError {
    /// `invalid` builds an [`GitError::Invalid`] from any text.
    pub(crate) fn invalid(text: impl Into<String>) -> GitError {
        GitError::Invalid(text.into())
    }

    /// `class` is the network class of this error, if it is a network one.
    #[must_use]
    pub fn class(&self) -> Option<NetClass> {
        match self {
            GitError::Network { class, .. } => Some(*class),
            _ => None,
        }
    }
}
