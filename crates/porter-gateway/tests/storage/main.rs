//! The gateway with `storage: {records: postgres}` on a real PostgreSQL the
//! harness starts (skipped only with `PORTER_SKIP_POSTGRES=1`): two gateways
//! (two replicas' worth of state) on one database, each serving over HTTP a
//! run and a file the other recorded.

use porter_gateway::access::{KeyInfo, Keys};
use porter_gateway::config::{Config, Grant, Role};
use porter_inbox::{Incoming, Origin, Outcome, Owner};
use porter_test::postgres::{self, PASSWORD};

#[path = "../common/loopback.rs"]
mod loopback;
use loopback::{http, serve};

const ALICE: &str = "alice-key-0123456789";

fn keys() -> Keys {
    Keys::new(vec![KeyInfo {
        name: "alice".to_owned(),
        secret: ALICE.to_owned(),
        tenant: "acme".to_owned(),
        role: Role::User,
        grants: vec![Grant::File],
        volumes: Vec::new(),
    }])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gateways_on_one_postgres_serve_each_others_runs() {
    let Some(pg) = postgres::instance() else {
        return;
    };
    let url = pg.fresh_database();
    // The password comes from the environment, as the docs say to write it.
    let yaml = format!(
        "storage:\n  records: postgres\n  postgres_url: postgres://{}:${{PG_PASSWORD}}@127.0.0.1:{}/{}\n",
        postgres::USER,
        pg.port(),
        url.rsplit('/').next().expect("a database name")
    );
    let vars = |name: &str| (name == "PG_PASSWORD").then(|| PASSWORD.to_owned());
    let config = Config::from_yaml(&yaml, &vars).expect("the storage config is valid");
    assert!(
        !format!("{config:?}").contains(PASSWORD),
        "the config's Debug shows no password"
    );
    let dir = tempfile::tempdir().expect("a temp dir");
    let a = porter_gateway::Gateway::new(config.clone(), &dir.path().join("a"), keys())
        .expect("gateway A opens on PostgreSQL");
    let b = porter_gateway::Gateway::new(config, &dir.path().join("b"), keys())
        .expect("gateway B opens on PostgreSQL");

    // A run and a file recorded through A (the bytes on A's disk for now).
    let run = a
        .inbox
        .start_run(Owner {
            key_name: "alice".to_owned(),
            tenant: "acme".to_owned(),
        })
        .expect("a run");
    let incoming = Incoming {
        name: Some("note.txt".to_owned()),
        fallback_name: "get".to_owned(),
        dir: None,
        declared_type: Some("text/plain".to_owned()),
        origin: Origin::Mcp {
            server: "files".to_owned(),
            tool: "get".to_owned(),
        },
        call: "{}".to_owned(),
    };
    let Outcome::Kept(record) = a
        .inbox
        .keep_bytes(run.id, incoming, b"hello from A")
        .expect("kept")
    else {
        panic!("the note was not kept");
    };

    // The rows are in PostgreSQL, not in A's SQLite file.
    assert_eq!(
        postgres::psql(
            &url,
            &format!(
                "SELECT path, size FROM porter_files WHERE run = '{}'",
                run.id
            )
        ),
        "note.txt|12"
    );
    let events = postgres::psql(
        &url,
        &format!(
            "SELECT seq, kind FROM porter_events WHERE run = '{}' ORDER BY seq",
            run.id
        ),
    );
    assert!(events.contains("|file_captured"), "{events}");

    // B's run API lists A's run and its file.
    let app_b = porter_gateway::serve::http_app(
        &b,
        &porter_gateway::serve::HttpOptions::default(),
        porter_gateway::api::router(std::sync::Arc::new(porter_gateway::api::ApiState {
            inbox: b.inbox.clone(),
            files: b.files.clone(),
            keys: keys(),
        })),
    );
    let addr = serve(app_b).await;
    let answer = http()
        .get(format!("http://{addr}/v1/runs"))
        .bearer_auth(ALICE)
        .send()
        .await
        .expect("B answers");
    assert_eq!(answer.status(), reqwest::StatusCode::OK);
    let listed: serde_json::Value = answer.json().await.expect("JSON");
    assert!(
        listed.to_string().contains(&run.id.to_string()),
        "B lists A's run: {listed}"
    );
    let on_b = b.inbox.file(run.id, "note.txt").expect("a lookup");
    assert_eq!(on_b, Some(record));
    // An event B appends follows A's numbers, with no gap.
    let next = b
        .inbox
        .record_event(run.id, "probe", serde_json::json!({}))
        .expect("B records an event");
    let last: u64 = postgres::psql(
        &url,
        &format!(
            "SELECT max(seq) FROM porter_events WHERE run = '{}'",
            run.id
        ),
    )
    .parse()
    .expect("a number");
    assert_eq!(next.seq, last);
    let count: u64 = postgres::psql(
        &url,
        &format!(
            "SELECT count(*) FROM porter_events WHERE run = '{}'",
            run.id
        ),
    )
    .parse()
    .expect("a number");
    assert_eq!(count, last, "numbers 1..N without gaps");
}
