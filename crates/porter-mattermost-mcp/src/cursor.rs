//! Opaque, tamper-evident paging cursors.
//!
//! A cursor is the position of the next page, sealed with an HMAC over the
//! tool's name, its other arguments and the position, under a key drawn at
//! random when the process starts. The model can only hand a cursor back:
//! one from another tool or other arguments, an edited one, or one from an
//! earlier run of the server is refused with a sentence saying what to do.

use rmcp::model::{RequestStateCodec, SealOptions};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// `KEY_BYTES` is the length of the random key cursors are sealed with.
pub const KEY_BYTES: usize = 32;

/// `CursorError` is a cursor that was not made by this server for this call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    /// The cursor fails its check: another tool, other arguments, edited,
    /// or made by an earlier run of the server.
    #[error(
        "this cursor was not made for {tool} with these arguments (it belongs to another call, was changed, or comes from before the server restarted); repeat the {tool} call with exactly the arguments of the call that returned it, or leave cursor out to start from the first page"
    )]
    Refused {
        /// The tool it was handed to.
        tool: String,
    },
}

/// `Cursors` seals and opens the cursors of one server process.
pub struct Cursors {
    codec: RequestStateCodec,
}

impl std::fmt::Debug for Cursors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cursors(***)")
    }
}

impl Cursors {
    /// `new` draws a fresh random key, so cursors do not outlive the process.
    ///
    /// # Panics
    ///
    /// When the operating system has no randomness to give, which leaves
    /// nothing safe to sign with.
    #[must_use]
    pub fn new() -> Cursors {
        Cursors::with_key(random_key())
    }

    /// `with_key` uses a given key, for tests that need two servers to agree.
    #[must_use]
    pub fn with_key(key: [u8; KEY_BYTES]) -> Cursors {
        Cursors { codec: codec(key) }
    }

    /// `seal` turns the position of the next page into a cursor bound to
    /// `tool` and `args` (the call's arguments; `cursor` and `limit` in them
    /// are ignored, so a page size may change between pages).
    #[must_use]
    pub fn seal<P: Serialize>(&self, tool: &str, args: &Value, position: &P) -> String {
        let bound = binding(tool, args);
        let payload = serde_json::to_vec(position).unwrap_or_default();
        self.codec
            .seal_with(&payload, &SealOptions::new().associated_data(&bound))
    }

    /// `open` checks a cursor against the tool and arguments of this call
    /// and answers the position it holds.
    pub fn open<P: DeserializeOwned>(
        &self,
        tool: &str,
        args: &Value,
        cursor: &str,
    ) -> Result<P, CursorError> {
        let refused = || CursorError::Refused {
            tool: tool.to_owned(),
        };
        let bound = binding(tool, args);
        let payload = self
            .codec
            .open_with(cursor.trim(), &bound)
            .map_err(|_| refused())?;
        serde_json::from_slice(&payload).map_err(|_| refused())
    }
}

impl Default for Cursors {
    fn default() -> Self {
        Cursors::new()
    }
}

/// `random_key` is a fresh key from the operating system.
///
/// # Panics
///
/// When the operating system has no randomness to give.
#[must_use]
pub fn random_key() -> [u8; KEY_BYTES] {
    let mut key = [0u8; KEY_BYTES];
    getrandom::fill(&mut key).expect("the operating system gives random bytes for signing keys");
    key
}

/// `codec` is an HMAC sealer under `key`.
pub(crate) fn codec(key: [u8; KEY_BYTES]) -> RequestStateCodec {
    RequestStateCodec::try_new(key.to_vec())
        .expect("a 32-byte key meets the sealer's minimum length")
}

/// The bytes a cursor is bound to: the tool name and the canonical JSON of
/// the arguments other than `cursor` and `limit`.
fn binding(tool: &str, args: &Value) -> Vec<u8> {
    let mut args = args.clone();
    if let Value::Object(map) = &mut args {
        map.remove("cursor");
        map.remove("limit");
        map.retain(|_, v| !v.is_null());
    }
    let mut out = b"porter/cursor/v1\0".to_vec();
    out.extend_from_slice(tool.as_bytes());
    out.push(0);
    out.extend_from_slice(canonical_json(&args).as_bytes());
    out
}

/// `canonical_json` writes JSON with object keys sorted at every level, so
/// the same arguments always give the same bytes whatever their order.
#[must_use]
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let items: Vec<String> = keys
                .into_iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        Value::String(k.clone()),
                        canonical_json(&map[k.as_str()])
                    )
                })
                .collect();
            format!("{{{}}}", items.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_cursor_opens_for_the_same_tool_and_arguments() {
        let cursors = Cursors::new();
        let args = json!({"channel_id": "town-square", "limit": 5});
        let cursor = cursors.seal("read_channel", &args, &json!({"before": "p9"}));
        let again = json!({"limit": 10, "cursor": cursor, "channel_id": "town-square"});
        let position: Value = cursors.open("read_channel", &again, &cursor).unwrap();
        assert_eq!(position, json!({"before": "p9"}));
    }

    #[test]
    fn a_cursor_is_refused_by_another_tool_or_other_arguments() {
        let cursors = Cursors::new();
        let args = json!({"channel_id": "town-square"});
        let cursor = cursors.seal("read_channel", &args, &7u32);
        let cases = [
            ("search_posts", json!({"channel_id": "town-square"})),
            ("read_channel", json!({"channel_id": "off-topic"})),
            (
                "read_channel",
                json!({"channel_id": "town-square", "team_id": "x"}),
            ),
        ];
        for (tool, args) in cases {
            let err = cursors.open::<u32>(tool, &args, &cursor).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(tool), "{text}");
            assert!(text.contains("leave cursor out"), "{text}");
        }
    }

    #[test]
    fn an_edited_or_foreign_cursor_is_refused() {
        let cursors = Cursors::new();
        let args = json!({});
        let cursor = cursors.seal("get_user_teams", &args, &3u32);
        let mut edited = cursor.clone().into_bytes();
        let last = edited.len() - 2;
        edited[last] = if edited[last] == b'A' { b'B' } else { b'A' };
        let edited = String::from_utf8(edited).unwrap();
        assert!(
            cursors
                .open::<u32>("get_user_teams", &args, &edited)
                .is_err()
        );
        assert!(
            cursors
                .open::<u32>("get_user_teams", &args, "garbage")
                .is_err()
        );
        assert!(cursors.open::<u32>("get_user_teams", &args, "").is_err());
        let other_process = Cursors::new();
        assert!(
            other_process
                .open::<u32>("get_user_teams", &args, &cursor)
                .is_err()
        );
        assert_eq!(cursors.open::<u32>("get_user_teams", &args, &cursor), Ok(3));
    }

    #[test]
    fn argument_order_does_not_matter() {
        let a = json!({"b": 1, "a": {"y": 2, "x": [1, {"q": 1, "p": 2}]}});
        let b = json!({"a": {"x": [1, {"p": 2, "q": 1}], "y": 2}, "b": 1});
        assert_eq!(canonical_json(&a), canonical_json(&b));
        let cursors = Cursors::with_key([7; KEY_BYTES]);
        let cursor = cursors.seal("t", &a, &1u8);
        assert_eq!(cursors.open::<u8>("t", &b, &cursor), Ok(1));
    }
}
