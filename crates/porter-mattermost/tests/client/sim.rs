//! Round trips against the emulator's demo: every endpoint, and the errors
//! a real Mattermost gives.

use std::collections::HashSet;

use bytes::Bytes;
use porter_mattermost::{
    ChannelPosts, ChannelType, Client, Error, FileInfo, NewPost, PostList, Search, UploadFile,
    UserSearch,
};
use porter_mmsim::{RecordedRequest, Running, Seed, Sim, start};
use reqwest::StatusCode;

use super::client;

/// `ABSENT_ID` is well-formed but names nothing, so the server looks and
/// answers 404 (a malformed id is a 400 before any lookup).
const ABSENT_ID: &str = "ybndrfg8ejkmcpqxot1uwisza3";

struct Demo {
    sim: Sim,
    running: Running,
    alice: Client,
}

async fn demo() -> Demo {
    demo_from(&Seed::demo()).await
}

async fn demo_from(seed: &Seed) -> Demo {
    let sim = Sim::new(seed).expect("the seed is valid");
    let running = start(sim.clone(), "127.0.0.1:0".parse().unwrap())
        .await
        .expect("a loopback port is free");
    let alice = client(&running.url, "demo-alice-token");
    Demo {
        sim,
        running,
        alice,
    }
}

impl Demo {
    fn as_user(&self, name: &str) -> Client {
        client(&self.running.url, &format!("demo-{name}-token"))
    }

    async fn team_id(&self) -> String {
        self.alice.team_by_name("porter").await.unwrap().id
    }

    async fn channel_id(&self, name: &str) -> String {
        let team = self.team_id().await;
        self.alice.channel_by_name(&team, name).await.unwrap().id
    }

    /// `posts` is one page of a channel's posts as alice.
    async fn posts(&self, channel_id: &str, query: ChannelPosts) -> PostList {
        self.alice.channel_posts(channel_id, &query).await.unwrap()
    }

    /// `demo_file` is the info of a file in the `files` channel, by name.
    async fn demo_file(&self, name: &str) -> FileInfo {
        let files = self.channel_id("files").await;
        self.posts(&files, ChannelPosts::page(0, 200))
            .await
            .iter()
            .flat_map(|p| p.metadata.files.iter())
            .find(|f| f.name == name)
            .cloned()
            .expect("the demo has this file")
    }

    fn requests_to(&self, path_part: &str) -> Vec<RecordedRequest> {
        self.sim
            .requests()
            .into_iter()
            .filter(|r| r.path.contains(path_part))
            .collect()
    }
}

// ----- users -----

#[tokio::test]
async fn me_is_the_tokens_owner() {
    let demo = demo().await;
    let me = demo.alice.me().await.unwrap();
    assert_eq!(me.username, "alice");
    assert_eq!(me.full_name(), "Alice Anders");
    assert_eq!(me.id.len(), 26);
    assert!(me.is_active());
    assert_eq!(
        demo.sim.requests(),
        [RecordedRequest {
            method: "GET".into(),
            path: "/api/v4/users/me".into(),
            query: None,
            user_agent: Some(porter_mattermost::USER_AGENT.to_owned()),
        }]
    );
}

#[tokio::test]
async fn users_are_found_by_id_by_username_and_by_several_usernames() {
    let demo = demo().await;
    let bob = demo.alice.user_by_username("bob").await.unwrap();
    assert_eq!(bob.first_name, "Bob");
    let again = demo.alice.user(&bob.id).await.unwrap();
    assert_eq!(again, bob);
    let users = demo
        .alice
        .users_by_usernames(&["bob", "carol", "nobody"])
        .await
        .unwrap();
    let names: HashSet<&str> = users.iter().map(|u| u.username.as_str()).collect();
    assert_eq!(names, HashSet::from(["bob", "carol"]));
    let dave = demo.alice.user_by_username("dave").await.unwrap();
    assert!(!dave.is_active(), "dave is deactivated");
}

