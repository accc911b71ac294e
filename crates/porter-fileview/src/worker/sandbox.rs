//! How a worker confines itself before it reads a byte of its file:
//! resource limits, then a seccomp filter.
//!
//! Limits: address space (what the worker holds at start plus the memory
//! limit), CPU time (SIGXCPU at the limit, SIGKILL a second later), file
//! size 0 (no file can be written), core dumps 0.
//!
//! The filter allows: `read` of standard input only; `write` to standard
//! output and error only; memory (`mmap` and `mprotect` without execute
//! permission, `munmap`, `mremap`, `brk`, `madvise`); threads (`clone` of a
//! thread only, `futex`, `set_robust_list`, `rseq`, `sched_yield`,
//! `sched_getaffinity`) since the JPEG decoder and rayon start some; signals
//! of its own (`rt_sigaction`, `rt_sigprocmask`, `rt_sigreturn`,
//! `sigaltstack`, `tgkill` of itself, for the stack-overflow report and
//! `abort`); `getrandom`, clocks, `getpid`, `gettid`, `close`, `exit` and
//! `exit_group`. Every other call fails with `EPERM` (`clone3` with `ENOSYS`,
//! so that thread creation falls back to `clone`): no `open` of any path,
//! no socket, no `execve`, no `fork`, no `ptrace`, no `kill` of another
//! process.

use std::collections::BTreeMap;

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::limits::Limits;

/// Applies the limits and the filter to this process.
pub(super) fn confine(limits: &Limits) -> Result<(), String> {
    let held = held_address_space().unwrap_or(0);
    let address_space = held.saturating_add(limits.memory_bytes);
    set(Resource::As, address_space, "the address space")?;
    let cpu = limits.cpu_seconds;
    set_pair(Resource::Cpu, cpu, cpu.saturating_add(1), "the CPU time")?;
    set(Resource::Fsize, 0, "the file size")?;
    set(Resource::Core, 0, "core dumps")?;
    let allowed = allow_list()?;
    let clone3 = no_clone3()?;
    // Filters stack: the kernel runs every one and keeps the strictest
    // answer. The clone3 filter (ENOSYS for clone3, all else allowed) goes
    // first, while installing the next is still allowed; the allow list,
    // which lets clone3 through, last: so clone3 fails with ENOSYS, and
    // everything else as the allow list says.
    seccompiler::apply_filter(&clone3).map_err(|e| format!("the clone3 filter: {e}"))?;
    seccompiler::apply_filter(&allowed).map_err(|e| format!("the seccomp filter: {e}"))
}

fn set(resource: Resource, value: u64, what: &str) -> Result<(), String> {
    set_pair(resource, value, value, what)
}

/// Sets a soft and hard limit, never above a hard limit already in place.
fn set_pair(resource: Resource, soft: u64, hard: u64, what: &str) -> Result<(), String> {
    let current = getrlimit(resource);
    let ceiling = current.maximum.unwrap_or(u64::MAX);
    let limit = Rlimit {
        current: Some(soft.min(ceiling)),
        maximum: Some(hard.min(ceiling)),
    };
    setrlimit(resource, limit).map_err(|e| format!("the limit on {what}: {e}"))
}

/// The address space this process holds now, from `/proc/self/statm`
/// (read before the filter forbids opening it).
fn held_address_space() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().next()?.parse().ok()?;
    Some(pages.saturating_mul(rustix::param::page_size() as u64))
}

fn target() -> Result<TargetArch, String> {
    if cfg!(target_arch = "x86_64") {
        Ok(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Ok(TargetArch::aarch64)
    } else if cfg!(target_arch = "riscv64") {
        Ok(TargetArch::riscv64)
    } else {
        Err(format!(
            "no seccomp filter is written for {}",
            std::env::consts::ARCH
        ))
    }
}

fn condition(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value)
        .map_err(|e| format!("the seccomp filter: {e}"))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| format!("the seccomp filter: {e}"))
}

