//! The tools about presence and the connection: `get_status`,
//! `set_status` (asked like the channel changes it shares its question
//! with), `typing` (shown to the channel for a few seconds) and `diagnose`.

use std::fmt::Write as _;

use porter_mattermost::CustomStatus;
use porter_mattermost::Status;
use porter_mattermost::User;
use porter_mcp::tool::Hints;
use porter_mcp::tool::ToolError;
use porter_mcp::tool::done;
use rmcp::RoleServer;
use rmcp::model::ElicitationAction;
use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use crate::ask::can_elicit;
use crate::ask::form_with;
use crate::doctor::Level;
use crate::doctor::Report;
use crate::doctor::check_download_dir;
use crate::doctor::server_checks;
use crate::lookup::ChannelRef;
use crate::names::usernames;
use crate::options::Transport;
use crate::output::DoneOut;
use crate::output::StatusOut;
use crate::render::channel_label;
use crate::render::iso_utc;
use crate::server::MattermostServer;
use crate::tools::Reply;
use crate::tools::channels::Act;
use crate::tools::channels::ChangedOut;
use crate::tools::channels::Look;
use crate::tools::channels::Plan;
use crate::tools::channels::StatusChange;
use crate::tools::channels::StatusWanted;
use crate::tools::channels::rfc3339_ms;

// ----- parameters -----

/// Where the person is typing.
// The names are those of the other tools' parameters.
#[allow(clippy::struct_field_names)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct TypingArgs {
    // The channel, by id or name (and team).
    #[serde(flatten)]
    pub channel: ChannelRef,
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

method_tools! {
    /// `typing`: Show that you are typing.
    Typing = typing_impl(args) {
        name: "typing", title: "Show that you are typing", hints: Hints::write(false, true), args: TypingArgs, out: DoneOut,
        description: "Shows \"is typing…\" in a channel (or a thread) for a few seconds. It changes nothing lasting, so porter does not ask the person.",
    }
    /// `diagnose`: Diagnose the connection.
    Diagnose = diagnose_impl(args, context) {
        name: "diagnose", title: "Diagnose the connection", hints: Hints::READ, args: DiagnoseArgs, out: DiagnoseOut,
        description: "Checks the Mattermost address, the token, the server's version, and whether this MCP client can show porter's questions (optionally by asking a harmless test question), and says what to fix.",
    }
    /// `get_status`: Get people's status.
    GetStatus = get_status_impl(args) {
        name: "get_status", title: "Get people's status", hints: Hints::READ, args: GetStatusArgs, out: StatusesOut,
        description: "Shows whether people are online, away, do-not-disturb (and until when) or offline, with their custom status; up to 100 usernames at once.",
    }
}

impl MattermostServer {
    pub(crate) async fn typing_impl(&self, args: TypingArgs) -> Reply {
        let (channel, root) = self
            .draft_place(&args.channel, args.root_id.as_deref())
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
    ) -> Reply {
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

/// `MAX_STATUS_NAMES` is the most people `get_status` looks up at once.
pub(crate) const MAX_STATUS_NAMES: usize = 100;

/// People whose presence to read.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct GetStatusArgs {
    /// Usernames (with or without `@`), 1 to 100; leave out for yourself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub usernames: Vec<String>,
}

/// A change of one's own status.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SetStatusArgs {
    /// `online`, `away`, `dnd` (do not disturb) or `offline`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// With `dnd`: when do-not-disturb ends, as RFC 3339 with an offset (`2026-12-01T17:00:00Z`); leave out for no end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dnd_until: Option<String>,
    /// A custom status text (at most 100 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_text: Option<String>,
    /// The custom status emoji, by name (`palm_tree` or `:palm_tree:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_emoji: Option<String>,
    /// When the custom status ends, as RFC 3339 with an offset; leave out to keep it until cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_until: Option<String>,
    /// True to clear the custom status.
    #[serde(default)]
    pub clear_custom: bool,
}

/// `StatusesOut` are presences.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatusesOut {
    /// One per person found.
    pub statuses: Vec<StatusOut>,
    /// Names that match no account.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub not_found: Vec<String>,
}

porter_mcp::tool! {
    /// `set_status`: Set your status.
    pub(crate) SetStatus for MattermostServer {
        name: "set_status", title: "Set your status", hints: Hints::write(false, true), args: SetStatusArgs, out: ChangedOut,
        description: "Sets your status (online, away, dnd with an optional end, offline) and/or your custom status (text, emoji, optional end), or clears the custom status; others see it next to your name.",
        call: |server, args, call| {
            let wanted = status_change(&args)?;
            server
                .ask_then_change(Self::NAME, args, call, |_| Look::Status(wanted))
                .await
        },
    }
}

