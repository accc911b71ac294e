//! The tools about drafts: `save_draft` (it changes only the person's own
//! state, so it never asks), `list_drafts`, and `delete_draft` (it asks,
//! bound to the draft's text, and re-checks the draft just before
//! deleting); and the lookups of a thread, a team and a draft's place that
//! other tools of a person's own state use too.

use std::fmt::Write as _;

use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, CallToolResult, ProtocolVersion};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ask::{Answer, answer_of, ask_binding, can_elicit, form_with, input_digest, now_ms};
use crate::cursor::canonical_json;
use crate::lookup::ChannelRef;
use crate::paging::Paging;
use crate::render::iso_utc;
use porter_mcp::tool::{Call, Hints, ToolError, done};

use crate::MattermostServer;
use crate::ask::missing_elicitation;
use crate::render::channel_label;
use porter_mattermost::{Channel, Draft, Team};

/// Default and largest page sizes of `list_drafts`.
pub(crate) const DRAFTS_PAGE: usize = 20;
pub(crate) const DRAFTS_MAX: usize = 100;

/// A draft to save.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SaveDraftArgs {
    // The channel, by id or name (and team).
    #[serde(flatten)]
    pub channel: ChannelRef,
    /// The thread (a post id or permalink) for a reply draft.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<String>,
    /// The draft's text (Markdown).
    pub message: String,
}

/// The place of a draft.
// The names are those of the other tools' parameters.
#[allow(clippy::struct_field_names)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct DraftPlaceArgs {
    // The channel, by id or name (and team).
    #[serde(flatten)]
    pub channel: ChannelRef,
    /// The thread (a post id or permalink) for a reply draft.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<String>,
}

/// A page of drafts.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ListDraftsArgs {
    /// The team, by id or name; all your teams when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// Most drafts in this page (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `DraftOut` is one draft.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DraftOut {
    /// The channel's id.
    pub channel_id: String,
    /// The channel, as shown (`~town-square`, or who a conversation is with).
    pub channel: String,
    /// The thread it replies in, or empty.
    pub root_id: String,
    /// The text.
    pub message: String,
    /// When it last changed (ms since the epoch).
    pub update_at: i64,
    /// When it last changed (ISO 8601, UTC).
    pub updated: String,
}

/// `SaveDraftOut` is a saved draft.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SaveDraftOut {
    /// The draft as stored.
    pub draft: DraftOut,
    /// `saved`, or `unchanged` when the same draft was there already.
    pub outcome: String,
}

/// `DraftsOut` is a page of drafts.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DraftsOut {
    /// The drafts, newest first.
    pub drafts: Vec<DraftOut>,
    /// Pass as `cursor` for the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `DeletedDraftOut` is a deleted draft.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DeletedDraftOut {
    /// The draft as it was.
    pub deleted: DraftOut,
}

porter_mcp::tool! {
    /// `save_draft`: Save a draft.
    pub(crate) SaveDraft for MattermostServer {
        name: "save_draft", title: "Save a draft", hints: Hints::write(false, true), args: SaveDraftArgs, out: SaveDraftOut,
        description: "Saves an unsent message as your draft in a channel (or thread), where you can finish and send it yourself. It never replaces a different draft: if one is there, it is shown and nothing changes. Only you see drafts, so porter does not ask the person.",
        call: |server, args, _call| Ok(server.save_draft_impl(args).await?.into()),
    }
}

porter_mcp::tool! {
    /// `list_drafts`: My drafts.
    pub(crate) ListDrafts for MattermostServer {
        name: "list_drafts", title: "My drafts", hints: Hints::READ, args: ListDraftsArgs, out: DraftsOut,
        description: "Your unsent drafts, newest first, in one team or all (with your direct and group messages).",
        call: |server, args, _call| Ok(server.list_drafts_impl(args).await?.into()),
    }
}

porter_mcp::tool! {
    /// `delete_draft`: Delete a draft.
    pub(crate) DeleteDraft for MattermostServer {
        name: "delete_draft", title: "Delete a draft", hints: Hints::write(true, true), args: DraftPlaceArgs, out: DeletedDraftOut,
        description: "Deletes your draft in a channel (or thread); its text is gone for good.",
        call: |server, args, call| {
            let Call {
                context,
                state,
                answers,
                ..
            } = call;

            server
                .delete_draft_impl(args, state, answers.as_ref(), &context)
                .await
        },
    }
}

