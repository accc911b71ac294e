//! Against small axum servers on loopback: retries, headers on the wire,
//! the multipart form's exact fields, and bodies that outrun the cap.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::body::Body;
use axum::extract::{Multipart, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use porter_mattermost::{ClientOptions, Error, UploadFile};

use super::{client, client_with};

/// `serve` runs `app` on a free loopback port and answers its base URL.
async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    format!("http://{addr}")
}

fn json(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_owned(),
    )
        .into_response()
}

const ME: &str = r#"{"id":"u1","username":"zoe","delete_at":0}"#;
const BUSY: &str = r#"{"id":"api.context.rate_limit","message":"slow down","status_code":429}"#;

/// `counting_server` serves `path` with `respond(n)` for the n-th request
/// (from 0) and answers its URL and how many requests arrived.
async fn counting_server(path: &str, respond: fn(u32) -> Response) -> (String, Arc<AtomicU32>) {
    let hits = Arc::new(AtomicU32::new(0));
    let app = Router::new()
        .route(
            path,
            get(move |State(hits): State<Arc<AtomicU32>>| async move {
                respond(hits.fetch_add(1, Ordering::SeqCst))
            }),
        )
        .with_state(hits.clone());
    (serve(app).await, hits)
}

/// `asking_to_wait` adds a `Retry-After` header to a response.
fn asking_to_wait(mut response: Response, value: &str) -> Response {
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, value.parse().unwrap());
    response
}