#[tokio::test]
async fn an_unknown_user_is_named_in_the_not_found_error() {
    let demo = demo().await;
    let err = demo.alice.user_by_username("zed").await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("user named \"zed\" was not found"),
        "{err}"
    );
    let err = demo.alice.user(ABSENT_ID).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("user with id \"{ABSENT_ID}\" was not found")),
        "{err}"
    );
}

#[tokio::test]
async fn user_search_matches_names_and_leaves_out_the_deactivated() {
    let demo = demo().await;
    let found = demo
        .alice
        .search_users(&UserSearch::new("car"))
        .await
        .unwrap();
    let names: Vec<&str> = found.iter().map(|u| u.username.as_str()).collect();
    assert_eq!(names, ["carol"]);
    let active = demo
        .alice
        .search_users(&UserSearch::new("dave"))
        .await
        .unwrap();
    assert!(active.is_empty(), "{active:?}");
    let all = demo
        .alice
        .search_users(&UserSearch {
            allow_inactive: true,
            ..UserSearch::new("dave")
        })
        .await
        .unwrap();
    assert_eq!(all.len(), 1);
}

// ----- teams and channels -----

#[tokio::test]
async fn teams_are_listed_and_found_by_name() {
    let demo = demo().await;
    let teams = demo.alice.my_teams().await.unwrap();
    assert_eq!(teams.len(), 1);
    assert_eq!(teams[0].name, "porter");
    assert_eq!(teams[0].display_name, "Porter");
    let team = demo.alice.team_by_name("porter").await.unwrap();
    assert_eq!(team, teams[0]);
    let err = demo.alice.team_by_name("nope").await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("team named \"nope\" was not found"),
        "{err}"
    );
}

#[tokio::test]
async fn my_channels_hold_the_teams_channels_and_my_direct_and_group_ones() {
    let demo = demo().await;
    let team = demo.team_id().await;
    let channels = demo.alice.my_channels(&team).await.unwrap();
    let names: HashSet<&str> = channels
        .iter()
        .filter(|c| c.kind == ChannelType::Open || c.kind == ChannelType::Private)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        names,
        HashSet::from(["town-square", "off-topic", "design", "files"])
    );
    assert!(channels.iter().any(|c| c.kind == ChannelType::Direct));
    assert!(channels.iter().any(|c| c.kind == ChannelType::Group));
    let carols = demo.as_user("carol").my_channels(&team).await.unwrap();
    assert!(
        carols.iter().all(|c| c.name != "design"),
        "carol is not in the private channel"
    );
}

#[tokio::test]
async fn channels_are_found_by_name_and_by_id() {
    let demo = demo().await;
    let team = demo.team_id().await;
    let by_name = demo
        .alice
        .channel_by_name(&team, "town-square")
        .await
        .unwrap();
    assert_eq!(by_name.display_name, "Town Square");
    assert_eq!(by_name.kind, ChannelType::Open);
    assert_eq!(by_name.team_id, team);
    let by_id = demo.alice.channel(&by_name.id).await.unwrap();
    assert_eq!(by_id.id, by_name.id);
    let design = demo.alice.channel_by_name(&team, "design").await.unwrap();
    assert_eq!(design.kind, ChannelType::Private);
}

#[tokio::test]
async fn an_unknown_channel_is_named_in_the_not_found_error() {
    let demo = demo().await;
    let team = demo.team_id().await;
    let err = demo
        .alice
        .channel_by_name(&team, "no-such-channel")
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(StatusCode::NOT_FOUND));
    assert!(
        err.to_string().starts_with(&format!(
            "channel named \"no-such-channel\" in team \"{team}\" was not found"
        )),
        "{err}"
    );
    let err = demo.alice.channel(ABSENT_ID).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("channel with id \"{ABSENT_ID}\" was not found")),
        "{err}"
    );
    let api = err.api().unwrap();
    assert_eq!(api.id, "app.channel.get.existing.app_error");
    assert!(!api.request_id.is_empty());
}

