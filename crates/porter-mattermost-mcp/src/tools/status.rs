//! The tools about presence and the connection: `typing` (shown to the
//! channel for a few seconds) and `diagnose`.

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ElicitationAction, ProtocolVersion};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::doctor::{Level, Report, check_download_dir, server_checks};
use crate::write::{can_elicit, form_with};
use porter_mcp::tool::{Call, Hints, Outcome, Tool, ToolError, done};

use crate::output::DoneOut;
use crate::render::channel_label;
use crate::{MattermostServer, Transport};

// ----- parameters -----

/// Where the person is typing.
// The names are those of the other tools' parameters.
#[allow(clippy::struct_field_names)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct TypingArgs {
    /// The channel: its id or name (`~town-square`, `town-square` or `Town Square`).
    pub channel_id: String,
    /// The team, by id or name, when the channel name is in several teams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// The thread (a post id or permalink) when typing a reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<String>,
}

/// What to check.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct DiagnoseArgs {
    /// Also ask the person a harmless test question, to see that questions reach them (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask_test_question: Option<bool>,
}

/// `CheckOut` is one line of `diagnose`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckOut {
    /// `ok`, `note`, `warn` or `fail`.
    pub level: String,
    /// What was checked and found.
    pub what: String,
    /// What to do, when something is wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// `DiagnoseOut` is the whole check.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DiagnoseOut {
    /// Whether nothing failed.
    pub ok: bool,
    /// Every check, in order.
    pub checks: Vec<CheckOut>,
}

// ----- the tools -----

/// `typing`: Show that you are typing.
pub(crate) struct Typing;

impl Tool<MattermostServer> for Typing {
    type Args = TypingArgs;
    type Out = DoneOut;
    const NAME: &'static str = "typing";
    const TITLE: &'static str = "Show that you are typing";
    const DESCRIPTION: &'static str = "Shows \"is typing…\" in a channel (or a thread) for a few seconds. It changes nothing lasting, so porter does not ask the person.";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(&self, server: &MattermostServer, args: TypingArgs, _call: Call) -> Outcome {
        Ok(server.typing_impl(args).await?.into())
    }
}

/// `diagnose`: Diagnose the connection.
pub(crate) struct Diagnose;

impl Tool<MattermostServer> for Diagnose {
    type Args = DiagnoseArgs;
    type Out = DiagnoseOut;
    const NAME: &'static str = "diagnose";
    const TITLE: &'static str = "Diagnose the connection";
    const DESCRIPTION: &'static str = "Checks the Mattermost address, the token, the server's version, and whether this MCP client can show porter's questions (optionally by asking a harmless test question), and says what to fix.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: DiagnoseArgs, call: Call) -> Outcome {
        Ok(server.diagnose_impl(args, &call.context).await?.into())
    }
}

impl MattermostServer {
    pub(crate) async fn typing_impl(&self, args: TypingArgs) -> Result<CallToolResult, ToolError> {
        let (channel, root) = self
            .draft_place(
                &args.channel_id,
                args.team_id.as_deref(),
                args.root_id.as_deref(),
            )
            .await?;
        self.shared.client.typing(&channel.id, &root).await?;
        let place = if root.is_empty() {
            channel_label(&channel)
        } else {
            format!("the thread of post {root} in {}", channel_label(&channel))
        };
        done(
            format!("Shown as typing in {place} for a few seconds."),
            &DoneOut {
                id: channel.id,
                state: "typing".to_owned(),
            },
        )
    }

