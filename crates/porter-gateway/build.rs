//! Generates the `porter.v1.Runs` gRPC service (messages and the server
//! trait) from the committed `proto/porter/v1/runs.proto`. `protox` compiles
//! the `.proto` in Rust, so building needs no `protoc` on the machine.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let proto = "porter/v1/runs.proto";
    println!("cargo:rerun-if-changed={}", root.join(proto).display());
    let descriptors = protox::compile([proto], [&root])?;
    tonic_prost_build::configure()
        .build_client(false)
        .build_transport(false)
        .emit_rerun_if_changed(false)
        .compile_fds(descriptors)?;
    Ok(())
}
