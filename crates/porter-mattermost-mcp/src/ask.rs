//! What the asking tools share: the question put to the person (one
//! confirm box), during the call (elicitation, up to protocol 2025-11-25)
//! or as a request for input (2026-07-28); the answer judged (ticked, in
//! time, for this very call); and the binding of an answer to the call's
//! arguments.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::ErrorCode;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use crate::cursor::canonical_json;
use porter_mcp::tool::ToolError;

use crate::MattermostServer;

/// `NOTHING_POSTED` is what the posting tools say did not happen when the
/// answer is not a yes.
pub(crate) const NOTHING_POSTED: &str = "nothing was posted";
/// `NOTHING_DONE` is what the changing tools (channels, posts, status) say
/// did not happen when the answer is not a yes.
pub(crate) const NOTHING_DONE: &str = "nothing was changed";
/// `CONFIRM` is the one field of the question's form.
pub(crate) const CONFIRM: &str = "confirm";

/// How the person answered.
pub(crate) enum Answer {
    Yes,
    No(String),
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Whether the client said it can show a form (`elicitation` with `form`,
/// or with neither mode, which means form).
pub(crate) fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|caps| caps.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The question's form with the box's own label and description, which
/// name the tool's own action ("Yes, delete this draft").
pub(crate) fn form_with(
    title: &str,
    text: String,
    label: &str,
    about: &str,
) -> Result<ElicitRequestParams, ToolError> {
    let schema = ElicitationSchema::builder()
        .required_bool_property(CONFIRM, |b| {
            b.title(label.to_owned()).description(about.to_owned())
        })
        .title(title.to_owned())
        .build()
        .map_err(|e| ToolError::Rpc(ErrorData::internal_error(e, None)))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: text,
        requested_schema: schema,
    })
}

/// The person's answer, judged: only an accepted form with the box ticked
/// within the time limit is a yes.
pub(crate) fn judge(
    result: &ElicitResult,
    tool: &str,
    nothing_done: &str,
    time_ms: u64,
    limit: Duration,
) -> Answer {
    match result.action {
        ElicitationAction::Accept => {
            let ticked = result
                .content
                .as_ref()
                .and_then(|c| c.get(CONFIRM))
                .and_then(Value::as_bool)
                == Some(true);
            let late = now_ms().saturating_sub(time_ms) > limit.as_millis() as u64;
            if !ticked {
                Answer::No(format!(
                    "The person accepted without ticking the confirm box, which porter takes as no: {nothing_done}. Do not call {tool} again unless they ask you to."
                ))
            } else if late {
                Answer::No(format!(
                    "The person answered after more than {} minutes, too late to be sure they still mean it: {nothing_done}. Call {tool} again to ask them afresh if they still want it.",
                    limit.as_secs() / 60
                ))
            } else {
                Answer::Yes
            }
        }
        ElicitationAction::Decline => Answer::No(format!(
            "The person declined: {nothing_done}. Do not call {tool} again unless they ask you to."
        )),
        _ => Answer::No(format!(
            "The person closed the question without answering: {nothing_done}. Do not call {tool} again unless they ask you to."
        )),
    }
}

/// The answer in a 2026-07-28 retry; `nothing_done` says what did not
/// happen when it is not a yes.
pub(crate) fn answer_of(
    answers: Option<&rmcp::model::InputResponses>,
    tool: &str,
    nothing_done: &str,
    time_ms: u64,
    server: &MattermostServer,
) -> Result<Answer, ToolError> {
    let Some(raw) = answers.and_then(|a| a.get(CONFIRM)) else {
        return Ok(Answer::No(format!(
            "the call came back without the person's answer; {nothing_done}. Call {tool} again to ask them."
        )));
    };
    let result: ElicitResult = serde_json::from_value(raw.clone()).map_err(|e| {
        ToolError::Rpc(ErrorData::invalid_params(
            format!("inputResponses.{CONFIRM} is not an elicitation result: {e}"),
            None,
        ))
    })?;
    Ok(judge(
        &result,
        tool,
        nothing_done,
        time_ms,
        server.shared.options.ask_timeout,
    ))
}

/// A digest of the call's input: the tool and its canonical arguments.
pub(crate) fn input_digest(tool: &str, input: &Value) -> String {
    let mut bytes = tool.as_bytes().to_vec();
    bytes.push(0);
    bytes.extend_from_slice(canonical_json(input).as_bytes());
    porter_paths::sha256_hex(&bytes)
}

