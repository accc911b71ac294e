//! The client's calls for a person's own state: typing, following
//! threads, saved posts (preferences), post reminders and drafts, and
//! signing in with a password.

use bytes::Bytes;
use reqwest::Method;
use reqwest::header::CONTENT_TYPE;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::client::Ask;
use crate::error::{Error, Target, Thing};
use crate::{Client, ClientOptions, Token, User};

/// `FLAGGED_POST` is the preference category in which Mattermost keeps
/// saved ("flagged") posts, one preference per post id.
pub const FLAGGED_POST: &str = "flagged_post";

/// `Preference` is one of a person's settings (`model.Preference`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preference {
    /// Whose it is.
    pub user_id: String,
    /// Its group (`flagged_post` for saved posts).
    pub category: String,
    /// Its name within the group (the post id for saved posts).
    pub name: String,
    /// Its value (`"true"` for a saved post).
    pub value: String,
}

/// `Draft` is an unsent message (`model.Draft`), one per person, channel
/// and thread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Draft {
    /// When it was first saved (ms).
    #[serde(default)]
    pub create_at: i64,
    /// When it last changed (ms).
    #[serde(default)]
    pub update_at: i64,
    /// Whose it is.
    #[serde(default)]
    pub user_id: String,
    /// The channel it is for.
    #[serde(default)]
    pub channel_id: String,
    /// The thread it replies in, or empty.
    #[serde(default)]
    pub root_id: String,
    /// The text.
    #[serde(default)]
    pub message: String,
    /// Extra properties, kept as sent.
    #[serde(default)]
    pub props: Value,
    /// Attached file ids.
    #[serde(default)]
    pub file_ids: Vec<String>,
}

/// `Status` is the `{"status": "OK"}` most of these calls answer.
#[derive(Debug, Deserialize)]
struct Status {
    #[serde(default)]
    #[allow(dead_code)]
    status: String,
}

impl Client {
    /// `typing` tells a channel (or a thread in it) that the account is
    /// typing; others see it for a few seconds.
    pub async fn typing(&self, channel_id: &str, parent_id: &str) -> Result<(), Error> {
        let ask = Ask::new("send typing to", Target::id(Thing::Channel, channel_id));
        let body = serde_json::json!({"channel_id": channel_id, "parent_id": parent_id});
        let _: Status = self
            .post_json(&["users", "me", "typing"], &body, &ask)
            .await?;
        Ok(())
    }

    /// `follow_thread` follows (or, with `follow` false, stops following)
    /// the thread of root post `thread_id` in a team.
    pub async fn follow_thread(
        &self,
        team_id: &str,
        thread_id: &str,
        follow: bool,
    ) -> Result<(), Error> {
        let action = if follow { "follow" } else { "unfollow" };
        let ask = Ask::new(action, Target::id(Thing::Post, thread_id));
        let method = if follow { Method::PUT } else { Method::DELETE };
        let segments = [
            "users",
            "me",
            "teams",
            team_id,
            "threads",
            thread_id,
            "following",
        ];
        let _: Status = self.send_json(method, &segments, None::<&()>, &ask).await?;
        Ok(())
    }

    /// `my_preferences` are all of the account's preferences.
    pub async fn my_preferences(&self) -> Result<Vec<Preference>, Error> {
        let ask = Ask::new("read the preferences of", Target::own(Thing::User));
        self.get(&["users", "me", "preferences"], &[], &ask).await
    }

    /// `save_preferences` sets preferences of the account (`user_id` is
    /// the account's own id).
    pub async fn save_preferences(
        &self,
        user_id: &str,
        preferences: &[Preference],
    ) -> Result<(), Error> {
        let ask = Ask::new("save the preferences of", Target::own(Thing::User));
        let _: Status = self
            .send_json(
                Method::PUT,
                &["users", user_id, "preferences"],
                Some(preferences),
                &ask,
            )
            .await?;
        Ok(())
    }

    /// `delete_preferences` removes preferences of the account.
    pub async fn delete_preferences(
        &self,
        user_id: &str,
        preferences: &[Preference],
    ) -> Result<(), Error> {
        let ask = Ask::new("delete the preferences of", Target::own(Thing::User));
        let _: Status = self
            .post_json(
                &["users", user_id, "preferences", "delete"],
                preferences,
                &ask,
            )
            .await?;
        Ok(())
    }

    /// `set_post_reminder` asks Mattermost to remind the account of a post
    /// at `target_time` (seconds since the epoch).
    pub async fn set_post_reminder(&self, post_id: &str, target_time: i64) -> Result<(), Error> {
        let ask = Ask::new("set a reminder for", Target::id(Thing::Post, post_id));
        let body = serde_json::json!({ "target_time": target_time });
        let _: Status = self
            .post_json(&["users", "me", "posts", post_id, "reminder"], &body, &ask)
            .await?;
        Ok(())
    }

    /// `drafts` are the account's drafts in a team (with its direct and
    /// group channels), newest first.
    pub async fn drafts(&self, team_id: &str) -> Result<Vec<Draft>, Error> {
        let ask = Ask::new("list the drafts in", Target::id(Thing::Team, team_id));
        self.get(&["users", "me", "teams", team_id, "drafts"], &[], &ask)
            .await
    }

