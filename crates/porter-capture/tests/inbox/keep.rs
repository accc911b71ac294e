//! A keeper that keeps files in a real inbox the way the gateway's
//! `InboxKeep` (`porter-gateway`'s `session.rs`) does, shared by these
//! tests and `benches/capture.rs`.

use std::io::Write as _;

use porter_capture::{Found, Keep, Staging};
use porter_inbox::{Inbox, InboxError, Incoming, Origin, Outcome, RunId};

/// `InboxKeep` keeps files in `inbox`'s run `run`: whole through
/// `keep_bytes`, and long ones, when `stage_long`, written as they are
/// decoded through `decoded_keeper`.
pub struct InboxKeep {
    pub inbox: Inbox,
    pub run: RunId,
    pub stage_long: bool,
}

/// What a found file comes in as.
fn incoming(name: Option<&str>, declared_type: Option<&str>) -> Incoming {
    Incoming {
        name: name.map(str::to_owned),
        fallback_name: "get_file".to_owned(),
        dir: None,
        declared_type: declared_type.map(str::to_owned),
        origin: Origin::Mcp {
            server: "files".to_owned(),
            tool: "get_file".to_owned(),
        },
        call: r#"{"tool":"mcp__files__get_file","arguments":{}}"#.to_owned(),
    }
}

/// Bytes as lower-case hex, as the inbox records a SHA-256.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut hex, b| {
        use std::fmt::Write as _;
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

fn stub(outcome: Result<Outcome, InboxError>) -> String {
    match outcome {
        Ok(outcome) => outcome.stub(),
        Err(error) => format!("[file not kept: {error}]"),
    }
}

impl Keep for InboxKeep {
    fn keep(&self, found: Found<'_>) -> String {
        let incoming = incoming(found.name, found.declared_type);
        stub(self.inbox.keep_bytes(self.run, incoming, found.bytes))
    }

    fn stage(&self, size: u64) -> Option<Box<dyn Staging + '_>> {
        if !self.stage_long {
            return None;
        }
        let keeper = self
            .inbox
            .decoded_keeper(self.run, incoming(None, None), size)
            .ok()?;
        Some(Box::new(InboxStaging { keeper }))
    }
}

/// `InboxStaging` is a file written into the inbox as it is decoded.
struct InboxStaging {
    keeper: porter_inbox::Keeper,
}

impl Staging for InboxStaging {
    fn write(&mut self, block: &[u8]) -> std::io::Result<()> {
        self.keeper.write_all(block)
    }

    fn keep(self: Box<Self>, found: Found<'_>, sha256: &[u8; 32]) -> String {
        stub(
            self.keeper
                .finish_decoded(found.name, found.declared_type, found.bytes, sha256),
        )
    }
}
