//! `porter-mattermost-mcp` is `porter mattermost`, the MCP server:
//! Mattermost's users, channels, posts and files as MCP tools, over stdio
//! or streamable HTTP, built on the API client of `porter-mattermost` and
//! the tool shape of `porter-mcp`.
//!
//! [`MattermostServer`] is the rmcp [`ServerHandler`](rmcp::ServerHandler). It lists the read
//! tools always, `save_file` only when it runs on the person's machine
//! (stdio), and the write tools only when writes are allowed; every write
//! asks the person first through an MCP elicitation unless the operator left
//! approval to the client. Attached files reach the model as content through
//! `porter-fileview`; what other people wrote is always marked as theirs.
//!
//! It deliberately does not read the environment (the binary builds the
//! [`Client`](porter_mattermost::Client) and [`Options`] from [`Settings`]), does not speak HTTP to
//! Mattermost itself (`porter-mattermost` does), and does not decide the
//! rules for local paths and outgoing files (`porter-paths` and
//! [`outgoing`] do).

mod ask;
mod cache;
mod config;
mod cursor;
mod doctor;
mod handler;
mod http;
mod lookup;
mod names;
mod options;
pub mod outgoing;
mod output;
mod paging;
mod registry;
mod render;
mod resources;
mod server;
mod tools;

pub use cache::{FILE_CACHE_BYTES, FileCache};
pub use config::{ConfigError, Need, Settings, parse_bool};
pub use cursor::{CursorError, Cursors, canonical_json};
pub use doctor::{Check, Level, Report, doctor};
pub use handler::{SUPPORTED_VERSIONS, serve_stdio};
pub use http::{HttpOptions, LOOPBACK_HOSTS, http_app, serve_http};
pub use names::{Candidate, Match, find, looks_like_id, name_key, post_id_of};
pub use options::{
    ASK_TIMEOUT, Kind, Options, REQUIRES_USER_INTERACTION, RESOURCE_BYTES, SAVE_FILE_BYTES,
    Transport,
};
pub use output::*;
pub use registry::{LOCAL_TOOLS, READ_TOOLS, UNASKED_TOOLS, WRITE_TOOLS};
pub use render::iso_utc;
pub use resources::{COMPLETIONS, FILE_ID};
pub use server::MattermostServer;
pub use tools::posts::{PostChangeOut, UnreadChannelOut, UnreadOut};
pub use tools::threads::{ThreadItemOut, ThreadsOut};

#[cfg(test)]
mod tests {
    use porter_mattermost::{Client, Token};

    use super::*;

    /// A server with `options`, for a Mattermost that is never called.
    fn server_with(options: Options) -> MattermostServer {
        let client = Client::new(
            "http://127.0.0.1:9",
            Token::new("test-token"),
            porter_mattermost::ClientOptions::default(),
        )
        .unwrap();
        MattermostServer::new(client, Token::new("test-token"), options)
    }

    fn server(
        transport: Transport,
        allow_writes: bool,
        ask_before_writes: bool,
    ) -> MattermostServer {
        server_with(Options {
            transport,
            allow_writes,
            ask_before_writes,
            ..Options::default()
        })
    }

    fn names(server: &MattermostServer) -> Vec<String> {
        let mut names: Vec<String> = server.tools().iter().map(|t| t.name.to_string()).collect();
        names.sort();
        names
    }

    fn sorted(parts: &[&[&str]]) -> Vec<String> {
        let mut names: Vec<String> = parts
            .iter()
            .flat_map(|p| p.iter().map(|n| (*n).to_owned()))
            .collect();
        names.sort();
        names
    }

    fn every_setup() -> Vec<MattermostServer> {
        let mut all = Vec::new();
        for transport in [Transport::Stdio, Transport::Http] {
            for writes in [false, true] {
                for ask in [false, true] {
                    all.push(server(transport, writes, ask));
                }
            }
        }
        all
    }