#[tokio::test]
async fn a_private_channel_is_forbidden_to_non_members_with_what_to_do() {
    let demo = demo().await;
    let design = demo.channel_id("design").await;
    let carol = demo.as_user("carol");
    let err = carol.channel(&design).await.unwrap_err();
    assert!(matches!(err, Error::Forbidden { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "lacks permission to read channel with id \"{design}\""
        )),
        "{text}"
    );
    assert!(text.contains("join the channel"), "{text}");
    let err = carol
        .channel_posts(&design, &ChannelPosts::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("lacks permission to read the posts of channel"),
        "{err}"
    );
}

#[tokio::test]
async fn a_private_channel_is_hidden_by_name_from_non_members() {
    let demo = demo().await;
    let team = demo.team_id().await;
    let err = demo
        .as_user("carol")
        .channel_by_name(&team, "design")
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    assert!(
        err.to_string().starts_with("channel named \"design\""),
        "{err}"
    );
}

#[tokio::test]
async fn a_malformed_id_is_a_bad_request() {
    let demo = demo().await;
    let err = demo.alice.channel("not-an-id").await.unwrap_err();
    assert!(matches!(err, Error::BadRequest { .. }), "{err}");
}

#[tokio::test]
async fn direct_and_group_channels_are_opened() {
    let demo = demo().await;
    let alice = demo.sim.user_id("alice").unwrap();
    let bob = demo.sim.user_id("bob").unwrap();
    let carol = demo.sim.user_id("carol").unwrap();
    let dm = demo.alice.direct_channel(&alice, &bob).await.unwrap();
    assert_eq!(dm.kind, ChannelType::Direct);
    let again = demo.alice.direct_channel(&bob, &alice).await.unwrap();
    assert_eq!(again.id, dm.id, "the same two people share one DM");
    let new_dm = demo.alice.direct_channel(&alice, &carol).await.unwrap();
    assert_ne!(new_dm.id, dm.id);
    let group = demo
        .alice
        .group_channel(&[&alice, &bob, &carol])
        .await
        .unwrap();
    assert_eq!(group.kind, ChannelType::Group);
    let methods: Vec<(String, String)> = demo
        .requests_to("/channels/")
        .into_iter()
        .map(|r| (r.method, r.path))
        .collect();
    assert!(methods.contains(&("POST".into(), "/api/v4/channels/direct".into())));
    assert!(methods.contains(&("POST".into(), "/api/v4/channels/group".into())));
}

// ----- posts -----

#[tokio::test]
async fn channel_posts_page_newest_first() {
    let demo = demo().await;
    let town = demo.channel_id("town-square").await;
    let first = demo
        .alice
        .channel_posts(&town, &ChannelPosts::page(0, 5))
        .await
        .unwrap();
    assert_eq!(first.len(), 5);
    let times: Vec<i64> = first.iter().map(|p| p.create_at).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    assert_eq!(
        first.iter().next().unwrap().message,
        "Have a good evening, everyone."
    );
    let second = demo
        .alice
        .channel_posts(&town, &ChannelPosts::page(1, 5))
        .await
        .unwrap();
    assert_eq!(second.len(), 5);
    let overlap = first
        .order
        .iter()
        .filter(|id| second.order.contains(id))
        .count();
    assert_eq!(overlap, 0);
    assert!(second.iter().next().unwrap().create_at <= *times.last().unwrap());

    let everything = demo
        .alice
        .channel_posts(&town, &ChannelPosts::page(0, 500))
        .await
        .unwrap();
    assert_eq!(
        everything.len(),
        16,
        "the whole of town-square, replies included"
    );
    assert!(everything.prev_post_id.is_empty(), "nothing older");
    let queries: Vec<Option<String>> = demo
        .requests_to(&format!("/channels/{town}/posts"))
        .into_iter()
        .map(|r| r.query)
        .collect();
    assert_eq!(
        queries,
        [
            Some("page=0&per_page=5".to_owned()),
            Some("page=1&per_page=5".to_owned()),
            Some("page=0&per_page=500".to_owned())
        ]
    );
}

