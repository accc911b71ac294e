//! A person's own state, which only that person sees: preferences (saved
//! posts among them), followed threads, post reminders, drafts, typing,
//! and what signing in with a password needs. `api::own_state` serves it.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::model::User;
use crate::seed::Seed;

/// `OwnState` is everything that belongs to one person. Passwords
/// and MFA codes are never serialized.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct OwnState {
    pub preferences: Vec<Preference>,
    pub following: Vec<Following>,
    pub reminders: Vec<Reminder>,
    pub drafts: Vec<Draft>,
    pub typing: Vec<Typing>,
    #[serde(skip)]
    pub logins: HashMap<String, Login>,
}

/// `Login` is what signing in with a password needs: the password, and
/// the one-time code when the account has MFA (a fixed code here, since
/// the emulator keeps no authenticator clock).
#[derive(Clone, Debug)]
pub(crate) struct Login {
    pub password: String,
    pub mfa_code: Option<String>,
}

/// `Preference` is `model.Preference`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Preference {
    pub user_id: String,
    pub category: String,
    pub name: String,
    pub value: String,
}

/// `Following` is one person following one thread.
// The names are the server's JSON keys.
#[allow(clippy::struct_field_names)]
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub(crate) struct Following {
    pub user_id: String,
    pub team_id: String,
    pub thread_id: String,
}

/// `Reminder` is a post reminder: at `target_time` (seconds) the server
/// would post a system message to the person.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Reminder {
    pub user_id: String,
    pub post_id: String,
    pub target_time: i64,
}

/// `Typing` is one "is typing" event, kept so a test can see it arrived.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Typing {
    pub user_id: String,
    pub channel_id: String,
    pub parent_id: String,
    pub at: i64,
}

/// `Draft` is `model.Draft`: one unsent message per person, channel and
/// thread.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Draft {
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
    pub user_id: String,
    pub channel_id: String,
    pub root_id: String,
    pub message: String,
    #[serde(default = "empty_object")]
    pub props: Value,
    pub file_ids: Vec<String>,
}

/// Serde default for `props`: `{}`, as the server stores it.
fn empty_object() -> Value {
    json!({})
}

impl OwnState {
    /// Takes what signing in needs (passwords, MFA codes) and each
    /// person's time zone from the seed; the users must be loaded already.
    pub(crate) fn from_seed(seed: &Seed, users: &mut [User]) -> OwnState {
        let mut own = OwnState::default();
        for person in &seed.users {
            let Some(user) = users.iter_mut().find(|u| u.username == person.username) else {
                continue;
            };
            if let Some(password) = &person.password {
                own.logins.insert(
                    user.id.clone(),
                    Login {
                        password: password.clone(),
                        mfa_code: person.mfa_code.clone(),
                    },
                );
            }
            if let Some(zone) = &person.timezone {
                user.timezone = json!({
                    "automaticTimezone": "", "manualTimezone": zone, "useAutomaticTimezone": "false"
                });
            }
        }
        own
    }
}
