//! Post and file search with Mattermost's term syntax: words (`word*` for a
//! prefix), `"quoted phrases"`, `-excluded` words, and the filters
//! `from:`, `in:`, `before:`, `after:`, `on:` (and `ext:` for files), with
//! all words required unless `is_or_search`.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::shared::{
    ApiResult, Body, Caller, PER_PAGE_DEFAULT, PathParams, Session, ok, page_range, page_size,
    require_id, require_team_member,
};
use crate::error::ApiError;
use crate::model::{Channel, parse_date, start_of_day_ms};
use crate::state::State as ServerState;

/// The body of a search (`model.SearchParameter`).
#[derive(Deserialize, Default)]
#[serde(default)]
struct SearchBody {
    terms: String,
    is_or_search: bool,
    /// Seconds east of UTC, for the date filters.
    time_zone_offset: i64,
    page: Option<i64>,
    per_page: Option<i64>,
}

/// One text term: a word (maybe a prefix) or a phrase of words.
#[derive(Debug, Clone, PartialEq)]
struct TextTerm {
    /// The term's words, lowercase; one word unless it is a phrase.
    words: Vec<String>,
    /// `word*`: matches words that start with it.
    prefix: bool,
    /// How the term was written, for `matches`.
    shown: String,
}

impl TextTerm {
    /// Tells whether a text (as its lowercase words) contains the term.
    fn found_in(&self, words: &[String]) -> bool {
        match self.words.as_slice() {
            [] => false,
            [one] if self.prefix => words.iter().any(|w| w.starts_with(one.as_str())),
            [one] => words.iter().any(|w| w == one),
            many => words.windows(many.len()).any(|window| window == many),
        }
    }
}

/// A parsed search: text terms and filters.
#[derive(Debug, Default)]
struct Terms {
    text: Vec<TextTerm>,
    excluded: Vec<TextTerm>,
    from: Vec<String>,
    not_from: Vec<String>,
    in_channels: Vec<String>,
    not_in_channels: Vec<String>,
    extensions: Vec<String>,
    not_extensions: Vec<String>,
    before: Option<(i64, u32, u32)>,
    after: Option<(i64, u32, u32)>,
    on: Option<(i64, u32, u32)>,
}

