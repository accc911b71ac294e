//! What a server is set to do: how it is reached, whether it may write and
//! ask, its limits, and the kind of each tool, which decides when the tool
//! is listed and how it asks.

use std::path::PathBuf;
use std::time::Duration;

use crate::cache::FILE_CACHE_BYTES;
use crate::config::Settings;

/// `Kind` is when a tool is listed and how it asks the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only reads: always listed.
    Read,
    /// Touches the person's disk: listed over stdio only.
    Local,
    /// Posts a message: listed with writes allowed, asks about the place,
    /// the files and the message.
    Posting,
    /// Changes a post: asks showing exactly what will change.
    PostChange,
    /// Any other change others see: asks showing what will change.
    Change,
    /// Changes only the person's own state: never asks.
    OwnState,
}

impl Kind {
    /// Whether a server with `options` lists tools of this kind.
    #[must_use]
    pub fn listed(self, options: &Options) -> bool {
        match self {
            Kind::Read => true,
            Kind::Local => options.transport == Transport::Stdio,
            Kind::Posting | Kind::PostChange | Kind::Change | Kind::OwnState => {
                options.allow_writes
            }
        }
    }

    /// What a tool of this kind adds to its description about who
    /// approves it; nothing for tools that do not ask.
    pub(crate) fn approval_note(self, ask_before_writes: bool) -> Option<&'static str> {
        let posts = self == Kind::Posting;
        Some(match self {
            Kind::Read | Kind::Local | Kind::OwnState => return None,
            Kind::Posting if ask_before_writes => {
                " Before anything is posted, porter asks the person to confirm (an MCP elicitation naming the place, every file and the message); a declined question posts nothing."
            }
            Kind::PostChange if ask_before_writes => {
                " Before anything changes, porter asks the person to confirm (an MCP elicitation showing exactly what will change); a declined question changes nothing."
            }
            _ if ask_before_writes => {
                " Before it acts, porter asks the person to confirm (an MCP elicitation showing what will change); a declined question changes nothing."
            }
            _ if !posts => {
                " porter does not ask the person first: the MCP client's approval of this tool call is the only check, so call it only when the person asked for exactly this change."
            }
            _ => {
                " porter does not ask the person first: the MCP client's approval of this tool call is the only check, so call it only when the person asked for exactly this post."
            }
        })
    }
}

/// `RESOURCE_BYTES` is the most one resource content piece holds: the
/// 3,750,000 bytes that are 5,000,000 base64 characters, the size clients
/// commonly accept for one piece (the file view's limit for an image or
/// media returned as itself).
pub const RESOURCE_BYTES: usize = 3_750_000;

/// `REQUIRES_USER_INTERACTION` is the `_meta` key Claude Code reads to show
/// a tool call to the person even when it would approve it on its own.
pub const REQUIRES_USER_INTERACTION: &str = "anthropic/requiresUserInteraction";

/// `ASK_TIMEOUT` is how long an answer to a question stays good: one given
/// later does nothing, because the person may no longer remember what they
/// agreed to.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// `SAVE_FILE_BYTES` is the largest file `save_file` writes (100 MiB).
pub const SAVE_FILE_BYTES: u64 = 100 * 1024 * 1024;

/// `Transport` is how the server is reached, which decides what it may do
/// on the machine it runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Standard input and output: a server the person's own client started
    /// on their machine, so it may save files and attach files by path.
    Stdio,
    /// Streamable HTTP: possibly reached from elsewhere, so it never touches
    /// the local disk on a client's behalf.
    Http,
}

/// `Options` are the server's behaviour switches and limits. The default
/// is the safe one: stdio, read-only, asking before writes, marking posts as
/// AI-generated.
// Each flag is an independent switch named by its own setting.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone)]
pub struct Options {
    /// How the server is reached.
    pub transport: Transport,
    /// Whether the write tools are listed.
    pub allow_writes: bool,
    /// Whether writes ask the person first. Turning it off leaves approval
    /// to the client entirely: a client that auto-approves then posts
    /// whatever the model writes.
    pub ask_before_writes: bool,
    /// Whether posts carry the `ai_generated_by` prop.
    pub mark_ai_generated: bool,
    /// Where `save_file` writes.
    pub download_dir: PathBuf,
    /// The person's home directory, which `~` in an attached path means.
    pub home: PathBuf,
    /// The most bytes of recently read files kept for paging.
    pub file_cache_bytes: u64,
    /// The file view's limits.
    pub view: porter_fileview::Options,
    /// How long an answer to a question stays good.
    pub ask_timeout: Duration,
    /// Whether asking tools carry `_meta["anthropic/requiresUserInteraction"]`
    /// so Claude Code shows each call to the person; only with
    /// `ask_before_writes` off (porter then asks nothing itself).
    pub force_human_in_the_loop: bool,
    /// The most bytes one piece of a resource read holds (a document's
    /// text, an image, media); a file that does not fit is refused, naming
    /// `read_file` and `save_file`. See [`RESOURCE_BYTES`].
    pub resource_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            transport: Transport::Stdio,
            allow_writes: false,
            ask_before_writes: true,
            mark_ai_generated: true,
            download_dir: PathBuf::new(),
            home: PathBuf::new(),
            file_cache_bytes: FILE_CACHE_BYTES,
            view: porter_fileview::Options::default(),
            ask_timeout: ASK_TIMEOUT,
            force_human_in_the_loop: false,
            resource_bytes: RESOURCE_BYTES,
        }
    }
}

impl Options {
    /// `from_settings` takes the switches from the environment's settings.
    #[must_use]
    pub fn from_settings(settings: &Settings, transport: Transport) -> Options {
        Options {
            transport,
            allow_writes: settings.allow_writes,
            ask_before_writes: settings.ask_before_writes,
            mark_ai_generated: settings.mark_ai_generated,
            download_dir: settings.download_dir.clone(),
            file_cache_bytes: settings.file_cache_bytes,
            force_human_in_the_loop: settings.force_human_in_the_loop,
            view: porter_fileview::Options {
                attach_pdf: settings.attach_pdf,
                ..porter_fileview::Options::default()
            },
            ..Options::default()
        }
    }
}
