//! `porter-mattermost` talks to a Mattermost server: a typed client for the
//! part of API v4 porter uses (users, teams, channels, posts and threads,
//! files, search, the server's limits, drafts and preferences), and the OS
//! keychain a token is kept in ([`keychain`]). The MCP tools built on it
//! are `porter-mattermost-mcp`.
//!
//! The [`Client`] sends a bearer token and `User-Agent: porter/<version>`,
//! trusts the platform's roots plus an optional extra CA file, ignores proxy
//! environment variables, retries politely when the server is busy (429/503,
//! honouring `Retry-After`), and turns Mattermost's error bodies into an
//! [`Error`] that names what was asked for and what to do. Downloads stop at
//! the caller's byte cap whatever the server claims; uploads send exactly the
//! form fields Mattermost accepts. The token is never printed. An OAuth
//! sign-in ([`oauth`]) gives the client a token source instead of a fixed
//! token: renewed before it expires and once after a 401, never sent once
//! expired.
//!
//! It deliberately does not read the environment or configuration files
//! (the `porter` binary does and passes a URL, a [`Token`] and
//! [`ClientOptions`]), does not cache, does not make names safe for disk
//! (`porter-paths` does), and knows nothing of MCP. It covers only the
//! endpoints porter needs.
//!
//! ```no_run
//! use porter_mattermost::{ChannelPosts, Client, ClientOptions, Token};
//!
//! # async fn run() -> Result<(), porter_mattermost::Error> {
//! let client = Client::new(
//!     "https://chat.example.com/api/v4",
//!     Token::new("xxxxxxxxxxxxxxxxxxxxxxxxxx"),
//!     ClientOptions::default(),
//! )?;
//! let me = client.me().await?;
//! let team = client.team_by_name("porter").await?;
//! let channel = client.channel_by_name(&team.id, "town-square").await?;
//! let page = client.channel_posts(&channel.id, &ChannelPosts::page(0, 30)).await?;
//! for post in page.iter() {
//!     println!("{} {}: {}", client.permalink(&post.id), post.user_id, post.message);
//! }
//! # let _ = me;
//! # Ok(())
//! # }
//! ```

mod channels;
mod client;
mod error;
mod files;
pub mod keychain;
mod model;
pub mod oauth;
mod posts;
mod server;
mod state;
mod teams;
mod users;

pub use channels::{ChannelMember, ChannelStats, CustomStatus, NewChannel, Status};
pub use client::{
    Client, ClientOptions, Token, disposition_file_name, normalize_base_url, retry_after,
};
pub use error::{ApiError, ERROR_BODY_BYTES, Error, Key, Target, Thing};

/// `USER_AGENT` is what every request says it is (the API's and the
/// sign-in's), so server admins can tell porter's traffic apart.
pub const USER_AGENT: &str = concat!("porter/", env!("CARGO_PKG_VERSION"));
pub use model::{
    Channel, ChannelPosts, ChannelType, ClientConfig, Download, FileInfo, FileInfoList, NewPost,
    OLDEST_SUPPORTED_VERSION, Ping, Post, PostList, PostMetadata, Search, Team, UploadFile, User,
    UserSearch, Version,
};
pub use posts::{PostPatch, Reaction, UserThread, UserThreadList};
pub use state::{Draft, FLAGGED_POST, PasswordLogin, Preference, login_with_password, timezone_of};
