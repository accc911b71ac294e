//! What the asking tools share: the whole of asking before acting
//! ([`MattermostServer::asking`], then [`MattermostServer::ask_first`]; for
//! a change, both and the act, [`MattermostServer::ask_then_change`]);
//! the question put to the person (one confirm box), during the call
//! (elicitation, up to protocol 2025-11-25) or as a request for input
//! (2026-07-28); the answer judged (ticked, in time, for this very call);
//! and the binding of an answer to the call's arguments and to what the
//! call acts on.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use porter_mcp::tool::{Call, ToolError};
use rmcp::model::{CallToolResponse, ErrorCode, ProtocolVersion};
use rmcp::model::{ElicitRequest, InputRequest, InputRequests, InputRequiredResult, SealOptions};
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cursor::canonical_json;

use crate::server::MattermostServer;
use crate::tools::Reply;

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
    porter_paths::fingerprint(&[tool.as_bytes(), canonical_json(input).as_bytes()])
}

/// What a sealed question is bound to.
pub(crate) fn ask_binding(tool: &str, digest: &str) -> Vec<u8> {
    format!("porter/ask/v1\0{tool}\0{digest}").into_bytes()
}

/// `Sealed` is what the sealed request state of 2026-07-28 carries from
/// the question to the retry: the call's input digest, the fingerprint of
/// what the call acts on, and when the person was asked.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Sealed {
    digest: String,
    fingerprint: String,
    time_ms: u64,
}

/// `Asking` is one call of a tool that asks before it acts, as it arrived:
/// the tool, the digest of its input, whether and how porter asks, and
/// (on a 2026-07-28 retry the person said yes to) what was sealed with
/// the question.
pub(crate) struct Asking {
    pub(crate) tool: &'static str,
    digest: String,
    ask: bool,
    modern: bool,
    nothing_done: &'static str,
    look_again: bool,
    context: RequestContext<RoleServer>,
    asked: Option<Sealed>,
}

impl Asking {
    /// Whether the person is still to be asked: asking is on, and this is
    /// not the retry that carries their yes.
    pub(crate) fn will_ask(&self) -> bool {
        self.ask && self.asked.is_none()
    }

    /// Leaves the second look (just before acting, after an answer during
    /// the call) to the act itself, for a tool that checks again there.
    pub(crate) fn looking_once(mut self) -> Asking {
        self.look_again = false;
        self
    }
}

/// `Looked` is what an asking tool found its call acts on.
pub(crate) trait Looked {
    /// A digest of what the call acts on: the person's yes holds only while
    /// it stays the same.
    fn fingerprint(&self) -> &str;

    /// The sentence to answer, without asking, when there is nothing to do.
    fn nothing_to_do(&self) -> Option<&str> {
        None
    }
}

/// `Question` is what the person is asked: the form's title, its text,
/// and the box's label and description, which name the tool's own action.
pub(crate) struct Question {
    pub title: String,
    pub text: String,
    pub label: &'static str,
    pub about: &'static str,
}

/// `AskedChange` is a change a tool makes once the person agreed, as its call
/// named it: how what it acts on is looked up, the question about what was
/// found, what the call answers when that moved after the question, and
/// how the change is made.
pub(crate) trait AskedChange {
    /// What the change acts on, looked up.
    type Found: Looked;

    /// What did not happen when the answer is not a yes.
    const NOTHING_DONE: &'static str = NOTHING_DONE;

    /// Looks up what the change acts on, and writes the question.
    async fn look(&self, server: &MattermostServer) -> Result<Self::Found, ToolError>;

    /// The question about what was found.
    fn question(&self, found: &Self::Found) -> Question;

    /// The refusal of `tool` when what it acts on moved after the question
    /// (`found`, as it is now).
    fn changed(&self, tool: &str, found: &Self::Found) -> ToolError;

    /// Makes the change.
    async fn make(&self, server: &MattermostServer, found: Self::Found) -> Reply;
}

/// `Gate` is where asking left a call: act on what was looked up, or
/// answer now (with the request for the person's input).
pub(crate) enum Gate<L> {
    Go(L),
    Answer(CallToolResponse),
}

impl<L> Gate<L> {
    /// `then` acts on what was looked up when the call may go (`act`'s
    /// result is the tool's answer), or answers now.
    pub(crate) async fn then<Fut>(
        self,
        act: impl FnOnce(L) -> Fut,
    ) -> Result<CallToolResponse, ToolError>
    where
        Fut: Future<Output = Reply>,
    {
        match self {
            Gate::Go(found) => Ok(act(found).await?.into()),
            Gate::Answer(response) => Ok(response),
        }
    }
}

impl MattermostServer {
    /// The whole of a call that changes one thing after asking: asks about
    /// the change `make` finds in `args`, bound to `args` (see
    /// [`MattermostServer::ask_first`]), and makes it once it may go.
    pub(crate) async fn ask_then_change<A: Serialize, C: AskedChange>(
        &self,
        tool: &'static str,
        args: A,
        call: Call,
        make: impl FnOnce(A) -> C,
    ) -> Result<CallToolResponse, ToolError> {
        let asking = self.asking(tool, &args, call, C::NOTHING_DONE)?;
        let change = make(args);
        let gate = self
            .ask_first(
                &asking,
                || change.look(self),
                |found| change.question(found),
                |found| change.changed(tool, found),
            )
            .await?;
        gate.then(|found| change.make(self, found)).await
    }

