//! The per-run byte budget that makes the inbox tree cap hold exactly under
//! concurrent captures: bytes are reserved before they are written and
//! released when a file is aborted, removed or purged.
//!
//! In one process the budget is a map in memory ([`Usage`]). When several
//! processes share the records (gateway replicas on one PostgreSQL), the
//! records keep it instead ([`SharedBudget`]): one reservation per capture,
//! checked against the run's recorded files and every other live
//! reservation under the run's row lock, so the cap holds across replicas.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::model::{Event, FileRecord, InboxError, NewEvent, RunId};
use crate::store::Records;

/// `NameClaim` is what [`Budget::claim_name`] found for a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameClaim {
    /// Another process's capture or a recorded file has it.
    Taken,
    /// Claimed in the shared records: no other writer puts bytes under it
    /// until the claim ends.
    Claimed,
    /// Records of one process keep no claims: the blob store's commit
    /// decides whether the name is free.
    Unclaimed,
}

/// `Ticket` is one capture's hold on the budget: its name in a shared
/// budget and the bytes it holds.
#[derive(Debug)]
pub(crate) struct Ticket {
    id: uuid::Uuid,
    held: u64,
    /// Whether a shared budget holds a name for this capture (possibly
    /// with no bytes yet).
    named: bool,
}

impl Ticket {
    pub(crate) fn new() -> Self {
        Self {
            id: uuid::Uuid::new_v4(),
            held: 0,
            named: false,
        }
    }

    /// The bytes this capture holds.
    pub(crate) fn held(&self) -> u64 {
        self.held
    }
}

/// `Budget` is the inbox's byte budget: in this process's memory, or kept
/// by the records for every process that shares them.
pub(crate) struct Budget {
    usage: Usage,
}

impl Budget {
    pub(crate) fn new() -> Self {
        Self {
            usage: Usage::default(),
        }
    }

    /// Adds `bytes` to what `ticket` holds in `run` if the run stays within
    /// `cap`; `Ok(false)` when it would not (the ticket keeps what it had).
    pub(crate) fn reserve(
        &self,
        records: &dyn Records,
        run: RunId,
        ticket: &mut Ticket,
        bytes: u64,
        cap: u64,
    ) -> Result<bool, InboxError> {
        let fits = if let Some(shared) = records.budget() {
            let Some(total) = ticket.held.checked_add(bytes) else {
                return Ok(false);
            };
            shared.reserve(run, ticket.id, total, cap)?
        } else {
            self.usage
                .reserve(run, bytes, cap, || records.inbox_bytes(run))?
        };
        if fits {
            ticket.held += bytes;
        }
        Ok(fits)
    }

    /// Gives back what `ticket` holds. A shared reservation that cannot be
    /// dropped now lapses on its own, so that is only logged.
    pub(crate) fn release(&self, records: &dyn Records, run: RunId, ticket: &mut Ticket) {
        if ticket.held == 0 && !ticket.named {
            return;
        }
        if let Some(shared) = records.budget() {
            if let Err(error) = shared.release(ticket.id) {
                tracing::warn!(run = %run, %error, "a reservation could not be given back; it lapses on its own");
            }
        } else {
            self.usage.release(run, ticket.held);
        }
        ticket.held = 0;
        ticket.named = false;
    }

    /// Records a kept file whose bytes `ticket` holds, with the event that
    /// announces it, in one step; from then on the file's record counts
    /// the bytes.
    pub(crate) fn record_file(
        records: &dyn Records,
        file: &FileRecord,
        ticket: &mut Ticket,
        announce: &NewEvent,
    ) -> Result<Event, InboxError> {
        let event = if let Some(shared) = records.budget() {
            shared.insert_reserved_file(file, ticket.id, announce)?
        } else {
            records.insert_file(file, announce)?
        };
        ticket.held = 0;
        ticket.named = false;
        Ok(event)
    }