#[tokio::test]
async fn a_busy_server_is_retried_after_the_wait_it_asks_for() {
    let (url, hits) = counting_server("/api/v4/users/me", |n| match n {
        0 => asking_to_wait(json(StatusCode::TOO_MANY_REQUESTS, BUSY), "1"),
        1 => {
            let when = SystemTime::now() + Duration::from_secs(2);
            asking_to_wait(
                json(StatusCode::SERVICE_UNAVAILABLE, ""),
                &httpdate::fmt_http_date(when),
            )
        }
        _ => json(StatusCode::OK, ME),
    })
    .await;
    let options = ClientOptions {
        retry_base_delay: Duration::from_millis(1),
        ..ClientOptions::default()
    };
    let started = Instant::now();
    let me = client_with(&url, "tok", options).me().await.unwrap();
    let elapsed = started.elapsed();
    assert_eq!(me.username, "zoe");
    assert_eq!(hits.load(Ordering::SeqCst), 3);
    // One second, then an HTTP date one to two seconds ahead (dates are
    // whole seconds); without Retry-After it would be milliseconds.
    assert!(elapsed >= Duration::from_millis(1500), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
}

#[tokio::test]
async fn retries_stop_after_the_allowed_attempts_with_what_the_server_said() {
    let (url, hits) = counting_server("/api/v4/users/me", |_| {
        asking_to_wait(json(StatusCode::TOO_MANY_REQUESTS, BUSY), "0")
    })
    .await;
    let options = ClientOptions {
        max_attempts: 3,
        ..ClientOptions::default()
    };
    let err = client_with(&url, "tok", options).me().await.unwrap_err();
    assert_eq!(hits.load(Ordering::SeqCst), 3);
    match &err {
        Error::Busy {
            attempts,
            status,
            api,
        } => {
            assert_eq!(*attempts, 3);
            assert_eq!(*status, StatusCode::TOO_MANY_REQUESTS);
            assert_eq!(api.message, "slow down");
        }
        other => panic!("not Busy: {other}"),
    }
    assert!(
        err.to_string().contains("wait a little and try again"),
        "{err}"
    );
}

#[tokio::test]
async fn a_long_retry_after_is_capped_and_garbage_falls_back_to_backoff() {
    let (url, hits) = counting_server("/api/v4/system/ping", |n| {
        let maintenance = || json(StatusCode::SERVICE_UNAVAILABLE, "<html>maintenance</html>");
        match n {
            0 => asking_to_wait(maintenance(), "3600"),
            1 => asking_to_wait(maintenance(), "whenever"),
            _ => json(StatusCode::OK, r#"{"status":"OK"}"#),
        }
    })
    .await;
    let options = ClientOptions {
        retry_base_delay: Duration::from_millis(20),
        retry_max_delay: Duration::from_millis(200),
        ..ClientOptions::default()
    };
    let started = Instant::now();
    let ping = client_with(&url, "tok", options).ping().await.unwrap();
    assert_eq!(ping.status, "OK");
    assert_eq!(hits.load(Ordering::SeqCst), 3);
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[tokio::test]
async fn other_failures_are_not_retried() {
    let (url, hits) = counting_server("/api/v4/users/me", |_| {
        json(
            StatusCode::INTERNAL_SERVER_ERROR,
            r#"{"id":"x","message":"boom","status_code":500}"#,
        )
    })
    .await;
    let err = client(&url, "tok").me().await.unwrap_err();
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    assert_eq!(err.status(), Some(StatusCode::INTERNAL_SERVER_ERROR));
}

#[tokio::test]
async fn every_request_says_it_is_porter_and_carries_the_token_as_bearer() {
    let seen: Arc<Mutex<Vec<HeaderMap>>> = Arc::default();
    let app = Router::new()
        .route(
            "/api/v4/users/me",
            get(
                |State(seen): State<Arc<Mutex<Vec<HeaderMap>>>>, headers: HeaderMap| async move {
                    seen.lock().unwrap().push(headers);
                    json(StatusCode::OK, ME)
                },
            ),
        )
        .with_state(seen.clone());
    let url = serve(app).await;
    client(&format!("{url}/api/v4/"), "tok-123")
        .me()
        .await
        .unwrap();
    let headers = seen.lock().unwrap()[0].clone();
    assert_eq!(
        headers[header::USER_AGENT],
        format!("porter/{}", env!("CARGO_PKG_VERSION")).as_str()
    );
    assert_eq!(
        porter_mattermost::USER_AGENT,
        format!("porter/{}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(headers[header::AUTHORIZATION], "Bearer tok-123");
}

#[tokio::test]
async fn an_unreachable_server_is_named_by_host_and_the_token_stays_hidden() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let err = client(&format!("http://{addr}"), "very-secret-token")
        .me()
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Network { .. }), "{text}");
    assert!(
        text.contains(&format!("could not reach Mattermost at {addr}")),
        "{text}"
    );
    assert!(!format!("{err:?}").contains("very-secret-token"));
    assert!(!text.contains("very-secret-token"));
}

#[tokio::test]
async fn a_slow_server_times_out_with_a_clear_reason() {
    let app = Router::new().route(
        "/api/v4/users/me",
        get(|| async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            json(StatusCode::OK, ME)
        }),
    );
    let url = serve(app).await;
    let options = ClientOptions {
        request_timeout: Duration::from_millis(300),
        ..ClientOptions::default()
    };
    let err = client_with(&url, "tok", options).me().await.unwrap_err();
    assert!(err.to_string().contains("no answer within 0.3s"), "{err}");
}

#[tokio::test]
async fn an_answer_that_is_not_json_is_a_decode_error() {
    let app = Router::new().route(
        "/api/v4/users/me",
        get(|| async { "<html>login page</html>" }),
    );
    let url = serve(app).await;
    let err = client(&url, "tok").me().await.unwrap_err();
    assert!(matches!(err, Error::Decode { .. }), "{err}");
    assert!(
        err.to_string().contains("is the URL a Mattermost server"),
        "{err}"
    );
}

/// One multipart part as the server saw it: field name, file name, type, size.
type SeenPart = (String, Option<String>, Option<String>, usize);

#[tokio::test]
async fn uploads_send_channel_id_then_client_ids_then_files_and_nothing_else() {
    let seen: Arc<Mutex<Vec<SeenPart>>> = Arc::default();
    let app = Router::new()
        .route(
            "/api/v4/files",
            post(
                |State(seen): State<Arc<Mutex<Vec<SeenPart>>>>, mut form: Multipart| async move {
                    let mut client_ids = Vec::new();
                    let mut parts = Vec::new();
                    while let Some(field) = form.next_field().await.unwrap() {
                        let name = field.name().unwrap_or_default().to_owned();
                        let file_name = field.file_name().map(str::to_owned);
                        let content_type = field.content_type().map(str::to_owned);
                        let bytes = field.bytes().await.unwrap();
                        if name == "client_ids" {
                            client_ids.push(String::from_utf8(bytes.to_vec()).unwrap());
                        }
                        parts.push((name, file_name, content_type, bytes.len()));
                    }
                    *seen.lock().unwrap() = parts;
                    // Answer in reverse order: the client must put them back.
                    let infos: Vec<_> = (0..client_ids.len())
                        .rev()
                        .map(
                            |i| serde_json::json!({"id": format!("f{i}"), "name": format!("n{i}")}),
                        )
                        .collect();
                    client_ids.reverse();
                    let body = serde_json::json!({"file_infos": infos, "client_ids": client_ids});
                    json(StatusCode::CREATED, &body.to_string())
                },
            ),
        )
        .with_state(seen.clone());
    let url = serve(app).await;
    let files = [
        UploadFile::new("notes été.txt", "text/plain", Bytes::from_static(b"hello")),
        UploadFile::new("blob.bin", "", vec![0u8; 3000]),
    ];
    let infos = client(&url, "tok")
        .upload_files("chan1", &files)
        .await
        .unwrap();
    let ids: Vec<&str> = infos.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["f0", "f1"]);

    let parts = seen.lock().unwrap().clone();
    let names: Vec<&str> = parts.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(
        names,
        ["channel_id", "client_ids", "client_ids", "files", "files"]
    );
    assert_eq!(parts[3].1.as_deref(), Some("notes été.txt"));
    assert_eq!(parts[3].2.as_deref(), Some("text/plain"));
    assert_eq!(parts[3].3, 5);
    assert_eq!(parts[4].1.as_deref(), Some("blob.bin"));
    assert_eq!(parts[4].2.as_deref(), Some("application/octet-stream"));
    assert_eq!(parts[4].3, 3000);
    assert_eq!(parts[1].3, 26, "client ids are Mattermost-shaped");
}

