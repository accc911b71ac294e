//! `Net` against a real loopback server: what it fetches, which redirects it
//! follows and which addresses it refuses. Every request goes to 127.0.0.1;
//! the one test whose refused target lies outside loopback sends everything
//! through the loopback server as a proxy, so even a broken guard could not
//! send traffic elsewhere (and the server's log would show it).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use porter_net::reqwest::Method;
use porter_net::{Net, NetError, Policy, RedirectRule, Refused, RequestOptions, check_url};

/// `Seen` is the server's log of request targets (absolute through a proxy).
type Seen = Arc<Mutex<Vec<String>>>;

struct Server {
    address: SocketAddr,
    seen: Seen,
}

impl Server {
    async fn start() -> Server {
        let seen: Seen = Arc::default();
        let app = Router::new()
            .route("/hello", get(|| async { "hello" }))
            .route("/redirect", get(redirect))
            .route("/loop", get(endless))
            .route("/slow", get(slow))
            .layer(middleware::from_fn_with_state(Arc::clone(&seen), record));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port is free");
        let address = listener
            .local_addr()
            .expect("a bound listener has an address");
        tokio::spawn(async move { axum::serve(listener, app).await });
        Server { address, seen }
    }

    fn url(&self, path: &str) -> url::Url {
        check_url(&format!("http://{}{path}", self.address)).expect("a test URL is clean")
    }

    fn redirect_to(&self, target: &str) -> url::Url {
        let mut url = self.url("/redirect");
        url.query_pairs_mut().append_pair("to", target);
        url
    }

    fn seen(&self) -> Vec<String> {
        self.seen
            .lock()
            .expect("no test panics holding the log")
            .clone()
    }
}

async fn record(State(seen): State<Seen>, request: Request, next: Next) -> Response {
    seen.lock()
        .expect("no test panics holding the log")
        .push(request.uri().to_string());
    next.run(request).await
}

async fn redirect(Query(query): Query<HashMap<String, String>>) -> Response {
    let to = query
        .get("to")
        .cloned()
        .unwrap_or_else(|| "/hello".to_owned());
    (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
}

async fn endless(request: Request) -> Response {
    let again = request
        .uri()
        .path_and_query()
        .map_or("/loop".to_owned(), ToString::to_string);
    (StatusCode::FOUND, [(header::LOCATION, again)]).into_response()
}

async fn slow() -> &'static str {
    tokio::time::sleep(Duration::from_secs(3)).await;
    "late"
}

fn loopback_policy(private_hosts: &[&str]) -> Policy {
    Policy {
        private_hosts: private_hosts.iter().map(|&host| host.to_owned()).collect(),
        ..Policy::default()
    }
}

fn net(private_hosts: &[&str]) -> Net {
    Net::new(loopback_policy(private_hosts)).expect("the client builds")
}

async fn get_with(net: &Net, url: &url::Url, redirect: RedirectRule) -> Result<String, NetError> {
    let options = RequestOptions {
        redirect,
        ..RequestOptions::default()
    };
    let response = net.request(Method::GET, url, options).await?;
    let status = response.status();
    let body = response.text().await.expect("a loopback body arrives");
    Ok(format!("{} {body}", status.as_u16()))
}

async fn fetch(net: &Net, url: &url::Url) -> Result<String, NetError> {
    get_with(net, url, RedirectRule::Any).await
}

#[tokio::test]
async fn a_plain_get_to_a_listed_loopback_host_works() {
    let server = Server::start().await;
    let answer = fetch(&net(&["127.0.0.1"]), &server.url("/hello")).await;
    assert_eq!(answer.expect("a listed host is reachable"), "200 hello");
    assert_eq!(server.seen(), ["/hello"]);
}

