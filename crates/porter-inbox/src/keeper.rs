//! Streaming a file into the inbox (HTTP bodies, downloads) without holding
//! it in memory.

use std::io::{self, Write};

use sha2::{Digest as _, Sha256};

use crate::inbox::Inbox;
use crate::limits::{Ticket, over_file_limit, over_inbox_limit};
use crate::media::{SNIFF_BYTES, media_type};
use crate::model::{InboxError, Incoming, Outcome, RunId, hex};
use crate::store::Staged;

/// `Keeper` streams one file into the inbox (HTTP bodies, downloads).
///
/// Each `write` reserves its bytes against both caps before writing them.
/// When a write would pass either cap, the staged bytes are removed at once,
/// the reservation is given back, and that `write` and every later one
/// fail with [`io::ErrorKind::FileTooLarge`] (per-file cap) or
/// [`io::ErrorKind::QuotaExceeded`] (inbox cap), so a copy loop stops
/// instead of fetching bytes that will not be kept. The caller then calls
/// [`Keeper::finish`], which answers [`Outcome::NotKept`] with the reason:
/// a refused write is not an [`InboxError`]. A disk failure is: `write`
/// fails with it and `finish` returns it.
///
/// Dropping a keeper without `finish` removes what it wrote.
///
/// [`Inbox::decoded_keeper`] makes one for a file whose size is known up
/// front and whose bytes the caller hashes itself while it makes them (a
/// capture that decodes base64 on one core and hashes on the other): its
/// writes only write, and [`Keeper::finish_decoded`] ends it.
pub struct Keeper {
    inbox: Inbox,
    run: RunId,
    incoming: Incoming,
    staged: Option<Box<dyn Staged>>,
    /// The SHA-256 of the bytes written so far; `None` when the caller
    /// hashes them ([`Inbox::decoded_keeper`]).
    hasher: Option<Sha256>,
    /// Bytes written to the staged file.
    written: u64,
    /// The first [`SNIFF_BYTES`], to tell the type by.
    head: Vec<u8>,
    /// Holds the bytes written, all of them reserved until committed or
    /// released.
    ticket: Ticket,
    /// Bytes offered, including those of a refused write.
    offered: u64,
    /// A size announced up front (Content-Length), for the not-kept stub.
    expected: Option<u64>,
    refused: Option<(io::ErrorKind, String)>,
    failed: Option<io::Error>,
}

impl Inbox {
    /// Starts streaming a file into the inbox; see [`Keeper`] for how the
    /// caps are held.
    pub fn keeper(&self, run: RunId, incoming: Incoming) -> Result<Keeper, InboxError> {
        Ok(match self.staging(run)? {
            Ok(staged) => Keeper::new(self.clone(), run, incoming, Some(staged), None),
            Err(why) => Keeper::new(self.clone(), run, incoming, None, Some(why)),
        })
    }

    /// Starts writing a file of exactly `size` bytes whose bytes the caller
    /// still holds whole when it ends, and hashes itself as it writes them:
    /// a capture decoding a long base64 string, which hashes each decoded
    /// block on another core while it writes the block here and decodes the
    /// next. The keeper does not hash (the bytes are hashed once, beside the
    /// decoding, not again here); the whole `size` is reserved at once, so
    /// a file over either cap is refused before any byte is written and a
    /// budget kept in shared records is asked once, not once a block. End
    /// it with [`Keeper::finish_decoded`]; `incoming`'s name and declared
    /// type are set there, when the caller knows them.
    pub fn decoded_keeper(
        &self,
        run: RunId,
        incoming: Incoming,
        size: u64,
    ) -> Result<Keeper, InboxError> {
        let mut keeper = self.keeper(run, incoming)?;
        keeper.hasher = None;
        keeper.expected = Some(size);
        // A refusal (a purged run, a cap) is remembered and answered by
        // `finish_decoded`; only a failing budget is an error here.
        if keeper.check_refused().is_ok()
            && let Err(error) = keeper.reserve_up_to(size)
            && keeper.refused.is_none()
        {
            return Err(error.into());
        }
        Ok(keeper)
    }
}

