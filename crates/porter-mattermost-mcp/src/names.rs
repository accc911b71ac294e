//! Lenient names: a channel or team is named by its id, its URL name
//! (`town-square`, `~town-square`) or its shown name (`Town Square`), in any
//! case, with spaces, dashes and underscores taken as the same. A post is
//! named by its id or a permalink.

use std::fmt::Write as _;

use porter_mcp::suggest::distance;

/// `looks_like_id` is true for a Mattermost id: 26 lowercase letters and
/// digits.
#[must_use]
pub fn looks_like_id(text: &str) -> bool {
    text.len() == 26
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// `name_key` is the form names are compared in: lower case, without a
/// leading `~` or `@`, keeping only letters and digits.
#[must_use]
pub fn name_key(name: &str) -> String {
    name.trim()
        .trim_start_matches(['~', '@'])
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// `username` is a username as people write it, without spaces around or
/// a leading `@`.
#[must_use]
pub fn username(name: &str) -> &str {
    name.trim().trim_start_matches('@')
}

/// `usernames` are the usernames of a list as people write them, leaving
/// out empty ones.
#[must_use]
pub fn usernames(names: &[String]) -> Vec<String> {
    names
        .iter()
        .map(|n| username(n).to_owned())
        .filter(|n| !n.is_empty())
        .collect()
}

/// `Candidate` is one thing a name may mean: its id and the names it goes by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The id.
    pub id: String,
    /// The URL name (`town-square`).
    pub name: String,
    /// The shown name (`Town Square`).
    pub display_name: String,
    /// Where it lives, for telling same-named things apart ("team porter").
    pub place: String,
}

impl Candidate {
    /// `label` is how a candidate is listed: `~town-square ("Town Square", team porter, id …)`.
    #[must_use]
    pub fn label(&self, sigil: &str) -> String {
        let mut label = format!("{sigil}{}", self.name);
        let mut extra = Vec::new();
        if !self.display_name.is_empty() && self.display_name != self.name {
            extra.push(format!("{:?}", self.display_name));
        }
        if !self.place.is_empty() {
            extra.push(self.place.clone());
        }
        extra.push(format!("id {}", self.id));
        let _ = write!(label, " ({})", extra.join(", "));
        label
    }
}

/// `Match` is what a name turned out to mean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    /// Exactly one candidate.
    One(Candidate),
    /// Several candidates share the name.
    Ambiguous(Vec<Candidate>),
    /// None does; the closest names, best first (at most `CLOSEST`).
    Unknown(Vec<Candidate>),
}

/// `CLOSEST` is how many near names an unknown name suggests.
pub const CLOSEST: usize = 3;

/// `find` matches `wanted` against `candidates`: an exact id first, then an
/// exact URL name, then the lenient key of the URL or shown name.
#[must_use]
pub fn find(wanted: &str, candidates: &[Candidate]) -> Match {
    let wanted = wanted.trim();
    if let Some(c) = candidates.iter().find(|c| c.id == wanted) {
        return Match::One(c.clone());
    }
    let bare = wanted.trim_start_matches(['~', '@']);
    let exact: Vec<&Candidate> = candidates.iter().filter(|c| c.name == bare).collect();
    if exact.len() == 1 {
        return Match::One(exact[0].clone());
    }
    let key = name_key(wanted);
    let mut found: Vec<Candidate> = candidates
        .iter()
        .filter(|c| {
            !key.is_empty() && (name_key(&c.name) == key || name_key(&c.display_name) == key)
        })
        .cloned()
        .collect();
    match found.len() {
        0 => Match::Unknown(closest(&key, candidates)),
        1 => Match::One(found.remove(0)),
        _ => Match::Ambiguous(found),
    }
}

/// The candidates whose names are nearest to `key`, best first.
fn closest(key: &str, candidates: &[Candidate]) -> Vec<Candidate> {
    let mut scored: Vec<(usize, &Candidate)> = candidates
        .iter()
        .map(|c| {
            let by_name = distance(key, &name_key(&c.name));
            let by_shown = distance(key, &name_key(&c.display_name));
            let contains = !key.is_empty()
                && (name_key(&c.name).contains(key) || name_key(&c.display_name).contains(key));
            let score = by_name.min(by_shown);
            (if contains { score.min(1) } else { score }, c)
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.name.cmp(&b.1.name)));
    let limit = (key.chars().count() / 2).max(2);
    scored
        .into_iter()
        .filter(|(score, _)| *score <= limit)
        .take(CLOSEST)
        .map(|(_, c)| c.clone())
        .collect()
}