#[tokio::test]
async fn channel_posts_go_before_and_after_a_post_and_since_a_time() {
    let demo = demo().await;
    let town = demo.channel_id("town-square").await;
    let all = demo
        .posts(&town, ChannelPosts::page(0, 200))
        .await
        .into_ordered();
    let middle = &all[8];
    let near = |before: bool| ChannelPosts {
        before: before.then(|| middle.id.clone()),
        after: (!before).then(|| middle.id.clone()),
        per_page: Some(3),
        ..ChannelPosts::default()
    };
    let older = demo.posts(&town, near(true)).await;
    let ids: Vec<&str> = older.order.iter().map(String::as_str).collect();
    let want: Vec<&str> = all[9..12].iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, want);
    let newer = demo.posts(&town, near(false)).await;
    let ids: Vec<&str> = newer.order.iter().map(String::as_str).collect();
    let want: Vec<&str> = all[5..8].iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, want);

    let since = demo
        .posts(
            &town,
            ChannelPosts {
                since: Some(all[2].create_at),
                ..ChannelPosts::default()
            },
        )
        .await;
    let mut got: Vec<&str> = since.order.iter().map(String::as_str).collect();
    got.sort_unstable();
    let mut want: Vec<&str> = all
        .iter()
        .filter(|p| p.update_at > all[2].create_at)
        .map(|p| p.id.as_str())
        .collect();
    want.sort_unstable();
    assert_eq!(got, want);
}

#[tokio::test]
async fn a_post_and_its_thread_are_read() {
    let demo = demo().await;
    let town = demo.channel_id("town-square").await;
    let page = demo.posts(&town, ChannelPosts::page(0, 200)).await;
    let root = page
        .iter()
        .find(|p| p.message.starts_with("Kickoff thread"))
        .unwrap()
        .clone();
    let post = demo.alice.post(&root.id).await.unwrap();
    assert_eq!(post.message, root.message);
    assert!(post.root_id.is_empty());
    let thread = demo.alice.post_thread(&root.id).await.unwrap();
    assert_eq!(thread.posts.len(), 5, "the root and four replies");
    assert!(
        thread
            .posts
            .values()
            .all(|p| p.id == root.id || p.root_id == root.id)
    );
    let err = demo.alice.post(ABSENT_ID).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("post with id \"{ABSENT_ID}\" was not found")),
        "{err}"
    );
    let err = demo.alice.post_thread(ABSENT_ID).await.unwrap_err();
    assert_eq!(err.status(), Some(StatusCode::NOT_FOUND), "{err}");
}

#[tokio::test]
async fn a_post_is_created_with_a_root_and_props() {
    let demo = demo().await;
    let town = demo.channel_id("town-square").await;
    let root = demo
        .alice
        .create_post(&NewPost::new(&town, "A new thread"))
        .await
        .unwrap();
    assert_eq!(root.message, "A new thread");
    assert_eq!(root.channel_id, town);
    let mut reply = NewPost::new(&town, "A reply");
    reply.root_id.clone_from(&root.id);
    reply
        .props
        .insert("ai_generated_by".into(), serde_json::json!("porter"));
    let reply = demo.alice.create_post(&reply).await.unwrap();
    assert_eq!(reply.root_id, root.id);
    assert_eq!(reply.props["ai_generated_by"], "porter");
    let thread = demo.alice.post_thread(&root.id).await.unwrap();
    assert_eq!(thread.posts.len(), 2);
}

#[tokio::test]
async fn posting_where_the_account_is_no_member_is_forbidden() {
    let demo = demo().await;
    let design = demo.channel_id("design").await;
    let err = demo
        .as_user("carol")
        .create_post(&NewPost::new(&design, "let me in"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Forbidden { .. }), "{err}");
    assert!(
        err.to_string().contains(&format!(
            "lacks permission to post in channel with id \"{design}\""
        )),
        "{err}"
    );
}

#[tokio::test]
async fn a_post_longer_than_the_server_allows_is_a_bad_request() {
    let demo = demo().await;
    let town = demo.channel_id("town-square").await;
    let config = demo.alice.client_config().await.unwrap();
    let too_long = "x".repeat(config.max_post_size.unwrap() as usize + 1);
    let err = demo
        .alice
        .create_post(&NewPost::new(&town, too_long))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::BadRequest { .. }), "{err}");
}

// ----- files -----

