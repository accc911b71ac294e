//! The tools about drafts: `save_draft` (it changes only the person's own
//! state, so it never asks), `list_drafts`, and `delete_draft` (it asks,
//! bound to the draft's text, and re-checks the draft just before
//! deleting); and the lookups of a thread, a team and a draft's place that
//! other tools of a person's own state use too.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ask::{AskedChange, Looked, Question};
use crate::cursor::canonical_json;
use crate::lookup::ChannelRef;
use crate::paging::{Paging, Sizes, each_once, more_line, paged};
use crate::render::iso_utc;
use porter_mcp::tool::{Hints, ToolError, done};

use crate::render::channel_label;
use crate::server::MattermostServer;
use crate::tools::Reply;
use porter_mattermost::{Channel, Draft};

/// The page sizes of `list_drafts`: 20, at most 100.
pub(crate) const DRAFTS: Sizes = Sizes {
    default: 20,
    max: 100,
};

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

/// A draft to save.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SaveDraftArgs {
    // Where the draft goes, as `delete_draft` names it.
    #[serde(flatten)]
    pub place: DraftPlaceArgs,
    /// The draft's text (Markdown).
    pub message: String,
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

paged!(ListDraftsArgs);

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

method_tools! {
    /// `save_draft`: Save a draft.
    SaveDraft = save_draft_impl(args) {
        name: "save_draft", title: "Save a draft", hints: Hints::write(false, true), args: SaveDraftArgs, out: SaveDraftOut,
        description: "Saves an unsent message as your draft in a channel (or thread), where you can finish and send it yourself. It never replaces a different draft: if one is there, it is shown and nothing changes. Only you see drafts, so porter does not ask the person.",
    }
    /// `list_drafts`: My drafts.
    ListDrafts = list_drafts_impl(args) {
        name: "list_drafts", title: "My drafts", hints: Hints::READ, args: ListDraftsArgs, out: DraftsOut,
        description: "Your unsent drafts, newest first, in one team or all (with your direct and group messages).",
    }
}

method_tools! {
    /// `delete_draft`: Delete a draft.
    DeleteDraft = ask_then_change(tool, args, call, |place: DraftPlaceArgs| place) {
        name: "delete_draft", title: "Delete a draft", hints: Hints::write(true, true), args: DraftPlaceArgs, out: DeletedDraftOut,
        description: "Deletes your draft in a channel (or thread); its text is gone for good.",
    }
}

// ----- how they work -----

/// `FoundDraft` is the draft `delete_draft` deletes: where, and its text
/// (none when there is no draft there).
pub(crate) struct FoundDraft {
    channel: Channel,
    /// The channel's label, and the place with the thread.
    label: String,
    place: String,
    draft: Option<Draft>,
    fingerprint: String,
    /// The refusal when there is no draft to delete.
    missing: Option<String>,
}

impl Looked for FoundDraft {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn nothing_to_do(&self) -> Option<&str> {
        self.missing.as_deref()
    }
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

/// The `delete_draft` question, whose box names its own action.
pub(crate) fn delete_draft_question(found: &FoundDraft) -> Question {
    let title = format!("Delete your draft in {}", found.place);
    let draft = found.draft.clone().unwrap_or_default();
    let text = format!(
        "{title}?\nThe draft (last changed {}) is deleted for good:\n\n{}",
        iso_utc(draft.update_at),
        draft.message
    );
    Question {
        title,
        text,
        label: "Yes, delete this draft",
        about: "Tick to delete the draft shown above for good; leave unticked or decline to keep it.",
    }
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
        Ok((post.thread_root().to_owned(), post.channel_id))
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

    pub(crate) async fn save_draft_impl(&self, args: SaveDraftArgs) -> Reply {
        if args.message.trim().is_empty() {
            return Err(ToolError::Tool(
                "the message is empty; pass the draft's text".to_owned(),
            ));
        }
        let place = &args.place;
        let (channel, root) = self
            .draft_place(&place.channel, place.root_id.as_deref())
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

    pub(crate) async fn list_drafts_impl(&self, args: ListDraftsArgs) -> Reply {
        let paging: Paging<usize> = self.paging("list_drafts", &args, DRAFTS)?;
        let teams = self.teams_for(args.team_id.as_deref()).await?;
        let mut all = each_once(
            &teams,
            |d: &Draft| (d.channel_id.clone(), d.root_id.clone()),
            |team| async move { Ok(self.shared.client.drafts(&team.id).await?) },
        )
        .await?;
        all.sort_by_key(|d| std::cmp::Reverse(d.update_at));
        let (page, next) = self.slice(&paging, &all);
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
            more_line(&mut text, next.as_ref(), "drafts");
        }
        done(
            text,
            &DraftsOut {
                drafts,
                next_cursor: next,
            },
        )
    }

    /// The draft a `delete_draft` call names, with its fingerprint.
    pub(crate) async fn found_draft(&self, args: &DraftPlaceArgs) -> Result<FoundDraft, ToolError> {
        let (channel, root) = self
            .draft_place(&args.channel, args.root_id.as_deref())
            .await?;
        let label = channel_label(&channel);
        let place = if root.is_empty() {
            label.clone()
        } else {
            format!("{label}, thread {root}")
        };
        let draft = self.find_draft(&channel, &root).await?;
        let missing = draft.is_none().then(|| {
            format!(
                "you have no draft in {place}; list_drafts shows your drafts. Nothing was deleted."
            )
        });
        Ok(FoundDraft {
            fingerprint: draft.as_ref().map(draft_fingerprint).unwrap_or_default(),
            channel,
            label,
            place,
            draft,
            missing,
        })
    }
}

/// Deleting the draft at a place: asked about bound to the draft's text,
/// and found again just before deleting.
impl AskedChange for DraftPlaceArgs {
    type Found = FoundDraft;
    const NOTHING_DONE: &'static str = NOTHING_DELETED;

    async fn look(&self, server: &MattermostServer) -> Result<FoundDraft, ToolError> {
        server.found_draft(self).await
    }

    fn question(&self, found: &FoundDraft) -> Question {
        delete_draft_question(found)
    }

    fn changed(&self, _tool: &str, found: &FoundDraft) -> ToolError {
        ToolError::Tool(format!(
            "the draft in {} changed after the person was asked about it; nothing was deleted. Call delete_draft again to ask about it as it is now.",
            found.place
        ))
    }

    async fn make(&self, server: &MattermostServer, found: FoundDraft) -> Reply {
        let FoundDraft {
            channel,
            label,
            place,
            draft,
            ..
        } = found;
        // A draft found again with the same fingerprint is there.
        let draft = draft.unwrap_or_default();
        server
            .shared
            .client
            .delete_draft(&channel.id, &draft.root_id)
            .await?;
        let out = MattermostServer::draft_out(&draft, &label);
        done(
            format!("Deleted your draft in {place}: {}", quoted(&draft.message)),
            &DeletedDraftOut { deleted: out },
        )
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