    pub(crate) async fn diagnose_impl(
        &self,
        args: DiagnoseArgs,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ToolError> {
        let mut report = Report::default();
        let client = &self.shared.client;
        let options = &self.shared.options;
        report.push(Level::Ok, format!("MM_URL is {}", client.base_url()), None);
        server_checks(client, &mut report).await;
        self.check_questions(&mut report, &args, context).await;
        if options.transport == Transport::Stdio {
            check_download_dir(&mut report, &options.download_dir);
        }
        report.push(
            Level::Note,
            match (options.allow_writes, options.ask_before_writes) {
                (false, _) => "the server only reads (the operator sets MM_MCP_ALLOW_WRITES=true to allow changes)".to_owned(),
                (true, true) => "writes are allowed and those others see ask the person first".to_owned(),
                (true, false) if options.force_human_in_the_loop => "writes are allowed; porter does not ask, and asking tools are marked for Claude Code to show each call to the person".to_owned(),
                (true, false) => "writes are allowed and do NOT ask the person first (MM_MCP_ASK_BEFORE_WRITES=false): the client's approval is the only check".to_owned(),
            },
            None,
        );
        let checks: Vec<CheckOut> = report
            .checks
            .iter()
            .map(|c| CheckOut {
                level: match c.level {
                    Level::Ok => "ok",
                    Level::Note => "note",
                    Level::Warn => "warn",
                    Level::Config | Level::Failure => "fail",
                }
                .to_owned(),
                what: c.what.clone(),
                fix: c.fix.clone(),
            })
            .collect();
        let ok = report.exit_code() == 0;
        let mut text = report.to_string();
        text.push_str(if ok {
            "Nothing failed.\n"
        } else {
            "Something failed: tell the person the fix above.\n"
        });
        done(text, &DiagnoseOut { ok, checks })
    }

    /// Whether this client can show porter's questions, and (when asked
    /// for and possible) whether a harmless test question reaches the
    /// person.
    pub(crate) async fn check_questions(
        &self,
        report: &mut Report,
        args: &DiagnoseArgs,
        context: &RequestContext<RoleServer>,
    ) {
        let options = &self.shared.options;
        let needed = options.allow_writes && options.ask_before_writes;
        if !can_elicit(context) {
            let (level, fix) = if needed {
                (
                    Level::Config,
                    Some("use an MCP client that supports elicitation (form), or have the operator set MM_MCP_ASK_BEFORE_WRITES=false to leave approval to the client".to_owned()),
                )
            } else {
                (Level::Note, None)
            };
            report.push(
                level,
                "this MCP client cannot show porter's questions (it declared no form elicitation)",
                fix,
            );
            return;
        }
        report.push(
            Level::Ok,
            "this MCP client declared that it can show porter's questions (form elicitation)",
            None,
        );
        if args.ask_test_question != Some(true) {
            return;
        }
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        if modern {
            report.push(
                Level::Note,
                "on protocol 2026-07-28 questions travel with the tool's answer, so no test question was sent; a write tool's question shows whether they arrive",
                None,
            );
            return;
        }
        let Ok(question) = form_with(
            "porter: a test question",
            "porter diagnose is checking that its questions reach you. Nothing will change whatever you answer; tick the box and accept to confirm you see this.".to_owned(),
            "Yes, I see this question",
            "Tick to confirm that porter's questions reach you; nothing changes whatever you answer.",
        ) else {
            return;
        };
        let answer = context
            .peer
            .create_elicitation_with_timeout(question, Some(std::time::Duration::from_secs(120)))
            .await;
        match answer {
            Ok(result) => {
                let (level, what) = match result.action {
                    ElicitationAction::Accept => (
                        Level::Ok,
                        "the test question reached the person and they accepted it",
                    ),
                    ElicitationAction::Decline => (
                        Level::Ok,
                        "the test question reached the person (they declined it, which is fine)",
                    ),
                    _ => (
                        Level::Warn,
                        "the test question was closed without an answer; the person may not have seen it",
                    ),
                };
                report.push(level, what, None);
            }
            Err(error) => report.push(
                Level::Failure,
                format!("the test question did not reach the person: {error}"),
                Some("check that the MCP client shows elicitation forms; otherwise have the operator set MM_MCP_ASK_BEFORE_WRITES=false".to_owned()),
            ),
        }
    }
}
