//! Mattermost's own JavaScript client (Client4, `@mattermost/client` on
//! npm) against the emulator: the Node test in `tests/client4/` drives it
//! against two running emulators, and any call that fails means the
//! emulator is wrong.
//!
//! Needs Node 20+ and the test's packages: `npm ci --prefix tests/client4`
//! (from the workspace root; the test command does it).

use std::process::Command;

use porter_mmsim::{Seed, Sim, start};

/// `SMALL_MAX_FILE_BYTES` is the upload limit of the second emulator, small
/// so the 413 path is cheap to reach.
const SMALL_MAX_FILE_BYTES: u64 = 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client4_works_against_the_emulator_unchanged() {
    let root = porter_test::checkout_root();
    let test_dir = root.join("tests/client4");
    assert!(
        test_dir.join("node_modules/@mattermost/client").is_dir(),
        "the Node packages of the Client4 test are missing: run `npm ci --prefix tests/client4` in {}",
        root.display()
    );

    let demo = Sim::new(&Seed::demo()).expect("the demo seed is valid");
    let mut small_seed = Seed::demo();
    small_seed.config.max_file_size = SMALL_MAX_FILE_BYTES;
    let small = Sim::new(&small_seed).expect("the small seed is valid");
    let loopback = "127.0.0.1:0".parse().expect("a loopback address");
    let demo_server = start(demo.clone(), loopback)
        .await
        .expect("the demo emulator starts");
    let small_server = start(small.clone(), loopback)
        .await
        .expect("the small emulator starts");

    let token = |sim: &Sim, name: &str| sim.token_for(name).expect("the demo user has a token");
    let mut command = Command::new("node");
    command
        .arg("--test")
        .arg("--test-reporter=spec")
        // The directory: node runs every `*.test.mjs` in it (one file per
        // part of the API), leaving node_modules alone.
        .arg(&test_dir)
        .current_dir(&root)
        .env("MM_URL", &demo_server.url)
        .env("MM_TOKEN", token(&demo, "alice"))
        .env("MM_TOKEN_BOB", token(&demo, "bob"))
        .env("MM_TOKEN_CAROL", token(&demo, "carol"))
        .env("MM_SMALL_URL", &small_server.url)
        .env("MM_SMALL_TOKEN", token(&small, "alice"))
        .env("MM_SMALL_MAX_FILE_SIZE", SMALL_MAX_FILE_BYTES.to_string());
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("the node runner thread joins")
        .expect("node runs (is Node 20+ installed?)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Captured by the test harness; shown with `--nocapture`.
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the Client4 test failed ({}):\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        output.status
    );

    // The Node test only reads through GETs and search POSTs before it
    // writes; the record shows it reached the routes it meant to.
    let paths: Vec<String> = demo.requests().into_iter().map(|r| r.path).collect();
    for expected in [
        "/api/v4/users/me",
        "/api/v4/users/me/teams",
        "/api/v4/files",
        "/api/v4/posts",
        "/api/v4/channels/direct",
        "/api/v4/channels/group",
        "/api/v4/users/usernames",
    ] {
        assert!(
            paths.iter().any(|p| p == expected),
            "Client4 never called {expected}"
        );
    }
    demo_server.shutdown().await;
    small_server.shutdown().await;
}
