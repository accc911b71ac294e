//! The emulator's in-memory server: everything a seed defines plus what the
//! API has created since, and the rules that decide who may see what.

pub(crate) mod oauth;
pub(crate) mod own;

use std::collections::HashMap;
use std::fmt::Write as _;

use base64::Engine as _;
use bytes::Bytes;
use serde_json::{Value, json};

use self::oauth::OAuthState;
use self::own::OwnState;
use crate::model::{
    Channel, ChannelMember, FileInfo, Ids, Reaction, StoredPost, Team, User, extension_of,
    mime_for_extension, now_millis,
};
use crate::seed::{Seed, SeedConfig, SeedError, SeedFile};

/// `SEED_EPOCH_MS` is when seeded objects without a time were made, and the
/// first post's time when a seed gives none: 2026-03-02 09:00 UTC.
pub(crate) const SEED_EPOCH_MS: i64 = 1_772_442_000_000;

/// `MAX_FILES_PER_POST` is how many files one post may carry, as on a
/// Mattermost server.
pub(crate) const MAX_FILES_PER_POST: usize = 10;

/// `StoredFile` is an uploaded file: what the server knows about it and
/// its bytes.
#[derive(Clone, Debug)]
pub(crate) struct StoredFile {
    pub info: FileInfo,
    pub bytes: Bytes,
}

/// `State` is the whole server. Lookups scan vectors: the emulator holds
/// hundreds of objects, not millions, and order of creation is kept for free.
#[derive(Debug)]
pub(crate) struct State {
    pub config: SeedConfig,
    /// The URL the server is reachable at, once started.
    pub site_url: String,
    pub ids: Ids,
    pub users: Vec<User>,
    /// Token → user id.
    pub tokens: HashMap<String, String>,
    /// User id → the first token the seed gave them.
    pub first_tokens: HashMap<String, String>,
    pub teams: Vec<Team>,
    /// (team id, user id) pairs.
    pub team_members: Vec<(String, String)>,
    pub channels: Vec<Channel>,
    pub members: Vec<ChannelMember>,
    pub posts: Vec<StoredPost>,
    post_index: HashMap<String, usize>,
    pub files: Vec<StoredFile>,
    file_index: HashMap<String, usize>,
    /// User id → presence; someone never set is offline.
    pub statuses: std::collections::BTreeMap<String, crate::model::Status>,
    /// Emoji reactions on posts, in the order they were made.
    pub reactions: Vec<Reaction>,
    /// Each person's own state: preferences, drafts, reminders, logins.
    pub own: OwnState,
    /// OAuth apps, codes and the expiry of OAuth access tokens.
    pub oauth: OAuthState,
}

impl State {
    /// Builds the server a seed describes, checking that every name it uses
    /// is defined and that it keeps the server's own rules.
    pub(crate) fn from_seed(seed: &Seed) -> Result<State, SeedError> {
        let mut state = State {
            config: seed.config.clone(),
            site_url: seed.config.site_url.trim_end_matches('/').to_owned(),
            ids: Ids::new(),
            users: Vec::new(),
            tokens: HashMap::new(),
            first_tokens: HashMap::new(),
            teams: Vec::new(),
            team_members: Vec::new(),
            channels: Vec::new(),
            members: Vec::new(),
            posts: Vec::new(),
            post_index: HashMap::new(),
            files: Vec::new(),
            file_index: HashMap::new(),
            statuses: std::collections::BTreeMap::new(),
            reactions: Vec::new(),
            own: OwnState::default(),
            oauth: OAuthState::from_seed(seed),
        };
        state.seed_users(seed)?;
        state.seed_teams_and_channels(seed)?;
        state.seed_posts(seed)?;
        state.own = OwnState::from_seed(seed, &mut state.users);
        state.ids.go_random();
        Ok(state)
    }