#[tokio::test]
async fn post_metadata_file_infos_and_downloads_agree() {
    let demo = demo().await;
    let files = demo.channel_id("files").await;
    let page = demo.posts(&files, ChannelPosts::page(0, 200)).await;
    let post = page
        .iter()
        .find(|p| p.metadata.files.iter().any(|f| f.name == "handbook.pdf"))
        .expect("the handbook post lists its files in its metadata");
    assert_eq!(post.file_ids.len(), 2);
    let infos = demo.alice.post_file_infos(&post.id).await.unwrap();
    let mut names: Vec<&str> = infos.iter().map(|f| f.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["handbook-summary.txt", "handbook.pdf"]);
    let pdf = infos.iter().find(|f| f.name == "handbook.pdf").unwrap();
    assert_eq!(pdf.post_id, post.id);
    assert_eq!(pdf.mime_type, "application/pdf");
    assert_eq!(demo.alice.file_info(&pdf.id).await.unwrap(), *pdf);

    let download = demo.alice.download(pdf, pdf.size).await.unwrap();
    assert_eq!(download.bytes.len() as u64, pdf.size);
    assert!(download.bytes.starts_with(b"%PDF"));
    assert_eq!(download.content_type.as_deref(), Some("application/pdf"));
    assert_eq!(download.file_name.as_deref(), Some("handbook.pdf"));
}

#[tokio::test]
async fn a_file_over_the_cap_by_its_info_is_never_requested() {
    let demo = demo().await;
    let png = demo.demo_file("floor-plan.png").await;
    demo.sim.clear_requests();
    let err = demo.alice.download(&png, png.size - 1).await.unwrap_err();
    assert!(
        matches!(err, Error::TooLarge { size: Some(s), received: 0, .. } if s == png.size),
        "{err}"
    );
    assert!(demo.sim.requests().is_empty(), "{:?}", demo.sim.requests());
}

#[tokio::test]
async fn a_file_whose_info_understates_its_size_is_stopped_by_its_length() {
    let demo = demo().await;
    let mut png = demo.demo_file("floor-plan.png").await;
    let real = png.size;
    png.size = 10; // a server (or a stale info) that claims less
    demo.sim.clear_requests();
    let cap = real - 1;
    let err = demo.alice.download(&png, cap).await.unwrap_err();
    match err {
        Error::TooLarge { size, received, .. } => {
            assert_eq!(size, Some(real), "the Content-Length showed it");
            assert_eq!(received, 0, "no body was read");
        }
        other => panic!("not TooLarge: {other}"),
    }
    let requested: Vec<String> = demo.sim.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(requested, [format!("/api/v4/files/{}", png.id)]);
    // Exactly at the cap it is read whole.
    let whole = demo.alice.download_file(&png.id, real).await.unwrap();
    assert_eq!(whole.bytes.len() as u64, real);
    assert!(whole.bytes.starts_with(b"\x89PNG"));
}

#[tokio::test]
async fn an_unknown_file_is_named_in_the_not_found_error() {
    let demo = demo().await;
    for err in [
        demo.alice.file_info(ABSENT_ID).await.unwrap_err(),
        demo.alice.download_file(ABSENT_ID, 1024).await.unwrap_err(),
    ] {
        assert!(
            err.to_string()
                .starts_with(&format!("file with id \"{ABSENT_ID}\" was not found")),
            "{err}"
        );
    }
}

