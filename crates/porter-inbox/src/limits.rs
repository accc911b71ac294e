//! The per-run byte budget that makes the inbox tree cap hold exactly under
//! concurrent captures: bytes are reserved before they are written and
//! released when a file is aborted, removed or purged.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::{InboxError, RunId};

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