    /// Starts a call of `tool` that asks before it acts: refuses a client
    /// that cannot be asked before anything is read, and on a 2026-07-28
    /// retry judges the person's answer first, so a "no" reads nothing.
    /// `nothing_done` says what did not happen when the answer is not a yes.
    pub(crate) fn asking<A: Serialize>(
        &self,
        tool: &'static str,
        args: &A,
        call: Call,
        nothing_done: &'static str,
    ) -> Result<Asking, ToolError> {
        let Call {
            context,
            state,
            answers,
        } = call;
        let ask = self.shared.options.ask_before_writes;
        if ask && !can_elicit(&context) {
            return Err(ToolError::Rpc(missing_elicitation(tool)));
        }
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let input = serde_json::to_value(args).unwrap_or(Value::Null);
        let digest = input_digest(tool, &input);
        let mut asked = None;
        if ask
            && modern
            && let Some(state) = state.as_deref()
        {
            let sealed: Sealed = self
                .shared
                .asks
                .open_json_with(state, &ask_binding(tool, &digest))
                .map_err(|_| {
                    ToolError::Tool(format!(
                        "this answer belongs to another question (the call's arguments differ from those asked about, or the server restarted); {nothing_done}. Call {tool} again to ask the person afresh."
                    ))
                })?;
            match answer_of(answers.as_ref(), tool, nothing_done, sealed.time_ms, self)? {
                Answer::Yes => asked = Some(sealed),
                Answer::No(sentence) => return Err(ToolError::Tool(sentence)),
            }
        }
        Ok(Asking {
            tool,
            digest,
            ask,
            modern,
            nothing_done,
            look_again: true,
            context,
            asked,
        })
    }

    /// The rest of asking before acting: `look` finds what the call acts
    /// on (with every check); a retry goes on only if that is still what
    /// the person said yes to (else `changed`). Unless asking is left to
    /// the client, the person is asked `question`: under 2026-07-28 the
    /// call answers with the request for their input; before, they are
    /// asked now and, after a yes, `look` looks again just before acting,
    /// and a fingerprint that moved refuses.
    pub(crate) async fn ask_first<L: Looked, Fut>(
        &self,
        asking: &Asking,
        look: impl Fn() -> Fut,
        question: impl FnOnce(&L) -> Question,
        changed: impl Fn(&L) -> ToolError,
    ) -> Result<Gate<L>, ToolError>
    where
        Fut: Future<Output = Result<L, ToolError>>,
    {
        let found = look().await?;
        if let Some(sentence) = found.nothing_to_do() {
            return Err(ToolError::Tool(sentence.to_owned()));
        }
        if let Some(asked) = &asking.asked {
            if asked.digest != asking.digest || asked.fingerprint != found.fingerprint() {
                return Err(changed(&found));
            }
            return Ok(Gate::Go(found));
        }
        if !asking.will_ask() {
            return Ok(Gate::Go(found));
        }
        let Question {
            title,
            text,
            label,
            about,
        } = question(&found);
        let form = form_with(&title, text, label, about)?;
        if asking.modern {
            let sealed = Sealed {
                digest: asking.digest.clone(),
                fingerprint: found.fingerprint().to_owned(),
                time_ms: now_ms(),
            };
            return self.input_required(asking.tool, &asking.digest, &sealed, form);
        }
        let answer = self
            .ask_now_with(asking.tool, form, asking.nothing_done, &asking.context)
            .await;
        if let Answer::No(sentence) = answer {
            return Err(ToolError::Tool(sentence));
        }
        if !asking.look_again {
            return Ok(Gate::Go(found));
        }
        // The person may have taken their time, and others may have
        // changed what the call acts on.
        let again = look().await?;
        if again.fingerprint() == found.fingerprint() {
            Ok(Gate::Go(again))
        } else {
            Err(changed(&again))
        }
    }

    /// Seals `asked` (bound to `tool` and the call's input `digest`) and
    /// answers with the request for input that puts `question` to the
    /// person (2026-07-28).
    fn input_required<L>(
        &self,
        tool: &str,
        digest: &str,
        asked: &Sealed,
        question: ElicitRequestParams,
    ) -> Result<Gate<L>, ToolError> {
        let bound = ask_binding(tool, digest);
        let sealed = self
            .shared
            .asks
            .seal_json_with(asked, &SealOptions::new().associated_data(&bound))
            .map_err(|e| ToolError::Rpc(ErrorData::internal_error(e.to_string(), None)))?;
        let mut requests = InputRequests::new();
        requests.insert(
            CONFIRM.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(question)),
        );
        Ok(Gate::Answer(CallToolResponse::from(
            InputRequiredResult::new(Some(requests), Some(sealed)),
        )))
    }

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