/// Checks a `set_status` call before anything is read: a known status, an
/// end only with dnd, times with an offset, something to change.
pub(crate) fn status_change(args: &SetStatusArgs) -> Result<StatusWanted, ToolError> {
    let mut wanted = StatusWanted::default();
    if let Some(status) = args
        .status
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let status = status.to_ascii_lowercase();
        if !["online", "away", "dnd", "offline"].contains(&status.as_str()) {
            return Err(ToolError::Tool(format!(
                "status {status:?} is not one of online, away, dnd, offline. Nothing was changed."
            )));
        }
        wanted.status = Some(status);
    }
    if let Some(until) = args.dnd_until.as_deref().filter(|s| !s.trim().is_empty()) {
        if wanted.status.as_deref() != Some("dnd") {
            return Err(ToolError::Tool(
                "dnd_until goes with status \"dnd\"; pass both. Nothing was changed.".to_owned(),
            ));
        }
        wanted.dnd_end_s = rfc3339_ms(until).ok_or_else(|| bad_time("dnd_until", until))? / 1000;
    }
    let text = args.custom_text.as_deref().unwrap_or_default().trim();
    let emoji = args
        .custom_emoji
        .as_deref()
        .unwrap_or_default()
        .trim()
        .trim_matches(':');
    if args.clear_custom {
        if !text.is_empty() || !emoji.is_empty() {
            return Err(ToolError::Tool(
                "clear_custom removes the custom status; leave custom_text and custom_emoji out with it. Nothing was changed.".to_owned(),
            ));
        }
        wanted.clear_custom = true;
    } else if !text.is_empty() || !emoji.is_empty() {
        if text.chars().count() > 100 {
            return Err(ToolError::Tool(
                "custom_text is at most 100 characters. Nothing was changed.".to_owned(),
            ));
        }
        let mut custom = CustomStatus {
            emoji: emoji.to_owned(),
            text: text.to_owned(),
            ..CustomStatus::default()
        };
        if let Some(until) = args
            .custom_until
            .as_deref()
            .filter(|s| !s.trim().is_empty())
        {
            let ms = rfc3339_ms(until).ok_or_else(|| bad_time("custom_until", until))?;
            "date_and_time".clone_into(&mut custom.duration);
            custom.expires_at = iso_utc(ms);
        }
        wanted.custom = Some(custom);
    }
    if wanted.status.is_none() && wanted.custom.is_none() && !wanted.clear_custom {
        return Err(ToolError::Tool(
            "set_status needs something to change: status, custom_text/custom_emoji, or clear_custom. Nothing was changed.".to_owned(),
        ));
    }
    Ok(wanted)
}

impl MattermostServer {
    pub(crate) async fn status_plan(&self, wanted: &StatusWanted) -> Result<Plan, ToolError> {
        let me = self.me().await?;
        let now = self.shared.client.status(&me.id).await?;
        let custom = self
            .shared
            .client
            .custom_statuses(&[&me.id])
            .await?
            .into_iter()
            .next()
            .map(|(_, c)| c);
        let mut question = format!(
            "@{} changes what others see next to their name:",
            me.username
        );
        if let Some(status) = &wanted.status {
            let until = if status == "dnd" && wanted.dnd_end_s > 0 {
                format!(" until {}", iso_utc(wanted.dnd_end_s * 1000))
            } else {
                String::new()
            };
            let _ = write!(question, "\n- status: {} → {status}{until}", now.status);
        }
        if wanted.clear_custom {
            let _ = write!(
                question,
                "\n- custom status: {} → (none)",
                custom_words(custom.as_ref())
            );
        } else if let Some(next) = &wanted.custom {
            let _ = write!(
                question,
                "\n- custom status: {} → {}",
                custom_words(custom.as_ref()),
                custom_words(Some(next))
            );
        }
        let fingerprint = format!(
            "status|{}|{}|{}|{}",
            me.id,
            now.status,
            now.dnd_end_time,
            serde_json::to_string(&custom).unwrap_or_default()
        );
        Ok(Plan {
            title: "Set your status".to_owned(),
            question,
            fingerprint,
            act: Act::Status(StatusChange {
                me,
                wanted: wanted.clone(),
            }),
        })
    }

    pub(crate) async fn status_act(&self, s: StatusChange) -> Reply {
        let client = &self.shared.client;
        let mut parts = Vec::new();
        if let Some(status) = &s.wanted.status {
            client
                .set_status(&Status {
                    user_id: s.me.id.clone(),
                    status: status.clone(),
                    dnd_end_time: s.wanted.dnd_end_s,
                    ..Status::default()
                })
                .await?;
            parts.push(format!("status {status}"));
        }
        if s.wanted.clear_custom {
            client.clear_custom_status().await?;
            parts.push("custom status cleared".to_owned());
        } else if let Some(custom) = &s.wanted.custom {
            client.set_custom_status(custom).await?;
            parts.push(format!("custom status {}", custom_words(Some(custom))));
        }
        let now = self.statuses_of(vec![s.me]).await?.into_iter().next();
        let text = format!("Set {}.", parts.join(", "));
        done(
            text.clone(),
            &ChangedOut {
                done: text,
                channel: None,
                added: Vec::new(),
                status: now,
            },
        )
    }

