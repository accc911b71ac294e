//! The client's calls for accounts: the token's own, one by id or
//! username, several by username, and a search.

use crate::client::{Ask, Client};
use crate::error::{Error, Target, Thing};
use crate::model::{User, UserSearch};

impl Client {
    /// `me` is the token's own account; the cheapest way to check a token.
    pub async fn me(&self) -> Result<User, Error> {
        let ask = Ask::new("read", Target::own(Thing::User));
        self.get(&["users", "me"], &[], &ask).await
    }

    /// `user` looks a user up by id.
    pub async fn user(&self, user_id: &str) -> Result<User, Error> {
        let ask = Ask::new("read", Target::id(Thing::User, user_id));
        self.get(&["users", user_id], &[], &ask).await
    }

    /// `user_by_username` looks a user up by username (without `@`).
    pub async fn user_by_username(&self, username: &str) -> Result<User, Error> {
        let ask = Ask::new("read", Target::name(Thing::User, username));
        self.get(&["users", "username", username], &[], &ask).await
    }

    /// `users_by_usernames` looks several users up at once; names that do
    /// not exist are left out of the answer, not an error.
    pub async fn users_by_usernames(
        &self,
        usernames: &[impl AsRef<str>],
    ) -> Result<Vec<User>, Error> {
        let names: Vec<&str> = usernames.iter().map(AsRef::as_ref).collect();
        let ask = Ask::new("read", Target::several(Thing::User, &names));
        self.post_json(&["users", "usernames"], &names, &ask).await
    }

    /// `search_users` finds users whose names, nickname or e-mail match.
    pub async fn search_users(&self, search: &UserSearch) -> Result<Vec<User>, Error> {
        let ask = Ask::new("search", Target::name(Thing::User, &search.term));
        self.post_json(&["users", "search"], search, &ask).await
    }
}
