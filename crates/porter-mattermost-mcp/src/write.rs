//! The write tools: `create_post`, `dm`, `group_message`.
//!
//! Each asks the person first (unless the operator left approval to the
//! client): a form with one required, default-less `confirm` box, whose
//! message names who posts where, every file and the message. Nothing is
//! read from Mattermost or disk before the client is known to be able to
//! ask. The answer is bound to a digest of the call's input and the
//! fingerprint of what it acts on; just before acting every file is read
//! again and compared, and only the compared bytes are uploaded.
//!
//! Sessions up to 2025-11-25 are asked during the call (`elicitation/create`);
//! on 2026-07-28 the call answers "input required" with a sealed request
//! state, and the client calls again with the person's answer.

use std::fmt::Write as _;

use rmcp::model::{
    CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams, InputRequest,
    InputRequests, InputRequiredResult, ProtocolVersion, SealOptions,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::output::{ChannelOut, PostedOut};
use crate::render::post_text;
use porter_mcp::tool::{Call, Hints, Outcome, Tool, ToolError, done};

use crate::ask::{
    Answer, CONFIRM, answer_of, ask_binding, can_elicit, form_with, input_digest,
    missing_elicitation, now_ms,
};
use crate::outgoing::{self, FileRequest, OutgoingLimits, Prepared, PreparedFile, checks};
use crate::{MattermostServer, Transport};
use porter_mattermost::{Channel, Error, NewPost, UploadFile, User};

/// `NOTHING_POSTED` is what the posting tools say did not happen when the
/// answer is not a yes.
pub(crate) const NOTHING_POSTED: &str = "nothing was posted";
/// `MAX_GROUP_OTHERS` / `MIN_GROUP_OTHERS`: a group message has 3 to 8
/// members, the account included.
pub(crate) const MIN_GROUP_OTHERS: usize = 2;
pub(crate) const MAX_GROUP_OTHERS: usize = 7;

/// A file to attach: `{path}` on the person's machine (stdio only), or
/// `{name, content}` text written for the post.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileArg {
    /// A file on the person's machine: an absolute path or one starting with `~/` (only when porter runs locally over stdio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The name of a file you write for this post (with `content`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The text of a file you write for this post (with `name`; at most 1 MiB; never base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// A post in a channel.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct CreatePostArgs {
    /// The channel: its id or name (`~town-square`, `town-square` or `Town Square`).
    pub channel_id: String,
    /// The team, by id or name, when the channel name is in several teams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// The post to reply to (id or permalink), to post in its thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<String>,
    /// The message (Markdown).
    pub message: String,
    /// Files to attach (at most 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileArg>,
}

/// A direct message.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct DmArgs {
    /// Who to write to (with or without `@`); leave out to write to yourself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The message (Markdown).
    pub message: String,
    /// Files to attach (at most 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileArg>,
}

/// A group message.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct GroupMessageArgs {
    /// Who to write to besides yourself: 2 to 7 usernames (with or without `@`).
    pub usernames: Vec<String>,
    /// The message (Markdown).
    pub message: String,
    /// Files to attach (at most 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileArg>,
}

/// `create_post`: Post in a channel.
pub(crate) struct CreatePost;

impl Tool<MattermostServer> for CreatePost {
    type Args = CreatePostArgs;
    type Out = PostedOut;
    const NAME: &'static str = "create_post";
    const TITLE: &'static str = "Post in a channel";
    const DESCRIPTION: &'static str = "Posts a message in a channel (or replies in a thread with root_id), with files: {path} from the person's machine (local server only) or {name, content} text you write.";
    const HINTS: Hints = Hints::write(false, false);

    async fn call(&self, server: &MattermostServer, args: CreatePostArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let input = serde_json::to_value(&args).unwrap_or(Value::Null);
        let posting = Posting {
            tool: "create_post",
            input,
            message: args.message.clone(),
            files: args.files.clone(),
            state,
            answers,
        };
        server.write(posting, Target::Channel(args), &context).await
    }
}

/// `dm`: Send a direct message.
pub(crate) struct Dm;

