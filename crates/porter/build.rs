//! Links the `porter` binary with packed relative relocations (`DT_RELR`) on
//! Linux with glibc. A position-independent executable of this size carries
//! about 200,000 relative relocations; in the classic form each takes 24
//! bytes (4.5 MiB of the file), packed they take a few kilobytes. The loader
//! must understand them: glibc 2.36 or newer (Debian 12, Ubuntu 22.10,
//! Fedora 37), which the README states. Other targets link as before.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
