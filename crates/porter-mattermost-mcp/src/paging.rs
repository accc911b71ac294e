//! What paged tools share: a page's size and cursor read from the call
//! (a cursor is good only for the tool and arguments it was made for), the
//! slice of a list a page shows, the line that says whether more follow,
//! and the paging of searches (Mattermost's pages gathered into ours).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::hash::Hash;

use porter_mattermost::{Search, Team};
use porter_mcp::tool::ToolError;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::server::MattermostServer;

/// `Sizes` is a list's default page size and the largest a call may ask
/// for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sizes {
    pub default: usize,
    pub max: usize,
}

/// The lists of small items (teams, channels, replies): 50 a page, at most 200.
pub(crate) const LIST: Sizes = Sizes {
    default: 50,
    max: 200,
};

/// The search results: 20 a page, at most 100.
pub(crate) const SEARCH: Sizes = Sizes {
    default: 20,
    max: 100,
};

/// Mattermost answers at most this many results per search page.
pub(crate) const SEARCH_FETCH: usize = 100;

/// The most results a search looks through, so a deep cursor stays cheap.
pub(crate) const SEARCH_DEPTH: usize = 1000;

/// A post or file search.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Mattermost search terms: words, "exact phrases", from:alice, in:town-square, before:/after:/on: YYYY-MM-DD.
    pub terms: String,
    /// The team, by id or name; all your teams when left out.
    #[serde(default)]
    pub team_id: Option<String>,
    /// Most results in this page (default 20, at most 100).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// A page of a list of posts, flattened into a tool's arguments.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Page {
    /// Most posts in this page (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `Paged` is a tool's arguments that ask for a page: its `limit` and
/// `cursor`, whether written in the arguments or flattened from [`Page`].
pub(crate) trait Paged: Serialize {
    /// The most items the call asks for.
    fn limit(&self) -> Option<u32>;
    /// The cursor the call passed back.
    fn cursor(&self) -> Option<&str>;
}

/// `paged!` implements [`Paged`] for arguments with `limit` and `cursor`
/// fields (`paged!(A, B)`) or a flattened `page: Page` (`paged!(page: A)`),
/// since a trait cannot name fields.
macro_rules! paged {
    (page: $($args:ty),+ $(,)?) => {
        $(impl $crate::paging::Paged for $args {
            fn limit(&self) -> Option<u32> {
                self.page.limit
            }
            fn cursor(&self) -> Option<&str> {
                self.page.cursor.as_deref()
            }
        })+
    };
    ($($args:ty),+ $(,)?) => {
        $(impl $crate::paging::Paged for $args {
            fn limit(&self) -> Option<u32> {
                self.limit
            }
            fn cursor(&self) -> Option<&str> {
                self.cursor.as_deref()
            }
        })+
    };
}
pub(crate) use paged;

paged!(SearchArgs);

// ----- paging -----

/// `Paging` is one call's page: its tool and arguments (to bind the next
/// cursor to), the position it starts at, and its size.
pub(crate) struct Paging<P> {
    pub tool: &'static str,
    pub args: Value,
    pub position: P,
    pub limit: usize,
}

impl Paging<usize> {
    /// How many results to gather to show this page and know whether more
    /// follow, but never more than `depth`.
    pub(crate) fn end(&self, depth: usize) -> usize {
        (self.position + self.limit + 1).min(depth)
    }
}

/// A page's text: `opening`, a line for each item, then the line that says
/// whether more `what` follow.
pub(crate) fn page_text(
    opening: String,
    lines: impl IntoIterator<Item = String>,
    next: Option<&String>,
    what: &str,
) -> String {
    let mut text = opening;
    for line in lines {
        text.push_str(&line);
        text.push('\n');
    }
    more_line(&mut text, next, what);
    text
}

