//! The run HTTP API through `router().oneshot(..)` and through a real
//! loopback socket: authentication, runs another key may not read answering
//! like missing ones, paths that try to leave the inbox, the download's
//! headers, the SHA-256 that stops being vouched for once the file changes,
//! the event streams, and the roles.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::to_bytes;
use axum::http::{HeaderMap, StatusCode, header};
use porter_gateway::access::{KeyInfo, Keys};
use porter_gateway::api::{ApiState, router};
use porter_gateway::config::{Grant, Role};
use porter_gateway::file::Files;
use porter_inbox::{FileRecord, Inbox, Incoming, Limits, Origin, Outcome, Owner, RunId, RunInfo};
use serde_json::{Value, json};

#[path = "../common/loopback.rs"]
mod loopback;
use loopback::{http, serve};

/// A 1×1 PNG, made by hand: signature, IHDR, IDAT, IEND.
const PNG: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, b'I', b'H', b'D', b'R', 0, 0, 0,
    1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0d, b'I', b'D', b'A', b'T',
    0x78, 0x9c, 0x63, 0, 1, 0, 0, 5, 0, 1, 0x0d, 0x0a, 0x2d, 0xb4, 0, 0, 0, 0, b'I', b'E', b'N',
    b'D', 0xae, 0x42, 0x60, 0x82,
];
const HTML: &[u8] = b"<!doctype html><script>alert(document.cookie)</script>";
const SVG: &[u8] = b"<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>";
const SECRET: &str = "TOP SECRET outside the inbox";

/// Every key of the tests: two users of one tenant, one of another, a tenant
/// operator of each tenant, and an admin.
const ALICE: &str = "alice-key-0123456789";
const BOB: &str = "bob-key-0123456789";
const EVE: &str = "eve-key-0123456789";
const ACME_OPERATOR: &str = "acme-operator-key-0123456789";
const GLOBEX_OPERATOR: &str = "globex-operator-key-0123456789";
const ADMIN: &str = "admin-key-0123456789";

fn key(name: &str, secret: &str, tenant: &str, role: Role) -> KeyInfo {
    KeyInfo {
        name: name.to_owned(),
        secret: secret.to_owned(),
        tenant: tenant.to_owned(),
        role,
        grants: vec![Grant::File],
        volumes: Vec::new(),
    }
}

fn keys() -> Vec<KeyInfo> {
    vec![
        key("alice", ALICE, "acme", Role::User),
        key("bob", BOB, "acme", Role::User),
        key("eve", EVE, "globex", Role::User),
        key("acme-op", ACME_OPERATOR, "acme", Role::TenantOperator),
        key("globex-op", GLOBEX_OPERATOR, "globex", Role::TenantOperator),
        key("root", ADMIN, "ops", Role::Admin),
    ]
}

/// One gateway's worth of state: an inbox in a temp dir with three runs
/// (alice's, bob's, eve's), alice's holding a PNG, an HTML page, an SVG and
/// a note, and a secret file beside the inbox.
struct World {
    dir: tempfile::TempDir,
    inbox: Arc<Inbox>,
    app: Router,
    alice_run: RunInfo,
    bob_run: RunInfo,
    eve_run: RunInfo,
    png: FileRecord,
    html: FileRecord,
    svg: FileRecord,
    note: FileRecord,
}

fn owner(name: &str, tenant: &str) -> Owner {
    Owner {
        key_name: name.to_owned(),
        tenant: tenant.to_owned(),
    }
}