/// The filter described in the module's documentation.
fn allow_list() -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let always = [
        libc::SYS_munmap,
        libc::SYS_mremap,
        libc::SYS_brk,
        libc::SYS_madvise,
        libc::SYS_futex,
        libc::SYS_set_robust_list,
        libc::SYS_rseq,
        libc::SYS_sched_yield,
        libc::SYS_sched_getaffinity,
        libc::SYS_rt_sigaction,
        libc::SYS_rt_sigprocmask,
        libc::SYS_rt_sigreturn,
        libc::SYS_sigaltstack,
        libc::SYS_getrandom,
        libc::SYS_clock_gettime,
        libc::SYS_clock_getres,
        libc::SYS_gettid,
        libc::SYS_getpid,
        libc::SYS_close,
        libc::SYS_exit,
        libc::SYS_exit_group,
        // Refused by the clone3 filter installed before this one.
        libc::SYS_clone3,
    ];
    for call in always {
        rules.insert(call, Vec::new());
    }
    // Standard input only.
    rules.insert(
        libc::SYS_read,
        vec![rule(vec![condition(0, SeccompCmpOp::Eq, 0)?])?],
    );
    // Standard output and error only.
    rules.insert(
        libc::SYS_write,
        vec![
            rule(vec![condition(0, SeccompCmpOp::Eq, 1)?])?,
            rule(vec![condition(0, SeccompCmpOp::Eq, 2)?])?,
        ],
    );
    // Memory that cannot be executed.
    let no_exec = libc::PROT_EXEC as u64;
    rules.insert(
        libc::SYS_mmap,
        vec![rule(vec![condition(
            2,
            SeccompCmpOp::MaskedEq(no_exec),
            0,
        )?])?],
    );
    rules.insert(
        libc::SYS_mprotect,
        vec![rule(vec![condition(
            2,
            SeccompCmpOp::MaskedEq(no_exec),
            0,
        )?])?],
    );
    // Threads only, never a new process.
    let thread = libc::CLONE_THREAD as u64;
    rules.insert(
        libc::SYS_clone,
        vec![rule(vec![condition(
            0,
            SeccompCmpOp::MaskedEq(thread),
            thread,
        )?])?],
    );
    // Signals to itself only (abort, the stack-overflow report).
    rules.insert(
        libc::SYS_tgkill,
        vec![rule(vec![condition(
            0,
            SeccompCmpOp::Eq,
            u64::from(std::process::id()),
        )?])?],
    );
    let allow = SeccompFilter::new(
        rules,
        SeccompAction::Errno(libc::EPERM as u32),
        SeccompAction::Allow,
        target()?,
    )
    .map_err(|e| format!("the seccomp filter: {e}"))?;
    allow
        .try_into()
        .map_err(|e: seccompiler::BackendError| format!("the seccomp filter: {e}"))
}

/// clone3 carries its flags in memory a filter cannot read: it fails with
/// ENOSYS, as on a kernel without it, and the C library falls back to
/// clone, whose flags the allow list checks.
fn no_clone3() -> Result<BpfProgram, String> {
    SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        target()?,
    )
    .map_err(|e| format!("the clone3 filter: {e}"))?
    .try_into()
    .map_err(|e: seccompiler::BackendError| format!("the clone3 filter: {e}"))
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    /// `PROBE` makes the test binary, started again by the test below, run
    /// the probe in place of the test.
    const PROBE: &str = "PORTER_FILEVIEW_SANDBOX_PROBE";
    const TEST: &str = "worker::sandbox::tests::a_confined_worker_opens_no_path_makes_no_socket_and_starts_no_program";
    const ALL_REFUSED: &str = "probe: every attempt was refused";

    #[test]
    fn a_confined_worker_opens_no_path_makes_no_socket_and_starts_no_program() {
        if std::env::var_os(PROBE).is_some() {
            probe();
            return;
        }
        let output = Command::new(std::env::current_exe().expect("the test binary"))
            .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
            .env(PROBE, "1")
            .output()
            .expect("the test binary runs again");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains(ALL_REFUSED),
            "{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Confines this process, then tries what a worker must not do.
    fn probe() {
        confine(&Limits {
            memory_bytes: 256 * 1024 * 1024,
            cpu_seconds: 20,
            ocr_languages: None,
            engines: crate::engines::Engines::NONE,
            warm: false,
            models_dir: None,
        })
        .expect("the process confines itself");
        let open = std::fs::File::open("/etc/passwd").map(drop);
        let create = std::fs::write(std::env::temp_dir().join("porter-probe"), b"x");
        let socket = std::net::TcpListener::bind("127.0.0.1:0").map(drop);
        let connect = std::net::UdpSocket::bind("127.0.0.1:0").map(drop);
        let exec = Command::new("/bin/true").status().map(drop);
        // Threads still work: the JPEG decoder's rayon needs them.
        let thread = std::thread::spawn(|| 6 * 7).join();
        // And memory: 64 MiB fit, 1 GiB does not.
        let mut fits: Vec<u8> = Vec::new();
        let fits = fits.try_reserve_exact(64 * 1024 * 1024);
        let mut over: Vec<u8> = Vec::new();
        let over = over.try_reserve_exact(1024 * 1024 * 1024);
        println!(
            "open {open:?} create {create:?} socket {socket:?} udp {connect:?} exec {exec:?} thread {thread:?} fits {fits:?} over {over:?}"
        );
        if open.is_err()
            && create.is_err()
            && socket.is_err()
            && connect.is_err()
            && exec.is_err()
            && thread.is_ok()
            && fits.is_ok()
            && over.is_err()
        {
            println!("{ALL_REFUSED}");
        }
    }
}