/// `post_id_of` takes a post id out of an id or a permalink
/// (`…/_redirect/pl/<id>`, `…/<team>/pl/<id>`); `None` when it is neither.
#[must_use]
pub fn post_id_of(text: &str) -> Option<String> {
    let text = text.trim();
    if looks_like_id(text) {
        return Some(text.to_owned());
    }
    let path = text.split(['?', '#']).next().unwrap_or_default();
    let (_, id) = path.trim_end_matches('/').rsplit_once("/pl/")?;
    looks_like_id(id).then(|| id.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(id: &str, name: &str, display: &str, place: &str) -> Candidate {
        Candidate {
            id: id.to_owned(),
            name: name.to_owned(),
            display_name: display.to_owned(),
            place: place.to_owned(),
        }
    }

    fn channels() -> Vec<Candidate> {
        vec![
            candidate("c1", "town-square", "Town Square", "team porter"),
            candidate("c2", "off-topic", "Off-Topic", "team porter"),
            candidate("c3", "design", "Design", "team porter"),
            candidate("c4", "town-square", "Town Square", "team other"),
            candidate("c5", "release_notes", "Release Notes", "team porter"),
        ]
    }

    fn one(m: Match) -> String {
        match m {
            Match::One(c) => c.id,
            other => panic!("expected one match, got {other:?}"),
        }
    }

    #[test]
    fn names_match_by_id_url_name_or_shown_name_leniently() {
        let list = channels();
        let cases = [
            ("c2", "c2"),
            ("off-topic", "c2"),
            ("~off-topic", "c2"),
            ("Off-Topic", "c2"),
            ("off topic", "c2"),
            ("OFF_TOPIC", "c2"),
            ("  ~Design ", "c3"),
            ("release-notes", "c5"),
            ("Release Notes", "c5"),
            ("releasenotes", "c5"),
        ];
        for (wanted, id) in cases {
            assert_eq!(one(find(wanted, &list)), id, "{wanted}");
        }
    }

    #[test]
    fn a_shared_name_lists_every_candidate() {
        match find("Town Square", &channels()) {
            Match::Ambiguous(found) => {
                let ids: Vec<&str> = found.iter().map(|c| c.id.as_str()).collect();
                assert_eq!(ids, ["c1", "c4"]);
                assert!(found[1].label("~").contains("team other"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unknown_name_suggests_the_closest() {
        match find("town-sqare", &channels()) {
            Match::Unknown(near) => assert_eq!(near[0].name, "town-square"),
            other => panic!("{other:?}"),
        }
        match find("desgin", &channels()) {
            Match::Unknown(near) => assert_eq!(near[0].id, "c3"),
            other => panic!("{other:?}"),
        }
        match find("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", &channels()) {
            Match::Unknown(near) => assert!(near.is_empty(), "{near:?}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(find("", &channels()), Match::Unknown(_)));
    }

    #[test]
    fn ids_and_permalinks_name_posts() {
        let id = "abcdefghijklmnopqrstuvwxyz";
        assert!(looks_like_id(id));
        assert!(!looks_like_id("ABCDEFGHIJKLMNOPQRSTUVWXYZ"));
        assert!(!looks_like_id("short"));
        let cases = [
            (id.to_owned(), Some(id)),
            (
                format!("https://chat.example.com/_redirect/pl/{id}"),
                Some(id),
            ),
            (
                format!("https://chat.example.com/porter/pl/{id}/"),
                Some(id),
            ),
            (format!("http://127.0.0.1:9/porter/pl/{id}?x=1"), Some(id)),
            (
                "https://chat.example.com/porter/channels/town".to_owned(),
                None,
            ),
            (
                "https://chat.example.com/_redirect/pl/short".to_owned(),
                None,
            ),
            ("hello".to_owned(), None),
        ];
        for (text, want) in cases {
            assert_eq!(post_id_of(&text).as_deref(), want, "{text}");
        }
    }
}