/// Splits text into lowercase words the way search compares them: runs of
/// letters, digits, `_` and `#` (so hashtags stay whole).
fn words_of(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Splits the terms string into tokens, keeping `"quoted phrases"` whole
/// (the flag says which were quoted); a lone `-` before a quote is its own
/// token, which excludes the phrase.
fn tokens(terms: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in terms.chars() {
        if c == '"' {
            if !current.is_empty() {
                out.push((std::mem::take(&mut current), quoted));
            }
            quoted = !quoted;
        } else if c.is_whitespace() && !quoted {
            if !current.is_empty() {
                out.push((std::mem::take(&mut current), false));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        out.push((current, quoted));
    }
    out
}

/// Parses a terms string.
fn parse_terms(terms: &str) -> Terms {
    let mut parsed = Terms::default();
    let mut pending_minus = false;
    for (token, quoted) in tokens(terms) {
        if quoted {
            let term = TextTerm {
                words: words_of(&token),
                prefix: false,
                shown: token.clone(),
            };
            if std::mem::take(&mut pending_minus) {
                parsed.excluded.push(term);
            } else {
                parsed.text.push(term);
            }
            continue;
        }
        if token == "-" {
            pending_minus = true;
            continue;
        }
        let lower = token.to_lowercase();
        let (negated, body) = match lower.strip_prefix('-') {
            Some(rest) if !rest.is_empty() => (true, rest),
            _ => (false, lower.as_str()),
        };
        if let Some((key, value)) = body.split_once(':') {
            let value = value.trim_start_matches(['@', '~']).to_owned();
            let handled = match key {
                "from" if negated => Some(&mut parsed.not_from),
                "from" => Some(&mut parsed.from),
                "in" | "channel" if negated => Some(&mut parsed.not_in_channels),
                "in" | "channel" => Some(&mut parsed.in_channels),
                "ext" if negated => Some(&mut parsed.not_extensions),
                "ext" => Some(&mut parsed.extensions),
                _ => None,
            };
            if let Some(list) = handled {
                if !value.is_empty() {
                    list.push(value);
                }
                continue;
            }
            let date = parse_date(&value);
            match key {
                "before" => {
                    parsed.before = date;
                    continue;
                }
                "after" => {
                    parsed.after = date;
                    continue;
                }
                "on" => {
                    parsed.on = date;
                    continue;
                }
                _ => {}
            }
        }
        let prefix = body.ends_with('*');
        let term = TextTerm {
            words: words_of(body.trim_end_matches('*')),
            prefix,
            shown: token.trim_start_matches('-').to_owned(),
        };
        if term.words.is_empty() {
            continue;
        }
        if negated {
            parsed.excluded.push(term);
        } else {
            parsed.text.push(term);
        }
    }
    parsed
}

/// Milliseconds at the start of a day in the searcher's time zone.
fn start_of_day(date: (i64, u32, u32), offset_seconds: i64) -> i64 {
    start_of_day_ms(date, offset_seconds)
}

/// `ONE_DAY_MS` is a day in milliseconds.
const ONE_DAY_MS: i64 = 86_400_000;

impl Terms {
    /// Tells whether a time passes the date filters: `before:` the day
    /// starts, `after:` the day ends, `on:` within it.
    fn date_ok(&self, at: i64, offset: i64) -> bool {
        self.before.is_none_or(|d| at < start_of_day(d, offset))
            && self
                .after
                .is_none_or(|d| at >= start_of_day(d, offset) + ONE_DAY_MS)
            && self.on.is_none_or(|d| {
                let start = start_of_day(d, offset);
                at >= start && at < start + ONE_DAY_MS
            })
    }

    /// Tells whether a username passes `from:` and `-from:`.
    fn author_ok(&self, username: &str) -> bool {
        (self.from.is_empty() || self.from.iter().any(|f| f == username))
            && !self.not_from.iter().any(|f| f == username)
    }

    /// Tells whether a channel passes `in:` and `-in:`.
    fn channel_ok(&self, state: &ServerState, channel: &Channel) -> bool {
        let named = |value: &String| channel_named(state, channel, value);
        (self.in_channels.is_empty() || self.in_channels.iter().any(named))
            && !self.not_in_channels.iter().any(named)
    }

    /// The text terms found in `words`, or `None` when the text does not
    /// match (all terms needed, or any with `or_search`; no excluded term).
    fn text_matches(&self, words: &[String], or_search: bool) -> Option<Vec<String>> {
        if self.excluded.iter().any(|t| t.found_in(words)) {
            return None;
        }
        let found: Vec<String> = self
            .text
            .iter()
            .filter(|t| t.found_in(words))
            .map(|t| t.shown.clone())
            .collect();
        let ok = if self.text.is_empty() {
            true
        } else if or_search {
            !found.is_empty()
        } else {
            found.len() == self.text.len()
        };
        ok.then_some(found)
    }
}

/// Tells whether `in:value` names a channel: by name or shown name, or for
/// a direct or group channel by a member's username.
fn channel_named(state: &ServerState, channel: &Channel, value: &str) -> bool {
    if channel.name == value || channel.display_name.to_lowercase() == value {
        return true;
    }
    channel.is_direct_or_group()
        && state
            .user_by_name(value)
            .is_some_and(|user| state.channel_member_ids(&channel.id).contains(&user.id))
}

/// The channels a search covers: those the user is in (in the team, plus
/// direct and group channels; every team when `team_id` is `None`).
fn searched_channels<'s>(
    state: &'s ServerState,
    user_id: &str,
    team_id: Option<&str>,
) -> Vec<&'s Channel> {
    state
        .channels
        .iter()
        .filter(|c| {
            team_id.is_none_or(|t| c.team_id == t || c.is_direct_or_group())
                && state.is_channel_member(&c.id, user_id)
        })
        .collect()
}

/// A search ready to run: what was asked, its terms, and the channels it
/// covers that pass `in:` and `-in:`.
struct Search<'s> {
    asked: SearchBody,
    terms: Terms,
    channels: Vec<&'s Channel>,
}

