//! The built-in demo: the people, channels and posts of a small team, with
//! one real file of every kind the file view handles.

pub(crate) mod files;

use crate::seed::{
    DemoFile, Seed, SeedChannel, SeedConfig, SeedFile, SeedPost, SeedTeam, SeedTime, SeedUser,
};

impl Seed {
    /// The built-in demo: team `porter` ("Porter"); users `alice`, `bob`,
    /// `carol` and the deactivated `dave` (tokens `demo-<name>-token`);
    /// channels `town-square` (everyone), `off-topic`, the private `design`
    /// (alice and bob) and `files`, whose posts carry one real file of every
    /// kind the file view handles; a DM alice–bob and a group alice–bob–carol;
    /// and a thread with replies in `town-square`.
    ///
    /// Posts are dated from 2026-03-02 09:00 UTC on (`town-square` spans
    /// three days), so date filters in searches have something to find.
    #[must_use]
    pub fn demo() -> Seed {
        seed()
    }
}

/// Builds [`Seed::demo`].
fn seed() -> Seed {
    let user = |username: &str, first: &str, last: &str, position: &str, deleted: bool| SeedUser {
        username: username.to_owned(),
        token: Some(format!("demo-{username}-token")),
        first_name: first.to_owned(),
        last_name: last.to_owned(),
        nickname: String::new(),
        email: format!("{username}@example.com"),
        position: position.to_owned(),
        deleted,
        // Public like the tokens, so `porter mattermost login --username`
        // and Client4's `login` can be tried against the demo; carol's
        // account has MFA (code 123456).
        password: Some(format!("demo-{username}-password")),
        mfa_code: (username == "carol").then(|| "123456".to_owned()),
        ..SeedUser::default()
    };
    let names = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let channel =
        |name: &str, display: &str, kind: &str, members: &[&str], purpose: &str| SeedChannel {
            team: "porter".to_owned(),
            name: name.to_owned(),
            display_name: display.to_owned(),
            kind: kind.to_owned(),
            members: names(members),
            purpose: purpose.to_owned(),
            header: String::new(),
            archived: false,
        };
    Seed {
        config: SeedConfig {
            site_name: "Porter demo".to_owned(),
            ..SeedConfig::default()
        },
        users: vec![
            user("alice", "Alice", "Anders", "Engineering lead", false),
            user("bob", "Bob", "Baker", "Backend engineer", false),
            user("carol", "Carol", "Chen", "Designer", false),
            user("dave", "Dave", "Dunn", "Contractor (left)", true),
        ],
        teams: vec![SeedTeam {
            name: "porter".to_owned(),
            display_name: "Porter".to_owned(),
            members: names(&["alice", "bob", "carol", "dave"]),
            description: "The team that builds porter.".to_owned(),
        }],
        channels: vec![
            channel(
                "town-square",
                "Town Square",
                "O",
                &["alice", "bob", "carol", "dave"],
                "Everyone's channel.",
            ),
            channel(
                "off-topic",
                "Off-Topic",
                "O",
                &["alice", "bob", "carol"],
                "Anything else.",
            ),
            channel(
                "design",
                "Design",
                "P",
                &["alice", "bob"],
                "Private design reviews.",
            ),
            channel(
                "files",
                "Files",
                "O",
                &["alice", "bob", "carol"],
                "One file of every kind, for trying the file view.",
            ),
            SeedChannel {
                archived: true,
                ..channel(
                    "launch-2025",
                    "Launch 2025",
                    "O",
                    &["alice", "bob", "carol"],
                    "Planning the 2025 launch (done, archived).",
                )
            },
        ],
        direct_channels: vec![names(&["alice", "bob"])],
        group_channels: vec![names(&["alice", "bob", "carol"])],
        posts: posts(),
        oauth_apps: Vec::new(),
    }
}

/// A post at a given UTC time; `key` and `root` tie threads together.
fn post(
    channel: &str,
    user: &str,
    at: &str,
    message: &str,
    key: Option<&str>,
    root: Option<&str>,
) -> SeedPost {
    SeedPost {
        key: key.map(str::to_owned),
        channel: channel.to_owned(),
        user: user.to_owned(),
        message: message.to_owned(),
        root: root.map(str::to_owned),
        create_at: Some(SeedTime::Text(format!("{at}Z"))),
        files: Vec::new(),
        props: None,
    }
}

/// A generated file attachment.
fn generated(kind: DemoFile) -> SeedFile {
    SeedFile {
        name: files::file_name(kind).to_owned(),
        generate: Some(kind),
        ..SeedFile::default()
    }
}