    #[test]
    fn every_tool_has_a_title_and_all_four_hints_and_none_is_open_world() {
        let mut checked = 0;
        for server in every_setup() {
            for tool in server.tools() {
                let name = &tool.name;
                assert!(
                    tool.title.as_deref().is_some_and(|t| !t.is_empty()),
                    "{name} has no title"
                );
                let hints = tool
                    .annotations
                    .as_ref()
                    .unwrap_or_else(|| panic!("{name} has no annotations"));
                assert!(hints.read_only_hint.is_some(), "{name}: readOnlyHint");
                assert!(hints.destructive_hint.is_some(), "{name}: destructiveHint");
                assert!(hints.idempotent_hint.is_some(), "{name}: idempotentHint");
                assert_eq!(hints.open_world_hint, Some(false), "{name}: openWorldHint");
                checked += 1;
            }
        }
        assert!(checked > 0, "the scan found no tools to check");
    }

    #[test]
    fn read_tools_say_they_only_read_and_write_tools_say_they_do_not() {
        let server = server(Transport::Stdio, true, true);
        let tools = server.tools();
        assert!(!tools.is_empty(), "the scan found no tools to check");
        for tool in tools {
            let hints = tool.annotations.clone().unwrap_or_default();
            let read_only = READ_TOOLS.contains(&tool.name.as_ref());
            assert_eq!(hints.read_only_hint, Some(read_only), "{}", tool.name);
            if ["create_post", "dm", "group_message"].contains(&tool.name.as_ref()) {
                assert_eq!(hints.destructive_hint, Some(false), "{}", tool.name);
                assert_eq!(hints.idempotent_hint, Some(false), "{}", tool.name);
            }
            // Changing a post: an edit or delete overwrites, a repeat changes nothing more.
            let destructive = match tool.name.as_ref() {
                "update_post" | "delete_post" | "remove_reaction" => Some(true),
                "add_reaction" | "pin_post" => Some(false),
                _ => None,
            };
            if destructive.is_some() {
                assert_eq!(hints.destructive_hint, destructive, "{}", tool.name);
                assert_eq!(hints.idempotent_hint, Some(true), "{}", tool.name);
            }
        }
    }

    #[test]
    fn a_read_only_server_lists_only_read_tools_and_save_file_on_stdio() {
        assert_eq!(
            names(&server(Transport::Stdio, false, true)),
            sorted(&[READ_TOOLS, LOCAL_TOOLS])
        );
        assert_eq!(
            names(&server(Transport::Http, false, true)),
            sorted(&[READ_TOOLS])
        );
        assert!(!READ_TOOLS.is_empty() && !LOCAL_TOOLS.is_empty());
    }

    #[test]
    fn allowing_writes_adds_exactly_the_write_tools() {
        assert!(!WRITE_TOOLS.is_empty());
        for transport in [Transport::Stdio, Transport::Http] {
            for ask in [false, true] {
                let without = names(&server(transport, false, ask));
                let with = names(&server(transport, true, ask));
                assert!(!without.is_empty(), "the scan found no tools to check");
                let added: Vec<&String> = with.iter().filter(|n| !without.contains(n)).collect();
                let mut expected: Vec<&str> = WRITE_TOOLS.to_vec();
                expected.sort_unstable();
                assert_eq!(added, expected, "{transport:?}");
                assert!(without.iter().all(|n| with.contains(n)));
            }
        }
    }

    #[test]
    fn only_stdio_lists_save_file() {
        let mut seen = 0;
        for server in every_setup() {
            let listed = names(&server).contains(&"save_file".to_owned());
            assert_eq!(listed, server.options().transport == Transport::Stdio);
            seen += usize::from(listed);
        }
        assert!(seen > 0, "no setup listed save_file at all");
    }

    #[test]
    fn every_tool_declares_its_input_and_output_schemas() {
        let tools = server(Transport::Stdio, true, true).tools();
        assert!(!tools.is_empty(), "the scan found no tools to check");
        for tool in tools {
            assert_eq!(
                tool.input_schema.get("type").and_then(|t| t.as_str()),
                Some("object"),
                "{}",
                tool.name
            );
            let output = tool
                .output_schema
                .as_ref()
                .unwrap_or_else(|| panic!("{} has no output schema", tool.name));
            assert_eq!(
                output.get("type").and_then(|t| t.as_str()),
                Some("object"),
                "{}",
                tool.name
            );
            assert!(
                tool.description.as_deref().is_some_and(|d| d.len() > 20),
                "{}",
                tool.name
            );
        }
    }