    /// Claims `path` for `ticket`'s capture before its bytes go under that
    /// name. Only a shared budget keeps claims; in one process the blob
    /// store's commit already refuses a taken name.
    pub(crate) fn claim_name(
        records: &dyn Records,
        run: RunId,
        ticket: &mut Ticket,
        path: &str,
    ) -> Result<NameClaim, InboxError> {
        let Some(shared) = records.budget() else {
            return Ok(NameClaim::Unclaimed);
        };
        ticket.named = true;
        Ok(if shared.claim_name(run, ticket.id, path)? {
            NameClaim::Claimed
        } else {
            NameClaim::Taken
        })
    }

    /// Frees the bytes of a file whose record was dropped.
    pub(crate) fn freed(&self, records: &dyn Records, run: RunId, bytes: u64) {
        if records.budget().is_none() {
            self.usage.release(run, bytes);
        }
    }

    /// Forgets a run's count (its inbox was purged).
    pub(crate) fn forget(&self, run: RunId) {
        self.usage.forget(run);
    }

    /// The bytes a run holds, counting captures in flight.
    pub(crate) fn current(&self, records: &dyn Records, run: RunId) -> Result<u64, InboxError> {
        if let Some(shared) = records.budget() {
            return shared.used(run);
        }
        match self.usage.current(run) {
            Some(used) => Ok(used),
            None => records.inbox_bytes(run),
        }
    }
}

/// Why a file over the per-file cap is not kept.
pub(crate) fn over_file_limit(limit: u64) -> String {
    format!(
        "over the {} limit for one file",
        porter_fileview::human_size(limit)
    )
}

/// Why a file that would pass the run's inbox cap is not kept.
pub(crate) fn over_inbox_limit(limit: u64) -> String {
    format!(
        "over the {} limit for this run's inbox; remove files to make room",
        porter_fileview::human_size(limit)
    )
}

/// `Usage` counts, per run, the bytes of recorded files plus the bytes
/// reserved by captures in flight. A run's count is loaded from the records
/// the first time it is needed; from then on every change goes through here.
#[derive(Default)]
pub(crate) struct Usage {
    used: Mutex<HashMap<RunId, u64>>,
}

impl Usage {
    /// Reserves `bytes` for `run` if the run stays within `cap`; `Ok(false)`
    /// when it would not (nothing is reserved then). `load` gives the bytes
    /// already recorded, for a run not counted yet.
    pub(crate) fn reserve(
        &self,
        run: RunId,
        bytes: u64,
        cap: u64,
        load: impl FnOnce() -> Result<u64, InboxError>,
    ) -> Result<bool, InboxError> {
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        let current = if let Some(n) = used.get(&run) {
            *n
        } else {
            let n = load()?;
            used.insert(run, n);
            n
        };
        match current.checked_add(bytes) {
            Some(total) if total <= cap => {
                used.insert(run, total);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Gives back bytes reserved earlier.
    pub(crate) fn release(&self, run: RunId, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = used.get_mut(&run) {
            *n = n.saturating_sub(bytes);
        }
    }

    /// Forgets a run's count, so it is loaded again from the records.
    pub(crate) fn forget(&self, run: RunId) {
        self.used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&run);
    }

    /// The bytes a run holds or has reserved, when counted already.
    pub(crate) fn current(&self, run: RunId) -> Option<u64> {
        self.used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&run)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reservation_fits_up_to_the_last_byte_and_not_one_more() {
        let usage = Usage::default();
        let run = RunId::new();
        assert!(usage.reserve(run, 60, 100, || Ok(30)).expect("reserve"));
        assert!(!usage.reserve(run, 11, 100, || Ok(0)).expect("reserve"));
        assert!(usage.reserve(run, 10, 100, || Ok(0)).expect("reserve"));
        usage.release(run, 25);
        assert_eq!(usage.current(run), Some(75));
        assert!(
            !usage
                .reserve(run, u64::MAX, u64::MAX, || Ok(0))
                .expect("no overflow")
        );
    }

    #[test]
    fn limits_read_as_people_say_them() {
        assert_eq!(
            over_file_limit(64 * 1024 * 1024),
            "over the 64 MiB limit for one file"
        );
    }
}
