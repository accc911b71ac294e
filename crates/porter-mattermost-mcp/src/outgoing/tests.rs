use std::path::PathBuf;

use super::*;

const TOKEN: &str = "q7wzk3nd4jfy8bxe1ucmh6tar9";
const WHERE: &str = "channel:town-square";

/// A home directory with the files the cases point at.
struct Home {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = std::fs::canonicalize(dir.path()).expect("real home");
        let home = Self { _dir: dir, path };
        home.write("report.txt", "quarterly numbers\n");
        home.write(
            ".ssh/id_ed25519",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n",
        );
        home.write("app/.env", &format!("MM_TOKEN={TOKEN}\n"));
        home.write("app/.env.example", "MM_TOKEN=put-yours-here\n");
        home.write(
            "backup.txt",
            "old\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n",
        );
        home.write("config.yaml", &format!("token: {TOKEN}\n"));
        std::fs::create_dir_all(home.path.join("folder")).expect("mkdir");
        #[cfg(unix)]
        {
            let made = std::process::Command::new("mkfifo")
                .arg(home.path.join("pipe"))
                .status()
                .expect("mkfifo runs");
            assert!(made.success());
            std::os::unix::fs::symlink("/proc/self/environ", home.path.join("environ"))
                .expect("symlink");
            std::os::unix::fs::symlink(home.path.join("report.txt"), home.path.join("latest.txt"))
                .expect("symlink");
            std::os::unix::fs::symlink(
                home.path.join(".ssh/id_ed25519"),
                home.path.join("innocent.txt"),
            )
            .expect("symlink");
        }
        home
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path.join(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn at(&self, relative: &str) -> String {
        self.path.join(relative).to_string_lossy().into_owned()
    }

    /// `requests` as a local server checks them in this home, for
    /// [`WHERE`], with the default limits.
    fn post<'a>(&'a self, requests: &'a [FileRequest]) -> Outgoing<'a> {
        Outgoing {
            requests,
            local: true,
            home: &self.path,
            token: TOKEN,
            destination: WHERE,
            limits: OutgoingLimits::default(),
        }
    }
}

fn path(raw: impl Into<String>) -> FileRequest {
    FileRequest::Path { path: raw.into() }
}

fn written(name: &str, content: impl Into<String>) -> FileRequest {
    FileRequest::Written {
        name: name.to_owned(),
        content: content.into(),
    }
}

fn prepare_local(home: &Home, requests: &[FileRequest]) -> Result<Prepared, Refusal> {
    prepare(&home.post(requests))
}

#[test]
#[allow(clippy::too_many_lines, reason = "a table of cases")]
fn every_refusal_rule_refuses_before_anyone_is_asked() {
    let home = Home::new();
    let big = home.path.join("big.bin");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(MAX_PATH_BYTES + 1))
        .expect("a sparse file of 100 MiB + 1 byte");
    let eleven: Vec<FileRequest> = (0..11).map(|n| written(&format!("{n}.txt"), "x")).collect();
    let png = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
    let encoded = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .encode(png.iter().copied().cycle().take(300).collect::<Vec<u8>>())
    };
    let mut cases: Vec<(&str, Vec<FileRequest>, RefusalKind)> = vec![
        ("a share", vec![path(r"\\host\share\x")], RefusalKind::Path),
        (
            "a share, forward",
            vec![path("//host/x")],
            RefusalKind::Path,
        ),
        (
            "a verbatim path",
            vec![path(r"\\?\C:\x")],
            RefusalKind::Path,
        ),
        ("proc", vec![path("/proc/self/environ")], RefusalKind::Path),
        ("dev", vec![path("/dev/zero")], RefusalKind::Path),
        ("sys", vec![path("/sys/x")], RefusalKind::Path),
        ("relative", vec![path("report.txt")], RefusalKind::Path),
        ("another home", vec![path("~user/x")], RefusalKind::Path),
        (
            "a directory",
            vec![path(home.at("folder"))],
            RefusalKind::Path,
        ),
        (
            "missing",
            vec![path(home.at("missing.txt"))],
            RefusalKind::Path,
        ),
        (
            "bidi name",
            vec![path(home.at("a\u{202E}txt.exe"))],
            RefusalKind::Path,
        ),
        (
            "ssh key",
            vec![path("~/.ssh/id_ed25519")],
            RefusalKind::Credential,
        ),
        (
            ".env (holding the token)",
            vec![path("~/app/.env")],
            RefusalKind::Credential,
        ),
        (
            "a private key",
            vec![path("~/backup.txt")],
            RefusalKind::Secret,
        ),
        (
            "the token",
            vec![path("~/config.yaml")],
            RefusalKind::Secret,
        ),
        (
            "100 MiB + 1",
            vec![path(home.at("big.bin"))],
            RefusalKind::TooLarge,
        ),
        ("11 files", eleven, RefusalKind::TooManyFiles),
        (
            "written bidi name",
            vec![written("a\u{202E}txt.exe", "x")],
            RefusalKind::Name,
        ),
        (
            "written no name",
            vec![written("  ", "x")],
            RefusalKind::Name,
        ),
        (
            "written 1 MiB + 1",
            vec![written("big.txt", "x".repeat(1024 * 1024 + 1))],
            RefusalKind::TooLarge,
        ),
        (
            "written NUL",
            vec![written("a.txt", "a\0b")],
            RefusalKind::NotText,
        ),
        (
            "written base64",
            vec![written("a.png", encoded)],
            RefusalKind::NotText,
        ),
        (
            "written token",
            vec![written("notes.txt", format!("the token is {TOKEN}"))],
            RefusalKind::Secret,
        ),
        (
            "a refused file among good ones",
            vec![
                path("~/report.txt"),
                written("a.txt", "x"),
                path("/dev/zero"),
            ],
            RefusalKind::Path,
        ),
    ];
    if cfg!(unix) {
        cases.extend([
            ("a fifo", vec![path(home.at("pipe"))], RefusalKind::Path),
            (
                "a link into /proc",
                vec![path(home.at("environ"))],
                RefusalKind::Path,
            ),
            (
                "a link to a key",
                vec![path(home.at("innocent.txt"))],
                RefusalKind::Credential,
            ),
        ]);
    }
    for (what, requests, expected) in cases {
        let refusal = prepare_local(&home, &requests).expect_err(what);
        assert_eq!(refusal.kind, expected, "{what}: {refusal}");
        let sentence = refusal.to_string();
        assert!(
            sentence.ends_with("Nothing was posted, and the person was not asked."),
            "{what}: {sentence}"
        );
        assert!(
            !sentence.contains(TOKEN),
            "{what}: the token is never shown"
        );
    }
}

