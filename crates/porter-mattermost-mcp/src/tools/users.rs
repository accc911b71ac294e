//! The tools about accounts: `get_me`, `get_users`, `search_users`.

use porter_mattermost::{Error, UserSearch};
use porter_mcp::tool::{Hints, NoArgs, ToolError, done};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::names::{username, usernames};
use crate::output::{MeOut, UserOut, UsersOut};
use crate::paging::{Sizes, page_text, paged};
use crate::render::user_line;
use crate::server::MattermostServer;
use crate::tools::Reply;

/// The user lists' page sizes: 20, at most 100.
pub(crate) const USERS: Sizes = Sizes {
    default: 20,
    max: 100,
};

// ----- parameters -----

/// Users by username or id.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct GetUsersArgs {
    /// Usernames, with or without `@`.
    #[serde(default)]
    pub usernames: Vec<String>,
    /// User ids.
    #[serde(default)]
    pub user_ids: Vec<String>,
    /// Most users in this page (default 20, at most 100).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// A user search.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SearchUsersArgs {
    /// What to look for in usernames, names, nicknames and e-mail.
    pub term: String,
    /// Most users in this page (default 20, at most 100).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

paged!(GetUsersArgs, SearchUsersArgs);

// ----- the tools -----

method_tools! {
    /// `get_me`: Who am I.
    GetMe = get_me_impl() {
        name: "get_me", title: "Who am I", hints: Hints::READ, args: NoArgs, out: MeOut,
        description: "The Mattermost account porter acts as: username, name, id.",
    }
    /// `get_users`: Get users.
    GetUsers = get_users_impl(args) {
        name: "get_users", title: "Get users", hints: Hints::READ, args: GetUsersArgs, out: UsersOut,
        description: "Looks accounts up by username or id: names, position, whether deactivated.",
    }
    /// `search_users`: Search users.
    SearchUsers = search_users_impl(args) {
        name: "search_users", title: "Search users", hints: Hints::READ, args: SearchUsersArgs, out: UsersOut,
        description: "Finds accounts whose username, name, nickname or e-mail match a term.",
    }
}

impl MattermostServer {
    pub(crate) async fn get_me_impl(&self) -> Reply {
        let me = self.shared.client.me().await?;
        self.set_me(me.clone());
        let out = MeOut {
            user: UserOut::from(&me),
            server_url: self.shared.client.base_url().to_owned(),
        };
        let text = format!("You are {} on {}.\n", user_line(&out.user), out.server_url);
        done(text, &out)
    }

    pub(crate) async fn get_users_impl(&self, args: GetUsersArgs) -> Reply {
        let paging = self.paging::<_, usize>("get_users", &args, USERS)?;
        if args.usernames.is_empty() && args.user_ids.is_empty() {
            return Err(ToolError::Tool(
                "pass usernames or user_ids (search_users finds accounts by part of a name)"
                    .to_owned(),
            ));
        }
        let names = usernames(&args.usernames);
        let mut users = Vec::new();
        let mut not_found = Vec::new();
        if !names.is_empty() {
            let found = self.shared.client.users_by_usernames(&names).await?;
            for name in &names {
                match found.iter().find(|u| u.username.eq_ignore_ascii_case(name)) {
                    Some(user) => users.push(user.clone()),
                    None => not_found.push(format!("@{name}")),
                }
            }
        }
        for id in &args.user_ids {
            match self.shared.client.user(id.trim()).await {
                Ok(user) => users.push(user),
                Err(Error::NotFound { .. } | Error::BadRequest { .. }) => {
                    not_found.push(id.clone());
                }
                Err(other) => return Err(other.into()),
            }
        }
        let all: Vec<UserOut> = users.iter().map(UserOut::from).collect();
        let (page, next) = self.slice(&paging, &all);
        let mut lines: Vec<String> = page.iter().map(user_line).collect();
        if !not_found.is_empty() {
            lines.push(format!(
                "No account for {}; search_users finds accounts by part of a name.",
                not_found.join(", ")
            ));
        }
        let text = page_text(String::new(), lines, next.as_ref(), "users");
        done(
            text,
            &UsersOut {
                users: page,
                not_found,
                next_cursor: next,
            },
        )
    }

    pub(crate) async fn search_users_impl(&self, args: SearchUsersArgs) -> Reply {
        let paging = self.paging::<_, usize>("search_users", &args, USERS)?;
        let term = username(&args.term);
        if term.is_empty() {
            return Err(ToolError::Tool(
                "term is empty; pass part of a name".to_owned(),
            ));
        }
        let mut search = UserSearch::new(term);
        search.allow_inactive = true;
        search.limit = paging.end(1000) as u32;
        let users = self.shared.client.search_users(&search).await?;
        let all: Vec<UserOut> = users.iter().map(UserOut::from).collect();
        let (page, next) = self.slice(&paging, &all);
        let none = if page.is_empty() {
            format!("No account matches {term:?}.\n")
        } else {
            String::new()
        };
        let text = page_text(none, page.iter().map(user_line), next.as_ref(), "users");
        done(
            text,
            &UsersOut {
                users: page,
                not_found: Vec::new(),
                next_cursor: next,
            },
        )
    }
}
