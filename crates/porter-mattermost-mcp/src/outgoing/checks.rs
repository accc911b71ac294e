//! Message checks made before anyone is asked to post or edit: every
//! `@mention` must name an account (an unknown name is refused with the
//! closest usernames; a deactivated one is named as such), and a broadcast
//! (`@here`, `@channel`, `@all`) is counted, so the question can say how
//! many people it notifies.
//!
//! The parsing and the distances are plain functions; [`check_message`]
//! asks Mattermost about the names (one lookup for all of them, and the
//! account list only when a name is unknown).

use porter_mattermost::{Client, Error, User};

use crate::paging::all_pages;
use porter_mcp::suggest::distance;

/// `BROADCASTS` are the mentions that notify a whole channel.
pub const BROADCASTS: &[&str] = &["here", "channel", "all"];
/// `CLOSEST_NAMES` is how many near usernames a refusal suggests.
pub const CLOSEST_NAMES: usize = 3;
/// `USERS_PAGE` / `USERS_PAGES`: the account list is read 200 at a time, at
/// most 10 pages, so a refusal on a big server stays cheap.
const USERS_PAGE: u32 = 200;
const USERS_PAGES: u32 = 10;

/// `Reach` is who a message goes to, for counting a broadcast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// An existing channel: its active members, less the author, are told.
    Channel(String),
    /// A direct or group message not yet opened: this many other people.
    People(usize),
}

/// Tells whether a character can be part of a username.
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// `mentions` are the `@names` in a message, lowercase, each once, in the
/// order written; broadcasts are included. An `@` inside a word (an e-mail
/// address) or inside backticks is not a mention, and trailing `.`, `-`
/// or `_` (sentence punctuation) are dropped.
#[must_use]
pub fn mentions(message: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut in_code = false;
    let mut previous = ' ';
    let chars: Vec<char> = message.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            in_code = !in_code;
        } else if c == '@' && !in_code && !name_char(previous) {
            let name: String = chars[i + 1..]
                .iter()
                .take_while(|c| name_char(**c))
                .collect();
            let name = name.trim_end_matches(['.', '-', '_']).to_ascii_lowercase();
            if !name.is_empty() && !found.contains(&name) {
                found.push(name);
            }
        }
        previous = c;
        i += 1;
    }
    found
}

/// `closest` are up to `n` of `known` nearest to `name` by edit distance
/// (ties by name), leaving out those so far off they would not help.
#[must_use]
pub fn closest(name: &str, known: &[String], n: usize) -> Vec<String> {
    let limit = (name.chars().count() / 2).max(2);
    let mut scored: Vec<(usize, &String)> = known
        .iter()
        .map(|k| (distance(name, k), k))
        .filter(|(d, k)| *d <= limit || k.starts_with(name) || name.starts_with(k.as_str()))
        .collect();
    scored.sort();
    scored.into_iter().take(n).map(|(_, k)| k.clone()).collect()
}

/// `MessageCheck` is what the checks found that the person should see in
/// the question: the broadcasts and how many they notify.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageCheck {
    /// Sentences for the question, one per finding.
    pub notes: Vec<String>,
}

/// `check_message` resolves every `@mention` of `message` and counts its
/// broadcasts for `reach`. `Err` is the refusal, a sentence for the model
/// (it ends with "Nothing was posted." or `nothing_done`).
pub async fn check_message(
    client: &Client,
    message: &str,
    reach: &Reach,
    nothing_done: &str,
) -> Result<MessageCheck, String> {
    let names = mentions(message);
    let mut check = MessageCheck::default();
    let people: Vec<&String> = names
        .iter()
        .filter(|n| !BROADCASTS.contains(&n.as_str()))
        .collect();
    if !people.is_empty() {
        let found = client
            .users_by_usernames(&people)
            .await
            .map_err(|e| format!("{e}. {nothing_done}"))?;
        let by_name = |name: &str| -> Option<&User> {
            found.iter().find(|u| u.username.eq_ignore_ascii_case(name))
        };
        let mut unknown: Vec<&str> = Vec::new();
        for name in &people {
            match by_name(name) {
                Some(user) if !user.is_active() => {
                    return Err(format!(
                        "@{} is a deactivated account: the mention would notify no one. Leave the @ off (write the name plainly) or mention someone else. {nothing_done}",
                        user.username
                    ));
                }
                Some(_) => {}
                None => unknown.push(name),
            }
        }
        if !unknown.is_empty() {
            let known = known_usernames(client).await.unwrap_or_default();
            let mut sentences = Vec::new();
            for name in unknown {
                let near = closest(name, &known, CLOSEST_NAMES);
                let hint = if near.is_empty() {
                    "no username is close; search_users finds people by part of their name"
                        .to_owned()
                } else {
                    let near: Vec<String> = near.iter().map(|n| format!("@{n}")).collect();
                    format!("the closest usernames are {}", near.join(", "))
                };
                sentences.push(format!("@{name} is not an account on this server ({hint})"));
            }
            return Err(format!(
                "{}. Fix the mention, or leave the @ off if no account is meant. {nothing_done}",
                sentences.join("; ")
            ));
        }
    }
    let broadcasts: Vec<&String> = names
        .iter()
        .filter(|n| BROADCASTS.contains(&n.as_str()))
        .collect();
    if !broadcasts.is_empty() {
        let others = match reach {
            Reach::Channel(channel_id) => {
                let stats = client
                    .channel_stats(channel_id)
                    .await
                    .map_err(|e| format!("{e}. {nothing_done}"))?;
                usize::try_from(stats.member_count.saturating_sub(1)).unwrap_or(0)
            }
            Reach::People(n) => *n,
        };
        let shown: Vec<String> = broadcasts.iter().map(|b| format!("@{b}")).collect();
        let people = if others == 1 { "person" } else { "people" };
        let here = if broadcasts.iter().all(|b| *b == "here") {
            " (those of them online)"
        } else {
            ""
        };
        check.notes.push(format!(
            "{} notifies {others} {people}{here}: everyone in the conversation but the author.",
            shown.join(" and ")
        ));
    }
    Ok(check)
}

/// Every username the server knows, read page by page up to a bound.
async fn known_usernames(client: &Client) -> Result<Vec<String>, Error> {
    let enough = (USERS_PAGES * USERS_PAGE) as usize;
    all_pages(USERS_PAGE, enough, |page| async move {
        let users = client.users_page(page, USERS_PAGE).await?;
        Ok((users.len(), users.into_iter().map(|u| u.username).collect()))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_found_but_not_in_addresses_or_code() {
        let cases: &[(&str, &[&str])] = &[
            ("hi @alice and @Bob.", &["alice", "bob"]),
            ("mail bob@example.com", &[]),
            ("`@carol` is code, @dave is not", &["dave"]),
            ("@here @channel @all", &["here", "channel", "all"]),
            ("@alice @alice, (@first.last)", &["alice", "first.last"]),
            ("an @ alone", &[]),
        ];
        for (message, want) in cases {
            assert_eq!(mentions(message), want.to_vec(), "{message}");
        }
    }

    #[test]
    fn the_closest_names_come_nearest_first_and_far_ones_are_left_out() {
        let known: Vec<String> = ["alice", "alicia", "bob", "carol", "malice"]
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(closest("alcie", &known, 3), ["alice", "alicia"]);
        assert_eq!(closest("carl", &known, 3), ["carol"]);
        assert!(closest("zzzzzzzz", &known, 3).is_empty());
    }
}