/// All the demo's posts, in time order per channel.
#[allow(clippy::too_many_lines, reason = "the demo's seed data")]
fn posts() -> Vec<SeedPost> {
    let ts = "town-square";
    let mut list = vec![
        post(
            ts,
            "alice",
            "2026-03-02T09:00:00",
            "Welcome to Porter! This is town-square, where the whole team talks.",
            None,
            None,
        ),
        post(
            ts,
            "bob",
            "2026-03-02T09:05:00",
            "Morning all. Planning for the spring release starts today.",
            None,
            None,
        ),
        post(
            ts,
            "alice",
            "2026-03-02T09:10:00",
            "Kickoff thread: what should the spring release include?",
            Some("kickoff"),
            None,
        ),
        post(
            ts,
            "bob",
            "2026-03-02T09:12:00",
            "Uploads that keep Mattermost's field order, please.",
            None,
            Some("kickoff"),
        ),
        post(
            ts,
            "carol",
            "2026-03-02T09:15:00",
            "And search with from: and in: filters.",
            None,
            Some("kickoff"),
        ),
        post(
            ts,
            "alice",
            "2026-03-02T09:20:00",
            "Agreed. I will write it up in the meeting notes.",
            None,
            Some("kickoff"),
        ),
        post(
            ts,
            "carol",
            "2026-03-02T09:30:00",
            "Lunch at noon in the usual place?",
            None,
            None,
        ),
        post(
            ts,
            "bob",
            "2026-03-03T10:00:00",
            "Deploy to staging went fine; the release candidate is up.",
            None,
            None,
        ),
        post(
            ts,
            "alice",
            "2026-03-03T10:05:00",
            "Thanks Bob! The release notes are in ~files.",
            None,
            None,
        ),
        post(
            ts,
            "dave",
            "2026-03-03T10:30:00",
            "Tomorrow is my last day. It was a pleasure working with you all.",
            None,
            None,
        ),
        post(
            ts,
            "carol",
            "2026-03-03T11:00:00",
            "The budget spreadsheet is in ~files for review.",
            None,
            None,
        ),
        post(
            ts,
            "bob",
            "2026-03-03T14:00:00",
            "Reminder: retro on Friday.",
            None,
            None,
        ),
        post(
            ts,
            "alice",
            "2026-03-04T09:00:00",
            "Good morning! Search now understands quoted phrases like \"release candidate\".",
            None,
            None,
        ),
        post(
            ts,
            "carol",
            "2026-03-04T09:10:00",
            "Nice. Testing it now.",
            None,
            None,
        ),
        post(
            ts,
            "bob",
            "2026-03-04T09:15:00",
            "Update: uploads are done.",
            None,
            Some("kickoff"),
        ),
        post(
            ts,
            "alice",
            "2026-03-04T16:00:00",
            "Have a good evening, everyone.",
            None,
            None,
        ),
        post(
            "off-topic",
            "bob",
            "2026-03-02T12:00:00",
            "Anyone tried the new coffee machine?",
            None,
            None,
        ),
        post(
            "off-topic",
            "carol",
            "2026-03-02T12:05:00",
            "Yes, the espresso is great.",
            None,
            None,
        ),
        post(
            "off-topic",
            "alice",
            "2026-03-03T17:00:00",
            "Photos from the team lunch are coming soon.",
            None,
            None,
        ),
        post(
            "design",
            "alice",
            "2026-03-02T13:00:00",
            "Private design review: the roadmap deck is attached.",
            Some("review"),
            None,
        ),
        post(
            "design",
            "bob",
            "2026-03-02T13:10:00",
            "Looks good. Slide two needs dates.",
            None,
            Some("review"),
        ),
        post(
            "design",
            "alice",
            "2026-03-02T13:20:00",
            "Added them.",
            None,
            Some("review"),
        ),
        post(
            "@alice,bob",
            "bob",
            "2026-03-02T15:00:00",
            "Hey Alice, can you review my upload patch?",
            None,
            None,
        ),
        post(
            "@alice,bob",
            "alice",
            "2026-03-02T15:05:00",
            "Sure, after lunch.",
            None,
            None,
        ),
        post(
            "@alice,bob,carol",
            "carol",
            "2026-03-03T16:00:00",
            "Shall we demo the emulator on Friday?",
            None,
            None,
        ),
        post(
            "@alice,bob,carol",
            "alice",
            "2026-03-03T16:02:00",
            "Yes, let's.",
            None,
            None,
        ),
    ];
    list[19].files.push(generated(DemoFile::Pptx));

    let shared: [(DemoFile, &str, &str); 11] = [
        (
            DemoFile::Text,
            "alice",
            "Release notes for the spring release.",
        ),
        (DemoFile::Docx, "alice", "Meeting notes from the kickoff."),
        (DemoFile::Xlsx, "carol", "Budget for review."),
        (DemoFile::Pptx, "alice", "The roadmap deck."),
        (DemoFile::Zip, "bob", "Design assets, zipped."),
        (DemoFile::TarGz, "bob", "Server logs from staging."),
        (
            DemoFile::SidewaysJpeg,
            "carol",
            "Photo of the whiteboard (my phone took it sideways).",
        ),
        (DemoFile::BigPng, "bob", "Floor plan of the new office."),
        (DemoFile::Wav, "carol", "The new notification chime."),
        (DemoFile::Pdf, "alice", "The team handbook, with a summary."),
        (
            DemoFile::Binary,
            "bob",
            "Firmware image for the test device.",
        ),
    ];
    for (n, (kind, user, message)) in shared.into_iter().enumerate() {
        let mut item = post(
            "files",
            user,
            &format!("2026-03-03T09:{:02}:00", n * 2),
            message,
            None,
            None,
        );
        item.files.push(generated(kind));
        if kind == DemoFile::Pdf {
            item.files.push(SeedFile {
                name: "handbook-summary.txt".to_owned(),
                text: Some(
                    "Post in town-square; keep designs in design; attach files to posts.\n"
                        .to_owned(),
                ),
                ..SeedFile::default()
            });
        }
        list.push(item);
    }
    list
}
