//! The process's CPU time, which the CPU budget is counted in: the
//! confined worker's limit is in CPU time too, and time by the clock would
//! count the waiting of a busy machine against the recording.

/// Seconds of CPU this process has used, where the system says.
// Always known on Unix; the type is the one the other systems share.
#[cfg(unix)]
#[allow(clippy::unnecessary_wraps)]
pub(crate) fn process_seconds() -> Option<f64> {
    let time = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Some(time.tv_sec as f64 + time.tv_nsec as f64 / 1e9)
}

/// Elsewhere the budget is counted by the clock.
#[cfg(not(unix))]
pub(crate) fn process_seconds() -> Option<f64> {
    None
}