impl Tool<MattermostServer> for Dm {
    type Args = DmArgs;
    type Out = PostedOut;
    const NAME: &'static str = "dm";
    const TITLE: &'static str = "Send a direct message";
    const DESCRIPTION: &'static str = "Sends a direct message to one person (or, without username, to yourself), with files: {path} from the person's machine (local server only) or {name, content} text you write.";
    const HINTS: Hints = Hints::write(false, false);

    async fn call(&self, server: &MattermostServer, args: DmArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let input = serde_json::to_value(&args).unwrap_or(Value::Null);
        let posting = Posting {
            tool: "dm",
            input,
            message: args.message.clone(),
            files: args.files.clone(),
            state,
            answers,
        };
        server
            .write(posting, Target::Direct(args.username), &context)
            .await
    }
}

/// `group_message`: Send a group message.
pub(crate) struct GroupMessage;

impl Tool<MattermostServer> for GroupMessage {
    type Args = GroupMessageArgs;
    type Out = PostedOut;
    const NAME: &'static str = "group_message";
    const TITLE: &'static str = "Send a group message";
    const DESCRIPTION: &'static str = "Sends a message to a group of 2 to 7 other people, with files: {path} from the person's machine (local server only) or {name, content} text you write.";
    const HINTS: Hints = Hints::write(false, false);

    async fn call(&self, server: &MattermostServer, args: GroupMessageArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let input = serde_json::to_value(&args).unwrap_or(Value::Null);
        let posting = Posting {
            tool: "group_message",
            input,
            message: args.message.clone(),
            files: args.files.clone(),
            state,
            answers,
        };
        server
            .write(posting, Target::Group(args.usernames), &context)
            .await
    }
}

/// One write call as it arrived.
pub(crate) struct Posting {
    tool: &'static str,
    input: Value,
    message: String,
    files: Vec<FileArg>,
    state: Option<String>,
    answers: Option<rmcp::model::InputResponses>,
}

/// Where a write goes, as the call named it.
pub(crate) enum Target {
    Channel(CreatePostArgs),
    Direct(Option<String>),
    Group(Vec<String>),
}

impl Target {
    /// The destination as given, bound into the files' fingerprint before
    /// anything is looked up.
    fn as_given(&self) -> String {
        match self {
            Target::Channel(args) => format!(
                "channel:{}|team:{}|root:{}",
                args.channel_id.trim(),
                args.team_id.as_deref().unwrap_or_default().trim(),
                args.root_id.as_deref().unwrap_or_default().trim()
            ),
            Target::Direct(name) => format!("dm:{}", name.as_deref().unwrap_or_default().trim()),
            Target::Group(names) => format!("group:{}", names.join(",")),
        }
    }
}

/// Where a write goes, looked up: an existing channel, or the people of a
/// direct or group channel that is created only once the person agreed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Place {
    Channel {
        channel_id: String,
        root_id: String,
        label: String,
    },
    People {
        me: String,
        others: Vec<String>,
        label: String,
    },
}

impl Place {
    fn label(&self) -> &str {
        match self {
            Place::Channel { label, .. } | Place::People { label, .. } => label,
        }
    }
}

/// What the sealed request state carries from the question to the retry.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Asked {
    digest: String,
    fingerprint: String,
    place: Place,
    time_ms: u64,
}