/// Checks a team search is allowed, reads its body and parses its terms.
fn prepare<'s>(
    state: &'s ServerState,
    session: &Session,
    team: Team,
    body: &Body,
) -> Result<Search<'s>, ApiError> {
    let team_id = team.map(|PathParams(id)| id);
    let team_id = team_id.as_deref();
    if let Some(team_id) = team_id {
        require_id(team_id, "team_id")?;
        require_team_member(state, team_id, &session.user_id)?;
    }
    let asked: SearchBody = body.json("terms")?;
    if asked.terms.trim().is_empty() {
        return Err(ApiError::invalid_body_param("terms"));
    }
    let terms = parse_terms(&asked.terms);
    let channels = searched_channels(state, &session.user_id, team_id)
        .into_iter()
        .filter(|c| terms.channel_ok(state, c))
        .collect();
    Ok(Search {
        asked,
        terms,
        channels,
    })
}

impl Search<'_> {
    /// Tells whether what a user made at a time passes `from:`, `-from:`
    /// and the date filters (in the searcher's time zone).
    fn made_ok(&self, state: &ServerState, user_id: &str, at: i64) -> bool {
        let author = state.user(user_id).map_or("", |u| u.username.as_str());
        self.terms.author_ok(author) && self.terms.date_ok(at, self.asked.time_zone_offset)
    }

    /// The text terms found in `text`, or `None` when it does not match.
    fn found_in(&self, text: &str) -> Option<Vec<String>> {
        self.terms
            .text_matches(&words_of(text), self.asked.is_or_search)
    }

    /// The slice of `total` results the page asks for, and whether more
    /// follow.
    fn page(&self, total: usize) -> (usize, usize, bool) {
        let per_page = page_size(
            self.asked.per_page.map(|n| n.to_string()).as_deref(),
            PER_PAGE_DEFAULT,
        );
        let page = usize::try_from(self.asked.page.unwrap_or(0)).unwrap_or(0);
        let range = page_range(page, per_page, total);
        (range.start, range.end, range.end < total)
    }
}

/// The page of posts a prepared search finds.
fn search_posts(state: &ServerState, search: &Search<'_>) -> ApiResult {
    let mut hits: Vec<(&crate::model::StoredPost, Vec<String>)> = Vec::new();
    for channel in &search.channels {
        for post in state.channel_posts(&channel.id) {
            if !search.made_ok(state, &post.user_id, post.create_at) {
                continue;
            }
            if let Some(found) = search.found_in(&post.message) {
                hits.push((post, found));
            }
        }
    }
    hits.sort_by_key(|(p, _)| std::cmp::Reverse(p.create_at));
    let (start, end, has_next) = search.page(hits.len());
    let page = &hits[start..end];
    let mut posts = Map::new();
    let mut matches = Map::new();
    for (post, found) in page {
        posts.insert(post.id.clone(), state.post_json(post));
        matches.insert(post.id.clone(), json!(found));
    }
    let order: Vec<&str> = page.iter().map(|(p, _)| p.id.as_str()).collect();
    ok(&json!({
        "order": order,
        "posts": posts,
        "matches": matches,
        "next_post_id": "",
        "prev_post_id": "",
        "has_next": has_next,
        "first_inaccessible_post_time": 0,
    }))
}