impl Keeper {
    pub(crate) fn new(
        inbox: Inbox,
        run: RunId,
        incoming: Incoming,
        staged: Option<Box<dyn Staged>>,
        refused: Option<String>,
    ) -> Self {
        Self {
            inbox,
            run,
            incoming,
            staged,
            hasher: Some(Sha256::new()),
            written: 0,
            head: Vec::new(),
            ticket: Ticket::new(),
            offered: 0,
            expected: None,
            refused: refused.map(|why| (io::ErrorKind::PermissionDenied, why)),
            failed: None,
        }
    }

    /// Announces the size the file will have (a Content-Length), so that a
    /// file over the per-file cap, or larger than the room left in the
    /// run's inbox, is refused before any byte is fetched.
    pub fn expect_size(&mut self, size: u64) -> io::Result<()> {
        self.expected = Some(size);
        self.check_refused()?;
        let limits = self.inbox.limits();
        if size > limits.file_max_bytes {
            return Err(self.refuse(
                io::ErrorKind::FileTooLarge,
                over_file_limit(limits.file_max_bytes),
            ));
        }
        let used = self.inbox.inbox_bytes(self.run).map_err(io::Error::other)?;
        if used.saturating_add(size.saturating_sub(self.ticket.held())) > limits.inbox_max_bytes {
            return Err(self.refuse(
                io::ErrorKind::QuotaExceeded,
                over_inbox_limit(limits.inbox_max_bytes),
            ));
        }
        Ok(())
    }

    fn check_refused(&self) -> io::Result<()> {
        if let Some((kind, why)) = &self.refused {
            return Err(io::Error::new(*kind, why.clone()));
        }
        if let Some(e) = &self.failed {
            return Err(io::Error::new(e.kind(), e.to_string()));
        }
        Ok(())
    }

    /// Gives up the file: removes the staged bytes, releases the
    /// reservation, and remembers why.
    fn refuse(&mut self, kind: io::ErrorKind, why: String) -> io::Error {
        self.staged = None;
        self.inbox.release(self.run, &mut self.ticket);
        let error = io::Error::new(kind, why.clone());
        self.refused = Some((kind, why));
        error
    }

    /// Makes the reservation hold at least `total` bytes, refusing the file
    /// (see [`Keeper::refuse`]) when that passes either cap.
    fn reserve_up_to(&mut self, total: u64) -> io::Result<()> {
        let limits = self.inbox.limits();
        if total > limits.file_max_bytes {
            return Err(self.refuse(
                io::ErrorKind::FileTooLarge,
                over_file_limit(limits.file_max_bytes),
            ));
        }
        let more = total.saturating_sub(self.ticket.held());
        if more == 0 {
            return Ok(());
        }
        let fits = self
            .inbox
            .reserve(self.run, &mut self.ticket, more)
            .map_err(io::Error::other)?;
        if !fits {
            return Err(self.refuse(
                io::ErrorKind::QuotaExceeded,
                over_inbox_limit(limits.inbox_max_bytes),
            ));
        }
        Ok(())
    }

    /// Ends the file: names it, records it, emits `file_captured`; or says
    /// why it was not kept.
    pub fn finish(mut self) -> Result<Outcome, InboxError> {
        if let Some(e) = self.failed.take() {
            return Err(e.into());
        }
        let name_hint = self
            .incoming
            .name
            .clone()
            .unwrap_or_else(|| self.incoming.fallback_name.clone());
        let media_type = media_type(
            self.incoming.declared_type.as_deref(),
            &self.head,
            &name_hint,
        );
        if let Some((_, why)) = self.refused.take() {
            return Ok(Outcome::NotKept {
                why,
                media_type,
                size: self.offered.max(self.expected.unwrap_or(0)),
                origin: self.incoming.origin.to_string(),
            });
        }
        let Some(hasher) = self.hasher.take() else {
            return Err(io::Error::other(
                "a keeper whose caller hashes the bytes ends with finish_decoded",
            )
            .into());
        };
        let sha256 = hex(&hasher.finalize());
        self.commit(media_type, sha256)
    }

