//! The client end to end: round trips against the emulator for every
//! endpoint (and its errors), and against tiny servers of the test's own for
//! what the emulator does not do (busy answers, lying sizes, what exactly
//! goes on the wire).

mod local;
mod sim;

use porter_mattermost::{Client, ClientOptions, Token};

/// `client` is a client for `url` with the default options.
fn client(url: &str, token: &str) -> Client {
    client_with(url, token, ClientOptions::default())
}

/// `client_with` is a client for `url` with `options`.
fn client_with(url: &str, token: &str, options: ClientOptions) -> Client {
    Client::new(url, Token::new(token), options).expect("a loopback URL and plain token are valid")
}