fn keep(inbox: &Inbox, run: RunId, name: &str, declared: Option<&str>, bytes: &[u8]) -> FileRecord {
    let incoming = Incoming {
        name: Some(name.to_owned()),
        fallback_name: "get_attachment".to_owned(),
        dir: None,
        declared_type: declared.map(str::to_owned),
        origin: Origin::Mcp {
            server: "files".to_owned(),
            tool: "get_attachment".to_owned(),
        },
        call: r#"{"tool":"get_attachment"}"#.to_owned(),
    };
    match inbox
        .keep_bytes(run, incoming, bytes)
        .expect("the inbox keeps it")
    {
        Outcome::Kept(record) => record,
        other @ Outcome::NotKept { .. } => panic!("{name} was not kept: {other:?}"),
    }
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temp dir");
        let inbox = Arc::new(
            Inbox::open(&dir.path().join("data"), Limits::default()).expect("the inbox opens"),
        );
        let alice_run = inbox.start_run(owner("alice", "acme")).expect("a run");
        let bob_run = inbox.start_run(owner("bob", "acme")).expect("a run");
        let eve_run = inbox.start_run(owner("eve", "globex")).expect("a run");
        let png = keep(&inbox, alice_run.id, "pixel.png", Some("image/png"), PNG);
        let html = keep(&inbox, alice_run.id, "page.html", Some("text/html"), HTML);
        let svg = keep(
            &inbox,
            alice_run.id,
            "drawing.svg",
            Some("image/svg+xml"),
            SVG,
        );
        let note = keep(
            &inbox,
            alice_run.id,
            "note.txt",
            Some("text/plain"),
            b"a note\n",
        );
        keep(
            &inbox,
            eve_run.id,
            "eve.txt",
            Some("text/plain"),
            b"eve's\n",
        );
        std::fs::write(dir.path().join("secret.txt"), SECRET).expect("the secret is written");
        let files = Arc::new(Files::new(Arc::clone(&inbox), BTreeMap::new()));
        let app = router(Arc::new(ApiState {
            inbox: Arc::clone(&inbox),
            files,
            keys: Keys::new(keys()),
        }));
        World {
            dir,
            inbox,
            app,
            alice_run,
            bob_run,
            eve_run,
            png,
            html,
            svg,
            note,
        }
    }

    /// Every `/v1` route of one run, as (method, uri, body).
    fn run_routes(&self, run: &str) -> Vec<(&'static str, String, Option<Value>)> {
        vec![
            (
                "POST",
                format!("/v1/runs/{run}/file"),
                Some(json!({"op": "ls"})),
            ),
            (
                "GET",
                format!("/v1/runs/{run}/inbox/{}", self.png.path),
                None,
            ),
            ("GET", format!("/v1/runs/{run}/events"), None),
            (
                "POST",
                format!("/v1/runs/{run}/downloads"),
                Some(json!({"path": self.png.path})),
            ),
        ]
    }
}

/// One answer: status, headers and the whole body.
#[derive(Debug)]
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: bytes::Bytes,
}