impl MattermostServer {
    pub(crate) async fn write(
        &self,
        call: Posting,
        target: Target,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ToolError> {
        let ask = self.shared.options.ask_before_writes;
        // 1. Can the person be asked at all? Decided from the handshake
        //    alone, before anything is read from Mattermost or disk.
        if ask && !can_elicit(context) {
            return Err(ToolError::Rpc(missing_elicitation(call.tool)));
        }
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let digest = input_digest(call.tool, &call.input);
        // 2. On a retry with the person's answer, the answer comes first:
        //    a "no" reads nothing.
        let mut asked: Option<Asked> = None;
        if ask && modern && call.state.is_some() {
            let opened = self.open_asked(&call, &digest)?;
            match answer_of(
                call.answers.as_ref(),
                call.tool,
                NOTHING_POSTED,
                opened.time_ms,
                self,
            )? {
                Answer::Yes => asked = Some(opened),
                Answer::No(sentence) => return Err(ToolError::Tool(sentence)),
            }
        }
        // 3. Every rule about the message and the files, before any request.
        if call.message.trim().is_empty() && call.files.is_empty() {
            return Err(ToolError::Tool(
                "the message is empty and there are no files; pass the text to post. Nothing was posted.".to_owned(),
            ));
        }
        let requests = file_requests(&call.files)?;
        let local = self.shared.options.transport == Transport::Stdio;
        let given = target.as_given();
        let prepared = self.prepare(&requests, local, &given).await?;
        // 4. Look the destination up.
        let place = self.place(&target).await?;
        self.check_length(&call.message).await?;
        let checked = self.check_mentions(&call.message, &place).await?;
        if let Some(asked) = &asked
            && (asked.digest != digest
                || asked.fingerprint != prepared.fingerprint
                || asked.place != place)
        {
            return Err(ToolError::Tool(format!(
                "what {} would post is not what the person was asked about (a file or the destination changed); nothing was posted. Call {} again to ask about it as it is now.",
                call.tool, call.tool
            )));
        }
        // 5. Ask, unless asked already or asking is left to the client.
        if ask && asked.is_none() {
            let title = action_title(call.tool, &place);
            let who = self.me().await.map(|u| u.username).unwrap_or_default();
            let mut who_where = format!("@{who} {}", place.label());
            for note in &checked.notes {
                who_where.push('\n');
                who_where.push_str(note);
            }
            let text = outgoing::question(&title, &who_where, &prepared, &call.message);
            if modern {
                let sealed = Asked {
                    digest: digest.clone(),
                    fingerprint: prepared.fingerprint.clone(),
                    place: place.clone(),
                    time_ms: now_ms(),
                };
                return self.input_required(call.tool, &digest, &sealed, &title, text);
            }
            match self.ask_now(call.tool, &title, text, context).await? {
                Answer::Yes => {}
                Answer::No(sentence) => return Err(ToolError::Tool(sentence)),
            }
        }
        // 6. Act: read every file again, compare, upload exactly those
        //    bytes, open the channel only now, post.
        let bytes = self.reread(prepared, requests, local, given).await?;
        let result = self.act(call.tool, &place, &call.message, bytes).await?;
        Ok(CallToolResponse::from(result))
    }
    pub(crate) async fn prepare(
        &self,
        requests: &[FileRequest],
        local: bool,
        destination: &str,
    ) -> Result<Prepared, ToolError> {
        let requests = requests.to_vec();
        let home = self.shared.options.home.clone();
        let token = self.shared.token.expose().to_owned();
        let destination = destination.to_owned();
        tokio::task::spawn_blocking(move || {
            outgoing::prepare(
                &requests,
                local,
                &home,
                &token,
                &destination,
                &OutgoingLimits::default(),
            )
        })
        .await
        .map_err(|e| ToolError::Tool(format!("checking the files stopped unexpectedly: {e}")))?
        .map_err(|refusal| ToolError::Tool(refusal.to_string()))
    }
    pub(crate) async fn reread(
        &self,
        prepared: Prepared,
        requests: Vec<FileRequest>,
        local: bool,
        destination: String,
    ) -> Result<Vec<(PreparedFile, Vec<u8>)>, ToolError> {
        let home = self.shared.options.home.clone();
        let token = self.shared.token.expose().to_owned();
        tokio::task::spawn_blocking(move || {
            outgoing::reread(
                &prepared,
                &requests,
                local,
                &home,
                &token,
                &destination,
                &OutgoingLimits::default(),
            )
        })
        .await
        .map_err(|e| ToolError::Tool(format!("reading the files again stopped unexpectedly: {e}")))?
        .map_err(|refusal| ToolError::Tool(refusal.to_string()))
    }
    /// Looks the destination up without changing anything.
    pub(crate) async fn place(&self, target: &Target) -> Result<Place, ToolError> {
        match target {
            Target::Channel(args) => {
                let (channel, team) = self
                    .resolve_channel(&args.channel_id, args.team_id.as_deref())
                    .await?;
                let mut root_id = String::new();
                if let Some(root) = args.root_id.as_deref().filter(|r| !r.trim().is_empty()) {
                    let id = Self::post_id(root)?;
                    let post = self.shared.client.post(&id).await?;
                    if post.channel_id != channel.id {
                        return Err(ToolError::Tool(format!(
                            "post {id} is in another channel than {}; pass that post's channel as channel_id, or leave root_id out. Nothing was posted.",
                            args.channel_id
                        )));
                    }
                    root_id = if post.root_id.is_empty() {
                        post.id
                    } else {
                        post.root_id
                    };
                }
                let mut label = format!("posts in {}", channel_label(&channel));
                if let Some(team) = team {
                    let _ = write!(label, " (team {})", team.name);
                }
                if !root_id.is_empty() {
                    let _ = write!(label, ", replying in the thread of post {root_id}");
                }
                Ok(Place::Channel {
                    channel_id: channel.id,
                    root_id,
                    label,
                })
            }
            Target::Direct(name) => {
                let me = self.me().await?;
                let other = match name.as_deref().map(|n| n.trim().trim_start_matches('@')) {
                    None | Some("") => me.clone(),
                    Some(name) => self.active_user(name).await?,
                };
                let label = if other.id == me.id {
                    "writes a direct message to themself".to_owned()
                } else {
                    format!("writes a direct message to @{}", other.username)
                };
                Ok(Place::People {
                    me: me.id,
                    others: vec![other.id],
                    label,
                })
            }
            Target::Group(names) => {
                let me = self.me().await?;
                let mut others: Vec<User> = Vec::new();
                for name in names {
                    let name = name.trim().trim_start_matches('@');
                    if name.is_empty() || name.eq_ignore_ascii_case(&me.username) {
                        continue;
                    }
                    if others.iter().any(|u| u.username.eq_ignore_ascii_case(name)) {
                        continue;
                    }
                    others.push(self.active_user(name).await?);
                }
                if !(MIN_GROUP_OTHERS..=MAX_GROUP_OTHERS).contains(&others.len()) {
                    return Err(ToolError::Tool(format!(
                        "a group message goes to {MIN_GROUP_OTHERS} to {MAX_GROUP_OTHERS} other people, and {} were named; use dm for one person. Nothing was posted.",
                        others.len()
                    )));
                }
                let names: Vec<String> =
                    others.iter().map(|u| format!("@{}", u.username)).collect();
                Ok(Place::People {
                    me: me.id,
                    others: others.into_iter().map(|u| u.id).collect(),
                    label: format!("writes a group message to {}", names.join(", ")),
                })
            }
        }
    }
    /// An active account by username; a deactivated or unknown one is
    /// refused with what to do.
    pub(crate) async fn active_user(&self, name: &str) -> Result<User, ToolError> {
        match self.shared.client.user_by_username(name).await {
            Ok(user) if user.is_active() => Ok(user),
            Ok(user) => Err(ToolError::Tool(format!(
                "@{} is deactivated and cannot be messaged. Nothing was posted.",
                user.username
            ))),
            Err(Error::NotFound { .. }) => Err(ToolError::Tool(format!(
                "there is no account named @{name}; search_users finds accounts by part of a name. Nothing was posted."
            ))),
            Err(other) => Err(other.into()),
        }
    }
    /// The message checks (every mention an account, broadcasts counted)
    /// for where the message goes.
    pub(crate) async fn check_mentions(
        &self,
        message: &str,
        place: &Place,
    ) -> Result<checks::MessageCheck, ToolError> {
        let reach = match place {
            Place::Channel { channel_id, .. } => checks::Reach::Channel(channel_id.clone()),
            Place::People { others, .. } => checks::Reach::People(others.len()),
        };
        checks::check_message(&self.shared.client, message, &reach, "Nothing was posted.")
            .await
            .map_err(ToolError::Tool)
    }
    /// Refuses a message longer than the server takes, with both numbers.
    pub(super) async fn check_length(&self, message: &str) -> Result<(), ToolError> {
        let length = message.chars().count() as u64;
        if let Ok(config) = self.shared.client.client_config().await
            && let Some(max) = config.max_post_size
            && length > max
        {
            return Err(ToolError::Tool(format!(
                "the message is {length} characters and this Mattermost takes at most {max}; shorten it or split it. Nothing was posted."
            )));
        }
        Ok(())
    }
    /// The retry's sealed state, opened against this call's input.
    pub(crate) fn open_asked(&self, call: &Posting, digest: &str) -> Result<Asked, ToolError> {
        let bound = ask_binding(call.tool, digest);
        let state = call.state.as_deref().unwrap_or_default();
        self.shared
            .asks
            .open_json_with::<Asked>(state, &bound)
            .map_err(|_| {
                ToolError::Tool(format!(
                    "this answer belongs to another question (the call's arguments differ from those asked about, or the server restarted); nothing was posted. Call {} again to ask the person afresh.",
                    call.tool
                ))
            })
    }
    /// The input-required result of 2026-07-28: the question, and the
    /// sealed state the client hands back with the answer.
    pub(crate) fn input_required(
        &self,
        tool: &str,
        digest: &str,
        asked: &Asked,
        title: &str,
        text: String,
    ) -> Result<CallToolResponse, ToolError> {
        self.input_required_with(tool, digest, asked, post_form(title, text)?)
    }
    /// Seals `asked` (bound to `tool` and the call's input `digest`) and
    /// returns the input-required result that puts `question` to the
    /// person; every asking tool uses it under 2026-07-28.
    pub(crate) fn input_required_with<S: serde::Serialize>(
        &self,
        tool: &str,
        digest: &str,
        asked: &S,
        question: ElicitRequestParams,
    ) -> Result<CallToolResponse, ToolError> {
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
        Ok(CallToolResponse::from(InputRequiredResult::new(
            Some(requests),
            Some(sealed),
        )))
    }
    /// Asks about a post during the call (sessions up to 2025-11-25).
    pub(crate) async fn ask_now(
        &self,
        tool: &str,
        title: &str,
        text: String,
        context: &RequestContext<RoleServer>,
    ) -> Result<Answer, ToolError> {
        Ok(self
            .ask_now_with(tool, post_form(title, text)?, NOTHING_POSTED, context)
            .await)
    }
    /// Creates the channel if needed, uploads every file one at a time,
    /// and posts.
    pub(crate) async fn act(
        &self,
        tool: &str,
        place: &Place,
        message: &str,
        files: Vec<(PreparedFile, Vec<u8>)>,
    ) -> Result<CallToolResult, ToolError> {
        let client = &self.shared.client;
        let (channel, root_id) = match place {
            Place::Channel {
                channel_id,
                root_id,
                ..
            } => (client.channel(channel_id).await?, root_id.clone()),
            Place::People { me, others, .. } => {
                let channel = if others.len() == 1 {
                    client.direct_channel(me, &others[0]).await?
                } else {
                    let mut ids = vec![me.clone()];
                    ids.extend(others.iter().cloned());
                    client.group_channel(&ids).await?
                };
                (channel, String::new())
            }
        };
        let mut file_ids = Vec::with_capacity(files.len());
        for (file, bytes) in files {
            let upload = UploadFile::new(file.name.clone(), file.mime_type.clone(), bytes);
            let infos = client
                .upload_files(&channel.id, std::slice::from_ref(&upload))
                .await
                .map_err(|e| {
                    ToolError::Tool(format!(
                        "{e}. {} file(s) were uploaded but not posted; nothing was posted.",
                        file_ids.len()
                    ))
                })?;
            file_ids.extend(infos.into_iter().map(|i| i.id));
        }
        let mut post = NewPost::new(channel.id.clone(), message);
        post.root_id = root_id;
        post.file_ids = file_ids;
        if self.shared.options.mark_ai_generated {
            let me = self.me().await.map(|u| u.id).unwrap_or_default();
            post.props
                .insert("ai_generated_by".to_owned(), Value::String(me));
        }
        let created = client.create_post(&post).await?;
        let post = self.post_out(created).await;
        let channel = ChannelOut::from(&self.named_channel(channel).await);
        let text = format!(
            "Posted with {tool}: {}\n{}",
            post.permalink,
            post_text(&post)
        );
        done(text, &PostedOut { post, channel })
    }
}

/// The posting tools' question: one required boolean, no default, so a
/// client that approves everything cannot tick it unseen. Only
/// `create_post`, `dm` and `group_message` use it: every other asking tool
/// names its own action in its box (`form_with`).
pub(crate) fn post_form(title: &str, text: String) -> Result<ElicitRequestParams, ToolError> {
    form_with(
        title,
        text,
        "Yes, post this",
        "Tick to post exactly what is shown above; leave unticked or decline to post nothing.",
    )
}

/// The files as `outgoing` takes them; a file that is neither `{path}`
/// nor `{name, content}` is refused before anything is read.
pub(crate) fn file_requests(files: &[FileArg]) -> Result<Vec<FileRequest>, ToolError> {
    files
        .iter()
        .enumerate()
        .map(|(i, f)| match (&f.path, &f.name, &f.content) {
            (Some(path), None, None) => Ok(FileRequest::Path { path: path.clone() }),
            (None, Some(name), Some(content)) => Ok(FileRequest::Written {
                name: name.clone(),
                content: content.clone(),
            }),
            _ => Err(ToolError::Tool(format!(
                "file {} must be either {{\"path\": …}} or {{\"name\": …, \"content\": …}}; nothing was posted, and the person was not asked.",
                i + 1
            ))),
        })
        .collect()
}

/// The question's title: the action and the place.
pub(crate) fn action_title(tool: &str, place: &Place) -> String {
    let label = place.label();
    if tool == "create_post" {
        format!("Post in {}", label.trim_start_matches("posts in "))
    } else {
        let mut title = label.trim_start_matches("writes ").to_owned();
        if let Some(first) = title.get(0..1) {
            title.replace_range(0..1, &first.to_uppercase());
        }
        format!(
            "Send {}",
            title.trim_start_matches("A ").trim_start_matches("a ")
        )
        .replace("Send direct", "Send a direct")
        .replace("Send group", "Send a group")
    }
}

pub(crate) fn channel_label(channel: &Channel) -> String {
    match channel.kind {
        porter_mattermost::ChannelType::Direct | porter_mattermost::ChannelType::Group => {
            format!("the conversation {}", channel.display_name)
        }
        _ => format!("~{}", channel.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn titles_name_the_action_and_the_place() {
        let channel = Place::Channel {
            channel_id: "c".into(),
            root_id: String::new(),
            label: "posts in ~town-square (team porter)".into(),
        };
        assert_eq!(
            action_title("create_post", &channel),
            "Post in ~town-square (team porter)"
        );
        let dm = Place::People {
            me: "m".into(),
            others: vec!["b".into()],
            label: "writes a direct message to @bob".into(),
        };
        assert_eq!(action_title("dm", &dm), "Send a direct message to @bob");
        let group = Place::People {
            me: "m".into(),
            others: vec!["b".into(), "c".into()],
            label: "writes a group message to @bob, @carol".into(),
        };
        assert_eq!(
            action_title("group_message", &group),
            "Send a group message to @bob, @carol"
        );
    }
    #[test]
    fn a_file_is_a_path_or_a_name_with_content() {
        let ok = [
            FileArg {
                path: Some("~/a.txt".into()),
                ..FileArg::default()
            },
            FileArg {
                name: Some("n.md".into()),
                content: Some("x".into()),
                ..FileArg::default()
            },
        ];
        assert_eq!(file_requests(&ok).unwrap().len(), 2);
        for bad in [
            FileArg::default(),
            FileArg {
                path: Some("/a".into()),
                name: Some("n".into()),
                ..FileArg::default()
            },
            FileArg {
                name: Some("n".into()),
                ..FileArg::default()
            },
        ] {
            assert!(file_requests(&[bad]).is_err());
        }
    }
}