// ----- how they work -----

/// What the sealed request state of `delete_draft` carries from the
/// question to the retry.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct AskedDraft {
    digest: String,
    fingerprint: String,
    time_ms: u64,
}

/// A draft's fingerprint: where it is and its exact text, so a draft
/// edited after the question is not deleted.
pub(crate) fn draft_fingerprint(draft: &Draft) -> String {
    let bound = serde_json::json!({
        "channel_id": draft.channel_id,
        "root_id": draft.root_id,
        "message": draft.message,
    });
    porter_paths::sha256_hex(canonical_json(&bound).as_bytes())
}

/// Quotes someone's own draft text for a message, cut to a readable length.
pub(crate) fn quoted(text: &str) -> String {
    const SHOWN_CHARS: usize = 500;
    let mut shown: String = text.chars().take(SHOWN_CHARS).collect();
    if text.chars().count() > SHOWN_CHARS {
        shown.push('…');
    }
    format!("«{shown}»")
}

/// `NOTHING_DELETED` is what `delete_draft` says did not happen when the
/// answer is not a yes.
pub(crate) const NOTHING_DELETED: &str = "nothing was deleted";

/// The `delete_draft` question's form, whose box names its own action.
pub(crate) fn delete_draft_form(
    title: &str,
    text: String,
) -> Result<rmcp::model::ElicitRequestParams, ToolError> {
    form_with(
        title,
        text,
        "Yes, delete this draft",
        "Tick to delete the draft shown above for good; leave unticked or decline to keep it.",
    )
}

impl MattermostServer {
    /// The account's id (asked once).
    pub(crate) async fn my_id(&self) -> Result<String, ToolError> {
        Ok(self.me().await?.id)
    }

    /// The root post id of a post's thread, and the post's channel.
    pub(crate) async fn thread_of(&self, wanted: &str) -> Result<(String, String), ToolError> {
        let id = Self::post_id(wanted)?;
        let post = self.shared.client.post(&id).await?;
        let root = if post.root_id.is_empty() {
            post.id
        } else {
            post.root_id
        };
        Ok((root, post.channel_id))
    }

    /// The team to use for a channel: its own, or (direct and group
    /// channels belong to none) the account's first team.
    pub(crate) async fn team_for(&self, channel: &Channel) -> Result<String, ToolError> {
        if !channel.team_id.is_empty() {
            return Ok(channel.team_id.clone());
        }
        self.my_teams()
            .await?
            .first()
            .map(|t| t.id.clone())
            .ok_or_else(|| {
                ToolError::Tool(
                    "you belong to no team, and Mattermost files this under a team".to_owned(),
                )
            })
    }

    /// The channel and thread a draft place names.
    pub(crate) async fn draft_place(
        &self,
        at: &ChannelRef,
        root_id: Option<&str>,
    ) -> Result<(Channel, String), ToolError> {
        let (channel, _) = self.channel_at(at).await?;
        let mut root = String::new();
        if let Some(wanted) = root_id.filter(|r| !r.trim().is_empty()) {
            let (thread, in_channel) = self.thread_of(wanted).await?;
            if in_channel != channel.id {
                return Err(ToolError::Tool(format!(
                    "post {thread} is in another channel than {}; pass that post's channel as channel_id, or leave root_id out",
                    at.channel_id
                )));
            }
            root = thread;
        }
        Ok((channel, root))
    }

    /// The account's draft in a channel and thread, if there is one.
    pub(crate) async fn find_draft(
        &self,
        channel: &Channel,
        root_id: &str,
    ) -> Result<Option<Draft>, ToolError> {
        let team = self.team_for(channel).await?;
        let drafts = self.shared.client.drafts(&team).await?;
        Ok(drafts
            .into_iter()
            .find(|d| d.channel_id == channel.id && d.root_id == root_id))
    }