/// The page of files a prepared search finds by name, among those attached
/// to posts the user can see.
fn search_files(state: &ServerState, search: &Search<'_>) -> ApiResult {
    let terms = &search.terms;
    let mut hits: Vec<&crate::state::StoredFile> = state
        .files
        .iter()
        .filter(|f| f.info.delete_at == 0 && state.post(&f.info.post_id).is_some())
        .filter(|f| search.channels.iter().any(|c| c.id == f.info.channel_id))
        .filter(|f| {
            search.made_ok(state, &f.info.user_id, f.info.create_at)
                && (terms.extensions.is_empty() || terms.extensions.contains(&f.info.extension))
                && !terms.not_extensions.contains(&f.info.extension)
                && search.found_in(&f.info.name).is_some()
        })
        .collect();
    hits.sort_by_key(|f| std::cmp::Reverse(f.info.create_at));
    let (start, end, has_next) = if state.config.file_search_pages {
        search.page(hits.len())
    } else {
        // The database search: the newest hundred, whatever page is asked.
        (
            0,
            hits.len().min(crate::seed::FILE_SEARCH_DATABASE_MAX),
            false,
        )
    };
    let page = &hits[start..end];
    let mut infos = Map::new();
    for file in page {
        infos.insert(
            file.info.id.clone(),
            serde_json::to_value(&file.info).unwrap_or(Value::Null),
        );
    }
    let order: Vec<&str> = page.iter().map(|f| f.info.id.as_str()).collect();
    ok(&json!({
        "order": order,
        "file_infos": infos,
        "next_file_info_id": "",
        "prev_file_info_id": "",
        "has_next": has_next,
        "first_inaccessible_file_time": 0,
    }))
}

/// `Team` is the `{team_id}` of a search route, or `None` on the route
/// that searches every team the user is in.
type Team = Option<PathParams<String>>;

/// `POST /teams/{team_id}/posts/search` and `POST /posts/search`.
pub(crate) async fn posts(caller: Caller, team: Team, body: Body) -> ApiResult {
    let state = caller.lock();
    let search = prepare(&state, &caller.session, team, &body)?;
    search_posts(&state, &search)
}

/// `POST /teams/{team_id}/files/search` and `POST /files/search`.
pub(crate) async fn files(caller: Caller, team: Team, body: Body) -> ApiResult {
    let state = caller.lock();
    let search = prepare(&state, &caller.session, team, &body)?;
    search_files(&state, &search)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_split_into_words_phrases_and_filters() {
        let terms = parse_terms(
            r#"from:@bob in:~town-square "release candidate" deploy* -lunch before:2026-03-04 after:2026-03-01 on:2026-03-03 ext:pdf"#,
        );
        assert_eq!(terms.from, ["bob"]);
        assert_eq!(terms.in_channels, ["town-square"]);
        assert_eq!(terms.text.len(), 2);
        assert_eq!(terms.text[0].words, ["release", "candidate"]);
        assert!(terms.text[1].prefix);
        assert_eq!(terms.excluded[0].words, ["lunch"]);
        assert_eq!(terms.before, Some((2026, 3, 4)));
        assert_eq!(terms.after, Some((2026, 3, 1)));
        assert_eq!(terms.on, Some((2026, 3, 3)));
        assert_eq!(terms.extensions, ["pdf"]);
    }

    #[test]
    fn a_phrase_matches_only_words_in_that_order() {
        let phrase = TextTerm {
            words: vec!["release".into(), "candidate".into()],
            prefix: false,
            shown: "release candidate".into(),
        };
        assert!(phrase.found_in(&words_of("The release candidate is up.")));
        assert!(!phrase.found_in(&words_of("A candidate for release.")));
    }

    #[test]
    fn all_words_are_needed_unless_it_is_an_or_search() {
        let terms = parse_terms("staging lunch");
        let words = words_of("Deploy to staging went fine");
        assert!(terms.text_matches(&words, false).is_none());
        assert_eq!(
            terms.text_matches(&words, true),
            Some(vec!["staging".to_owned()])
        );
    }

    #[test]
    fn date_filters_follow_the_searchers_day() {
        let terms = parse_terms("on:2026-03-02");
        let nine_utc = 1_772_442_000_000;
        assert!(terms.date_ok(nine_utc, 0));
        // Ten hours east of UTC, 09:00 UTC is already 19:00 on the same day;
        // fourteen hours east it is the 3rd.
        assert!(terms.date_ok(nine_utc, 10 * 3600));
        assert!(!terms.date_ok(nine_utc, 15 * 3600));
        let after = parse_terms("after:2026-03-02");
        assert!(!after.date_ok(nine_utc, 0));
        assert!(after.date_ok(nine_utc + ONE_DAY_MS, 0));
        let before = parse_terms("before:2026-03-02");
        assert!(!before.date_ok(nine_utc, 0));
        assert!(before.date_ok(nine_utc - ONE_DAY_MS, 0));
    }
}