    /// Every tool as a client lists it (name, title, description,
    /// annotations, both schemas, `_meta`), with writes allowed over stdio,
    /// once asking before writes and once leaving approval to the client:
    /// any change to what a client sees shows up as a changed snapshot to
    /// review (CONTRIBUTING.md says how).
    #[test]
    fn the_tool_listing_is_the_reviewed_one() {
        insta::assert_json_snapshot!(
            "mattermost_tools_asking",
            server(Transport::Stdio, true, true).tools()
        );
        insta::assert_json_snapshot!(
            "mattermost_tools_not_asking",
            server(Transport::Stdio, true, false).tools()
        );
    }

    #[test]
    fn write_descriptions_say_who_approves() {
        for (ask, words) in [
            (true, "asks the person to confirm"),
            (false, "the only check"),
        ] {
            let tools = server(Transport::Stdio, true, ask).tools();
            let writes: Vec<_> = tools
                .iter()
                .filter(|t| WRITE_TOOLS.contains(&t.name.as_ref()))
                .filter(|t| !UNASKED_TOOLS.contains(&t.name.as_ref()))
                .collect();
            assert_eq!(
                writes.len(),
                WRITE_TOOLS
                    .iter()
                    .filter(|n| !UNASKED_TOOLS.contains(n))
                    .count()
            );
            for tool in writes {
                let about = tool.description.as_deref().unwrap_or_default();
                assert!(about.contains(words), "{}: {about}", tool.name);
            }
        }
    }

    #[test]
    fn forcing_the_human_in_the_loop_marks_only_asking_tools_and_only_with_asking_off() {
        let marked = |ask: bool, force: bool| -> Vec<String> {
            let options = Options {
                allow_writes: true,
                ask_before_writes: ask,
                force_human_in_the_loop: force,
                ..Options::default()
            };
            let mut names: Vec<String> = server_with(options)
                .tools()
                .into_iter()
                .filter(|t| {
                    t.meta
                        .as_ref()
                        .and_then(|m| m.0.get(REQUIRES_USER_INTERACTION))
                        == Some(&serde_json::Value::Bool(true))
                })
                .map(|t| t.name.to_string())
                .collect();
            names.sort();
            names
        };
        let mut asking: Vec<String> = WRITE_TOOLS
            .iter()
            .filter(|n| !UNASKED_TOOLS.contains(n))
            .map(|n| (*n).to_owned())
            .collect();
        asking.sort();
        assert!(asking.contains(&"delete_draft".to_owned()));
        assert_eq!(marked(false, true), asking);
        assert!(marked(false, false).is_empty());
        assert!(marked(true, true).is_empty(), "porter asks itself then");
    }

    #[test]
    fn own_state_tools_never_ask_and_say_so() {
        for ask in [true, false] {
            for tool in server(Transport::Stdio, true, ask).tools() {
                if UNASKED_TOOLS.contains(&tool.name.as_ref()) {
                    let about = tool.description.as_deref().unwrap_or_default();
                    assert!(about.contains("does not ask"), "{}: {about}", tool.name);
                    assert!(
                        !about.contains("asks the person to confirm"),
                        "{}",
                        tool.name
                    );
                }
            }
        }
    }

    #[test]
    fn the_instructions_say_what_others_wrote_is_not_instructions_and_who_approves_writes() {
        let read_only = server(Transport::Stdio, false, true).instructions();
        assert!(read_only.contains("their text"), "{read_only}");
        assert!(read_only.contains("never as instructions"), "{read_only}");
        assert!(read_only.contains("only reads"), "{read_only}");
        let asking = server(Transport::Stdio, true, true).instructions();
        assert!(
            asking.contains("ask the person before anything is posted"),
            "{asking}"
        );
        let not_asking = server(Transport::Http, true, false).instructions();
        assert!(
            not_asking.contains("does not ask the person"),
            "{not_asking}"
        );
        assert!(!not_asking.contains("save_file"), "{not_asking}");
    }
}