    /// A draft as the tools show it.
    pub(crate) fn draft_out(draft: &Draft, channel: &str) -> DraftOut {
        DraftOut {
            channel_id: draft.channel_id.clone(),
            channel: channel.to_owned(),
            root_id: draft.root_id.clone(),
            message: draft.message.clone(),
            update_at: draft.update_at,
            updated: iso_utc(draft.update_at),
        }
    }

    pub(crate) async fn save_draft_impl(
        &self,
        args: SaveDraftArgs,
    ) -> Result<CallToolResult, ToolError> {
        if args.message.trim().is_empty() {
            return Err(ToolError::Tool(
                "the message is empty; pass the draft's text".to_owned(),
            ));
        }
        let (channel, root) = self
            .draft_place(&args.channel, args.root_id.as_deref())
            .await?;
        let label = channel_label(&channel);
        if let Some(existing) = self.find_draft(&channel, &root).await? {
            if existing.message == args.message {
                let draft = Self::draft_out(&existing, &label);
                return done(
                    format!("That draft is already saved in {label}; nothing changed."),
                    &SaveDraftOut {
                        draft,
                        outcome: "unchanged".to_owned(),
                    },
                );
            }
            return Err(ToolError::Tool(format!(
                "there is already a different draft in {label}{}, last changed {}: {}\n\
                 porter never replaces a draft, so nothing changed. Tell the person; if they want it gone, delete_draft deletes it (asking them first), then save again.",
                if root.is_empty() {
                    String::new()
                } else {
                    format!(" (thread {root})")
                },
                iso_utc(existing.update_at),
                quoted(&existing.message)
            )));
        }
        let me = self.my_id().await?;
        let draft = Draft {
            user_id: me,
            channel_id: channel.id.clone(),
            root_id: root,
            message: args.message,
            props: Value::Object(serde_json::Map::new()),
            ..Draft::default()
        };
        let stored = self.shared.client.save_draft(&draft).await?;
        let out = Self::draft_out(&stored, &label);
        done(
            format!(
                "Saved as your draft in {label}; the person can finish and send it in Mattermost."
            ),
            &SaveDraftOut {
                draft: out,
                outcome: "saved".to_owned(),
            },
        )
    }

    pub(crate) async fn list_drafts_impl(
        &self,
        args: ListDraftsArgs,
    ) -> Result<CallToolResult, ToolError> {
        let paging: Paging<usize> = self.paging(
            "list_drafts",
            &args,
            args.limit,
            args.cursor.as_deref(),
            DRAFTS_PAGE,
            DRAFTS_MAX,
        )?;
        let teams: Vec<Team> = match args.team_id.as_deref().filter(|t| !t.trim().is_empty()) {
            Some(team) => vec![self.resolve_team(team).await?],
            None => self.my_teams().await?,
        };
        let mut all: Vec<Draft> = Vec::new();
        for team in &teams {
            for draft in self.shared.client.drafts(&team.id).await? {
                // Direct and group drafts come back with every team.
                if !all
                    .iter()
                    .any(|d| d.channel_id == draft.channel_id && d.root_id == draft.root_id)
                {
                    all.push(draft);
                }
            }
        }
        all.sort_by_key(|d| std::cmp::Reverse(d.update_at));
        let (page, next) = self.slice("list_drafts", &paging, &all);
        let mut drafts = Vec::with_capacity(page.len());
        let mut text = if all.is_empty() {
            "You have no drafts.\n".to_owned()
        } else {
            String::new()
        };
        for draft in &page {
            let label = match self.shared.client.channel(&draft.channel_id).await {
                Ok(channel) => channel_label(&self.named_channel(channel).await),
                Err(_) => draft.channel_id.clone(),
            };
            let out = Self::draft_out(draft, &label);
            let thread = if out.root_id.is_empty() {
                String::new()
            } else {
                format!(" (thread {})", out.root_id)
            };
            let _ = writeln!(
                text,
                "- {}{thread}, {}: {}",
                out.channel,
                out.updated,
                quoted(&out.message)
            );
            drafts.push(out);
        }
        if next.is_some() {
            text.push_str(
                "More drafts follow: pass next_cursor as cursor (with the same other arguments).\n",
            );
        }
        done(
            text,
            &DraftsOut {
                drafts,
                next_cursor: next,
            },
        )
    }

