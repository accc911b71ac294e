//! The client's calls for teams: the account's own, and one by name.

use crate::client::{Ask, Client};
use crate::error::{Error, Target, Thing};
use crate::model::Team;

impl Client {
    /// `my_teams` are the teams the account belongs to.
    pub async fn my_teams(&self) -> Result<Vec<Team>, Error> {
        let ask = Ask::new("list the teams of", Target::own(Thing::User));
        self.get(&["users", "me", "teams"], &[], &ask).await
    }

    /// `team_by_name` looks a team up by its URL name.
    pub async fn team_by_name(&self, name: &str) -> Result<Team, Error> {
        let ask = Ask::new("read", Target::name(Thing::Team, name));
        self.get(&["teams", "name", name], &[], &ask).await
    }
}