#[tokio::test]
async fn files_are_uploaded_attached_to_a_post_and_read_back() {
    let demo = demo().await;
    let town = demo.channel_id("town-square").await;
    let text = Bytes::from_static(b"first line\nsecond line\n");
    let image = Bytes::from(vec![1u8, 2, 3, 4, 5]);
    let infos = demo
        .alice
        .upload_files(
            &town,
            &[
                UploadFile::new("notes.txt", "text/plain", text.clone()),
                UploadFile::new("data.bin", "application/octet-stream", image.clone()),
            ],
        )
        .await
        .unwrap();
    assert_eq!(infos.len(), 2);
    assert_eq!(infos[0].name, "notes.txt");
    assert_eq!(infos[0].size, text.len() as u64);
    assert_eq!(infos[1].name, "data.bin");
    assert!(
        infos.iter().all(|f| f.post_id.is_empty()),
        "not yet attached"
    );

    let mut post = NewPost::new(&town, "Two files");
    post.file_ids = infos.iter().map(|f| f.id.clone()).collect();
    let post = demo.alice.create_post(&post).await.unwrap();
    assert_eq!(post.file_ids, post_ids(&infos));
    let read = demo.alice.post(&post.id).await.unwrap();
    let attached: Vec<&str> = read
        .metadata
        .files
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(attached.len(), 2);
    assert!(attached.contains(&"notes.txt") && attached.contains(&"data.bin"));
    let infos = demo.alice.post_file_infos(&post.id).await.unwrap();
    assert!(infos.iter().all(|f| f.post_id == post.id));

    let notes = infos.iter().find(|f| f.name == "notes.txt").unwrap();
    let download = demo.alice.download(notes, 1024).await.unwrap();
    assert_eq!(download.bytes, text);
    assert_eq!(download.file_name.as_deref(), Some("notes.txt"));
    assert!(download.content_type.unwrap().starts_with("text/plain"));
    let data = infos.iter().find(|f| f.name == "data.bin").unwrap();
    assert_eq!(demo.alice.download(data, 5).await.unwrap().bytes, image);
}

fn post_ids(infos: &[porter_mattermost::FileInfo]) -> Vec<String> {
    infos.iter().map(|f| f.id.clone()).collect()
}

#[tokio::test]
async fn an_upload_over_the_servers_limit_names_the_limit() {
    let mut seed = Seed::demo();
    seed.config.max_file_size = 1000;
    let demo = demo_from(&seed).await;
    let town = demo.channel_id("town-square").await;
    let before = demo.sim.snapshot();
    let err = demo
        .alice
        .upload_files(&town, &[UploadFile::new("big.bin", "", vec![0u8; 1001])])
        .await
        .unwrap_err();
    match &err {
        Error::RejectedTooLarge { limit, .. } => assert_eq!(*limit, Some(1000)),
        other => panic!("not RejectedTooLarge: {other}"),
    }
    assert!(err.to_string().contains("its limit is 1000 bytes"), "{err}");
    assert!(err.to_string().contains("\"big.bin\""), "{err}");
    assert_eq!(demo.sim.snapshot(), before, "nothing was stored");
    // Exactly at the limit is accepted.
    demo.alice
        .upload_files(&town, &[UploadFile::new("fits.bin", "", vec![0u8; 1000])])
        .await
        .unwrap();
}

#[tokio::test]
async fn uploading_where_the_account_is_no_member_is_forbidden() {
    let demo = demo().await;
    let design = demo.channel_id("design").await;
    let err = demo
        .as_user("carol")
        .upload_files(&design, &[UploadFile::new("x.txt", "text/plain", "x")])
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Forbidden { .. }), "{err}");
    assert!(
        err.to_string().contains("lacks permission to upload files"),
        "{err}"
    );
}

// ----- search -----

#[tokio::test]
async fn posts_are_searched_with_filters_and_or() {
    let demo = demo().await;
    let team = demo.team_id().await;
    let bob = demo.sim.user_id("bob").unwrap();
    let from_bob = demo
        .alice
        .search_posts(&team, &Search::new("from:bob"))
        .await
        .unwrap();
    assert!(!from_bob.is_empty());
    assert!(from_bob.iter().all(|p| p.user_id == bob));

    let both = demo
        .alice
        .search_posts(&team, &Search::new("espresso lunch"))
        .await
        .unwrap();
    let either = demo
        .alice
        .search_posts(
            &team,
            &Search {
                is_or_search: true,
                ..Search::new("espresso lunch")
            },
        )
        .await
        .unwrap();
    assert!(
        either.len() > both.len(),
        "{} vs {}",
        either.len(),
        both.len()
    );
    assert!(
        either
            .iter()
            .any(|p| p.message == "Yes, the espresso is great.")
    );

    let carol_sees = demo
        .as_user("carol")
        .search_posts(&team, &Search::new("roadmap"))
        .await
        .unwrap();
    let design = demo.channel_id("design").await;
    assert!(
        carol_sees.iter().all(|p| p.channel_id != design),
        "carol cannot see the private channel's posts"
    );
    let searches = demo.requests_to("/posts/search");
    assert!(searches.iter().all(|r| r.method == "POST"));
}