    pub(crate) async fn delete_draft_impl(
        &self,
        args: DraftPlaceArgs,
        state: Option<String>,
        answers: Option<&rmcp::model::InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ToolError> {
        const TOOL: &str = "delete_draft";
        let ask = self.shared.options.ask_before_writes;
        if ask && !can_elicit(context) {
            return Err(ToolError::Rpc(missing_elicitation(TOOL)));
        }
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let input = serde_json::to_value(&args).unwrap_or(Value::Null);
        let digest = input_digest(TOOL, &input);
        // On a retry with the person's answer, the answer comes first: a
        // "no" reads nothing.
        let mut asked: Option<AskedDraft> = None;
        if ask && modern && state.is_some() {
            let bound = ask_binding(TOOL, &digest);
            let opened = self
                .shared
                .asks
                .open_json_with::<AskedDraft>(state.as_deref().unwrap_or_default(), &bound)
                .map_err(|_| {
                    ToolError::Tool(
                        "this answer belongs to another question (the call's arguments differ from those asked about, or the server restarted); nothing was deleted. Call delete_draft again to ask the person afresh.".to_owned(),
                    )
                })?;
            match answer_of(answers, TOOL, NOTHING_DELETED, opened.time_ms, self)? {
                Answer::Yes => asked = Some(opened),
                Answer::No(sentence) => return Err(ToolError::Tool(sentence)),
            }
        }
        let (channel, root) = self
            .draft_place(&args.channel, args.root_id.as_deref())
            .await?;
        let label = channel_label(&channel);
        let place = if root.is_empty() {
            label.clone()
        } else {
            format!("{label}, thread {root}")
        };
        let draft = self.find_draft(&channel, &root).await?.ok_or_else(|| {
            ToolError::Tool(format!(
                "you have no draft in {place}; list_drafts shows your drafts. Nothing was deleted."
            ))
        })?;
        let fingerprint = draft_fingerprint(&draft);
        let changed = || {
            ToolError::Tool(format!(
                "the draft in {place} changed after the person was asked about it; nothing was deleted. Call delete_draft again to ask about it as it is now."
            ))
        };
        if let Some(asked) = &asked
            && (asked.digest != digest || asked.fingerprint != fingerprint)
        {
            return Err(changed());
        }
        if ask && asked.is_none() {
            let title = format!("Delete your draft in {place}");
            let text = format!(
                "{title}?\nThe draft (last changed {}) is deleted for good:\n\n{}",
                iso_utc(draft.update_at),
                draft.message
            );
            if modern {
                let sealed = AskedDraft {
                    digest: digest.clone(),
                    fingerprint: fingerprint.clone(),
                    time_ms: now_ms(),
                };
                let question = delete_draft_form(&title, text)?;
                return self.input_required_with(TOOL, &digest, &sealed, question);
            }
            let question = delete_draft_form(&title, text)?;
            match self
                .ask_now_with(TOOL, question, NOTHING_DELETED, context)
                .await
            {
                Answer::Yes => {}
                Answer::No(sentence) => return Err(ToolError::Tool(sentence)),
            }
            // The question took time: read the draft again just before
            // deleting it.
            let now = self.find_draft(&channel, &root).await?;
            if now.as_ref().map(draft_fingerprint) != Some(fingerprint) {
                return Err(changed());
            }
        }
        self.shared
            .client
            .delete_draft(&channel.id, &draft.root_id)
            .await?;
        let out = Self::draft_out(&draft, &label);
        let result = done(
            format!("Deleted your draft in {place}: {}", quoted(&draft.message)),
            &DeletedDraftOut { deleted: out },
        )?;
        Ok(CallToolResponse::from(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn a_drafts_fingerprint_changes_with_its_text_only() {
        let draft = Draft {
            channel_id: "c".into(),
            message: "hello".into(),
            update_at: 1,
            ..Draft::default()
        };
        let later = Draft {
            update_at: 2,
            ..draft.clone()
        };
        let edited = Draft {
            message: "hello!".into(),
            ..draft.clone()
        };
        assert_eq!(draft_fingerprint(&draft), draft_fingerprint(&later));
        assert_ne!(draft_fingerprint(&draft), draft_fingerprint(&edited));
    }
}