impl Answer {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|err| {
            panic!(
                "the body is not JSON ({err}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends one request through the router. Event streams never end, so their
/// body is not read (only the status and headers are kept) unless the
/// answer is an error.
async fn call(
    app: &Router,
    method: &str,
    uri: &str,
    key: Option<&str>,
    body: Option<&Value>,
) -> Answer {
    let body = body.map(|body| ("application/json", body.to_string().into_bytes()));
    let response = porter_test::router::send(app, method, uri, key, body).await;
    let status = response.status();
    let headers = response.headers().clone();
    let streaming = headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let body = if streaming {
        bytes::Bytes::new()
    } else {
        to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("the body reads")
    };
    Answer {
        status,
        headers,
        body,
    }
}

async fn get(app: &Router, uri: &str, key: &str) -> Answer {
    call(app, "GET", uri, Some(key), None).await
}

/// Sends raw bytes as one HTTP/1.1 request and reads the whole answer, for
/// paths a URL library would tidy up (`/../`) before sending.
async fn raw_request(addr: SocketAddr, target: &str, key: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let request = format!(
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .expect("the answer ends")
        .expect("read");
    String::from_utf8_lossy(&answer).into_owned()
}

fn file_url(record: &FileRecord) -> String {
    format!("/v1/runs/{}/inbox/{}", record.run, record.path)
}

/// Headers that must match between two answers that should be the same
/// (all but `date`, which a socket adds).
fn same_headers(a: &HeaderMap, b: &HeaderMap) -> bool {
    let strip = |h: &HeaderMap| {
        let mut h = h.clone();
        h.remove(header::DATE);
        h
    };
    strip(a) == strip(b)
}

#[tokio::test]
async fn every_route_answers_a_missing_and_a_wrong_key_alike_and_says_how_to_authenticate() {
    let world = World::new();
    let run = world.alice_run.id.to_string();
    let mut routes = world.run_routes(&run);
    routes.push(("GET", "/v1/runs".to_owned(), None));
    routes.push(("GET", "/v1/events".to_owned(), None));
    for (method, uri, body) in routes {
        let none = call(&world.app, method, &uri, None, body.as_ref()).await;
        let wrong = call(&world.app, method, &uri, Some("not-a-key"), body.as_ref()).await;
        let near = call(
            &world.app,
            method,
            &uri,
            Some(&ALICE[..ALICE.len() - 1]),
            body.as_ref(),
        )
        .await;
        for answer in [&none, &wrong, &near] {
            assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{method} {uri}");
            assert_eq!(answer.body, none.body, "{method} {uri}");
            assert!(
                same_headers(&answer.headers, &none.headers),
                "{method} {uri}"
            );
        }
        assert!(none.header("www-authenticate").starts_with("Bearer"));
        let message = none.json()["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains("Authorization: Bearer"), "{message}");
    }
}

#[tokio::test]
async fn a_run_of_someone_else_answers_exactly_like_a_missing_run_and_a_bad_id() {
    let world = World::new();
    let theirs = world.alice_run.id.to_string();
    let missing = RunId::new().to_string();
    for (stranger, run) in [(EVE, &theirs), (BOB, &theirs), (GLOBEX_OPERATOR, &theirs)] {
        let routes = world.run_routes(run);
        let missing_routes = world.run_routes(&missing);
        let bad_routes = world.run_routes("not-a-run-id");
        for ((theirs, missing), bad) in routes.iter().zip(&missing_routes).zip(&bad_routes) {
            let a = call(
                &world.app,
                theirs.0,
                &theirs.1,
                Some(stranger),
                theirs.2.as_ref(),
            )
            .await;
            let b = call(
                &world.app,
                missing.0,
                &missing.1,
                Some(stranger),
                missing.2.as_ref(),
            )
            .await;
            let c = call(&world.app, bad.0, &bad.1, Some(stranger), bad.2.as_ref()).await;
            assert_eq!(
                a.status,
                StatusCode::NOT_FOUND,
                "{} {}: {}",
                theirs.0,
                theirs.1,
                a.text()
            );
            for other in [&b, &c] {
                assert_eq!(other.status, a.status, "{}", theirs.1);
                assert_eq!(other.body, a.body, "{}", theirs.1);
                assert!(same_headers(&other.headers, &a.headers), "{}", theirs.1);
            }
            assert!(!a.text().contains("alice"), "{}", a.text());
        }
    }
    // The owner gets the file itself.
    let mine = get(&world.app, &file_url(&world.png), ALICE).await;
    assert_eq!(mine.status, StatusCode::OK);
    assert_eq!(&mine.body[..], PNG);
}

#[tokio::test]
async fn paths_that_leave_the_inbox_never_serve_the_bytes_outside() {
    let world = World::new();
    let run = world.alice_run.id;
    let secret = world.dir.path().join("secret.txt");
    // A recorded file replaced by a symbolic link to a file outside.
    let planted = world.inbox.inbox_dir(run).join(&world.note.path);
    std::fs::remove_file(&planted).expect("the note is removed");
    std::os::unix::fs::symlink(&secret, &planted).expect("the link is planted");
    // And an unrecorded link beside it.
    std::os::unix::fs::symlink(&secret, world.inbox.inbox_dir(run).join("link.txt"))
        .expect("the link is planted");

    let absolute = secret.display().to_string();
    let targets = [
        format!("/v1/runs/{run}/inbox/../../secret.txt"),
        format!("/v1/runs/{run}/inbox/../../../../../../etc/passwd"),
        format!("/v1/runs/{run}/inbox/%2e%2e/%2e%2e/secret.txt"),
        format!("/v1/runs/{run}/inbox/%2E%2E%2F%2E%2E%2Fsecret.txt"),
        format!("/v1/runs/{run}/inbox/{}", absolute.replace('/', "%2F")),
        format!("/v1/runs/{run}/inbox/{absolute}"),
        format!("/v1/runs/{run}/inbox/{}", world.note.path),
        format!("/v1/runs/{run}/inbox/link.txt"),
    ];
    for target in &targets {
        let answer = get(&world.app, target, ALICE).await;
        assert_eq!(
            answer.status,
            StatusCode::NOT_FOUND,
            "{target}: {}",
            answer.text()
        );
        assert!(!answer.text().contains("SECRET"), "{target}");
    }
    // Through a real socket too, with the dots sent exactly as written.
    let addr = serve(world.app.clone()).await;
    for target in &targets {
        let answer = raw_request(addr, target, ALICE).await;
        assert!(answer.starts_with("HTTP/1.1 404"), "{target}: {answer}");
        assert!(!answer.contains("SECRET"), "{target}");
        assert!(!answer.contains("root:"), "{target}");
    }
}

#[tokio::test]
async fn html_and_svg_go_out_as_octet_stream_attachments_and_a_png_as_image_png() {
    let world = World::new();
    for (record, bytes) in [(&world.html, HTML), (&world.svg, SVG)] {
        let answer = get(&world.app, &file_url(record), ALICE).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", record.path);
        assert_eq!(answer.header("content-type"), "application/octet-stream");
        assert_eq!(answer.header("x-content-type-options"), "nosniff");
        assert_eq!(
            answer.header("content-security-policy"),
            "sandbox; default-src 'none'"
        );
        assert_eq!(answer.header("cache-control"), "no-store");
        let disposition = answer.header("content-disposition");
        assert!(
            disposition.starts_with("attachment; filename=\""),
            "{disposition}"
        );
        assert!(disposition.contains(&record.path), "{disposition}");
        assert_eq!(&answer.body[..], bytes);
    }
    let png = get(&world.app, &file_url(&world.png), ALICE).await;
    assert_eq!(png.status, StatusCode::OK);
    assert_eq!(png.header("content-type"), "image/png");
    assert_eq!(png.header("x-content-type-options"), "nosniff");
    assert!(png.header("content-disposition").starts_with("attachment;"));
    assert_eq!(png.header("content-length"), PNG.len().to_string());
}

#[tokio::test]
async fn the_sha256_and_producer_are_sent_only_while_the_bytes_match_the_record() {
    let world = World::new();
    let url = file_url(&world.note);
    let before = get(&world.app, &url, ALICE).await;
    assert_eq!(before.status, StatusCode::OK);
    assert_eq!(before.header("x-porter-sha256"), world.note.sha256);
    assert_eq!(
        before.header("x-porter-producer"),
        "mcp:files/get_attachment"
    );

    // Same size, other bytes.
    let on_disk = world
        .inbox
        .inbox_dir(world.alice_run.id)
        .join(&world.note.path);
    std::fs::write(&on_disk, b"A NOTE\n").expect("the file is altered");
    let after = get(&world.app, &url, ALICE).await;
    assert_eq!(after.status, StatusCode::OK);
    assert_eq!(&after.body[..], b"A NOTE\n");
    assert!(
        after.headers.get("x-porter-sha256").is_none(),
        "{:?}",
        after.headers
    );
    assert!(
        after.headers.get("x-porter-producer").is_none(),
        "{:?}",
        after.headers
    );
}

#[tokio::test]
async fn a_download_over_a_socket_streams_the_exact_bytes() {
    let world = World::new();
    let addr = serve(world.app.clone()).await;
    let response = http()
        .get(format!("http://{addr}{}", file_url(&world.png)))
        .bearer_auth(ALICE)
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["x-porter-sha256"].to_str().ok(),
        Some(world.png.sha256.as_str())
    );
    assert_eq!(&response.bytes().await.expect("the body")[..], PNG);
}

/// Reads SSE events from a streaming response until `until` says stop;
/// answers (event name, id, data) of each.
async fn read_events(
    response: &mut reqwest::Response,
    buffer: &mut String,
    until: impl Fn(&[(String, String, Value)]) -> bool,
) -> Vec<(String, String, Value)> {
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !until(&events) {
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let (mut name, mut id, mut data) = (String::new(), String::new(), String::new());
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    v.trim().clone_into(&mut name);
                } else if let Some(v) = line.strip_prefix("id:") {
                    v.trim().clone_into(&mut id);
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            if !data.is_empty() {
                let data = serde_json::from_str(&data).expect("event data is JSON");
                events.push((name, id, data));
            }
        }
        if until(&events) {
            break;
        }
        let chunk = tokio::time::timeout_at(deadline, response.chunk())
            .await
            .expect("the awaited events arrive in time")
            .expect("the stream reads")
            .expect("the stream stays open");
        buffer.push_str(&String::from_utf8_lossy(&chunk));
    }
    events
}

#[tokio::test]
async fn a_run_stream_sends_the_backlog_from_the_seq_asked_then_live_events_once() {
    let world = World::new();
    let addr = serve(world.app.clone()).await;
    let run = world.alice_run.id;
    // seq 1 is run_started; the four captures follow.
    let mut response = http()
        .get(format!("http://{addr}/v1/runs/{run}/events?from_seq=3"))
        .bearer_auth(ALICE)
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap_or_default()
            .starts_with("text/event-stream")
    );
    let mut buffer = String::new();
    let backlog = read_events(&mut response, &mut buffer, |e| e.len() >= 3).await;
    let ids: Vec<&str> = backlog.iter().map(|(_, id, _)| id.as_str()).collect();
    assert_eq!(ids, ["3", "4", "5"]);
    assert!(backlog.iter().all(|(name, _, _)| name == "file_captured"));
    assert_eq!(backlog[0].2["data"]["path"], world.html.path.as_str());

    keep(
        &world.inbox,
        run,
        "later.txt",
        Some("text/plain"),
        b"later\n",
    );
    let live = read_events(&mut response, &mut buffer, |e| !e.is_empty()).await;
    assert_eq!(live[0].0, "file_captured");
    assert_eq!(live[0].1, "6");
    assert_eq!(live[0].2["seq"], 6);
    assert_eq!(live[0].2["data"]["ref"], "volume:inbox:later.txt");
}

#[tokio::test]
async fn a_bad_from_seq_is_a_bad_request_but_only_for_a_readable_run() {
    let world = World::new();
    let run = world.alice_run.id;
    let bad = call(
        &world.app,
        "GET",
        &format!("/v1/runs/{run}/events?from_seq=x"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    let stranger = call(
        &world.app,
        "GET",
        &format!("/v1/runs/{run}/events?from_seq=x"),
        Some(EVE),
        None,
    )
    .await;
    assert_eq!(stranger.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_page_stream_carries_new_runs_of_the_caller_and_nothing_of_others() {
    let world = World::new();
    let addr = serve(world.app.clone()).await;
    let mut response = http()
        .get(format!("http://{addr}/v1/events"))
        .bearer_auth(ALICE)
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
    // Another tenant's capture, then one in a run alice starts after the
    // stream opened (found by the stream's periodic look for new runs).
    keep(
        &world.inbox,
        world.eve_run.id,
        "eve-2.txt",
        Some("text/plain"),
        b"x",
    );
    let later = world
        .inbox
        .start_run(owner("alice", "acme"))
        .expect("a run");
    keep(&world.inbox, later.id, "fresh.png", Some("image/png"), PNG);
    let mut buffer = String::new();
    let events = read_events(&mut response, &mut buffer, |e| {
        e.iter().any(|(name, _, _)| name == "file_captured")
    })
    .await;
    for (_, _, event) in &events {
        assert_eq!(event["run"], later.id.to_string(), "{event}");
    }
    let captured = events
        .iter()
        .find(|(name, _, _)| name == "file_captured")
        .expect("a capture");
    assert_eq!(captured.2["data"]["ref"], "volume:inbox:fresh.png");
}

#[tokio::test]
async fn runs_that_start_and_end_at_once_reach_the_page_stream_whole_and_in_order() {
    let world = World::new();
    let addr = serve(world.app.clone()).await;
    let mut response = http()
        .get(format!("http://{addr}/v1/events"))
        .bearer_auth(ALICE)
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
    // Three runs, each started, given a file and ended at once, as a script
    // or a quick agent does: none lives long enough to be looked for.
    let mut expected = Vec::new();
    for n in 0..3 {
        let run = world
            .inbox
            .start_run(owner("alice", "acme"))
            .expect("a run");
        keep(
            &world.inbox,
            run.id,
            &format!("quick-{n}.txt"),
            Some("text/plain"),
            b"q\n",
        );
        world.inbox.end_run(run.id).expect("the run ends");
        for kind in ["run_started", "file_captured", "run_ended"] {
            expected.push((run.id.to_string(), kind.to_owned()));
        }
    }
    let mut buffer = String::new();
    let events = read_events(&mut response, &mut buffer, |e| e.len() >= expected.len()).await;
    let got: Vec<(String, String)> = events
        .iter()
        .map(|(name, _, event)| {
            (
                event["run"].as_str().unwrap_or_default().to_owned(),
                name.clone(),
            )
        })
        .collect();
    assert_eq!(got, expected);
}

#[tokio::test]
async fn each_role_lists_exactly_the_runs_it_may_read() {
    let world = World::new();
    let (alice, bob, eve) = (
        world.alice_run.id.to_string(),
        world.bob_run.id.to_string(),
        world.eve_run.id.to_string(),
    );
    let cases: [(&str, Vec<&String>); 6] = [
        (ALICE, vec![&alice]),
        (BOB, vec![&bob]),
        (EVE, vec![&eve]),
        (ACME_OPERATOR, vec![&alice, &bob]),
        (GLOBEX_OPERATOR, vec![&eve]),
        (ADMIN, vec![&alice, &bob, &eve]),
    ];
    for (key, expected) in cases {
        let answer = get(&world.app, "/v1/runs", key).await;
        assert_eq!(answer.status, StatusCode::OK);
        let body = answer.json();
        let mut listed: Vec<String> = body["runs"]
            .as_array()
            .expect("a list")
            .iter()
            .map(|run| run["id"].as_str().unwrap_or_default().to_owned())
            .collect();
        listed.sort();
        let mut expected: Vec<String> = expected.into_iter().cloned().collect();
        expected.sort();
        assert_eq!(listed, expected, "{key}");
    }
    let body = get(&world.app, "/v1/runs", ALICE).await.json();
    let files = body["runs"][0]["files"].as_array().expect("files").clone();
    assert_eq!(files.len(), 4);
    assert!(
        files
            .iter()
            .any(|f| f["ref"] == format!("volume:inbox:{}", world.png.path)
                && f["media_type"] == "image/png"
                && f["origin"] == "mcp:files/get_attachment")
    );
}

#[tokio::test]
async fn rm_by_a_user_of_another_run_is_refused_like_a_missing_run_and_removes_nothing() {
    let world = World::new();
    let rm = json!({"op": "rm", "path": world.png.path});
    let theirs = format!("/v1/runs/{}/file", world.alice_run.id);
    let missing = format!("/v1/runs/{}/file", RunId::new());
    let refused = call(&world.app, "POST", &theirs, Some(BOB), Some(&rm)).await;
    let absent = call(&world.app, "POST", &missing, Some(BOB), Some(&rm)).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
    assert_eq!(refused.body, absent.body);
    assert!(same_headers(&refused.headers, &absent.headers));
    assert!(
        world
            .inbox
            .file(world.alice_run.id, &world.png.path)
            .expect("readable")
            .is_some(),
        "the file is still recorded"
    );

    // Its tenant's operator may.
    let done = call(&world.app, "POST", &theirs, Some(ACME_OPERATOR), Some(&rm)).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text());
    assert_ne!(done.json()["isError"], true, "{}", done.text());
    assert!(
        world
            .inbox
            .file(world.alice_run.id, &world.png.path)
            .expect("readable")
            .is_none()
    );
}

#[tokio::test]
async fn the_file_tool_answers_its_result_and_refuses_network_ops_from_outside() {
    let world = World::new();
    let uri = format!("/v1/runs/{}/file", world.alice_run.id);
    let ls = call(
        &world.app,
        "POST",
        &uri,
        Some(ALICE),
        Some(&json!({"op": "ls"})),
    )
    .await;
    assert_eq!(ls.status, StatusCode::OK, "{}", ls.text());
    assert_ne!(ls.json()["isError"], true, "{}", ls.text());
    assert!(ls.text().contains(&world.png.path), "{}", ls.text());

    for op in ["download", "upload"] {
        let body = json!({"op": op, "url": "http://127.0.0.1:9/x", "path": world.png.path, "from": world.png.path});
        let answer = call(&world.app, "POST", &uri, Some(ADMIN), Some(&body)).await;
        assert_eq!(answer.status, StatusCode::OK, "{op}");
        let result = answer.json();
        assert_eq!(result["isError"], true, "{op}: {result}");
        assert!(answer.text().contains("not available from outside"), "{op}");
    }

    let broken = call(&world.app, "POST", &uri, Some(ALICE), None).await;
    assert_eq!(broken.status, StatusCode::BAD_REQUEST, "{}", broken.text());
    let not_object = call(&world.app, "POST", &uri, Some(ALICE), Some(&json!(["ls"]))).await;
    assert_eq!(not_object.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn the_page_loads_without_a_key_under_a_csp_that_allows_only_its_own_script() {
    let world = World::new();
    let page = call(&world.app, "GET", "/", None, None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.header("content-type").starts_with("text/html"));
    let csp = page.header("content-security-policy");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert!(page.text().contains("/app.js"));
    let script = call(&world.app, "GET", "/app.js", None, None).await;
    assert_eq!(script.status, StatusCode::OK);
    assert!(script.header("content-type").starts_with("text/javascript"));
    assert!(script.text().contains("/v1/events"));
}

/// Sends only the head of a POST declaring `length` body bytes (and not one
/// byte of the body), and reads what comes back within `wait`: the status
/// line, or an empty string when the server is still waiting for the body.
async fn declared_only(
    addr: SocketAddr,
    target: &str,
    key: &str,
    length: u64,
    wait: Duration,
) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let request = format!(
        "POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut answer = vec![0u8; 4096];
    match tokio::time::timeout(wait, stream.read(&mut answer)).await {
        Ok(Ok(read)) => {
            let text = String::from_utf8_lossy(&answer[..read]).into_owned();
            text.lines().next().unwrap_or_default().to_owned()
        }
        Ok(Err(_)) | Err(_) => String::new(),
    }
}

#[tokio::test]
async fn a_body_declared_over_the_limit_is_refused_on_its_header_before_it_is_read() {
    let world = World::new();
    let addr = serve(world.app.clone()).await;
    let target = format!("/v1/runs/{}/file", world.alice_run.id);
    let two_gib = 2 * 1024 * 1024 * 1024;
    let status = declared_only(addr, &target, ALICE, two_gib, Duration::from_secs(5)).await;
    assert!(status.contains(" 413 "), "{status:?}");
    // Exactly at the limit the header passes, and the server waits for the body.
    let limit = porter_gateway::api::API_BODY_MAX_BYTES as u64;
    let status = declared_only(addr, &target, ALICE, limit, Duration::from_millis(500)).await;
    assert_eq!(status, "", "the declared limit itself is not refused");
    let status = declared_only(addr, &target, ALICE, limit + 1, Duration::from_secs(5)).await;
    assert!(status.contains(" 413 "), "{status:?}");

    // The MCP endpoints of the same listener, the gateway's and the admin's.
    let config = porter_gateway::config::Config::default();
    let gateway = porter_gateway::Gateway::new(
        config,
        &world.dir.path().join("gateway-data"),
        Keys::new(keys()),
    )
    .expect("a gateway");
    let app = porter_gateway::serve::http_app(
        &gateway,
        &porter_gateway::serve::HttpOptions::default(),
        Router::new(),
    );
    let addr = serve(app).await;
    for endpoint in ["/mcp", "/admin/mcp"] {
        let status = declared_only(addr, endpoint, ADMIN, two_gib, Duration::from_secs(5)).await;
        assert!(status.contains(" 413 "), "{endpoint}: {status:?}");
        let limit = porter_gateway::serve::MCP_BODY_MAX_BYTES;
        let status = declared_only(addr, endpoint, ADMIN, limit, Duration::from_millis(500)).await;
        assert_eq!(
            status, "",
            "{endpoint}: the declared limit itself is not refused"
        );
    }
}

/// Asks for a download link with `body`; the link's path.
async fn link(world: &World, key: &str, body: &Value) -> String {
    let uri = format!("/v1/runs/{}/downloads", world.alice_run.id);
    let answer = call(&world.app, "POST", &uri, Some(key), Some(body)).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let url = answer.json()["url"].as_str().expect("a url").to_owned();
    assert!(url.starts_with("/downloads/"), "{url}");
    assert!(!url.contains(key), "{url}");
    url
}

#[tokio::test]
async fn a_download_link_serves_the_file_once_without_a_key_and_then_says_it_was_used() {
    let world = World::new();
    let url = link(&world, ALICE, &json!({"path": world.png.path})).await;
    let first = call(&world.app, "GET", &url, None, None).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text());
    assert_eq!(&first.body[..], PNG);
    assert_eq!(first.header("content-type"), "image/png");
    assert!(
        first
            .header("content-disposition")
            .starts_with("attachment;")
    );
    assert_eq!(first.header("x-content-type-options"), "nosniff");
    assert_eq!(
        first.header("content-security-policy"),
        "sandbox; default-src 'none'"
    );

    let again = call(&world.app, "GET", &url, None, None).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    let message = again.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains("already used or has expired"), "{message}");
    let made_up = call(
        &world.app,
        "GET",
        &format!("/downloads/{}", "0".repeat(64)),
        None,
        None,
    )
    .await;
    assert_eq!(made_up.body, again.body);

    // The reference form works too; an HTML file still goes out as an attachment of octet-stream.
    let html = link(
        &world,
        ALICE,
        &json!({"path": format!("volume:inbox:{}", world.html.path)}),
    )
    .await;
    let served = call(&world.app, "GET", &html, None, None).await;
    assert_eq!(served.header("content-type"), "application/octet-stream");
    assert_eq!(&served.body[..], HTML);
}

#[tokio::test]
async fn a_link_to_a_file_that_is_not_there_or_a_bad_body_is_refused_up_front() {
    let world = World::new();
    let uri = format!("/v1/runs/{}/downloads", world.alice_run.id);
    let missing = call(
        &world.app,
        "POST",
        &uri,
        Some(ALICE),
        Some(&json!({"path": "nope.png"})),
    )
    .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let escape = call(
        &world.app,
        "POST",
        &uri,
        Some(ALICE),
        Some(&json!({"path": "../secret.txt"})),
    )
    .await;
    assert_eq!(escape.status, StatusCode::NOT_FOUND);
    let odd = call(
        &world.app,
        "POST",
        &uri,
        Some(ALICE),
        Some(&json!({"file": "a"})),
    )
    .await;
    assert_eq!(odd.status, StatusCode::BAD_REQUEST);
    assert!(odd.text().contains("{\\\"path\\\""), "{}", odd.text());
}

#[tokio::test]
async fn download_all_streams_a_zip_of_every_file_with_its_exact_bytes() {
    let world = World::new();
    let url = link(&world, ALICE, &json!({})).await;
    let answer = call(&world.app, "GET", &url, None, None).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    assert_eq!(answer.header("content-type"), "application/zip");
    assert!(answer.header("content-disposition").contains(".zip"));
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(answer.body.to_vec())).expect("a zip");
    let mut got = BTreeMap::new();
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).expect("an entry");
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut bytes).expect("it reads");
        let name = entry.name().expect("a UTF-8 name").to_string();
        got.insert(name, bytes);
    }
    let want: BTreeMap<String, Vec<u8>> = [
        (&world.png, PNG),
        (&world.html, HTML),
        (&world.svg, SVG),
        (&world.note, b"a note\n".as_slice()),
    ]
    .into_iter()
    .map(|(record, bytes)| (record.path.clone(), bytes.to_vec()))
    .collect();
    assert_eq!(got, want);
    // Another tenant's key gets no link to this run at all.
    let uri = format!("/v1/runs/{}/downloads", world.alice_run.id);
    let eve = call(&world.app, "POST", &uri, Some(EVE), Some(&json!({}))).await;
    assert_eq!(eve.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_listing_sums_each_run_and_names_its_first_tool_and_ttl() {
    let world = World::new();
    let listed = get(&world.app, "/v1/runs", ALICE).await.json();
    assert_eq!(listed["inbox_ttl_ms"], json!(24 * 3600 * 1000));
    let run = listed["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|run| run["id"] == json!(world.alice_run.id.to_string()))
        .expect("alice's run");
    assert_eq!(run["file_count"], json!(4));
    assert_eq!(
        run["total_bytes"],
        json!(PNG.len() + HTML.len() + SVG.len() + b"a note\n".len())
    );
    assert_eq!(run["first_tool"], json!("get_attachment"));
    assert_eq!(run["expires_at"], Value::Null);
    let times: Vec<i64> = run["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|file| file["created_at"].as_i64().expect("a time"))
        .collect();
    assert!(times.windows(2).all(|pair| pair[0] >= pair[1]), "{times:?}");
}
