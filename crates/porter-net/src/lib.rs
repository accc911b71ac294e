//! `porter-net` is the one HTTP client everything in the gateway fetches and
//! sends through (the HTTP and WebFetch tools, File download and upload, the
//! Git smart-HTTP transport), so the operator's network policy holds for all
//! of them at once.
//!
//! [`Net`] enforces a [`Policy`]: a host allow list (suffix match on a dot
//! boundary, `*` for any public host) that a run can narrow but never widen;
//! a private-address guard ([`is_private`]: loopback, RFC 1918, CGNAT,
//! link-local with the cloud metadata address, ULA, multicast, and IPv6
//! forms that wrap those) applied to IP-literal hosts before anything is
//! sent and to every address a name resolves to at connect time, unless the
//! operator lists the host in `private_hosts`; at most 5 redirects, each
//! judged again, never https → http, and per request only to the same host
//! or none at all ([`RedirectRule`]). Proxy settings from the environment
//! are ignored; no `Referer` is sent.
//!
//! Around it, URL hygiene: [`check_url`] refuses a URL holding a character
//! a URL never holds unencoded, saying which and where but not echoing the
//! URL; [`display_url`] is the only form of a URL to show anywhere (query as
//! `?…`); a run's [`Redactor`] masks the query values it has seen in every
//! text afterwards; [`is_credential_header`] spots credentials among
//! headers the model supplies; [`offered_file_name`] is the name a response
//! offers for its body (Content-Disposition, else the URL's last segment,
//! each percent-decoded by [`percent_decoded`]). A credential held in
//! memory is a [`Secret`], whose `Debug` never shows it.
//!
//! It deliberately does not read bodies, keep files or decide what is text:
//! callers stream the response (`bytes_stream`) into the inbox and capture
//! it. It reads no configuration or environment: the binary builds the
//! [`Policy`] from config and hands it in.
//!
//! ```no_run
//! use porter_net::reqwest::Method;
//! use porter_net::{Net, Policy, Redactor, RequestOptions, check_url, display_url};
//!
//! # async fn fetch() -> Result<(), porter_net::NetError> {
//! let policy = Policy::default().narrowed(["example.org"]);
//! let net = Net::new(policy)?;
//! let redactor = Redactor::new();
//!
//! let url = check_url("https://docs.example.org/report.pdf?sig=0123456789")?;
//! redactor.register(&url);
//! assert_eq!(display_url(&url), "https://docs.example.org/report.pdf?…");
//!
//! let response = net
//!     .request(Method::GET, &url, RequestOptions::default())
//!     .await?;
//! println!("{}", redactor.redact(&format!("{} from {}", response.status(), display_url(&url))));
//!
//! // A private address is refused before any connection is tried.
//! let metadata = check_url("http://169.254.169.254/latest/meta-data/")?;
//! let refused = net.request(Method::GET, &metadata, RequestOptions::default()).await;
//! assert!(refused.is_err_and(|error| error.refusal().is_some()));
//! # Ok(())
//! # }
//! ```

mod client;
mod error;
mod guard;
mod headers;
mod names;
mod policy;
mod secret;
mod urls;

pub use client::{Net, RequestOptions};
pub use error::{NetError, Refused};
pub use guard::is_private;
pub use headers::is_credential_header;
pub use names::{
    disposition_file_name, offered_file_name, percent_decoded, percent_decoded_bytes, url_file_name,
};
pub use policy::{ANY_PUBLIC_HOST, DEFAULT_MAX_REDIRECTS, DEFAULT_TIMEOUT, Policy, RedirectRule};
pub use secret::Secret;
pub use urls::{
    MASK, MIN_SECRET_CHARS, Redactor, check_url, display_url, hide_url_secrets, urls_in,
};

/// `reqwest` is re-exported so callers name the same `Method`, `Response`,
/// `Body` and header types this crate uses, whatever version they pin.
pub use reqwest;