#[test]
fn a_path_over_http_is_refused_before_any_other_rule() {
    let home = Home::new();
    let mut requests = vec![path("/proc/self/environ")];
    requests.extend((0..11).map(|n| written(&format!("{n}.txt"), "x")));
    let over_http = |requests: &[FileRequest]| {
        prepare(&Outgoing {
            local: false,
            ..home.post(requests)
        })
    };
    let refusal = over_http(&requests).expect_err("over HTTP");
    assert_eq!(refusal.kind, RefusalKind::PathNotLocal);
    assert!(refusal.to_string().contains("{name, content}"), "{refusal}");
    let only_written =
        over_http(&[written("notes.md", "# Notes\n")]).expect("written files go over HTTP");
    assert_eq!(only_written.files.len(), 1);
}

#[test]
fn accepted_files_name_their_real_path_type_and_size() {
    let home = Home::new();
    let mut requests = vec![
        path("~/app/.env.example"),
        written("notes.md", "# Minutes\n"),
    ];
    if cfg!(unix) {
        requests.push(path("~/latest.txt"));
    }
    let prepared = prepare_local(&home, &requests).expect("accepted");
    let first = &prepared.files[0];
    assert_eq!(first.name, "env.example");
    assert_eq!(
        first.source,
        Source::RealPath(home.path.join("app/.env.example"))
    );
    assert_eq!(
        first.sha256,
        porter_paths::sha256_hex(b"MM_TOKEN=put-yours-here\n")
    );
    let second = &prepared.files[1];
    assert_eq!(
        (second.name.as_str(), second.size, second.mime_type.as_str()),
        ("notes.md", 10, "text/markdown")
    );
    assert_eq!(second.source, Source::Written);
    if cfg!(unix) {
        let link = &prepared.files[2];
        assert_eq!(link.name, "latest.txt", "the name as given");
        assert_eq!(
            link.source,
            Source::RealPath(home.path.join("report.txt")),
            "the real file behind the link"
        );
    }
}

#[test]
fn the_question_names_every_file_with_size_type_and_source_then_the_message() {
    let home = Home::new();
    home.write("scan.pdf", "not really a PDF\n");
    let prepared = prepare_local(
        &home,
        &[
            path("~/report.txt"),
            written("notes.md", "# Minutes\n"),
            path("~/scan.pdf"),
        ],
    )
    .expect("accepted");
    let text = question(
        "Post in ~town-square?",
        "@alice posts in ~town-square (team porter).",
        &prepared,
        "Here are the files.\nIt carries no files.",
    );
    let expected = format!(
        "Post in ~town-square?\n\n@alice posts in ~town-square (team porter).\n\n\
         It carries 3 files:\n\
         - report.txt: 18 bytes, text/plain, read from {home}/report.txt\n\
         - notes.md: 10 bytes, text/markdown, written for this post\n\
         - scan.pdf: 17 bytes, text/plain, read from {home}/scan.pdf\n\
         \x20 Its type: application/pdf by its name, but its bytes are text/plain.\n\
         \nThe message:\n> Here are the files.\n> It carries no files.",
        home = home.path.display()
    );
    assert_eq!(text, expected);
    let sized = prepare_local(&home, &[written("big.txt", "x".repeat(5018))]).expect("ok");
    assert!(question("t", "w", &sized, "").contains("big.txt: 4.9 KiB, text/plain"));
}