#[tokio::test]
async fn an_unlisted_loopback_address_is_refused_without_a_request() {
    let server = Server::start().await;
    let error = fetch(&net(&[]), &server.url("/hello"))
        .await
        .expect_err("127.0.0.1 is private and not listed");
    assert!(
        matches!(error, NetError::Refused(Refused::PrivateLiteral { ref host }) if host == "127.0.0.1"),
        "{error:?}"
    );
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn a_redirect_within_the_same_host_is_followed() {
    let server = Server::start().await;
    let net = net(&["127.0.0.1"]);
    let url = server.redirect_to("/hello");
    assert_eq!(fetch(&net, &url).await.expect("followed"), "200 hello");
    let same_host = get_with(&net, &url, RedirectRule::SameHost).await;
    assert_eq!(same_host.expect("followed within the host"), "200 hello");
    assert_eq!(server.seen().len(), 4);
}

#[tokio::test]
async fn no_redirect_is_followed_when_the_rule_says_none() {
    let server = Server::start().await;
    let answer = get_with(
        &net(&["127.0.0.1"]),
        &server.redirect_to("/hello"),
        RedirectRule::None,
    )
    .await;
    assert_eq!(answer.expect("the 302 itself comes back"), "302 ");
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn an_endless_redirect_loop_stops_at_the_limit_with_a_clear_error() {
    let server = Server::start().await;
    let error = fetch(
        &net(&["127.0.0.1"]),
        &server.url("/loop?token=s3cr3t-value"),
    )
    .await
    .expect_err("a loop never ends");
    assert!(
        matches!(
            error,
            NetError::Refused(Refused::TooManyRedirects { max: 5, .. })
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("more than 5 redirects"), "{message}");
    assert!(message.contains("/loop?…"), "{message}");
    assert!(!message.contains("s3cr3t"), "{message}");
    assert_eq!(server.seen().len(), 6, "the first request and 5 redirects");
}

#[tokio::test]
async fn a_redirect_to_an_unlisted_loopback_address_is_refused() {
    let server = Server::start().await;
    let target = format!("http://127.0.0.2:{}/hello", server.address.port());
    let error = fetch(&net(&["127.0.0.1"]), &server.redirect_to(&target))
        .await
        .expect_err("127.0.0.2 is not listed");
    assert!(
        matches!(error, NetError::Refused(Refused::PrivateLiteral { ref host }) if host == "127.0.0.2"),
        "{error:?}"
    );
    assert_eq!(server.seen().len(), 1, "only the redirecting request");
}

#[tokio::test]
async fn a_redirect_to_the_metadata_address_is_refused_before_any_connection() {
    let server = Server::start().await;
    // Everything goes through the loopback server as a proxy: had the guard
    // let the redirect through, the request would land there, in its log.
    let proxy = check_url(&format!("http://{}", server.address)).expect("a clean URL");
    let policy = Policy {
        proxy: Some(proxy),
        ..loopback_policy(&["127.0.0.1"])
    };
    let net = Net::new(policy).expect("the client builds");
    let error = fetch(
        &net,
        &server.redirect_to("http://169.254.169.254/latest/meta-data/"),
    )
    .await
    .expect_err("the metadata address is private");
    assert!(
        matches!(error, NetError::Refused(Refused::PrivateLiteral { ref host }) if host == "169.254.169.254"),
        "{error:?}"
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].starts_with("http://127.0.0.1:") && seen[0].contains("/redirect?"),
        "the request went through the proxy in absolute form: {seen:?}"
    );
    assert!(
        !seen
            .iter()
            .any(|target| target.starts_with("http://169.254.")),
        "{seen:?}"
    );
}

#[tokio::test]
async fn an_ipv4_mapped_loopback_literal_is_refused_even_when_127_0_0_1_is_listed() {
    let server = Server::start().await;
    let url = check_url(&format!(
        "http://[::ffff:127.0.0.1]:{}/hello",
        server.address.port()
    ))
    .expect("a clean URL");
    let error = fetch(&net(&["127.0.0.1"]), &url)
        .await
        .expect_err("the mapped form is not the listed host");
    assert!(
        matches!(error, NetError::Refused(Refused::PrivateLiteral { .. })),
        "{error:?}"
    );
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_by_the_resolver() {
    let server = Server::start().await;
    let url = check_url(&format!(
        "http://localhost:{}/hello?key=abcdef123",
        server.address.port()
    ))
    .expect("a clean URL");
    let error = fetch(&net(&["127.0.0.1"]), &url)
        .await
        .expect_err("localhost is not listed");
    let NetError::Refused(Refused::ResolvesPrivate { ref host, address }) = error else {
        panic!("expected a resolver refusal, got {error:?}");
    };
    assert_eq!(host, "localhost");
    assert!(address.is_loopback(), "{address}");
    let message = error.to_string();
    assert!(
        message.starts_with("refused: localhost resolves to ")
            && message.ends_with(
                ", a private address; an operator can list the host in http.private_hosts"
            ),
        "{message}"
    );
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn a_listed_name_passes_the_resolver_but_same_host_refuses_a_hop_to_it() {
    let server = Server::start().await;
    let net = net(&["127.0.0.1", "localhost"]);
    let target = format!("http://localhost:{}/hello", server.address.port());
    let url = server.redirect_to(&target);
    // localhost may resolve to ::1 first, where nothing listens; the client
    // then tries 127.0.0.1, so the listed name is reached either way.
    assert_eq!(
        fetch(&net, &url).await.expect("localhost is listed"),
        "200 hello"
    );
    let error = get_with(&net, &url, RedirectRule::SameHost)
        .await
        .expect_err("localhost is another host than 127.0.0.1");
    assert_eq!(
        error.refusal(),
        Some(&Refused::OtherHost {
            from: "127.0.0.1".to_owned(),
            to: "localhost".to_owned()
        })
    );
    assert_eq!(server.seen().len(), 3, "two redirects and one fetch");
}

#[tokio::test]
async fn a_server_that_stalls_past_the_timeout_is_given_up_on() {
    let server = Server::start().await;
    let policy = Policy {
        timeout: Duration::from_millis(300),
        ..loopback_policy(&["127.0.0.1"])
    };
    let net = Net::new(policy).expect("the client builds");
    let error = fetch(&net, &server.url("/slow?sig=abcdefgh"))
        .await
        .expect_err("the answer comes after 3 s");
    assert!(matches!(error, NetError::Timeout { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.starts_with("http://127.0.0.1:"), "{message}");
    assert!(!message.contains("abcdefgh"), "{message}");
}

#[tokio::test]
async fn a_refused_connection_names_only_the_display_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = listener.local_addr().expect("bound").port();
    drop(listener);
    let url = check_url(&format!("http://127.0.0.1:{port}/x?token=zyxwvut")).expect("clean");
    let error = fetch(&net(&["127.0.0.1"]), &url)
        .await
        .expect_err("nothing listens there");
    assert!(matches!(error, NetError::Connect { .. }), "{error:?}");
    let chain = std::iter::successors(Some(&error as &dyn std::error::Error), |e| e.source())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ");
    assert!(chain.contains(&format!("127.0.0.1:{port}/x?…")), "{chain}");
    assert!(!chain.contains("zyxwvut"), "{chain}");
}
