//! An in-memory Mattermost API v4 server for porter's tests and demo.
//!
//! No Mattermost can be installed where porter is built and tested, so this
//! crate plays one, closely enough that Mattermost's own JavaScript client
//! (`@mattermost/client`, Client4) works against it unchanged: the same
//! routes and query parameters, the same JSON shapes, the same status codes
//! and error bodies (`{"id", "message", "detailed_error", "request_id",
//! "status_code"}`), `Content-Type: application/json` exactly, `Bearer`
//! tokens in any case, membership checks on channels, the upload field
//! rules, `per_page` capped at 200, `Content-Disposition` on downloads.
//!
//! It is also Mattermost's OAuth 2.0 provider, as the server's web routes
//! are: `/oauth/authorize` behind a login page and a consent page,
//! `/oauth/access_token` with the code and refresh grants (PKCE S256,
//! redirect URIs matched exactly, single-use codes, refresh tokens for
//! confidential apps only), access tokens that expire after the seed's
//! `oauth_access_token_seconds`, and dynamic client registration when the
//! seed enables it; `POST /__sim/oauth/expire` ends every OAuth token at once.
//!
//! It records every request (method, path, query, `User-Agent`), so a test can assert
//! what a tool did and did not call, and it starts from a [`Seed`]: a
//! YAML/JSON fixture or the built-in [`Seed::demo`], whose posts carry real
//! files of every kind porter's file view handles.
//!
//! It deliberately does not: persist anything, speak WebSocket, implement
//! the hundreds of endpoints porter does not use (those answer the server's
//! JSON 404), or enforce roles beyond membership (every user is a plain
//! `system_user`).
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use porter_mmsim::{Seed, Sim, start};
//! let sim = Sim::new(&Seed::demo()).expect("the demo seed is valid");
//! let running = start(sim.clone(), "127.0.0.1:0".parse().expect("an address")).await?;
//! println!("Mattermost at {} (token {:?})", running.url, sim.token_for("alice"));
//! // … drive a client against running.url …
//! assert!(sim.requests().iter().all(|r| r.method == "GET"));
//! running.shutdown().await;
//! # Ok(())
//! # }
//! ```

mod api;
mod demo;
mod error;
mod model;
mod seed;
mod serve;
mod sim;
mod state;

pub use demo::files::pdf_with_xref;
pub use seed::{
    DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_POST_CHARS, DEFAULT_OAUTH_ACCESS_SECONDS, DemoFile, Seed,
    SeedChannel, SeedConfig, SeedError, SeedFile, SeedOAuthApp, SeedPost, SeedTeam, SeedTime,
    SeedUser,
};
pub use serve::{Running, start};
pub use sim::{RecordedRequest, Sim};
