//! The emulator's rules, through `app().oneshot(..)` and through a real
//! socket: error bodies, authentication, membership, upload rules, paging,
//! search filters, downloads, permalinks, and the request record.

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{HeaderMap, Request, StatusCode, header};
use porter_mmsim::{Seed, SeedChannel, SeedPost, SeedTeam, SeedUser, Sim, start};
use serde_json::{Value, json};
use tower::ServiceExt;

const ALICE: &str = "demo-alice-token";
const BOB: &str = "demo-bob-token";
const CAROL: &str = "demo-carol-token";
const DAVE: &str = "demo-dave-token";

/// `INVALID_BODY_PARAM` is the error id of a body the server will not take.
const INVALID_BODY_PARAM: &str = "api.context.invalid_body_param.app_error";

/// One answer: status, headers and body.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: bytes::Bytes,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|err| {
            panic!(
                "the body is not JSON ({err}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// Asserts a Mattermost error body with this status and id.
    fn assert_error(&self, status: u16, id: &str) -> Value {
        assert_eq!(
            self.status.as_u16(),
            status,
            "{}",
            String::from_utf8_lossy(&self.body)
        );
        assert_eq!(self.header("content-type"), "application/json");
        let body = self.json();
        assert_eq!(body["id"], id, "{body}");
        assert_eq!(body["status_code"], status);
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert!(body["detailed_error"].is_string());
        assert_eq!(body["request_id"].as_str().map(str::len), Some(26));
        body
    }

    /// Asserts the server's 403 for a permission the caller lacks.
    fn assert_forbidden(&self) -> Value {
        self.assert_error(403, "api.context.permissions.app_error")
    }
}

/// Sends one request through the router.
async fn call(
    app: &Router,
    method: &str,
    uri: &str,
    token: Option<&str>,
    body: Option<(&str, Vec<u8>)>,
) -> Answer {
    let response = porter_test::router::send(app, method, uri, token, body).await;
    let status = response.status();
    let headers = response.headers().clone();
    let body = to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("the body reads");
    Answer {
        status,
        headers,
        body,
    }
}

async fn get(app: &Router, uri: &str, token: Option<&str>) -> Answer {
    call(app, "GET", uri, token, None).await
}

async fn post_json(app: &Router, uri: &str, token: &str, body: &Value) -> Answer {
    call(
        app,
        "POST",
        uri,
        Some(token),
        Some(("application/json", body.to_string().into_bytes())),
    )
    .await
}

/// Creates a post with `POST /api/v4/posts`.
async fn create_post(app: &Router, token: &str, post: &Value) -> Answer {
    post_json(app, "/api/v4/posts", token, post).await
}

/// One multipart part: field name, file name (for a file part), bytes.
type FormPart<'a> = (&'a str, Option<&'a str>, &'a [u8]);