/// What a sealed question is bound to.
pub(crate) fn ask_binding(tool: &str, digest: &str) -> Vec<u8> {
    format!("porter/ask/v1\0{tool}\0{digest}").into_bytes()
}

impl MattermostServer {
    /// Puts `question` to the person during the call and judges the answer
    /// (its action, its box, its lateness); `nothing_done` says what did
    /// not happen when the answer is not a yes ("nothing was posted").
    pub(crate) async fn ask_now_with(
        &self,
        tool: &str,
        question: ElicitRequestParams,
        nothing_done: &str,
        context: &RequestContext<RoleServer>,
    ) -> Answer {
        let started = now_ms();
        // Wait a little past the limit, so a late answer is recognised as
        // late rather than lost.
        let wait = self.shared.options.ask_timeout + Duration::from_secs(60);
        let answer = context
            .peer
            .create_elicitation_with_timeout(question, Some(wait))
            .await;
        match answer {
            Ok(result) => judge(
                &result,
                tool,
                nothing_done,
                started,
                self.shared.options.ask_timeout,
            ),
            Err(error) => Answer::No(format!(
                "no answer came from the person ({error}); {nothing_done}. Call {tool} again if they still want it."
            )),
        }
    }
}

/// `missing_elicitation` is the JSON-RPC error for a client that cannot be
/// asked: code -32021 with the missing capability named in `data`.
pub(crate) fn missing_elicitation(tool: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "{tool} asks the person before posting, but this MCP client does not support elicitation (form), so porter cannot ask; nothing was read or written. \
             Use an MCP client that supports elicitation, or have the operator set MM_MCP_ASK_BEFORE_WRITES=false to leave approval to the client."
        ),
        Some(serde_json::json!({
            "requiredCapabilities": { "elicitation": { "form": {} } }
        })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn only_a_ticked_answer_in_time_is_a_yes() {
        let limit = Duration::from_secs(600);
        let now = now_ms();
        let answer = |action: ElicitationAction, content: Option<Value>| {
            let mut result = ElicitResult::new(action);
            result.content = content;
            result
        };
        let ticked = Some(serde_json::json!({ "confirm": true }));
        let cases = [
            (answer(ElicitationAction::Accept, ticked.clone()), now, None),
            (
                answer(
                    ElicitationAction::Accept,
                    Some(serde_json::json!({ "confirm": false })),
                ),
                now,
                Some("without ticking"),
            ),
            (
                answer(
                    ElicitationAction::Accept,
                    Some(serde_json::json!({ "confirm": "yes" })),
                ),
                now,
                Some("without ticking"),
            ),
            (
                answer(ElicitationAction::Accept, None),
                now,
                Some("without ticking"),
            ),
            (
                answer(ElicitationAction::Decline, None),
                now,
                Some("declined"),
            ),
            (
                answer(ElicitationAction::Cancel, None),
                now,
                Some("closed the question"),
            ),
            (
                answer(ElicitationAction::Accept, ticked),
                now - 601_000,
                Some("after more than 10 minutes"),
            ),
        ];
        for (result, asked_at, refused) in cases {
            match (
                judge(&result, "dm", NOTHING_POSTED, asked_at, limit),
                refused,
            ) {
                (Answer::Yes, None) => {}
                (Answer::No(sentence), Some(words)) => {
                    assert!(sentence.contains(words), "{sentence}");
                    assert!(sentence.contains("nothing was posted"), "{sentence}");
                }
                (Answer::Yes, Some(words)) => panic!("expected a refusal with {words:?}"),
                (Answer::No(sentence), None) => panic!("expected yes, got {sentence}"),
            }
        }
    }

    #[test]
    fn the_input_digest_ignores_key_order_but_not_values() {
        let a = serde_json::json!({"message": "hi", "channel_id": "x"});
        let b = serde_json::json!({"channel_id": "x", "message": "hi"});
        let c = serde_json::json!({"channel_id": "x", "message": "hi!"});
        assert_eq!(
            input_digest("create_post", &a),
            input_digest("create_post", &b)
        );
        assert_ne!(
            input_digest("create_post", &a),
            input_digest("create_post", &c)
        );
        assert_ne!(input_digest("create_post", &a), input_digest("dm", &a));
    }
}