#[tokio::test]
async fn files_are_searched_by_name() {
    let demo = demo().await;
    let team = demo.team_id().await;
    let found = demo
        .alice
        .search_files(&team, &Search::new("budget"))
        .await
        .unwrap();
    let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["budget.xlsx"]);
    assert_eq!(found.into_ordered().len(), 1);
}

// ----- server -----

#[tokio::test]
async fn the_client_config_gives_the_version_and_limits() {
    let demo = demo().await;
    let config = demo.alice.client_config().await.unwrap();
    assert_eq!(config.version, "10.11.0");
    assert_eq!(config.max_post_size, Some(16383));
    assert_eq!(config.max_file_size, Some(100 * 1024 * 1024));
    assert_eq!(config.site_url.as_deref(), Some(demo.running.url.as_str()));
    assert_eq!(demo.sim.requests()[0].query.as_deref(), Some("format=old"));
}

#[tokio::test]
async fn ping_answers_ok() {
    let demo = demo().await;
    assert_eq!(demo.alice.ping().await.unwrap().status, "OK");
}

#[tokio::test]
async fn a_permalink_is_served_by_the_server() {
    let demo = demo().await;
    let town = demo.channel_id("town-square").await;
    let post = demo
        .alice
        .channel_posts(&town, &ChannelPosts::page(0, 1))
        .await
        .unwrap()
        .into_ordered()
        .remove(0);
    let link = demo.alice.permalink(&post.id);
    assert_eq!(
        link,
        format!("{}/_redirect/pl/{}", demo.running.url, post.id)
    );
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap();
    let response = http
        .get(&link)
        .bearer_auth("demo-alice-token")
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_redirection() || response.status().is_success(),
        "{}",
        response.status()
    );
}

// ----- tokens -----

#[tokio::test]
async fn a_wrong_token_says_to_make_a_new_one_without_showing_it() {
    let demo = demo().await;
    let wrong = client(&demo.running.url, "wrong-secret-token");
    let err = wrong.me().await.unwrap_err();
    assert!(matches!(err, Error::Unauthorized { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("MM_TOKEN"), "{text}");
    assert!(text.contains("personal access token"), "{text}");
    assert!(text.contains(&demo.running.addr.to_string()), "{text}");
    assert!(!text.contains("wrong-secret-token"), "{text}");
    assert!(!format!("{err:?}").contains("wrong-secret-token"));
}

#[tokio::test]
async fn a_deactivated_users_token_is_refused() {
    let demo = demo().await;
    let err = demo.as_user("dave").me().await.unwrap_err();
    assert!(matches!(err, Error::Unauthorized { .. }), "{err}");
}

#[tokio::test]
async fn a_base_url_with_the_api_path_works_the_same() {
    let demo = demo().await;
    let client = client(&format!("{}/api/v4/", demo.running.url), "demo-bob-token");
    assert_eq!(client.me().await.unwrap().username, "bob");
    assert_eq!(client.base_url(), demo.running.url);
}

#[tokio::test]
async fn reads_change_nothing_on_the_server() {
    let demo = demo().await;
    let before = demo.sim.snapshot();
    let team = demo.team_id().await;
    let town = demo.channel_id("town-square").await;
    demo.alice.me().await.unwrap();
    demo.alice.my_channels(&team).await.unwrap();
    demo.alice
        .channel_posts(&town, &ChannelPosts::default())
        .await
        .unwrap();
    demo.alice
        .search_posts(&team, &Search::new("release"))
        .await
        .unwrap();
    assert_eq!(demo.sim.snapshot(), before);
    assert!(
        demo.sim
            .requests()
            .iter()
            .all(|r| r.method == "GET" || r.path.ends_with("/search"))
    );
}