/// `CHUNK_BYTES` is the size of each chunk the streaming server sends.
const CHUNK_BYTES: usize = 16 * 1024;

/// A server whose file has no Content-Length and streams `chunks` chunks.
async fn streaming_server(chunks: usize) -> String {
    let app = Router::new().route(
        "/api/v4/files/{id}",
        get(move || async move {
            let stream = futures_util::stream::iter(
                (0..chunks).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![7u8; CHUNK_BYTES]))),
            );
            Response::builder()
                .header(header::CONTENT_TYPE, "application/octet-stream")
                .header(
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"big.bin\"",
                )
                .body(Body::from_stream(stream))
                .unwrap()
        }),
    );
    serve(app).await
}

#[tokio::test]
async fn a_body_without_a_length_is_cut_off_one_chunk_past_the_cap() {
    let url = streaming_server(256).await;
    let cap = 100 * 1024;
    let err = client(&url, "tok")
        .download_file("f1", cap)
        .await
        .unwrap_err();
    match err {
        Error::TooLarge {
            cap: got_cap,
            size,
            received,
            ..
        } => {
            assert_eq!(got_cap, cap);
            assert_eq!(size, None, "nothing declared the size");
            assert!(received > cap, "{received}");
            assert!(
                received <= cap + CHUNK_BYTES as u64,
                "read {received} bytes for a cap of {cap}"
            );
        }
        other => panic!("not TooLarge: {other}"),
    }
}

#[tokio::test]
async fn a_body_without_a_length_exactly_at_the_cap_is_read_whole() {
    let url = streaming_server(4).await;
    let total = 4 * CHUNK_BYTES as u64;
    let client = client(&url, "tok");
    let download = client.download_file("f1", total).await.unwrap();
    assert_eq!(download.bytes.len() as u64, total);
    assert_eq!(download.file_name.as_deref(), Some("big.bin"));
    assert_eq!(
        download.content_type.as_deref(),
        Some("application/octet-stream")
    );
    let err = client.download_file("f1", total - 1).await.unwrap_err();
    assert!(matches!(err, Error::TooLarge { size: None, .. }), "{err}");
}

#[tokio::test]
async fn an_oversized_json_answer_is_refused() {
    let big = format!(r#"{{"id":"u1","username":"{}"}}"#, "x".repeat(10_000));
    let app = Router::new().route(
        "/api/v4/users/me",
        get(move || {
            let big = big.clone();
            async move { json(StatusCode::OK, &big) }
        }),
    );
    let url = serve(app).await;
    let options = ClientOptions {
        max_answer_bytes: 1000,
        ..ClientOptions::default()
    };
    let err = client_with(&url, "tok", options).me().await.unwrap_err();
    assert!(matches!(err, Error::TooLarge { cap: 1000, .. }), "{err}");
}
