//! How much of a recorded call (the tool and its arguments, as JSON text)
//! and of an event's data is shown outside the records: the run API's
//! listings cut each long argument; log lines cut them shorter and hide
//! every URL's query and password. The records keep the call whole.

use serde_json::Value;

/// `LOG_ARGUMENT_CHARS` is the most of one string (an argument, a path) a
/// log line carries: a file's base64 or a data URI is cut to its start.
pub const LOG_ARGUMENT_CHARS: usize = 200;

/// `LOG_DATA_CHARS` is the most of an event's data one log line carries,
/// however many arguments it holds.
pub const LOG_DATA_CHARS: usize = 2000;

/// `elide_call` is a recorded call with every string longer than `chars`
/// cut to its start and a note of its length; still JSON when it was JSON.
#[must_use]
pub fn elide_call(call: &str, chars: usize) -> String {
    match serde_json::from_str::<Value>(call) {
        Ok(mut value) => {
            elide_strings(&mut value, chars, false);
            value.to_string()
        }
        Err(_) => elide_text(call, chars).unwrap_or_else(|| call.to_owned()),
    }
}

/// `for_log` is an event's data as a log line shows it: every string cut
/// to [`LOG_ARGUMENT_CHARS`] (inside a recorded call too), every URL's
/// query and password hidden, and the whole cut to [`LOG_DATA_CHARS`].
#[must_use]
pub fn for_log(data: &Value) -> String {
    let mut shown = data.clone();
    elide_strings(&mut shown, LOG_ARGUMENT_CHARS, true);
    let text = shown.to_string();
    elide_text(&text, LOG_DATA_CHARS).unwrap_or(text)
}

/// Cuts every string of `value` to `chars`; `for_log` also hides URL
/// secrets and looks inside strings that hold JSON (a recorded call).
fn elide_strings(value: &mut Value, chars: usize, for_log: bool) {
    match value {
        Value::String(text) => {
            if for_log {
                let inner = text
                    .starts_with(['{', '['])
                    .then(|| serde_json::from_str::<Value>(text).ok())
                    .flatten();
                if let Some(mut inner) = inner {
                    elide_strings(&mut inner, chars, true);
                    *text = inner.to_string();
                    return;
                }
                *text = porter_net::hide_url_secrets(text);
            }
            if let Some(short) = elide_text(text, chars) {
                *text = short;
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| elide_strings(item, chars, for_log)),
        Value::Object(fields) => fields
            .values_mut()
            .for_each(|field| elide_strings(field, chars, for_log)),
        _ => {}
    }
}

/// `text` cut to `chars` characters with a note of its length, when it is
/// longer.
fn elide_text(text: &str, chars: usize) -> Option<String> {
    let count = text.chars().count();
    if count <= chars {
        return None;
    }
    let start: String = text.chars().take(chars).collect();
    Some(format!("{start}… ({count} characters in all)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_logged_capture_cuts_its_call_and_hides_url_secrets() {
        let data_uri = format!("data:image/png;base64,{}", "iVBORw0KGgo".repeat(500));
        let call = serde_json::json!({
            "tool": "mcp__fixtures__image",
            "arguments": {"picture": data_uri, "source": "https://files.example.org/a.png?token=s3cret"},
        })
        .to_string();
        let data = serde_json::json!({"path": "image.png", "call": call});
        let line = for_log(&data);
        assert!(line.len() < 1000, "{} characters", line.len());
        assert!(!line.contains("s3cret"), "{line}");
        assert!(line.contains("https://files.example.org/a.png?…"), "{line}");
        assert!(
            line.contains(&format!("({} characters in all)", data_uri.len())),
            "{line}"
        );
        assert!(line.contains("mcp__fixtures__image"), "{line}");
    }

    #[test]
    fn a_log_line_of_many_arguments_is_cut_as_a_whole() {
        let many: serde_json::Map<String, Value> = (0..100)
            .map(|n| (format!("arg{n}"), Value::String("x".repeat(150))))
            .collect();
        let line = for_log(&Value::Object(many));
        assert!(
            line.chars().count() <= LOG_DATA_CHARS + 40,
            "{}",
            line.len()
        );
        assert!(line.ends_with("characters in all)"), "{line}");
    }

    #[test]
    fn a_listed_call_is_cut_at_its_limit_and_no_sooner() {
        let at_limit = "x".repeat(20);
        assert_eq!(elide_call(&at_limit, 20), at_limit);
        assert!(elide_call(&"y".repeat(21), 20).ends_with("(21 characters in all)"));
    }
}
