//! What paged tools share: a page's size and cursor read from the call
//! (a cursor is good only for the tool and arguments it was made for), the
//! slice of a list a page shows, the line that says whether more follow,
//! and the paging of searches (Mattermost's pages gathered into ours).

use std::fmt::Write as _;

use porter_mattermost::Search;
use porter_mcp::tool::ToolError;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::MattermostServer;

pub(crate) const LIST_PAGE: usize = 50;

pub(crate) const LIST_MAX: usize = 200;

pub(crate) const SEARCH_PAGE: usize = 20;

pub(crate) const SEARCH_MAX: usize = 100;

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

// ----- paging -----

/// `Paging` is one call's page: its arguments (to bind the next cursor to),
/// the position it starts at, and its size.
pub(crate) struct Paging<P> {
    pub args: Value,
    pub position: P,
    pub limit: usize,
}

pub(crate) fn more_line(text: &mut String, next: Option<&String>, what: &str) {
    if next.is_some() {
        let _ = writeln!(
            text,
            "More {what} follow: pass next_cursor as cursor (with the same other arguments)."
        );
    } else {
        let _ = writeln!(text, "That is the last page.");
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
    let mut out = Vec::new();
    let mut page = 0u32;
    while out.len() < end {
        let mut search = Search::new(terms);
        search.page = page;
        search.per_page = SEARCH_FETCH as u32;
        let (got, items) = fetch(search).await?;
        out.extend(items);
        if got < SEARCH_FETCH {
            break;
        }
        page += 1;
    }
    Ok(out)
}

impl MattermostServer {
    /// Reads `limit` and `cursor` for `tool`: a cursor must have been made
    /// for the same tool and other arguments.
    pub(crate) fn paging<A: Serialize, P: DeserializeOwned + Default>(
        &self,
        tool: &str,
        args: &A,
        limit: Option<u32>,
        cursor: Option<&str>,
        default: usize,
        max: usize,
    ) -> Result<Paging<P>, ToolError> {
        let args = serde_json::to_value(args).unwrap_or(Value::Null);
        let limit = match limit {
            Some(0) => {
                return Err(ToolError::Tool(
                    "limit counts from 1; pass 1 or more, or leave it out".to_owned(),
                ));
            }
            Some(n) => (n as usize).min(max),
            None => default,
        };
        let position = match cursor.filter(|c| !c.trim().is_empty()) {
            Some(cursor) => self.shared.cursors.open(tool, &args, cursor)?,
            None => P::default(),
        };
        Ok(Paging {
            args,
            position,
            limit,
        })
    }

    /// A cursor for the page after this one.
    pub(crate) fn next_cursor<P: Serialize>(
        &self,
        tool: &str,
        args: &Value,
        position: &P,
    ) -> String {
        self.shared.cursors.seal(tool, args, position)
    }

    /// The page of `items` at `offset`, and the cursor after it.
    pub(crate) fn slice<T: Clone>(
        &self,
        tool: &str,
        paging: &Paging<usize>,
        items: &[T],
    ) -> (Vec<T>, Option<String>) {
        let start = paging.position.min(items.len());
        let end = (start + paging.limit).min(items.len());
        let next = (end < items.len()).then(|| self.next_cursor(tool, &paging.args, &end));
        (items[start..end].to_vec(), next)
    }

    pub(crate) fn search_paging(
        &self,
        tool: &str,
        args: &SearchArgs,
    ) -> Result<Paging<usize>, ToolError> {
        let paging = self.paging::<_, usize>(
            tool,
            args,
            args.limit,
            args.cursor.as_deref(),
            SEARCH_PAGE,
            SEARCH_MAX,
        )?;
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
