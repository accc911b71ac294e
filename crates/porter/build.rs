//! Links the `porter` binary with packed relative relocations (`DT_RELR`)
//! where the C library it links against can load them. A position-
//! independent executable of porter's size carries about 200,000 relative
//! relocations; in the classic form each takes 24 bytes (4.5 MiB of the
//! file), packed they take a few kilobytes.
//!
//! Only glibc 2.36 and newer load `DT_RELR`, and mark it by defining the
//! symbol version `GLIBC_ABI_DT_RELR`, which the linker then makes the
//! binary require, so that an older loader refuses it with a clear message
//! rather than starting it unrelocated. The flag is therefore passed only
//! when building for the machine the build runs on, with glibc, and that
//! machine's `libc.so.6` (as the C compiler that links finds it) defines
//! that version: LLD packs even where it does not, and the binary would
//! then crash on the very system it was built on. Elsewhere porter links as
//! before.
//!
//! A release build on x86_64 Linux, linked by the LLD that rustc uses there
//! by default since 1.90, also folds identical functions and constants
//! (`--icf=all`): generic code instantiated for types of one layout often
//! compiles to the same bytes, and LLVM's own merging leaves some of it.
//! It takes 0.32 MiB off the binary. Rust gives no promise that two
//! functions have different addresses, so folding them is sound. Another
//! linker (GNU ld does not know the flag) or an older rustc links as before.

use std::path::PathBuf;
use std::process::Command;

/// The symbol version that glibc 2.36 and newer define for `DT_RELR`.
const RELR_VERSION: &[u8] = b"GLIBC_ABI_DT_RELR";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    if loads_packed_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    if folds_identical_code() {
        println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
    }
}

/// Whether this is a release build for x86_64 Linux with glibc, by a rustc
/// of 1.90 or later, with no linker chosen other than its own LLD.
fn folds_identical_code() -> bool {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("PROFILE") != "release"
        || var("TARGET") != "x86_64-unknown-linux-gnu"
        || std::env::var_os("RUSTC_LINKER").is_some()
        || var("CARGO_ENCODED_RUSTFLAGS").contains("link")
    {
        return false;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(output) = Command::new(rustc).arg("--version").output() else {
        return false;
    };
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let version = String::from_utf8_lossy(&output.stdout);
    let mut numbers = version
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .split(['.', '-'])
        .map(|part| part.parse::<u32>().unwrap_or(0));
    let (major, minor) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    (major, minor) >= (1, 90)
}

/// Whether the binary is built for this machine, on glibc, and this
/// machine's glibc defines `GLIBC_ABI_DT_RELR`.
fn loads_packed_relocations() -> bool {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || var("HOST") != var("TARGET")
    {
        return false;
    }
    let Some(libc) = linked_libc() else {
        return false;
    };
    println!("cargo:rerun-if-changed={}", libc.display());
    std::fs::read(&libc).is_ok_and(|bytes| {
        bytes
            .windows(RELR_VERSION.len())
            .any(|window| window == RELR_VERSION)
    })
}

/// The `libc.so.6` that the C compiler which links porter finds (cargo's
/// `RUSTC_LINKER` when one is configured, else `cc`), when it finds one.
fn linked_libc() -> Option<PathBuf> {
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_owned());
    let output = Command::new(linker)
        .arg("-print-file-name=libc.so.6")
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    (output.status.success() && path.is_absolute()).then_some(path)
}