#[test]
fn reread_answers_exactly_the_bytes_the_person_was_asked_about() {
    let home = Home::new();
    let requests = [path("~/report.txt"), written("notes.md", "# Minutes\n")];
    let prepared = prepare_local(&home, &requests).expect("accepted");
    let files = reread(&prepared, &home.post(&requests)).expect("unchanged");
    assert_eq!(files.len(), 2);
    assert_eq!(files[0].0, prepared.files[0]);
    assert_eq!(files[0].1, b"quarterly numbers\n");
    assert_eq!(files[1].1, b"# Minutes\n");
}

#[test]
fn a_file_changed_after_the_question_is_not_uploaded() {
    let home = Home::new();
    let requests = [path("~/report.txt"), written("notes.md", "# Minutes\n")];
    let again = |prepared: &Prepared, destination: &str| {
        reread(
            prepared,
            &Outgoing {
                destination,
                ..home.post(&requests)
            },
        )
    };
    let prepared = prepare_local(&home, &requests).expect("accepted");

    home.write("report.txt", "quarterly numbers, rewritten\n");
    let refusal = again(&prepared, WHERE).expect_err("rewritten");
    assert_eq!(refusal.kind, RefusalKind::Changed);
    assert_eq!(refusal.file.as_deref(), Some("report.txt"));
    assert!(
        refusal.to_string().contains("report.txt (read from"),
        "{refusal}"
    );
    assert!(
        refusal
            .to_string()
            .ends_with("Nothing was uploaded or posted."),
        "{refusal}"
    );

    home.write("report.txt", "quarterly numbers\n");
    assert!(again(&prepared, WHERE).is_ok(), "the same bytes again");
    let refusal = again(&prepared, "channel:elsewhere").expect_err("another destination");
    assert_eq!(refusal.kind, RefusalKind::Changed);

    std::fs::remove_file(home.path.join("report.txt")).expect("remove");
    let refusal = again(&prepared, WHERE).expect_err("gone");
    assert!(
        refusal
            .to_string()
            .contains("is gone since the person was asked"),
        "{refusal}"
    );

    home.write("report.txt", "quarterly numbers\n");
    let small = Outgoing {
        limits: OutgoingLimits {
            max_path_bytes: 18,
            ..OutgoingLimits::default()
        },
        ..home.post(&requests)
    };
    let prepared = prepare(&small).expect("fits");
    home.write("report.txt", "quarterly numbers, grown\n");
    let refusal = reread(&prepared, &small).expect_err("grown");
    assert_eq!(refusal.kind, RefusalKind::TooLarge);
}

#[cfg(unix)]
#[test]
fn a_file_turned_into_a_key_link_after_the_question_is_refused_again() {
    let home = Home::new();
    let requests = [path("~/report.txt")];
    let prepared = prepare_local(&home, &requests).expect("accepted");
    std::fs::remove_file(home.path.join("report.txt")).expect("remove");
    std::os::unix::fs::symlink(
        home.path.join(".ssh/id_ed25519"),
        home.path.join("report.txt"),
    )
    .expect("symlink");
    let refusal = reread(&prepared, &home.post(&requests)).expect_err("now a key");
    assert_eq!(refusal.kind, RefusalKind::Credential);
}

#[test]
fn a_file_listed_twice_goes_once_and_names_that_clash_are_numbered() {
    let home = Home::new();
    home.write("other/report.txt", "other numbers\n");
    let prepared = prepare_local(
        &home,
        &[
            path("~/report.txt"),
            path(home.at("report.txt")),
            path("~/other/report.txt"),
            written("REPORT.txt", "written\n"),
        ],
    )
    .expect("accepted");
    let names: Vec<&str> = prepared.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["report.txt", "report (2).txt", "REPORT (3).txt"]);
}

#[test]
fn the_fingerprint_binds_names_hashes_and_the_destination() {
    let home = Home::new();
    let requests = [written("a.txt", "one")];
    let at = |requests: &[FileRequest], destination: &str| {
        prepare(&Outgoing {
            local: false,
            destination,
            ..home.post(requests)
        })
        .expect("ok")
    };
    let here = at(&requests, "here");
    let there = at(&requests, "there");
    let renamed = at(&[written("b.txt", "one")], "here");
    let changed = at(&[written("a.txt", "two")], "here");
    assert_eq!(here.fingerprint.len(), 64);
    assert_ne!(here.fingerprint, there.fingerprint);
    assert_ne!(here.fingerprint, renamed.fingerprint);
    assert_ne!(here.fingerprint, changed.fingerprint);
    let again = at(&requests, "here");
    assert_eq!(here.fingerprint, again.fingerprint);
}

#[test]
fn file_requests_read_as_the_tool_arguments_give_them() {
    let parsed: Vec<FileRequest> =
        serde_json::from_str(r##"[{"path": "~/a.txt"}, {"name": "b.md", "content": "# B"}]"##)
            .expect("parsed");
    assert_eq!(parsed, [path("~/a.txt"), written("b.md", "# B")]);
    let both: Result<FileRequest, _> =
        serde_json::from_str(r#"{"path": "~/a.txt", "name": "b.md", "content": "x"}"#);
    assert!(both.is_err(), "a file is a path or written text, not both");
}
