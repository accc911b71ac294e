//! Jobs that one process at a time should run when several share the
//! records (gateway replicas): purging expired inboxes and sweeping staged
//! objects left by a killed capture.

/// `Job` names a job that runs on one process at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// Purging the inboxes of runs that ended more than `inbox_ttl` ago.
    Purge,
    /// Removing staged objects that a killed capture left behind.
    Sweep,
}

impl Job {
    /// The job's name, for logs.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Purge => "purge",
            Self::Sweep => "stale sweep",
        }
    }
}

/// `JobLock` is the right to run a [`Job`] now; dropping it gives the right
/// back. A process that dies gives it back with its connection.
#[derive(Default)]
pub struct JobLock {
    _held: Option<Box<dyn Send>>,
}

impl JobLock {
    /// A lock that holds `what` (a connection, a guard) until dropped.
    #[must_use]
    pub fn holding(what: Box<dyn Send>) -> Self {
        Self { _held: Some(what) }
    }
}

impl std::fmt::Debug for JobLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobLock").finish_non_exhaustive()
    }
}