    pub(crate) async fn get_status_impl(&self, args: GetStatusArgs) -> Reply {
        if args.usernames.len() > MAX_STATUS_NAMES {
            return Err(ToolError::Tool(format!(
                "get_status looks up at most {MAX_STATUS_NAMES} people at once and {} were named; split the list",
                args.usernames.len()
            )));
        }
        let (users, not_found) = if args.usernames.is_empty() {
            (vec![self.me().await?], Vec::new())
        } else {
            let names = usernames(&args.usernames);
            let users = self.shared.client.users_by_usernames(&names).await?;
            let missing: Vec<String> = names
                .iter()
                .filter(|n| !users.iter().any(|u| u.username.eq_ignore_ascii_case(n)))
                .cloned()
                .collect();
            (users, missing)
        };
        let statuses = if users.is_empty() {
            Vec::new()
        } else {
            self.statuses_of(users).await?
        };
        let mut text = String::new();
        for s in &statuses {
            let _ = write!(text, "@{}: {}", s.username, s.status);
            if let Some(until) = &s.dnd_until {
                let _ = write!(text, " until {until}");
            }
            if s.custom_text.is_some() || s.custom_emoji.is_some() {
                let _ = write!(
                    text,
                    "; custom status (their text): {}{}",
                    s.custom_emoji
                        .as_ref()
                        .map(|e| format!(":{e}: "))
                        .unwrap_or_default(),
                    s.custom_text.clone().unwrap_or_default()
                );
            }
            text.push('\n');
        }
        if !not_found.is_empty() {
            let _ = writeln!(text, "No account named: {}", not_found.join(", "));
        }
        done(
            text,
            &StatusesOut {
                statuses,
                not_found,
            },
        )
    }

    /// The presences of these accounts, with their custom statuses.
    pub(crate) async fn statuses_of(&self, users: Vec<User>) -> Result<Vec<StatusOut>, ToolError> {
        let ids: Vec<&str> = users.iter().map(|u| u.id.as_str()).collect();
        let statuses = self.shared.client.statuses(&ids).await?;
        let customs = self.shared.client.custom_statuses(&ids).await?;
        Ok(users
            .iter()
            .map(|user| {
                let status = statuses
                    .iter()
                    .find(|s| s.user_id == user.id)
                    .cloned()
                    .unwrap_or_default();
                let custom = customs
                    .iter()
                    .find(|(id, _)| *id == user.id)
                    .map(|(_, c)| c);
                StatusOut {
                    username: user.username.clone(),
                    user_id: user.id.clone(),
                    status: if status.status.is_empty() {
                        "offline".to_owned()
                    } else {
                        status.status.clone()
                    },
                    manual: status.manual,
                    dnd_until: (status.status == "dnd" && status.dnd_end_time > 0)
                        .then(|| iso_utc(status.dnd_end_time * 1000)),
                    custom_text: custom.map(|c| c.text.clone()).filter(|t| !t.is_empty()),
                    custom_emoji: custom.map(|c| c.emoji.clone()).filter(|e| !e.is_empty()),
                    custom_until: custom
                        .map(|c| c.expires_at.clone())
                        .filter(|e| !e.is_empty() && !e.starts_with("0001")),
                }
            })
            .collect())
    }
}

pub(crate) fn custom_words(custom: Option<&CustomStatus>) -> String {
    match custom {
        None => "(none)".to_owned(),
        Some(c) => {
            let mut words = String::new();
            if !c.emoji.is_empty() {
                let _ = write!(words, ":{}: ", c.emoji);
            }
            let _ = write!(words, "\"{}\"", c.text);
            if !c.expires_at.is_empty() {
                let _ = write!(words, " until {}", c.expires_at);
            }
            words
        }
    }
}

pub(crate) fn bad_time(field: &str, value: &str) -> ToolError {
    ToolError::Tool(format!(
        "{field} {value:?} is not an RFC 3339 time with an offset; write it like 2026-12-01T17:00:00Z or 2026-12-01T18:00:00+01:00. Nothing was changed."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn a_status_change_needs_something_to_change_and_dnd_for_an_end() {
        assert!(status_change(&SetStatusArgs::default()).is_err());
        let away_until = SetStatusArgs {
            status: Some("away".into()),
            dnd_until: Some("2026-12-01T17:00:00Z".into()),
            ..SetStatusArgs::default()
        };
        assert!(status_change(&away_until).is_err());
        let dnd = SetStatusArgs {
            status: Some("DND".into()),
            dnd_until: Some("2026-12-01T17:00:00Z".into()),
            ..SetStatusArgs::default()
        };
        let wanted = status_change(&dnd).unwrap();
        assert_eq!(wanted.status.as_deref(), Some("dnd"));
        assert_eq!(wanted.dnd_end_s, 1_796_144_400);
        let custom = SetStatusArgs {
            custom_emoji: Some(":palm_tree:".into()),
            custom_text: Some("On holiday".into()),
            ..SetStatusArgs::default()
        };
        let wanted = status_change(&custom).unwrap();
        assert_eq!(wanted.custom.unwrap().emoji, "palm_tree");
    }
}