    /// `save_draft` creates or replaces the draft for its channel and
    /// thread, and answers it as stored.
    pub async fn save_draft(&self, draft: &Draft) -> Result<Draft, Error> {
        let ask = Ask::new(
            "save a draft in",
            Target::id(Thing::Channel, &draft.channel_id),
        );
        self.post_json(&["drafts"], draft, &ask).await
    }

    /// `delete_draft` removes the draft for a channel (and thread, when
    /// `root_id` is not empty).
    pub async fn delete_draft(&self, channel_id: &str, root_id: &str) -> Result<(), Error> {
        let ask = Ask::new(
            "delete the draft in",
            Target::id(Thing::Channel, channel_id),
        );
        let mut segments = vec!["users", "me", "channels", channel_id, "drafts"];
        if !root_id.is_empty() {
            segments.push(root_id);
        }
        let _: Status = self
            .send_json(Method::DELETE, &segments, None::<&()>, &ask)
            .await?;
        Ok(())
    }

    /// `my_timezone` is the IANA time zone the account set (the manual
    /// one, or the automatic one when it uses that), if any.
    pub async fn my_timezone(&self) -> Result<Option<String>, Error> {
        let ask = Ask::new("read", Target::own(Thing::User));
        let me: Value = self.get(&["users", "me"], &[], &ask).await?;
        Ok(timezone_of(&me))
    }
}

/// `timezone_of` reads a user's time zone from their `timezone` field:
/// the automatic zone when `useAutomaticTimezone` is `"true"`, else the
/// manual one; empty means none.
#[must_use]
pub fn timezone_of(user: &Value) -> Option<String> {
    let zone = user.get("timezone")?;
    let field = |name: &str| {
        zone.get(name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    if field("useAutomaticTimezone").as_deref() == Some("true") {
        field("automaticTimezone").or_else(|| field("manualTimezone"))
    } else {
        field("manualTimezone").or_else(|| field("automaticTimezone"))
    }
}

/// `PasswordLogin` is what signing in with a password takes. Its `Debug`
/// hides the password and code.
#[derive(Clone)]
pub struct PasswordLogin {
    /// A username or e-mail address.
    pub login_id: String,
    /// The password.
    pub password: String,
    /// The MFA code, when the account has MFA.
    pub mfa_code: Option<String>,
}

impl std::fmt::Debug for PasswordLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordLogin")
            .field("login_id", &self.login_id)
            .field("password", &"***")
            .field("mfa_code", &self.mfa_code.as_ref().map(|_| "***"))
            .finish()
    }
}

/// `login_with_password` signs in at `base_url` with a username (or
/// e-mail) and password (+ MFA code) through `POST /users/login`, and
/// answers the session token from the `Token` header and the account.
/// Neither the password nor the token appears in any error.
pub async fn login_with_password(
    base_url: &str,
    login: &PasswordLogin,
    options: ClientOptions,
) -> Result<(Token, User), Error> {
    // The client needs some token to be built; the login request carries
    // none that the server would accept, and none is needed.
    let client = Client::new(base_url, Token::new("signing-in"), options)?;
    let ask = Ask::new("sign in to", Target::name(Thing::User, &login.login_id));
    let url = client.api_url(&["users", "login"]);
    let body = Bytes::from(
        serde_json::to_vec(&serde_json::json!({
            "login_id": login.login_id,
            "password": login.password,
            "token": login.mfa_code.clone().unwrap_or_default(),
            "device_id": "",
        }))
        .map_err(|e| Error::Decode {
            target: ask.target.clone(),
            reason: e.to_string(),
        })?,
    );
    let response = client
        .send(&ask, || {
            client
                .http
                .post(url.clone())
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone())
        })
        .await?;
    let token = response
        .headers()
        .get("token")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(Token::new)
        .ok_or_else(|| Error::Decode {
            target: ask.target.clone(),
            reason: "the server signed in but sent no Token header".to_owned(),
        })?;
    let user: User = client.read_json(response, &ask.target).await?;
    Ok((token, user))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_zone_follows_the_automatic_flag() {
        let cases = [
            (
                serde_json::json!({"timezone": {"useAutomaticTimezone": "true", "automaticTimezone": "Europe/Berlin", "manualTimezone": "Asia/Tokyo"}}),
                Some("Europe/Berlin"),
            ),
            (
                serde_json::json!({"timezone": {"useAutomaticTimezone": "false", "automaticTimezone": "Europe/Berlin", "manualTimezone": "Asia/Tokyo"}}),
                Some("Asia/Tokyo"),
            ),
            (
                serde_json::json!({"timezone": {"useAutomaticTimezone": "true", "automaticTimezone": "", "manualTimezone": ""}}),
                None,
            ),
            (serde_json::json!({}), None),
        ];
        for (user, want) in cases {
            assert_eq!(timezone_of(&user).as_deref(), want, "{user}");
        }
    }

    #[test]
    fn a_password_login_never_shows_its_secrets() {
        let login = PasswordLogin {
            login_id: "alice".into(),
            password: "hunter2".into(),
            mfa_code: Some("123456".into()),
        };
        let text = format!("{login:?}");
        assert!(text.contains("alice"), "{text}");
        assert!(
            !text.contains("hunter2") && !text.contains("123456"),
            "{text}"
        );
    }
}
