//! What the gateway's HTTP tests share: a router served on a loopback port
//! and a client that reaches it directly.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;

/// Serves the router on a loopback port.
pub async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("the server runs");
    });
    addr
}

/// An HTTP client that uses no proxy and gives up after 20 s.
pub fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("a client")
}