/// A hand-built multipart body: `(field, file name, bytes)` in order.
fn multipart(parts: &[FormPart<'_>]) -> (String, Vec<u8>) {
    let boundary = "porterBoundary7MA4YWxkTrZu0gW";
    let mut body = Vec::new();
    for (name, file_name, bytes) in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match file_name {
            Some(file_name) => body.extend_from_slice(
                format!(
                    "Content-Disposition: form-data; name=\"{name}\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                )
                .as_bytes(),
            ),
            None => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
            ),
        }
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

async fn upload(app: &Router, uri: &str, token: &str, parts: &[FormPart<'_>]) -> Answer {
    let (content_type, body) = multipart(parts);
    call(app, "POST", uri, Some(token), Some((&content_type, body))).await
}

/// Uploads one file to `channel` (named in the form) with `/api/v4/files`.
async fn upload_one(app: &Router, token: &str, channel: &str, name: &str, bytes: &[u8]) -> Answer {
    upload(
        app,
        "/api/v4/files",
        token,
        &[
            ("channel_id", None, channel.as_bytes()),
            ("files", Some(name), bytes),
        ],
    )
    .await
}

fn demo() -> (Sim, Router) {
    let sim = Sim::new(&Seed::demo()).expect("the demo seed is valid");
    let app = sim.app();
    (sim, app)
}

async fn team_id(app: &Router) -> String {
    get(app, "/api/v4/teams/name/porter", Some(ALICE))
        .await
        .json()["id"]
        .as_str()
        .expect("the team has an id")
        .to_owned()
}

async fn channel_id(app: &Router, name: &str) -> String {
    let team = team_id(app).await;
    let answer = get(
        app,
        &format!("/api/v4/teams/{team}/channels/name/{name}"),
        Some(ALICE),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "channel {name}");
    answer.json()["id"].as_str().expect("an id").to_owned()
}

/// A page of a channel's posts as Alice reads it; `query` picks the page.
async fn posts_page(app: &Router, channel: &str, query: &str) -> Value {
    get(
        app,
        &format!("/api/v4/channels/{channel}/posts?{query}"),
        Some(ALICE),
    )
    .await
    .json()
}

#[tokio::test]
async fn a_request_without_a_valid_token_is_a_401_with_mattermosts_body() {
    let (_, app) = demo();
    get(&app, "/api/v4/users/me", None)
        .await
        .assert_error(401, "api.context.session_expired.app_error");
    get(&app, "/api/v4/users/me", Some("wrong"))
        .await
        .assert_error(401, "api.context.session_expired.app_error");
    get(&app, "/api/v4/users/me", Some(DAVE))
        .await
        .assert_error(401, "api.context.session_expired.app_error");
}

#[tokio::test]
async fn the_bearer_scheme_is_any_case_and_the_cookie_works_too() {
    let (_, app) = demo();
    for scheme in ["Bearer", "BEARER", "bearer", "Token"] {
        let request = Request::get("/api/v4/users/me")
            .header(header::AUTHORIZATION, format!("{scheme} {ALICE}"))
            .body(Body::empty())
            .expect("well formed");
        let response = app.clone().oneshot(request).await.expect("answers");
        assert_eq!(response.status(), StatusCode::OK, "{scheme}");
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
    }
    let request = Request::get("/api/v4/users/me")
        .header(header::COOKIE, format!("MMUSERID=x; MMAUTHTOKEN={BOB}"))
        .body(Body::empty())
        .expect("well formed");
    let response = app.clone().oneshot(request).await.expect("answers");
    let body = to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("reads");
    let me: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(me["username"], "bob");
}

#[tokio::test]
async fn a_private_channel_is_403_to_non_members_and_unknown_ids_are_404() {
    let (_, app) = demo();
    let design = channel_id(&app, "design").await;
    let body = get(&app, &format!("/api/v4/channels/{design}"), Some(CAROL))
        .await
        .assert_forbidden();
    assert!(
        body["detailed_error"]
            .as_str()
            .is_some_and(|d| d.contains("read_channel"))
    );
    assert_eq!(
        get(&app, &format!("/api/v4/channels/{design}"), Some(BOB))
            .await
            .status,
        StatusCode::OK
    );
    let team = team_id(&app).await;
    let unknown = "abcdefghijklmnopqrstuvwxyz";
    let refused = [
        (
            format!("/api/v4/channels/{design}/posts"),
            CAROL,
            403,
            "api.context.permissions.app_error",
        ),
        // By name, a private channel is hidden from non-members as if absent.
        (
            format!("/api/v4/teams/{team}/channels/name/design"),
            CAROL,
            404,
            "app.channel.get_by_name.missing.app_error",
        ),
        (
            format!("/api/v4/channels/{unknown}"),
            ALICE,
            404,
            "app.channel.get.existing.app_error",
        ),
        (
            "/api/v4/channels/not-an-id".to_owned(),
            ALICE,
            400,
            "api.context.invalid_url_param.app_error",
        ),
        (
            format!("/api/v4/posts/{unknown}"),
            ALICE,
            404,
            "app.post.get.app_error",
        ),
        (
            format!("/api/v4/users/{unknown}"),
            ALICE,
            404,
            "app.user.missing_account.const",
        ),
    ];
    for (uri, token, status, id) in refused {
        get(&app, &uri, Some(token)).await.assert_error(status, id);
    }
}

#[tokio::test]
async fn a_public_channel_is_readable_by_team_members_who_did_not_join() {
    let mut seed = Seed::demo();
    seed.channels.push(SeedChannel {
        team: "porter".into(),
        name: "announcements".into(),
        display_name: "Announcements".into(),
        kind: "O".into(),
        members: vec!["alice".into()],
        ..SeedChannel::default()
    });
    let sim = Sim::new(&seed).expect("valid");
    let app = sim.app();
    let id = channel_id(&app, "announcements").await;
    assert_eq!(
        get(&app, &format!("/api/v4/channels/{id}/posts"), Some(CAROL))
            .await
            .status,
        StatusCode::OK
    );
    // Reading is open; posting needs membership.
    create_post(&app, CAROL, &json!({"channel_id": id, "message": "hi"}))
        .await
        .assert_forbidden();
}

#[tokio::test]
async fn unknown_api_routes_and_methods_answer_json_404() {
    let (_, app) = demo();
    for (method, uri) in [
        ("GET", "/api/v4/no/such/thing"),
        ("DELETE", "/api/v4/users/me"),
        ("POST", "/api/v4/channels/abcdefghijklmnopqrstuvwxyz"),
    ] {
        call(&app, method, uri, Some(ALICE), None)
            .await
            .assert_error(404, "api.context.404.app_error");
    }
}

#[tokio::test]
async fn config_and_ping_answer_without_a_login() {
    let (_, app) = demo();
    let config = get(&app, "/api/v4/config/client?format=old", None).await;
    assert_eq!(config.status, StatusCode::OK);
    let config = config.json();
    assert_eq!(config["MaxPostSize"], "16383");
    assert_eq!(config["MaxFileSize"], "104857600");
    assert_eq!(config["Version"], "10.11.0");
    assert!(
        config
            .as_object()
            .expect("an object")
            .values()
            .all(Value::is_string)
    );
    get(&app, "/api/v4/config/client", None)
        .await
        .assert_error(501, "api.config.client.old_format.app_error");
    assert_eq!(
        get(&app, "/api/v4/system/ping", None).await.json()["status"],
        "OK"
    );
}

#[tokio::test]
async fn uploads_accept_only_channel_id_client_ids_and_files() {
    let (sim, app) = demo();
    let files = channel_id(&app, "files").await;
    let before = sim.snapshot();
    let channel: FormPart<'_> = ("channel_id", None, files.as_bytes());
    let x: FormPart<'_> = ("files", Some("x.txt"), b"x");
    let y: FormPart<'_> = ("files", Some("y.txt"), b"y");
    let client_id = |id: &'static [u8]| -> FormPart<'static> { ("client_ids", None, id) };
    let cases: Vec<(&str, Vec<FormPart<'_>>, &str)> = vec![
        (
            "an unknown text field",
            vec![channel, ("filename", None, b"x.txt"), x],
            INVALID_BODY_PARAM,
        ),
        (
            "a file part under another name",
            vec![channel, ("file", Some("x.txt"), b"x")],
            INVALID_BODY_PARAM,
        ),
        (
            "more files than client ids",
            vec![channel, client_id(b"a"), x, y],
            INVALID_BODY_PARAM,
        ),
        (
            "more client ids than files",
            vec![channel, client_id(b"a"), client_id(b"b"), x],
            "api.file.upload_file.incorrect_number_of_client_ids.app_error",
        ),
        (
            "a client id after files that had none",
            vec![channel, x, client_id(b"a")],
            INVALID_BODY_PARAM,
        ),
        (
            "no channel",
            vec![x],
            "api.context.invalid_url_param.app_error",
        ),
        ("no files", vec![channel], INVALID_BODY_PARAM),
    ];
    for (what, parts, id) in cases {
        let answer = upload(&app, "/api/v4/files", ALICE, &parts).await;
        assert_eq!(
            answer.status.as_u16(),
            400,
            "{what}: {}",
            String::from_utf8_lossy(&answer.body)
        );
        answer.assert_error(400, id);
    }
    assert_eq!(sim.snapshot(), before, "a refused upload stores nothing");

    let other = channel_id(&app, "off-topic").await;
    upload(
        &app,
        &format!("/api/v4/files?channel_id={other}"),
        ALICE,
        &[
            ("channel_id", None, files.as_bytes()),
            ("files", Some("x.txt"), b"x"),
        ],
    )
    .await
    .assert_error(400, "api.file.upload_file.multiple_channel_ids.app_error");

    let design = channel_id(&app, "design").await;
    upload_one(&app, CAROL, &design, "x.txt", b"x")
        .await
        .assert_forbidden();
}

#[tokio::test]
async fn an_upload_takes_the_channel_from_the_query_and_answers_infos_and_client_ids() {
    let (_, app) = demo();
    let files = channel_id(&app, "files").await;
    let answer = upload(
        &app,
        &format!("/api/v4/files?channel_id={files}"),
        ALICE,
        &[
            ("client_ids", None, b"c1"),
            ("client_ids", None, b"c2"),
            ("files", Some("dir/notes.TXT"), b"one"),
            ("files", Some("photo.png"), b"not really a png"),
        ],
    )
    .await;
    assert_eq!(
        answer.status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let body = answer.json();
    assert_eq!(body["client_ids"], json!(["c1", "c2"]));
    let infos = body["file_infos"].as_array().expect("an array");
    assert_eq!(infos[0]["name"], "notes.TXT");
    assert_eq!(infos[0]["extension"], "txt");
    assert_eq!(infos[0]["mime_type"], "text/plain");
    assert_eq!(infos[0]["size"], 3);
    assert_eq!(infos[1]["mime_type"], "image/png");
    assert!(infos[0].get("post_id").is_none(), "not attached yet");
}

#[tokio::test]
async fn a_file_over_the_limit_is_413_and_one_at_the_limit_is_stored() {
    let mut seed = Seed::demo();
    seed.config.max_file_size = 100;
    let sim = Sim::new(&seed).expect("valid");
    let app = sim.app();
    let files = channel_id(&app, "files").await;
    let big = vec![7u8; 101];
    let body = upload_one(&app, ALICE, &files, "big.bin", &big)
        .await
        .assert_error(413, "api.file.upload_file.too_large_detailed.app_error");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("big.bin") && m.contains("100"))
    );
    let fits = vec![7u8; 100];
    let answer = upload_one(&app, ALICE, &files, "fits.bin", &fits).await;
    assert_eq!(answer.status, StatusCode::CREATED);
}

#[tokio::test]
async fn posts_attach_only_the_callers_unattached_files_of_that_channel() {
    let (_, app) = demo();
    let files = channel_id(&app, "files").await;
    let off_topic = channel_id(&app, "off-topic").await;
    let id_of = |answer: Answer| {
        answer.json()["file_infos"][0]["id"]
            .as_str()
            .expect("an id")
            .to_owned()
    };
    let mine = id_of(upload_one(&app, ALICE, &files, "a.txt", b"a").await);
    let bobs = id_of(upload_one(&app, BOB, &files, "b.txt", b"b").await);
    let elsewhere = id_of(upload_one(&app, ALICE, &off_topic, "c.txt", b"c").await);
    let created = create_post(
        &app,
        ALICE,
        &json!({"channel_id": files, "message": "three files", "file_ids": [mine, bobs, elsewhere]}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED);
    let post = created.json();
    assert_eq!(post["file_ids"], json!([mine]));
    assert_eq!(post["metadata"]["files"][0]["id"], mine);
    let again = create_post(
        &app,
        ALICE,
        &json!({"channel_id": files, "message": "again", "file_ids": [mine]}),
    )
    .await;
    assert!(
        again.json().get("file_ids").is_none(),
        "an attached file is not attached twice"
    );
}

#[tokio::test]
async fn a_post_breaking_the_servers_rules_is_refused() {
    let (_, app) = demo();
    let town = channel_id(&app, "town-square").await;
    let files = channel_id(&app, "files").await;
    let root = create_post(&app, ALICE, &json!({"channel_id": town, "message": "root"}))
        .await
        .json();
    let reply = create_post(
        &app,
        ALICE,
        &json!({"channel_id": town, "message": "reply", "root_id": root["id"]}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED);
    let reply = reply.json();
    let refused = [
        (
            json!({"channel_id": files, "message": "x", "root_id": root["id"]}),
            "api.post.create_post.channel_root_id.app_error",
        ),
        (
            json!({"channel_id": town, "message": "x", "root_id": reply["id"]}),
            "api.post.create_post.root_id.app_error",
        ),
        (
            json!({"channel_id": town, "message": "x".repeat(16_384)}),
            "model.post.is_valid.message_length.app_error",
        ),
    ];
    for (post, id) in refused {
        create_post(&app, ALICE, &post).await.assert_error(400, id);
    }
    call(
        &app,
        "POST",
        "/api/v4/posts",
        Some(ALICE),
        Some(("application/json", b"{not json".to_vec())),
    )
    .await
    .assert_error(400, INVALID_BODY_PARAM);
}

/// A seed with one channel of `count` posts, a minute apart.
fn crowded_seed(count: usize) -> Seed {
    Seed {
        users: vec![SeedUser {
            username: "ann".into(),
            token: Some("t-ann".into()),
            ..SeedUser::default()
        }],
        teams: vec![SeedTeam {
            name: "crew".into(),
            display_name: "Crew".into(),
            members: vec!["ann".into()],
            description: String::new(),
        }],
        channels: vec![SeedChannel {
            team: "crew".into(),
            name: "busy".into(),
            display_name: "Busy".into(),
            kind: "O".into(),
            members: vec!["ann".into()],
            ..SeedChannel::default()
        }],
        posts: (0..count)
            .map(|n| SeedPost {
                channel: "busy".into(),
                user: "ann".into(),
                message: format!("post number {n}"),
                ..SeedPost::default()
            })
            .collect(),
        ..Seed::default()
    }
}

#[tokio::test]
async fn pages_are_capped_at_200_and_cursors_point_at_the_neighbours() {
    let sim = Sim::new(&crowded_seed(250)).expect("valid");
    let app = sim.app();
    let team = get(&app, "/api/v4/teams/name/crew", Some("t-ann"))
        .await
        .json()["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let busy = get(
        &app,
        &format!("/api/v4/teams/{team}/channels/name/busy"),
        Some("t-ann"),
    )
    .await
    .json()["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let uri = |query: &str| format!("/api/v4/channels/{busy}/posts?{query}");
    let page = async |query: &str| get(&app, &uri(query), Some("t-ann")).await.json();

    let capped = page("per_page=1000").await;
    assert_eq!(capped["order"].as_array().map(Vec::len), Some(200));
    let default = page("").await;
    assert_eq!(default["order"].as_array().map(Vec::len), Some(60));
    let rest = page("page=1&per_page=1000").await;
    assert_eq!(rest["order"].as_array().map(Vec::len), Some(50));
    assert_eq!(rest["prev_post_id"], "");
    assert_eq!(rest["has_next"], false);
    assert_eq!(rest["next_post_id"], capped["order"][199]);

    let first = page("per_page=10").await;
    assert_eq!(
        first["posts"][first["order"][0].as_str().expect("id")]["message"],
        "post number 249"
    );
    assert_eq!(first["next_post_id"], "");
    let before = page(&format!(
        "before={}&per_page=10",
        first["order"][9].as_str().expect("id")
    ))
    .await;
    assert_eq!(before["order"][0], first["prev_post_id"]);
    assert_eq!(
        before["next_post_id"], first["order"][9],
        "page 0 before X points back at X"
    );
    let after = page(&format!(
        "after={}&per_page=10",
        before["order"][0].as_str().expect("id")
    ))
    .await;
    assert_eq!(after["order"], first["order"]);
    assert_eq!(after["prev_post_id"], before["order"][0]);

    // `since` answers everything changed after a time, without cursors.
    let newest_at = first["posts"][first["order"][2].as_str().expect("id")]["update_at"]
        .as_i64()
        .expect("a time");
    let since = page(&format!("since={newest_at}")).await;
    assert_eq!(since["order"].as_array().map(Vec::len), Some(2));
    assert_eq!(since["next_post_id"], "");
    get(&app, &uri("since=yesterday"), Some("t-ann"))
        .await
        .assert_error(400, INVALID_BODY_PARAM);
}

#[tokio::test]
async fn search_applies_from_in_dates_exclusions_and_or() {
    let (_, app) = demo();
    let team = team_id(&app).await;
    let search = |terms: &str, extra: Value| {
        let mut body = json!({"terms": terms, "is_or_search": false, "page": 0, "per_page": 60});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        body
    };
    let uri = format!("/api/v4/teams/{team}/posts/search");
    let messages = |answer: &Value| -> Vec<String> {
        answer["order"]
            .as_array()
            .expect("an order")
            .iter()
            .map(|id| {
                answer["posts"][id.as_str().expect("id")]["message"]
                    .as_str()
                    .expect("text")
                    .to_owned()
            })
            .collect()
    };
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "from:carol in:off-topic",
            json!({}),
            vec!["Yes, the espresso is great."],
        ),
        (
            "coffee espresso",
            json!({"is_or_search": true}),
            vec![
                "Yes, the espresso is great.",
                "Anyone tried the new coffee machine?",
            ],
        ),
        ("coffee espresso", json!({}), vec![]),
        (
            "in:town-square on:2026-03-04 -nice",
            json!({}),
            vec![
                "Have a good evening, everyone.",
                "Update: uploads are done.",
                "Good morning! Search now understands quoted phrases like \"release candidate\".",
            ],
        ),
        (
            "upload*",
            json!({}),
            vec![
                "Update: uploads are done.",
                "Hey Alice, can you review my upload patch?",
                "Uploads that keep Mattermost's field order, please.",
            ],
        ),
        (
            "in:@bob from:alice",
            json!({}),
            vec!["Yes, let's.", "Sure, after lunch."],
        ),
        // Fourteen hours east of UTC, 2026-03-04 16:00 UTC is the 5th.
        (
            "in:town-square on:2026-03-05",
            json!({"time_zone_offset": 14 * 3600}),
            vec!["Have a good evening, everyone."],
        ),
    ];
    for (terms, extra, want) in cases {
        let answer = post_json(&app, &uri, ALICE, &search(terms, extra)).await;
        assert_eq!(answer.status, StatusCode::OK, "{terms}");
        assert_eq!(messages(&answer.json()), want, "{terms}");
    }
    // Carol is not in `design`, so its posts never show up for her.
    let carol = post_json(&app, &uri, CAROL, &search("slide", json!({})))
        .await
        .json();
    assert_eq!(messages(&carol), Vec::<String>::new());
    post_json(&app, &uri, ALICE, &json!({"terms": ""}))
        .await
        .assert_error(400, INVALID_BODY_PARAM);

    let files_uri = format!("/api/v4/teams/{team}/files/search");
    let search_files = async |terms: &str| {
        post_json(&app, &files_uri, ALICE, &search(terms, json!({})))
            .await
            .json()
    };
    let files = search_files("ext:pdf").await;
    let names: Vec<&str> = files["order"]
        .as_array()
        .expect("order")
        .iter()
        .map(|id| {
            files["file_infos"][id.as_str().expect("id")]["name"]
                .as_str()
                .expect("a name")
        })
        .collect();
    assert_eq!(names, ["handbook.pdf"]);
    let plan = search_files("floor").await;
    assert_eq!(plan["order"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn downloads_carry_the_type_and_mattermosts_content_disposition() {
    let (_, app) = demo();
    let files = channel_id(&app, "files").await;
    let page = posts_page(&app, &files, "per_page=60").await;
    let info_named = |name: &str| -> Value {
        page["posts"]
            .as_object()
            .expect("posts")
            .values()
            .flat_map(|p| {
                p["metadata"]["files"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("{name} is in the demo"))
    };
    let cases = [
        ("handbook.pdf", "", "application/pdf", "attachment"),
        ("floor-plan.png", "", "image/png", "inline"),
        ("floor-plan.png", "?download=1", "image/png", "attachment"),
        ("chime.wav", "", "audio/wav", "inline"),
        ("firmware.bin", "", "application/octet-stream", "attachment"),
        (
            "meeting-notes.docx",
            "",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "attachment",
        ),
    ];
    for (name, query, content_type, disposition) in cases {
        let info = info_named(name);
        let id = info["id"].as_str().expect("an id");
        let answer = get(&app, &format!("/api/v4/files/{id}{query}"), Some(ALICE)).await;
        assert_eq!(answer.status, StatusCode::OK, "{name}");
        assert_eq!(answer.header("content-type"), content_type, "{name}");
        assert_eq!(
            answer.header("content-disposition"),
            format!("{disposition};filename=\"{name}\"; filename*=UTF-8''{name}"),
            "{name}"
        );
        assert_eq!(answer.header("x-content-type-options"), "nosniff");
        assert_eq!(
            answer.body.len() as u64,
            info["size"].as_u64().expect("a size"),
            "{name}"
        );
        let fetched = get(&app, &format!("/api/v4/files/{id}/info"), Some(ALICE))
            .await
            .json();
        assert_eq!(fetched, info);
    }
    // The sideways photo keeps its EXIF orientation byte for byte.
    let jpeg = info_named("whiteboard.jpg");
    let bytes = get(
        &app,
        &format!("/api/v4/files/{}", jpeg["id"].as_str().expect("id")),
        Some(ALICE),
    )
    .await
    .body;
    assert!(bytes.windows(6).any(|w| w == b"Exif\0\0"));
    assert_eq!(
        (jpeg["width"].as_u64(), jpeg["height"].as_u64()),
        (Some(400), Some(300))
    );

    // HTML never goes out as HTML, and odd names are escaped.
    let answer = upload_one(
        &app,
        ALICE,
        &files,
        "my page (1).html",
        b"<script>alert(1)</script>",
    )
    .await;
    let id = answer.json()["file_infos"][0]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let download = get(&app, &format!("/api/v4/files/{id}"), Some(ALICE)).await;
    assert_eq!(download.header("content-type"), "text/plain");
    assert_eq!(
        download.header("content-disposition"),
        "attachment;filename=\"my%20page%20%281%29.html\"; filename*=UTF-8''my%20page%20%281%29.html"
    );
    // An unattached upload is its uploader's alone.
    get(&app, &format!("/api/v4/files/{id}"), Some(BOB))
        .await
        .assert_forbidden();
}

#[tokio::test]
async fn a_permalink_redirects_into_the_posts_team() {
    let (_, app) = demo();
    let town = channel_id(&app, "town-square").await;
    let page = posts_page(&app, &town, "per_page=1").await;
    let id = page["order"][0].as_str().expect("an id").to_owned();
    let answer = get(&app, &format!("/_redirect/pl/{id}"), None).await;
    assert_eq!(answer.status, StatusCode::FOUND);
    assert_eq!(answer.header("location"), format!("/porter/pl/{id}"));
    let landing = get(&app, &format!("/porter/pl/{id}"), None).await;
    assert_eq!(landing.status, StatusCode::OK);
    assert!(landing.header("content-type").starts_with("text/html"));
    get(&app, "/_redirect/pl/abcdefghijklmnopqrstuvwxyz", None)
        .await
        .assert_error(404, "app.post.get.app_error");
}

#[tokio::test]
async fn every_request_is_recorded_with_method_path_and_query() {
    let (sim, app) = demo();
    get(&app, "/api/v4/users/me?x=1", Some(ALICE)).await;
    get(&app, "/api/v4/nothing", None).await;
    let recorded = sim.requests();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].method, "GET");
    assert_eq!(recorded[0].path, "/api/v4/users/me");
    assert_eq!(recorded[0].query.as_deref(), Some("x=1"));
    assert_eq!(recorded[1].path, "/api/v4/nothing");
    assert_eq!(recorded[1].query, None);
    sim.clear_requests();
    assert!(sim.requests().is_empty());
}

#[tokio::test]
async fn direct_and_group_channels_follow_the_servers_rules() {
    let (sim, app) = demo();
    let alice = sim.user_id("alice").expect("alice");
    let bob = sim.user_id("bob").expect("bob");
    let carol = sim.user_id("carol").expect("carol");
    let dm = post_json(&app, "/api/v4/channels/direct", ALICE, &json!([alice, bob])).await;
    assert_eq!(dm.status, StatusCode::CREATED);
    let dm = dm.json();
    assert_eq!(dm["type"], "D");
    let mut pair = [alice.clone(), bob.clone()];
    pair.sort();
    assert_eq!(dm["name"], format!("{}__{}", pair[0], pair[1]));
    post_json(&app, "/api/v4/channels/direct", CAROL, &json!([alice, bob]))
        .await
        .assert_forbidden();
    post_json(&app, "/api/v4/channels/group", ALICE, &json!([bob]))
        .await
        .assert_error(400, "api.channel.create_group.bad_size.app_error");
    let group = post_json(&app, "/api/v4/channels/group", ALICE, &json!([bob, carol]))
        .await
        .json();
    assert_eq!(group["type"], "G");
    assert_eq!(group["display_name"], "alice, bob, carol");
    assert_eq!(group["name"].as_str().map(str::len), Some(40));
}

#[tokio::test]
async fn a_yaml_fixture_seeds_the_server() {
    let dir = tempfile::tempdir().expect("a temp folder");
    std::fs::write(dir.path().join("note.md"), "# Note\n").expect("writable");
    let fixture = dir.path().join("seed.yaml");
    std::fs::write(
        &fixture,
        r#"
config:
  max_post_size: 100
users:
  - username: ann
    tokens: [ann-1, ann-2]
  - username: ben
    token: ben-1
teams:
  - name: crew
    display_name: Crew
    members: [ann, ben]
channels:
  - team: crew
    name: general
    display_name: General
    members: [ann, ben]
direct_channels:
  - [ann, ben]
posts:
  - key: hello
    channel: general
    user: ann
    message: Hello
    create_at: "2026-01-01T10:00:00Z"
    files:
      - name: note.md
        path: note.md
  - channel: general
    user: ben
    message: Hi back
    root: hello
  - channel: "@ann,ben"
    user: ben
    message: A direct word
"#,
    )
    .expect("writable");
    let seed = Seed::from_path(&fixture).expect("the fixture is valid");
    let sim = Sim::new(&seed).expect("the seed is consistent");
    assert_eq!(sim.token_for("ann").as_deref(), Some("ann-1"));
    let app = sim.app();
    let me = get(&app, "/api/v4/users/me", Some("ann-2")).await.json();
    assert_eq!(me["username"], "ann");
    let config = get(&app, "/api/v4/config/client?format=old", None)
        .await
        .json();
    assert_eq!(config["MaxPostSize"], "100");
    let snapshot = sim.snapshot();
    assert_eq!(snapshot["posts"].as_array().map(Vec::len), Some(3));
    assert_eq!(snapshot["posts"][0]["create_at"], 1_767_261_600_000_i64);
    assert_eq!(snapshot["files"][0]["info"]["mime_type"], "text/markdown");
    assert_eq!(snapshot["posts"][1]["root_id"], snapshot["posts"][0]["id"]);

    let mut broken = seed.clone();
    broken.posts[1].root = Some("nope".into());
    let err = Sim::new(&broken).err().expect("an unknown root is refused");
    assert!(err.to_string().contains("nope"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_server_answers_a_real_client_and_stops() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut seed = Seed::demo();
    seed.config.max_file_size = 64;
    let sim = Sim::new(&seed).expect("valid");
    let running = start(sim.clone(), "127.0.0.1:0".parse().expect("an address"))
        .await
        .expect("the server starts");
    assert_eq!(running.url, format!("http://{}", running.addr));
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a client");
    let url = |path: &str| format!("{}/api/v4{path}", running.url);
    let json_of = async |request: reqwest::RequestBuilder| -> Value {
        let answer = request.send().await.expect("the server answers");
        answer.json().await.expect("JSON")
    };
    let me = json_of(
        http.get(url("/users/me"))
            .header("Authorization", format!("BEARER {ALICE}")),
    )
    .await;
    assert_eq!(me["username"], "alice");

    let config = json_of(http.get(url("/config/client?format=old"))).await;
    assert_eq!(config["SiteURL"], running.url);

    let team = json_of(http.get(url("/teams/name/porter")).bearer_auth(ALICE)).await;
    let team_id = team["id"].as_str().expect("id");
    let channel = json_of(
        http.get(url(&format!("/teams/{team_id}/channels/name/files")))
            .bearer_auth(ALICE),
    )
    .await;
    let channel_id = channel["id"].as_str().expect("id").to_owned();
    let form = |size: usize| {
        reqwest::multipart::Form::new()
            .text("channel_id", channel_id.clone())
            .text("client_ids", "c1")
            .part(
                "files",
                reqwest::multipart::Part::bytes(vec![1u8; size]).file_name("blob.bin"),
            )
    };
    let upload = |size: usize| {
        http.post(url("/files"))
            .bearer_auth(ALICE)
            .multipart(form(size))
            .send()
    };
    let refused = upload(65).await.expect("answers");
    assert_eq!(refused.status(), reqwest::StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(refused.headers()["content-type"], "application/json");
    let accepted = upload(64).await.expect("answers");
    assert_eq!(accepted.status(), reqwest::StatusCode::CREATED);
    let body: Value = accepted.json().await.expect("JSON");
    assert_eq!(body["client_ids"], json!(["c1"]));

    drop(http);
    let methods: Vec<String> = sim.requests().into_iter().map(|r| r.method).collect();
    assert_eq!(methods, ["GET", "GET", "GET", "GET", "POST", "POST"]);
    let addr = running.addr;
    running.shutdown().await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the port is closed after shutdown"
    );
}

#[tokio::test]
async fn the_inspection_routes_show_the_log_and_state_without_adding_to_the_log() {
    let (sim, app) = demo();
    let me = get(&app, "/api/v4/users/me", Some(ALICE)).await;
    assert_eq!(me.status, StatusCode::OK);

    let log = get(&app, "/__sim/requests", None).await.json();
    assert_eq!(log.as_array().map(Vec::len), Some(1), "{log}");
    assert_eq!(log[0]["path"], "/api/v4/users/me");

    let state = get(&app, "/__sim/state", None).await;
    assert_eq!(state.status, StatusCode::OK);

    let cleared = call(&app, "POST", "/__sim/requests/clear", None, None).await;
    assert_eq!(cleared.status, StatusCode::OK);
    assert!(sim.requests().is_empty());
}