    /// Adds the seed's users and their tokens.
    fn seed_users(&mut self, seed: &Seed) -> Result<(), SeedError> {
        for (n, person) in seed.users.iter().enumerate() {
            let username = person.username.trim().to_owned();
            let valid = !username.is_empty()
                && username.len() <= 64
                && username.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '-' | '_')
                });
            if !valid {
                return Err(SeedError::Invalid(format!(
                    "the username {username:?} is not valid: use lowercase letters, digits, '.', '-' and '_'"
                )));
            }
            if self.user_by_name(&username).is_some() {
                return Err(SeedError::Invalid(format!(
                    "the username {username} is defined twice"
                )));
            }
            let id = self.ids.next();
            let at = SEED_EPOCH_MS - 30 * 86_400_000 + i64::try_from(n).unwrap_or(0) * 1000;
            let email = if person.email.is_empty() {
                format!("{username}@example.com")
            } else {
                person.email.clone()
            };
            self.users.push(User {
                id: id.clone(),
                create_at: at,
                update_at: at,
                delete_at: if person.deleted { SEED_EPOCH_MS } else { 0 },
                username: username.clone(),
                auth_service: String::new(),
                email,
                email_verified: true,
                nickname: person.nickname.clone(),
                first_name: person.first_name.clone(),
                last_name: person.last_name.clone(),
                position: person.position.clone(),
                roles: if person.roles.is_empty() {
                    "system_user".to_owned()
                } else {
                    person.roles.clone()
                },
                notify_props: json!({
                    "channel": "true", "comments": "never", "desktop": "mention",
                    "desktop_sound": "true", "email": "true", "first_name": "false",
                    "mention_keys": "", "push": "mention", "push_status": "away"
                }),
                last_password_update: at,
                locale: "en".to_owned(),
                timezone: json!({
                    "automaticTimezone": "", "manualTimezone": "", "useAutomaticTimezone": "true"
                }),
                disable_welcome_email: false,
                props: serde_json::Map::new(),
            });
            for token in person.token.iter().chain(&person.tokens) {
                if token.is_empty() {
                    return Err(SeedError::Invalid(format!(
                        "the user {username} has an empty token"
                    )));
                }
                self.first_tokens
                    .entry(id.clone())
                    .or_insert_with(|| token.clone());
                if self.tokens.insert(token.clone(), id.clone()).is_some() {
                    return Err(SeedError::Invalid(format!(
                        "a token of {username} is also given to another user"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Looks up a seed username, for error messages that name it.
    fn seed_user_id(&self, username: &str, context: &str) -> Result<String, SeedError> {
        self.user_by_name(username)
            .map(|u| u.id.clone())
            .ok_or_else(|| {
                SeedError::Invalid(format!(
                    "{context} names the user {username}, who is not in `users`"
                ))
            })
    }

    /// Adds teams, their channels, and the direct and group channels.
    fn seed_teams_and_channels(&mut self, seed: &Seed) -> Result<(), SeedError> {
        for team in &seed.teams {
            if team.name.is_empty() || self.team_by_name(&team.name).is_some() {
                return Err(SeedError::Invalid(format!(
                    "the team name {:?} is empty or defined twice",
                    team.name
                )));
            }
            let id = self.ids.next();
            self.teams.push(Team {
                id: id.clone(),
                create_at: SEED_EPOCH_MS - 20 * 86_400_000,
                update_at: SEED_EPOCH_MS - 20 * 86_400_000,
                delete_at: 0,
                display_name: team.display_name.clone(),
                name: team.name.clone(),
                description: team.description.clone(),
                email: String::new(),
                kind: "O".to_owned(),
                company_name: String::new(),
                allowed_domains: String::new(),
                invite_id: self.ids.next(),
                allow_open_invite: false,
                last_team_icon_update: 0,
                scheme_id: None,
                group_constrained: None,
                policy_id: None,
                cloud_limits_archived: false,
            });
            for member in &team.members {
                let user = self.seed_user_id(member, &format!("the team {}", team.name))?;
                if !self.is_team_member(&id, &user) {
                    self.team_members.push((id.clone(), user));
                }
            }
        }
        for channel in &seed.channels {
            let context = format!("the channel {}", channel.name);
            let team_id = self
                .team_by_name(&channel.team)
                .map(|t| t.id.clone())
                .ok_or_else(|| {
                    SeedError::Invalid(format!(
                        "{context} is in the team {:?}, which is not in `teams`",
                        channel.team
                    ))
                })?;
            if channel.kind != "O" && channel.kind != "P" {
                return Err(SeedError::Invalid(format!(
                    "{context} has type {:?}; use O (public) or P (private)",
                    channel.kind
                )));
            }
            if channel.name.is_empty() || self.channel_by_name(&team_id, &channel.name).is_some() {
                return Err(SeedError::Invalid(format!(
                    "{context} is unnamed or defined twice in its team"
                )));
            }
            let mut user_ids = Vec::new();
            for member in &channel.members {
                let user = self.seed_user_id(member, &context)?;
                if !self.is_team_member(&team_id, &user) {
                    return Err(SeedError::Invalid(format!(
                        "{context} lists {member}, who is not in the team {}",
                        channel.team
                    )));
                }
                user_ids.push(user);
            }
            let creator = user_ids.first().cloned().unwrap_or_default();
            let id = self.insert_channel(
                &team_id,
                &channel.kind,
                &channel.name,
                &channel.display_name,
                &creator,
                SEED_EPOCH_MS - 10 * 86_400_000,
            );
            if let Some(made) = self.channels.last_mut() {
                made.purpose.clone_from(&channel.purpose);
                made.header.clone_from(&channel.header);
                if channel.archived {
                    made.delete_at = SEED_EPOCH_MS - 86_400_000;
                }
            }
            for user in user_ids {
                self.add_member(&id, &user);
            }
        }
        for pair in &seed.direct_channels {
            if pair.len() != 2 {
                return Err(SeedError::Invalid(format!(
                    "the direct channel {pair:?} must name exactly two users"
                )));
            }
            let a = self.seed_user_id(&pair[0], "a direct channel")?;
            let b = self.seed_user_id(&pair[1], "a direct channel")?;
            self.direct_channel(&a, &b, SEED_EPOCH_MS - 10 * 86_400_000);
        }
        for group in &seed.group_channels {
            let mut ids = Vec::new();
            for name in group {
                ids.push(self.seed_user_id(name, "a group channel")?);
            }
            ids.sort();
            ids.dedup();
            if !(3..=8).contains(&ids.len()) {
                return Err(SeedError::Invalid(format!(
                    "the group channel {group:?} must name 3 to 8 different users"
                )));
            }
            self.group_channel(&ids, SEED_EPOCH_MS - 10 * 86_400_000);
        }
        Ok(())
    }

    /// Finds the channel a seed post names (see [`crate::seed::SeedPost`]).
    fn seed_channel_id(&self, reference: &str) -> Result<String, SeedError> {
        if let Some(list) = reference.strip_prefix('@') {
            let mut ids = Vec::new();
            for name in list.split(',').map(str::trim) {
                ids.push(self.seed_user_id(name, &format!("the post channel {reference}"))?);
            }
            ids.sort();
            ids.dedup();
            let found = self.channels.iter().find(|c| {
                c.is_direct_or_group() && {
                    let mut members = self.channel_member_ids(&c.id);
                    members.sort();
                    members == ids
                }
            });
            return found.map(|c| c.id.clone()).ok_or_else(|| {
                SeedError::Invalid(format!(
                    "no direct or group channel has exactly the members {list}; add it to `direct_channels` or `group_channels`"
                ))
            });
        }
        let (team, name) = match reference.split_once('/') {
            Some((team, name)) => (Some(team), name),
            None => (None, reference),
        };
        let found: Vec<&Channel> = self
            .channels
            .iter()
            .filter(|c| {
                c.name == name
                    && team.is_none_or(|t| self.team(&c.team_id).is_some_and(|tm| tm.name == t))
            })
            .collect();
        match found.as_slice() {
            [one] => Ok(one.id.clone()),
            [] => Err(SeedError::Invalid(format!(
                "a post is in the channel {reference}, which is not in `channels`"
            ))),
            _ => Err(SeedError::Invalid(format!(
                "a post is in the channel {reference}, a name several teams use; write team/name"
            ))),
        }
    }

    /// Adds the seed's posts and their files.
    fn seed_posts(&mut self, seed: &Seed) -> Result<(), SeedError> {
        let mut keys: HashMap<&str, String> = HashMap::new();
        let mut last_at = SEED_EPOCH_MS - 60_000;
        for item in &seed.posts {
            let channel_id = self.seed_channel_id(&item.channel)?;
            let user_id = self.seed_user_id(&item.user, "a post")?;
            if !self.is_channel_member(&channel_id, &user_id) {
                return Err(SeedError::Invalid(format!(
                    "{} posts in {}, where they are not a member",
                    item.user, item.channel
                )));
            }
            let create_at = match &item.create_at {
                Some(time) => time.millis().ok_or_else(|| {
                    SeedError::Invalid(format!(
                        "the post {:?} has a time that is neither milliseconds nor RFC 3339",
                        item.message
                    ))
                })?,
                None => last_at + 60_000,
            };
            last_at = create_at;
            let root_id = match &item.root {
                None => String::new(),
                Some(key) => {
                    let root = keys.get(key.as_str()).cloned().ok_or_else(|| {
                        SeedError::Invalid(format!(
                            "a reply names the root {key:?}, which no earlier post has as its key"
                        ))
                    })?;
                    if self.post(&root).is_none_or(|p| p.channel_id != channel_id) {
                        return Err(SeedError::Invalid(format!(
                            "a reply to {key:?} is in another channel than its root"
                        )));
                    }
                    root
                }
            };
            if item.message.chars().count() as u64 > self.config.max_post_size {
                return Err(SeedError::Invalid(format!(
                    "a post is longer than max_post_size ({})",
                    self.config.max_post_size
                )));
            }
            if item.files.len() > MAX_FILES_PER_POST {
                return Err(SeedError::Invalid(format!(
                    "a post carries {} files; a post carries at most {MAX_FILES_PER_POST}",
                    item.files.len()
                )));
            }
            let mut file_ids = Vec::new();
            for file in &item.files {
                let bytes = seed_file_bytes(file)?;
                file_ids.push(self.add_file(&user_id, &channel_id, &file.name, bytes, create_at));
            }
            let props = item.props.clone().unwrap_or_else(|| json!({}));
            let id = self.add_post(
                &user_id,
                &channel_id,
                &root_id,
                item.message.clone(),
                props,
                file_ids,
                create_at,
                String::new(),
            );
            if let Some(key) = &item.key
                && keys.insert(key.as_str(), id).is_some()
            {
                return Err(SeedError::Invalid(format!(
                    "the post key {key:?} is used twice"
                )));
            }
        }
        Ok(())
    }

    /// Makes a channel and returns its id.
    fn insert_channel(
        &mut self,
        team_id: &str,
        kind: &str,
        name: &str,
        display_name: &str,
        creator: &str,
        at: i64,
    ) -> String {
        let id = self.ids.next();
        self.channels.push(Channel {
            id: id.clone(),
            create_at: at,
            update_at: at,
            delete_at: 0,
            team_id: team_id.to_owned(),
            kind: kind.to_owned(),
            display_name: display_name.to_owned(),
            name: name.to_owned(),
            header: String::new(),
            purpose: String::new(),
            last_post_at: at,
            total_msg_count: 0,
            extra_update_at: 0,
            creator_id: creator.to_owned(),
            scheme_id: None,
            props: None,
            group_constrained: None,
            shared: None,
            total_msg_count_root: 0,
            policy_id: None,
            last_root_post_at: at,
        });
        id
    }

    /// Adds a user to a channel (no-op when already there).
    fn add_member(&mut self, channel_id: &str, user_id: &str) {
        if self.is_channel_member(channel_id, user_id) {
            return;
        }
        let at = self
            .channel(channel_id)
            .map_or(SEED_EPOCH_MS, |c| c.create_at);
        self.members.push(ChannelMember {
            channel_id: channel_id.to_owned(),
            user_id: user_id.to_owned(),
            roles: "channel_user".to_owned(),
            last_viewed_at: at,
            msg_count: 0,
            mention_count: 0,
            mention_count_root: 0,
            urgent_mention_count: 0,
            msg_count_root: 0,
            notify_props: json!({
                "desktop": "default", "email": "default", "ignore_channel_mentions": "default",
                "mark_unread": "all", "push": "default", "channel_auto_follow_threads": "off"
            }),
            last_update_at: at,
            scheme_guest: false,
            scheme_user: true,
            scheme_admin: false,
            explicit_roles: String::new(),
        });
    }

    /// Returns the direct channel of two users, making it when needed; the
    /// second value tells whether it was made now.
    pub(crate) fn direct_channel(&mut self, a: &str, b: &str, at: i64) -> (String, bool) {
        let (low, high) = if a <= b { (a, b) } else { (b, a) };
        let name = format!("{low}__{high}");
        if let Some(found) = self
            .channels
            .iter()
            .find(|c| c.kind == "D" && c.name == name)
        {
            return (found.id.clone(), false);
        }
        let id = self.insert_channel("", "D", &name, "", a, at);
        self.add_member(&id, low);
        self.add_member(&id, high);
        (id, true)
    }

    /// Returns the group channel of exactly these (sorted, distinct) users,
    /// making it when needed.
    pub(crate) fn group_channel(&mut self, sorted_ids: &[String], at: i64) -> (String, bool) {
        let name = group_channel_name(sorted_ids);
        if let Some(found) = self
            .channels
            .iter()
            .find(|c| c.kind == "G" && c.name == name)
        {
            return (found.id.clone(), false);
        }
        let mut usernames: Vec<String> = sorted_ids
            .iter()
            .filter_map(|id| self.user(id).map(|u| u.username.clone()))
            .collect();
        usernames.sort();
        let display = usernames.join(", ");
        let creator = sorted_ids.first().cloned().unwrap_or_default();
        let id = self.insert_channel("", "G", &name, &display, &creator, at);
        for user in sorted_ids {
            self.add_member(&id, user);
        }
        (id, true)
    }

    /// Stores an uploaded (or seeded) file and returns its id.
    pub(crate) fn add_file(
        &mut self,
        user_id: &str,
        channel_id: &str,
        name: &str,
        bytes: Bytes,
        at: i64,
    ) -> String {
        let id = self.ids.next();
        let extension = extension_of(name);
        let mime_type = mime_for_extension(&extension).to_owned();
        let (width, height) = if mime_type.starts_with("image/") {
            image::ImageReader::new(std::io::Cursor::new(&bytes))
                .with_guessed_format()
                .ok()
                .and_then(|r| r.into_dimensions().ok())
                .unwrap_or((0, 0))
        } else {
            (0, 0)
        };
        let info = FileInfo {
            id: id.clone(),
            user_id: user_id.to_owned(),
            post_id: String::new(),
            channel_id: channel_id.to_owned(),
            create_at: at,
            update_at: at,
            delete_at: 0,
            name: name.to_owned(),
            extension,
            size: bytes.len() as u64,
            mime_type,
            width,
            height,
            has_preview_image: width > 0 && height > 0,
            mini_preview: None,
            archived: false,
        };
        self.file_index.insert(id.clone(), self.files.len());
        self.files.push(StoredFile { info, bytes });
        id
    }

    /// Stores a post, attaches its files, updates its channel's counters,
    /// and returns its id. The caller has checked every rule.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_post(
        &mut self,
        user_id: &str,
        channel_id: &str,
        root_id: &str,
        message: String,
        props: Value,
        file_ids: Vec<String>,
        create_at: i64,
        pending_post_id: String,
    ) -> String {
        let id = self.ids.next();
        for file_id in &file_ids {
            if let Some(&at) = self.file_index.get(file_id) {
                self.files[at].info.post_id.clone_from(&id);
            }
        }
        let hashtags: Vec<&str> = message
            .split_whitespace()
            .filter(|w| w.len() > 1 && w.starts_with('#'))
            .collect();
        self.post_index.insert(id.clone(), self.posts.len());
        self.posts.push(StoredPost {
            id: id.clone(),
            create_at,
            update_at: create_at,
            edit_at: 0,
            delete_at: 0,
            is_pinned: false,
            user_id: user_id.to_owned(),
            channel_id: channel_id.to_owned(),
            root_id: root_id.to_owned(),
            original_id: String::new(),
            hashtags: hashtags.join(" "),
            message,
            kind: String::new(),
            props,
            pending_post_id,
            file_ids,
        });
        if let Some(channel) = self.channels.iter_mut().find(|c| c.id == channel_id) {
            channel.total_msg_count += 1;
            channel.last_post_at = channel.last_post_at.max(create_at);
            if root_id.is_empty() {
                channel.total_msg_count_root += 1;
                channel.last_root_post_at = channel.last_root_post_at.max(create_at);
            }
        }
        id
    }

    /// The time a new post gets: now, but never before the newest post of
    /// its channel, so order by time is order of creation.
    pub(crate) fn next_post_time(&self, channel_id: &str) -> i64 {
        let newest = self
            .posts
            .iter()
            .filter(|p| p.channel_id == channel_id)
            .map(|p| p.create_at)
            .max()
            .unwrap_or(0);
        now_millis().max(newest + 1)
    }

    /// A user by id.
    pub(crate) fn user(&self, id: &str) -> Option<&User> {
        self.users.iter().find(|u| u.id == id)
    }

    /// A user by username (a leading `@` and case are ignored).
    pub(crate) fn user_by_name(&self, username: &str) -> Option<&User> {
        let wanted = username.trim_start_matches('@').to_ascii_lowercase();
        self.users.iter().find(|u| u.username == wanted)
    }

    /// The active user a token belongs to; deactivated users' tokens are
    /// refused, as the server revokes their sessions.
    pub(crate) fn user_for_token(&self, token: &str) -> Option<&User> {
        if self.oauth.expired(token) {
            return None;
        }
        self.tokens
            .get(token)
            .and_then(|id| self.user(id))
            .filter(|u| !u.is_deleted())
    }

    /// A team by id.
    pub(crate) fn team(&self, id: &str) -> Option<&Team> {
        self.teams.iter().find(|t| t.id == id)
    }

    /// A team by its URL name.
    pub(crate) fn team_by_name(&self, name: &str) -> Option<&Team> {
        self.teams.iter().find(|t| t.name == name)
    }

    /// Tells whether a user is in a team.
    pub(crate) fn is_team_member(&self, team_id: &str, user_id: &str) -> bool {
        self.team_members
            .iter()
            .any(|(t, u)| t == team_id && u == user_id)
    }

    /// The teams a user is in, in creation order.
    pub(crate) fn teams_of(&self, user_id: &str) -> Vec<&Team> {
        self.teams
            .iter()
            .filter(|t| self.is_team_member(&t.id, user_id))
            .collect()
    }

    /// A channel by id.
    pub(crate) fn channel(&self, id: &str) -> Option<&Channel> {
        self.channels.iter().find(|c| c.id == id)
    }

    /// A team's channel by its URL name.
    pub(crate) fn channel_by_name(&self, team_id: &str, name: &str) -> Option<&Channel> {
        self.channels
            .iter()
            .find(|c| c.team_id == team_id && c.name == name)
    }

    /// Tells whether a user is in a channel.
    pub(crate) fn is_channel_member(&self, channel_id: &str, user_id: &str) -> bool {
        self.members
            .iter()
            .any(|m| m.channel_id == channel_id && m.user_id == user_id)
    }

    /// A user's membership of a channel.
    pub(crate) fn member(&self, channel_id: &str, user_id: &str) -> Option<&ChannelMember> {
        self.members
            .iter()
            .find(|m| m.channel_id == channel_id && m.user_id == user_id)
    }

    /// The user ids of a channel's members.
    pub(crate) fn channel_member_ids(&self, channel_id: &str) -> Vec<String> {
        self.members
            .iter()
            .filter(|m| m.channel_id == channel_id)
            .map(|m| m.user_id.clone())
            .collect()
    }

    /// Tells whether a user may read a channel: its members may, and so may
    /// everyone in the team of a public channel (Mattermost's
    /// `read_public_channel`).
    pub(crate) fn can_read(&self, user_id: &str, channel: &Channel) -> bool {
        self.is_channel_member(&channel.id, user_id)
            || (channel.kind == "O" && self.is_team_member(&channel.team_id, user_id))
    }

    /// The channels a user is a member of in a team, with their direct and
    /// group channels (which the server lists with every team), sorted by
    /// shown name.
    pub(crate) fn channels_of(&self, user_id: &str, team_id: &str) -> Vec<&Channel> {
        let mut list: Vec<&Channel> = self
            .channels
            .iter()
            .filter(|c| {
                (c.team_id == team_id || c.is_direct_or_group())
                    && c.delete_at == 0
                    && self.is_channel_member(&c.id, user_id)
            })
            .collect();
        list.sort_by(|a, b| (&a.display_name, &a.name).cmp(&(&b.display_name, &b.name)));
        list
    }

    /// A live (not deleted) post by id.
    pub(crate) fn post(&self, id: &str) -> Option<&StoredPost> {
        self.post_index
            .get(id)
            .and_then(|&at| self.posts.get(at))
            .filter(|p| p.delete_at == 0)
    }

    /// A live file by id.
    pub(crate) fn file(&self, id: &str) -> Option<&StoredFile> {
        self.file_index
            .get(id)
            .and_then(|&at| self.files.get(at))
            .filter(|f| f.info.delete_at == 0)
    }

    /// The live posts of a channel, newest first (ties by creation order).
    pub(crate) fn channel_posts(&self, channel_id: &str) -> Vec<&StoredPost> {
        let mut list: Vec<(usize, &StoredPost)> = self
            .posts
            .iter()
            .enumerate()
            .filter(|(_, p)| p.channel_id == channel_id && p.delete_at == 0)
            .collect();
        list.sort_by(|(ia, a), (ib, b)| (b.create_at, ib).cmp(&(a.create_at, ia)));
        list.into_iter().map(|(_, p)| p).collect()
    }

    /// The posts of a thread (its root first, then replies oldest first).
    pub(crate) fn thread(&self, root_id: &str) -> Vec<&StoredPost> {
        let mut list: Vec<&StoredPost> = self
            .posts
            .iter()
            .filter(|p| p.delete_at == 0 && (p.id == root_id || p.root_id == root_id))
            .collect();
        list.sort_by_key(|p| (!p.root_id.is_empty(), p.create_at));
        list
    }

    /// A post as the API returns it: the stored fields plus the thread's
    /// reply count and last reply time, and `metadata.files` when it carries
    /// files.
    pub(crate) fn post_json(&self, post: &StoredPost) -> Value {
        let root = if post.root_id.is_empty() {
            post.id.as_str()
        } else {
            post.root_id.as_str()
        };
        let replies: Vec<&StoredPost> = self
            .posts
            .iter()
            .filter(|p| p.delete_at == 0 && p.root_id == root)
            .collect();
        let last_reply_at = replies.iter().map(|p| p.create_at).max().unwrap_or(0);
        let mut value = serde_json::to_value(post).unwrap_or_else(|_| json!({}));
        let mut metadata = serde_json::Map::new();
        let files: Vec<Value> = post
            .file_ids
            .iter()
            .filter_map(|id| self.file(id))
            .filter_map(|f| serde_json::to_value(&f.info).ok())
            .collect();
        if !files.is_empty() {
            metadata.insert("files".to_owned(), Value::Array(files));
        }
        let reactions = self.reactions_of(&post.id);
        if !reactions.is_empty() {
            metadata.insert("reactions".to_owned(), json!(reactions));
        }
        if let Some(object) = value.as_object_mut() {
            if post.file_ids.is_empty() {
                object.remove("file_ids");
            }
            object.insert("reply_count".to_owned(), json!(replies.len()));
            object.insert("last_reply_at".to_owned(), json!(last_reply_at));
            object.insert("participants".to_owned(), Value::Null);
            object.insert("has_reactions".to_owned(), json!(!reactions.is_empty()));
            object.insert("metadata".to_owned(), Value::Object(metadata));
        }
        value
    }

    /// The whole state as JSON, for tests that compare before and after.
    /// Tokens are left out; file bytes are summarised by size and a hash.
    pub(crate) fn snapshot(&self) -> Value {
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|f| {
                json!({
                    "info": f.info,
                    "fnv1a64": format!("{:016x}", fnv1a64(&f.bytes, 0)),
                })
            })
            .collect();
        let team_members: Vec<Value> = self
            .team_members
            .iter()
            .map(|(team_id, user_id)| json!({"team_id": team_id, "user_id": user_id}))
            .collect();
        json!({
            "config": self.config,
            "users": self.users,
            "teams": self.teams,
            "team_members": team_members,
            "channels": self.channels,
            "channel_members": self.members,
            "posts": self.posts,
            "files": files,
            "statuses": self.statuses,
            "reactions": self.reactions,
            "own": self.own,
        })
    }

    /// Adds someone to a channel; false when they were in it already.
    pub(crate) fn add_channel_member(&mut self, channel_id: &str, user_id: &str, at: i64) -> bool {
        if self.is_channel_member(channel_id, user_id) {
            return false;
        }
        self.add_member(channel_id, user_id);
        if let Some(member) = self.member_mut(channel_id, user_id) {
            member.last_viewed_at = at;
            member.last_update_at = at;
        }
        true
    }

    /// Takes someone out of a channel; false when they were not in it.
    pub(crate) fn remove_channel_member(&mut self, channel_id: &str, user_id: &str) -> bool {
        let before = self.members.len();
        self.members
            .retain(|m| !(m.channel_id == channel_id && m.user_id == user_id));
        self.members.len() != before
    }

    /// Makes a public or private team channel with its creator as its
    /// first member and admin, and returns its id.
    pub(crate) fn create_team_channel(
        &mut self,
        team_id: &str,
        kind: &str,
        name: &str,
        display_name: &str,
        creator: &str,
        at: i64,
    ) -> String {
        let id = self.insert_channel(team_id, kind, name, display_name, creator, at);
        self.add_channel_member(&id, creator, at);
        if let Some(member) = self.member_mut(&id, creator) {
            "channel_user channel_admin".clone_into(&mut member.roles);
            member.scheme_admin = true;
        }
        id
    }

    /// A membership, to change.
    pub(crate) fn member_mut(
        &mut self,
        channel_id: &str,
        user_id: &str,
    ) -> Option<&mut ChannelMember> {
        self.members
            .iter_mut()
            .find(|m| m.channel_id == channel_id && m.user_id == user_id)
    }

    /// A live post by id, to change it.
    pub(crate) fn post_mut(&mut self, id: &str) -> Option<&mut StoredPost> {
        self.post_index
            .get(id)
            .copied()
            .and_then(move |at| self.posts.get_mut(at))
            .filter(|p| p.delete_at == 0)
    }

    /// Deletes a post and, when it starts a thread, every reply with it
    /// (as the server does); answers how many posts went.
    pub(crate) fn delete_post(&mut self, id: &str, at: i64) -> usize {
        let mut gone = 0;
        for post in &mut self.posts {
            if post.delete_at == 0 && (post.id == id || post.root_id == id) {
                post.delete_at = at;
                post.update_at = at;
                gone += 1;
            }
        }
        gone
    }

    /// The live reactions on a post, oldest first.
    pub(crate) fn reactions_of(&self, post_id: &str) -> Vec<&Reaction> {
        self.reactions
            .iter()
            .filter(|r| r.post_id == post_id && r.delete_at == 0)
            .collect()
    }

    /// Tells whether a person saved (flagged) a post.
    pub(crate) fn is_flagged(&self, user_id: &str, post_id: &str) -> bool {
        self.own.preferences.iter().any(|p| {
            p.user_id == user_id
                && p.category == "flagged_post"
                && p.name == post_id
                && p.value == "true"
        })
    }

    /// The channel's members whose accounts are active, as the server
    /// counts them in a channel's stats.
    pub(crate) fn active_member_count(&self, channel_id: &str) -> usize {
        self.members
            .iter()
            .filter(|m| m.channel_id == channel_id)
            .filter(|m| self.user(&m.user_id).is_some_and(|u| !u.is_deleted()))
            .count()
    }
}

/// Reads the bytes of a seeded file from exactly one of its sources.
fn seed_file_bytes(file: &SeedFile) -> Result<Bytes, SeedError> {
    let failure = |reason: String| SeedError::File {
        name: file.name.clone(),
        reason,
    };
    let sources = usize::from(file.text.is_some())
        + usize::from(file.base64.is_some())
        + usize::from(file.path.is_some())
        + usize::from(file.generate.is_some());
    if sources != 1 {
        return Err(failure(format!(
            "it gives {sources} sources; give exactly one of text, base64, path or generate"
        )));
    }
    if file.name.is_empty() || file.name.contains(['/', '\\']) {
        return Err(failure(
            "its name is empty or contains a path separator".to_owned(),
        ));
    }
    if let Some(text) = &file.text {
        return Ok(Bytes::from(text.clone().into_bytes()));
    }
    if let Some(encoded) = &file.base64 {
        return base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .map(Bytes::from)
            .map_err(|err| failure(format!("its base64 is not valid ({err})")));
    }
    if let Some(path) = &file.path {
        return std::fs::read(path)
            .map(Bytes::from)
            .map_err(|err| failure(format!("{} could not be read ({err})", path.display())));
    }
    match file.generate {
        Some(kind) => Ok(crate::demo::files::bytes(kind)),
        None => Err(failure("it has no content".to_owned())),
    }
}

/// FNV-1a over bytes, from a chosen start; small and dependency-free.
pub(crate) fn fnv1a64(bytes: &[u8], start: u64) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325 ^ start;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// A group channel's name: 40 hex characters fixed by its members, as the
/// server derives one from the sorted user ids.
fn group_channel_name(sorted_ids: &[String]) -> String {
    let joined = sorted_ids.concat();
    let mut out = String::with_capacity(48);
    for start in 0..3u64 {
        let _ = write!(out, "{:016x}", fnv1a64(joined.as_bytes(), start));
    }
    out.truncate(40);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::{SeedChannel, SeedPost, SeedTeam, SeedUser};

    fn tiny_seed() -> Seed {
        Seed {
            users: vec![
                SeedUser {
                    username: "ann".into(),
                    token: Some("t-ann".into()),
                    ..SeedUser::default()
                },
                SeedUser {
                    username: "ben".into(),
                    token: Some("t-ben".into()),
                    ..SeedUser::default()
                },
            ],
            teams: vec![SeedTeam {
                name: "crew".into(),
                display_name: "Crew".into(),
                members: vec!["ann".into(), "ben".into()],
                description: String::new(),
            }],
            channels: vec![SeedChannel {
                team: "crew".into(),
                name: "general".into(),
                display_name: "General".into(),
                kind: "O".into(),
                members: vec!["ann".into()],
                ..SeedChannel::default()
            }],
            posts: vec![SeedPost {
                channel: "general".into(),
                user: "ann".into(),
                message: "hello".into(),
                ..SeedPost::default()
            }],
            ..Seed::default()
        }
    }

    #[test]
    fn a_seed_becomes_users_teams_channels_and_posts() {
        let state = State::from_seed(&tiny_seed()).expect("the seed is valid");
        let ann = state.user_for_token("t-ann").expect("ann's token works");
        let team = state.team_by_name("crew").expect("the team exists");
        let general = state
            .channel_by_name(&team.id, "general")
            .expect("the channel exists");
        assert_eq!(state.channel_posts(&general.id).len(), 1);
        assert_eq!(state.channel_posts(&general.id)[0].user_id, ann.id);
        assert_eq!(general.total_msg_count, 1);
    }

    #[test]
    fn a_seed_naming_an_unknown_user_is_refused_with_the_name() {
        let mut seed = tiny_seed();
        seed.channels[0].members.push("zed".into());
        let err = State::from_seed(&seed).expect_err("zed is unknown");
        assert!(err.to_string().contains("zed"), "{err}");
    }

    #[test]
    fn a_public_channel_is_readable_by_its_team_but_a_private_one_only_by_members() {
        let mut seed = tiny_seed();
        seed.channels.push(SeedChannel {
            team: "crew".into(),
            name: "secret".into(),
            display_name: "Secret".into(),
            kind: "P".into(),
            members: vec!["ann".into()],
            ..SeedChannel::default()
        });
        let state = State::from_seed(&seed).expect("the seed is valid");
        let ben = state.user_by_name("ben").expect("ben exists").id.clone();
        let team = state
            .team_by_name("crew")
            .expect("the team exists")
            .id
            .clone();
        let general = state.channel_by_name(&team, "general").expect("exists");
        let secret = state.channel_by_name(&team, "secret").expect("exists");
        assert!(state.can_read(&ben, general));
        assert!(!state.can_read(&ben, secret));
    }

    #[test]
    fn the_same_two_people_always_get_the_same_direct_channel() {
        let mut state = State::from_seed(&tiny_seed()).expect("the seed is valid");
        let ann = state.user_by_name("ann").expect("exists").id.clone();
        let ben = state.user_by_name("ben").expect("exists").id.clone();
        let (first, made) = state.direct_channel(&ann, &ben, 1);
        assert!(made);
        let (again, made_again) = state.direct_channel(&ben, &ann, 2);
        assert_eq!(first, again);
        assert!(!made_again);
    }

    #[test]
    fn a_deactivated_users_token_is_refused() {
        let mut seed = tiny_seed();
        seed.users[1].deleted = true;
        let state = State::from_seed(&seed).expect("the seed is valid");
        assert!(state.user_for_token("t-ben").is_none());
        assert!(state.user_for_token("t-ann").is_some());
    }

    #[test]
    fn a_seed_file_needs_exactly_one_source() {
        let file = SeedFile {
            name: "a.txt".into(),
            text: Some("x".into()),
            base64: Some("eA==".into()),
            ..SeedFile::default()
        };
        assert!(seed_file_bytes(&file).is_err());
        let file = SeedFile {
            name: "a.bin".into(),
            base64: Some("AAEC".into()),
            ..SeedFile::default()
        };
        assert_eq!(
            seed_file_bytes(&file).expect("valid base64").as_ref(),
            &[0, 1, 2]
        );
    }
}