/// Gathers what `search` finds in each of `teams`, each item once (by
/// `key`): direct and group channels, and what is in them, show up under
/// every team.
pub(crate) async fn each_once<'a, T, K, F, Fut>(
    teams: &'a [Team],
    key: impl Fn(&T) -> K,
    mut search: F,
) -> Result<Vec<T>, ToolError>
where
    K: Eq + Hash,
    F: FnMut(&'a Team) -> Fut,
    Fut: Future<Output = Result<Vec<T>, ToolError>>,
{
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for team in teams {
        for item in search(team).await? {
            if seen.insert(key(&item)) {
                out.push(item);
            }
        }
    }
    Ok(out)
}

/// The line that ends a page: the next page's cursor, written out so that
/// a client that hands the model the text alone still lets it page on, or
/// that this page is the last.
pub(crate) fn more_line(text: &mut String, next: Option<&String>, what: &str) {
    if let Some(cursor) = next {
        let _ = writeln!(
            text,
            "More {what} follow: pass cursor \"{cursor}\" (with the same other arguments) for the next page."
        );
    } else {
        let _ = writeln!(text, "That is the last page.");
    }
}

/// `all_pages` gathers Mattermost's pages of `per_page` from the first
/// (`fetch` asks for one and answers how many it held and what of it to
/// keep) until a page comes back short or `enough` items are in hand.
pub(crate) async fn all_pages<T, E, F, Fut>(
    per_page: u32,
    enough: usize,
    mut fetch: F,
) -> Result<Vec<T>, E>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<(usize, Vec<T>), E>>,
{
    let mut out = Vec::new();
    let mut page = 0u32;
    loop {
        let (got, items) = fetch(page).await?;
        out.extend(items);
        if got < per_page as usize || out.len() >= enough {
            return Ok(out);
        }
        page += 1;
    }
}

/// `search_pages` gathers Mattermost's search pages (`fetch` asks for one
/// and answers how many it held and what) until `end` results are in hand
/// or a page comes back short.
pub(crate) async fn search_pages<T, F, Fut>(
    terms: &str,
    end: usize,
    mut fetch: F,
) -> Result<Vec<T>, ToolError>
where
    F: FnMut(Search) -> Fut,
    Fut: Future<Output = Result<(usize, Vec<T>), porter_mattermost::Error>>,
{
    let found = all_pages(SEARCH_FETCH as u32, end, |page| {
        let mut search = Search::new(terms);
        search.page = page;
        search.per_page = SEARCH_FETCH as u32;
        fetch(search)
    });
    Ok(found.await?)
}

/// Results `[0, end)` of a search in each of `in_teams`, each item once
/// (by `key`): `fetch` asks one team for one of Mattermost's search pages and
/// answers how many results it held and which.
pub(crate) async fn search_teams<'a, T, K, F, Fut>(
    in_teams: &'a [Team],
    terms: &str,
    end: usize,
    key: impl Fn(&T) -> K,
    fetch: F,
) -> Result<Vec<T>, ToolError>
where
    K: Eq + Hash,
    F: Fn(&'a Team, Search) -> Fut,
    Fut: Future<Output = Result<(usize, Vec<T>), porter_mattermost::Error>>,
{
    let fetch = &fetch;
    each_once(in_teams, key, |team| {
        search_pages(terms, end, move |search| fetch(team, search))
    })
    .await
}

impl MattermostServer {
    /// Reads `limit` and `cursor` of `args` for `tool`: a cursor must have
    /// been made for the same tool and other arguments.
    pub(crate) fn paging<A: Paged, P: DeserializeOwned + Default>(
        &self,
        tool: &'static str,
        args: &A,
        sizes: Sizes,
    ) -> Result<Paging<P>, ToolError> {
        let limit = match args.limit() {
            Some(0) => {
                return Err(ToolError::Tool(
                    "limit counts from 1; pass 1 or more, or leave it out".to_owned(),
                ));
            }
            Some(n) => (n as usize).min(sizes.max),
            None => sizes.default,
        };
        let cursor = args.cursor().filter(|c| !c.trim().is_empty());
        let args = serde_json::to_value(args).unwrap_or(Value::Null);
        let position = match cursor {
            Some(cursor) => self.shared.cursors.open(tool, &args, cursor)?,
            None => P::default(),
        };
        Ok(Paging {
            tool,
            args,
            position,
            limit,
        })
    }

    /// A cursor for the page after `paging`'s, starting at `position`.
    pub(crate) fn next_cursor<P, Q: Serialize>(&self, paging: &Paging<P>, position: &Q) -> String {
        self.shared
            .cursors
            .seal(paging.tool, &paging.args, position)
    }

    /// The page of `items` at the paging's position, and the cursor after it.
    pub(crate) fn slice<T: Clone>(
        &self,
        paging: &Paging<usize>,
        items: &[T],
    ) -> (Vec<T>, Option<String>) {
        let start = paging.position.min(items.len());
        let end = (start + paging.limit).min(items.len());
        let next = (end < items.len()).then(|| self.next_cursor(paging, &end));
        (items[start..end].to_vec(), next)
    }

    pub(crate) fn search_paging(
        &self,
        tool: &'static str,
        args: &SearchArgs,
    ) -> Result<Paging<usize>, ToolError> {
        let paging = self.paging::<_, usize>(tool, args, SEARCH)?;
        if args.terms.trim().is_empty() {
            return Err(ToolError::Tool(
                "terms is empty; pass words to search for".to_owned(),
            ));
        }
        if paging.position >= SEARCH_DEPTH {
            return Err(ToolError::Tool(format!(
                "porter looks through the first {SEARCH_DEPTH} results only; narrow the search (from:, in:, after:) instead of paging further"
            )));
        }
        Ok(paging)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_that_is_not_the_last_says_its_next_cursor_in_the_text() {
        let mut text = String::new();
        more_line(&mut text, Some(&"c3VyZS1jdXJzb3I".to_owned()), "posts");
        assert_eq!(
            text,
            "More posts follow: pass cursor \"c3VyZS1jdXJzb3I\" (with the same other arguments) for the next page.\n"
        );
        let mut last = String::new();
        more_line(&mut last, None, "posts");
        assert_eq!(last, "That is the last page.\n");
    }
}