    /// Ends a file made by [`Inbox::decoded_keeper`]: `bytes` are the file,
    /// every one of them written through this keeper in order, and `sha256`
    /// their SHA-256. It is named and recorded exactly as
    /// [`Inbox::keep_bytes`] would keep `bytes` (the media type sniffed
    /// from all of them, not only the head), under `name` and
    /// `declared_type`; or it is not kept, for the reason a refused write
    /// gave. Bytes that are not what was written are an error, and nothing
    /// is kept.
    pub fn finish_decoded(
        mut self,
        name: Option<&str>,
        declared_type: Option<&str>,
        bytes: &[u8],
        sha256: &[u8; 32],
    ) -> Result<Outcome, InboxError> {
        if let Some(e) = self.failed.take() {
            return Err(e.into());
        }
        self.incoming.name = name.map(str::to_owned);
        self.incoming.declared_type = declared_type.map(str::to_owned);
        let name_hint = name.unwrap_or(&self.incoming.fallback_name);
        let media_type = media_type(declared_type, bytes, name_hint);
        if let Some((_, why)) = self.refused.take() {
            return Ok(Outcome::NotKept {
                why,
                media_type,
                size: bytes.len() as u64,
                origin: self.incoming.origin.to_string(),
            });
        }
        if self.hasher.is_some() {
            return Err(io::Error::other(
                "finish_decoded ends only a keeper made by decoded_keeper",
            )
            .into());
        }
        // The reservation was made for the size announced; a file of
        // another size would leave the budget counting the difference.
        if self.written != bytes.len() as u64 || self.ticket.held() != self.written {
            return Err(io::Error::other(format!(
                "the capture wrote {} bytes of a {}-byte file announced as {} bytes",
                self.written,
                bytes.len(),
                self.ticket.held()
            ))
            .into());
        }
        self.commit(media_type, hex(sha256))
    }

    /// Names the staged file, records it and settles the reservation.
    fn commit(&mut self, media_type: String, sha256: String) -> Result<Outcome, InboxError> {
        let Some(staged) = self.staged.take() else {
            return Err(io::Error::other("the keeper lost its staged file").into());
        };
        let size = self.written;
        let committed = self.inbox.commit(
            self.run,
            staged,
            &self.incoming,
            media_type,
            size,
            sha256,
            &mut self.ticket,
        );
        // Kept or not, the reservation is settled here: a kept file's bytes
        // stay counted as recorded, a failed one's are given back.
        self.inbox.release(self.run, &mut self.ticket);
        committed.map(Outcome::Kept)
    }
}

impl Write for Keeper {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.check_refused()?;
        if buf.is_empty() {
            return Ok(0);
        }
        let len = buf.len() as u64;
        self.offered = self.offered.saturating_add(len);
        self.reserve_up_to(self.written.saturating_add(len))?;
        let written = match self.staged.as_mut() {
            Some(staged) => staged.write_all(buf),
            None => Err(io::Error::other("the keeper has no staged file")),
        };
        if let Err(e) = written {
            self.staged = None;
            self.inbox.release(self.run, &mut self.ticket);
            let reported = io::Error::new(e.kind(), e.to_string());
            self.failed = Some(e);
            return Err(reported);
        }
        self.written += len;
        if let Some(hasher) = &mut self.hasher {
            hasher.update(buf);
        }
        if self.head.len() < SNIFF_BYTES {
            let take = (SNIFF_BYTES - self.head.len()).min(buf.len());
            self.head.extend_from_slice(&buf[..take]);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.check_refused()?;
        self.staged.as_mut().map_or(Ok(()), Write::flush)
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.staged = None;
        self.inbox.release(self.run, &mut self.ticket);
    }
}
