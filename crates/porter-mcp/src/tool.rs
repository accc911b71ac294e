//! One shape for an MCP tool, and the registry that lists and calls them.
//!
//! A tool is a type implementing [`Tool`]: its name, title, description
//! and hints are constants, its arguments and output are types whose
//! schemas schemars writes (in standard JSON Schema, [`crate::schema`]),
//! and [`Tool::call`] does the work. A [`Registry`] holds a server's tools,
//! each with a kind of the server's choosing (which tools a setup lists,
//! which grant a call needs), lists them from the trait so that no name is
//! written twice, parses arguments, and turns a [`ToolError`] into what
//! the protocol sends.
//!
//! A failure the model should read (a name that fits nothing, a file too
//! large) is [`ToolError::Tool`]: an `isError` result with the sentence.
//! A call the client should not have made (a missing capability, a broken
//! server) is [`ToolError::Rpc`]: a JSON-RPC error.

use std::any::TypeId;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_empty_input, schema_for_input, schema_for_output};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InputResponses,
    JsonObject, Tool as ToolInfo, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `Hints` are a tool's four annotations: what a client may assume about
/// calling it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// The four hints are the protocol's, each independent of the others.
#[allow(clippy::struct_excessive_bools)]
pub struct Hints {
    /// It changes nothing.
    pub read_only: bool,
    /// It may overwrite or remove something (meaningful for writes only).
    pub destructive: bool,
    /// Calling it again with the same arguments changes nothing more.
    pub idempotent: bool,
    /// It reaches an open world (the web) rather than a closed system.
    pub open_world: bool,
}

impl Hints {
    /// A tool that only reads a closed system.
    pub const READ: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

    /// A tool that changes a closed system.
    #[must_use]
    pub const fn write(destructive: bool, idempotent: bool) -> Hints {
        Hints {
            read_only: false,
            destructive,
            idempotent,
            open_world: false,
        }
    }

    /// A tool that reaches the open world (the web, remotes) and may change
    /// what it keeps or sends there.
    #[must_use]
    pub const fn open_world(destructive: bool, idempotent: bool) -> Hints {
        Hints {
            open_world: true,
            ..Hints::write(destructive, idempotent)
        }
    }
}

/// `ToolError` is why a tool stopped.
#[derive(Debug)]
pub enum ToolError {
    /// A sentence the model reads: sent as a result with `isError`.
    Tool(String),
    /// A JSON-RPC error: a malformed call, a missing client capability, a
    /// server fault.
    Rpc(ErrorData),
}

impl ToolError {
    /// A failure the model reads.
    pub fn tool(message: impl Into<String>) -> ToolError {
        ToolError::Tool(message.into())
    }

    /// A server fault, as a JSON-RPC internal error.
    pub fn internal(message: impl Into<String>) -> ToolError {
        ToolError::Rpc(ErrorData::internal_error(message.into(), None))
    }

    /// What the protocol sends for it.
    pub fn into_response(self) -> Result<CallToolResult, ErrorData> {
        match self {
            ToolError::Tool(text) => Ok(CallToolResult::error(vec![ContentBlock::text(text)])),
            ToolError::Rpc(error) => Err(error),
        }
    }
}

/// Any error that stops a tool reaches the model as its sentence: errors
/// are written to say what was wrong and what to do next. A JSON-RPC error
/// is always made on purpose, as [`ToolError::Rpc`] (an `ErrorData` passed
/// up with `?` would become a sentence too).
impl<E: std::error::Error> From<E> for ToolError {
    fn from(error: E) -> Self {
        ToolError::Tool(error.to_string())
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::Tool(text) => f.write_str(text),
            ToolError::Rpc(error) => write!(f, "{}", error.message),
        }
    }
}

/// `Outcome` is what a tool's call ends in: a result (or a request for
/// input, on protocol revisions that have it), or why it stopped.
pub type Outcome = Result<CallToolResponse, ToolError>;

/// `finish` turns a tool's outcome into what rmcp sends.
pub fn finish(outcome: Outcome) -> Result<CallToolResponse, ErrorData> {
    match outcome {
        Ok(response) => Ok(response),
        Err(error) => error.into_response().map(CallToolResponse::from),
    }
}

/// `done` is a successful result: `text` for the model and `out` as the
/// structured output its output schema describes.
pub fn done<T: Serialize>(text: String, out: &T) -> Result<CallToolResult, ToolError> {
    let value = serde_json::to_value(out)
        .map_err(|e| ToolError::internal(format!("the result could not be written: {e}")))?;
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    Ok(result)
}

/// `parse_args` reads a call's arguments as `T`. A missing object is an
/// empty one; arguments that do not fit are a failure the model reads, in
/// the words rmcp has always used for it.
pub fn parse_args<T: DeserializeOwned>(arguments: Option<JsonObject>) -> Result<T, ToolError> {
    serde_json::from_value(Value::Object(arguments.unwrap_or_default()))
        .map_err(|e| ToolError::Tool(format!("failed to deserialize parameters: {e}")))
}

/// `parse_args_naming` reads `arguments` as `T` and says what did not fit
/// in the words of a tool that names itself and the next step: "the `tool`
/// arguments are not valid: …; `next`". It takes any JSON value, for the
/// callers (an HTTP API, a test) that hold one rather than a call's object.
pub fn parse_args_naming<T: DeserializeOwned>(
    arguments: Value,
    tool: &str,
    next: &str,
) -> Result<T, ToolError> {
    serde_json::from_value(arguments)
        .map_err(|e| ToolError::Tool(format!("the {tool} arguments are not valid: {e}; {next}")))
}

/// `Call` is what a tool call brings besides its arguments.
#[derive(Debug)]
pub struct Call {
    /// The request: its cancellation token (`ct`), its `_meta` (with the
    /// progress token), and the peer to ask or notify.
    pub context: RequestContext<RoleServer>,
    /// The sealed state the server returned with its last request for
    /// input (protocol 2026-07-28), when this call retries one.
    pub state: Option<String>,
    /// The client's answers to that request.
    pub answers: Option<InputResponses>,
}

/// `NoArgs` are the arguments of a tool that takes none: its input schema
/// is an empty object, and whatever is passed is ignored.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
pub struct NoArgs {}

/// `NoOut` is the output of a tool that gives no structured output: it is
/// listed without an output schema, so a client expects its text only.
#[derive(Debug, Clone, Copy, Default, Serialize, JsonSchema)]
pub struct NoOut {}

/// `Tool` is one MCP tool of a server `S`.
pub trait Tool<S>: Send + Sync + 'static {
    /// Its arguments; their doc comments become the input schema.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// Its structured output; the output schema is written from it.
    type Out: JsonSchema + 'static;
    /// Its name, as clients call it.
    const NAME: &'static str;
    /// Its title, shown to people (also the annotations' title).
    const TITLE: &'static str;
    /// What it does, for the model.
    const DESCRIPTION: &'static str;
    /// Its annotations.
    const HINTS: Hints;

    /// Reads the call's arguments. By default what does not fit is said in
    /// rmcp's words ([`parse_args`]); a tool may name its own next step
    /// instead ([`parse_args_naming`]).
    fn parse(arguments: Option<JsonObject>) -> Result<Self::Args, ToolError> {
        parse_args(arguments)
    }

    /// Whether this call may go ahead at all (a grant the caller must hold),
    /// checked before the arguments are read. Most tools allow every call
    /// their server lists them for.
    fn check(&self, _server: &S, _call: &Call) -> Result<(), ToolError> {
        Ok(())
    }

    /// Does the work.
    fn call(
        &self,
        server: &S,
        args: Self::Args,
        call: Call,
    ) -> impl Future<Output = Outcome> + Send;
}

/// `tool!` declares a tool in one place: the struct, its facts
/// (`name`, `title`, `hints`, `args`, `out`, `description`), how its
/// arguments are read and its calls allowed where it is not the default
/// (`parse`, [`Tool::parse`]; `check`, [`Tool::check`]) and its `call`, each
/// written as a closure (`call` over the server, the arguments and the
/// [`Call`]). It expands to the struct and its [`Tool`] implementation, so
/// a tool reads as one declaration.
///
/// A tool that keeps state of its own (a client, a store) names its fields
/// in braces after its name; `check` and `call` see each field by its name.
/// Without braces the tool is a unit struct.
///
/// ```
/// # use porter_mcp::{Hints, NoArgs, NoOut};
/// # use rmcp::model::{CallToolResult, ContentBlock};
/// struct Server;
///
/// porter_mcp::tool! {
///     /// `ping`: answers pong.
///     pub Ping for Server {
///         name: "ping", title: "Ping", hints: Hints::READ, args: NoArgs, out: NoOut,
///         description: "Answers pong.",
///         call: |_server, _args, _call| {
///             Ok(CallToolResult::success(vec![ContentBlock::text("pong")]).into())
///         },
///     }
/// }
///
/// porter_mcp::tool! {
///     /// `greet`: answers with the greeting it was made with.
///     pub Greet { pub greeting: String } for Server {
///         name: "greet", title: "Greet", hints: Hints::READ, args: NoArgs, out: NoOut,
///         description: "Answers with its greeting.",
///         call: |_server, _args, _call| {
///             Ok(CallToolResult::success(vec![ContentBlock::text(greeting.clone())]).into())
///         },
///     }
/// }
///
/// assert_eq!(<Ping as porter_mcp::Tool<Server>>::NAME, "ping");
/// let greet = Greet { greeting: "hello".to_owned() };
/// assert_eq!(greet.greeting, "hello");
/// ```
#[macro_export]
macro_rules! tool {
    (
        $(#[$attr:meta])*
        $vis:vis $tool:ident { $($field_vis:vis $field:ident : $field_ty:ty),* $(,)? } for $server:ty {
            $($facts:tt)*
        }
    ) => {
        $(#[$attr])*
        $vis struct $tool {
            $($field_vis $field: $field_ty,)*
        }

        $crate::tool!(@impl $tool { $($field),* } for $server { $($facts)* });
    };
    (
        $(#[$attr:meta])*
        $vis:vis $tool:ident for $server:ty {
            $($facts:tt)*
        }
    ) => {
        $(#[$attr])*
        $vis struct $tool;

        $crate::tool!(@impl $tool {} for $server { $($facts)* });
    };
    (
        @impl $tool:ident $fields:tt for $server:ty {
            name: $name:expr, title: $title:expr, hints: $hints:expr,
            args: $args:ty, out: $out:ty,
            description: $description:expr,
            $(parse: |$arguments:pat_param| $parse:expr,)?
            $(check: |$checked:pat_param, $asked:pat_param| $check:expr,)?
            call: |$on:pat_param, $with:pat_param, $call:pat_param| $body:expr $(,)?
        }
    ) => {
        impl $crate::Tool<$server> for $tool {
            type Args = $args;
            type Out = $out;
            const NAME: &'static str = $name;
            const TITLE: &'static str = $title;
            const DESCRIPTION: &'static str = $description;
            const HINTS: $crate::Hints = $hints;

            $(
                fn parse(
                    $arguments: Option<$crate::rmcp::model::JsonObject>,
                ) -> Result<$args, $crate::ToolError> {
                    $parse
                }
            )?

            $(
                fn check(&self, $checked: &$server, $asked: &$crate::Call) -> Result<(), $crate::ToolError> {
                    #[allow(unused_variables)]
                    let $tool $fields = self;
                    $check
                }
            )?

            async fn call(
                &self,
                $on: &$server,
                $with: $args,
                $call: $crate::Call,
            ) -> $crate::Outcome {
                #[allow(unused_variables)]
                let $tool $fields = self;
                $body
            }
        }
    };
}

/// `describe` is how a tool is listed: name, title, description, hints and
/// both schemas in standard JSON Schema.
///
/// # Panics
///
/// When the arguments' schema is not an object, which a test of every
/// server's listing catches before it ships.
#[must_use]
pub fn describe<S, T: Tool<S>>() -> ToolInfo {
    let input = if TypeId::of::<T::Args>() == TypeId::of::<NoArgs>() {
        schema_for_empty_input()
    } else {
        schema_for_input::<T::Args>()
            .unwrap_or_else(|e| panic!("the arguments of {} have no object schema: {e}", T::NAME))
    };
    let hints = T::HINTS;
    let mut info =
        ToolInfo::new_with_raw(T::NAME, Some(T::DESCRIPTION.into()), input).with_title(T::TITLE);
    if TypeId::of::<T::Out>() != TypeId::of::<NoOut>() {
        info = info.with_raw_output_schema(schema_for_output::<T::Out>());
    }
    let info = info.with_annotations(ToolAnnotations::from_raw(
        Some(T::TITLE.to_owned()),
        Some(hints.read_only),
        Some(hints.destructive),
        Some(hints.idempotent),
        Some(hints.open_world),
    ));
    crate::schema::standard_tool(info)
}

type BoxFuture<'a> = Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;
type Handler<S> =
    Arc<dyn for<'a> Fn(&'a S, Option<JsonObject>, Call) -> BoxFuture<'a> + Send + Sync>;

/// `Entry` is one registered tool: how it is listed, its kind, and how it
/// is called.
pub struct Entry<S, K> {
    /// How it is listed (a server may add to the description or `_meta`).
    pub info: ToolInfo,
    /// The kind the server registered it with.
    pub kind: K,
    handler: Handler<S>,
}

impl<S, K> Entry<S, K> {
    /// Calls the tool on `server`: its check, its arguments read, its work.
    /// The outcome is left to the caller to send ([`finish`]), so that a
    /// server may look at it first.
    pub async fn run(&self, server: &S, arguments: Option<JsonObject>, call: Call) -> Outcome {
        (self.handler)(server, arguments, call).await
    }
}

impl<S, K: Clone> Clone for Entry<S, K> {
    fn clone(&self) -> Self {
        Entry {
            info: self.info.clone(),
            kind: self.kind.clone(),
            handler: Arc::clone(&self.handler),
        }
    }
}

/// `Registry` holds a server's tools by name.
pub struct Registry<S, K = ()> {
    entries: BTreeMap<String, Entry<S, K>>,
}

impl<S, K: Clone> Clone for Registry<S, K> {
    fn clone(&self) -> Self {
        Registry {
            entries: self.entries.clone(),
        }
    }
}

impl<S, K> Default for Registry<S, K> {
    fn default() -> Self {
        Registry {
            entries: BTreeMap::new(),
        }
    }
}

impl<S, K: std::fmt::Debug> std::fmt::Debug for Registry<S, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.entries.iter().map(|(name, e)| (name, &e.kind)))
            .finish()
    }
}

impl<S: Sync + 'static, K> Registry<S, K> {
    /// An empty registry.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool` with `kind`.
    ///
    /// # Panics
    ///
    /// When a tool of the same name is there already: two tools may not
    /// share a name.
    #[must_use]
    pub fn with<T: Tool<S>>(mut self, tool: T, kind: K) -> Self {
        let tool = Arc::new(tool);
        let handler: Handler<S> = Arc::new(move |server: &S, arguments, call| {
            dispatch(Arc::clone(&tool), server, arguments, call)
        });
        let entry = Entry {
            info: describe::<S, T>(),
            kind,
            handler,
        };
        let previous = self.entries.insert(T::NAME.to_owned(), entry);
        assert!(previous.is_none(), "two tools are named {}", T::NAME);
        self
    }

    /// Keeps only the tools `keep` says yes to.
    pub fn retain(&mut self, mut keep: impl FnMut(&Entry<S, K>) -> bool) {
        self.entries.retain(|_, entry| keep(entry));
    }

    /// The tools, in name order, to change how they are listed.
    pub fn entries_mut(&mut self) -> impl Iterator<Item = &mut Entry<S, K>> {
        self.entries.values_mut()
    }

    /// The tools, in name order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry<S, K>> {
        self.entries.values()
    }

    /// The tool named `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Entry<S, K>> {
        self.entries.get(name)
    }

    /// The tools as listed, in name order.
    #[must_use]
    pub fn list(&self) -> Vec<ToolInfo> {
        self.entries.values().map(|e| e.info.clone()).collect()
    }

    /// The tools' names, in order.
    #[must_use]
    pub fn names(&self) -> Vec<&str> {
        self.entries.keys().map(String::as_str).collect()
    }

    /// Calls the tool `request` names on `server`. A name the registry does
    /// not hold is answered as a failure the model reads, naming the tools
    /// there are, so the model can correct itself.
    pub async fn call(
        &self,
        server: &S,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(entry) = self.entries.get(request.name.as_ref()) else {
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "this server has no tool named {:?}; its tools are {}",
                request.name,
                self.names().join(", ")
            ))])
            .into());
        };
        let call = Call {
            context,
            state: request.request_state,
            answers: request.input_responses,
        };
        finish(entry.run(server, request.arguments, call).await)
    }
}

fn dispatch<S: Sync, T: Tool<S>>(
    tool: Arc<T>,
    server: &S,
    arguments: Option<JsonObject>,
    call: Call,
) -> BoxFuture<'_> {
    Box::pin(async move {
        tool.check(server, &call)?;
        let args = T::parse(arguments)?;
        tool.call(server, args, call).await
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;

    /// What to say.
    #[derive(Debug, Deserialize, JsonSchema)]
    struct EchoArgs {
        /// The words.
        words: String,
        /// How many times (at most 255).
        #[serde(default)]
        times: Option<u8>,
    }

    #[derive(Serialize, JsonSchema)]
    struct EchoOut {
        said: String,
    }

    impl Tool<()> for Echo {
        type Args = EchoArgs;
        type Out = EchoOut;
        const NAME: &'static str = "echo";
        const TITLE: &'static str = "Echo";
        const DESCRIPTION: &'static str = "Says the words back.";
        const HINTS: Hints = Hints::READ;

        async fn call(&self, _server: &(), args: EchoArgs, _call: Call) -> Outcome {
            let said = args.words.repeat(usize::from(args.times.unwrap_or(1)));
            Ok(done(said.clone(), &EchoOut { said })?.into())
        }
    }

    struct Nothing;

    impl Tool<()> for Nothing {
        type Args = NoArgs;
        type Out = EchoOut;
        const NAME: &'static str = "nothing";
        const TITLE: &'static str = "Nothing";
        const DESCRIPTION: &'static str = "Takes nothing.";
        const HINTS: Hints = Hints::write(true, false);

        async fn call(&self, _server: &(), _args: NoArgs, _call: Call) -> Outcome {
            Err(ToolError::tool("nothing to do"))
        }
    }

    #[test]
    fn a_tool_is_listed_with_its_title_hints_and_standard_schemas() {
        let registry: Registry<()> = Registry::new().with(Echo, ()).with(Nothing, ());
        let tools = registry.list();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["echo", "nothing"]);
        let echo = &tools[0];
        assert_eq!(echo.title.as_deref(), Some("Echo"));
        assert_eq!(echo.description.as_deref(), Some("Says the words back."));
        let hints = echo.annotations.clone().unwrap_or_default();
        assert_eq!(hints.title.as_deref(), Some("Echo"));
        assert_eq!(
            (
                hints.read_only_hint,
                hints.destructive_hint,
                hints.idempotent_hint,
                hints.open_world_hint
            ),
            (Some(true), Some(false), Some(true), Some(false))
        );
        let times = &echo.input_schema["properties"]["times"];
        assert_eq!(times.get("format"), None, "{times}");
        assert_eq!(times["maximum"], 255);
        assert_eq!(echo.input_schema["required"], serde_json::json!(["words"]));
        let output = echo.output_schema.as_ref().expect("an output schema");
        assert_eq!(output["type"], "object");
        let nothing = &tools[1];
        assert_eq!(
            Value::Object((*nothing.input_schema).clone()),
            serde_json::json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            nothing
                .annotations
                .as_ref()
                .and_then(|a| a.destructive_hint),
            Some(true)
        );
    }

    #[test]
    #[should_panic(expected = "two tools are named echo")]
    fn two_tools_of_one_name_are_refused() {
        let _ = Registry::<()>::new().with(Echo, ()).with(Echo, ());
    }

    #[test]
    fn arguments_that_do_not_fit_are_a_failure_the_model_reads() {
        let bad = serde_json::json!({"words": 3});
        let Value::Object(bad) = bad else {
            unreachable!()
        };
        let error = parse_args::<EchoArgs>(Some(bad)).expect_err("a number is not words");
        let ToolError::Tool(text) = error else {
            panic!("not a tool error: {error:?}")
        };
        assert!(
            text.starts_with("failed to deserialize parameters: invalid type: integer `3`"),
            "{text}"
        );
        let missing = parse_args::<EchoArgs>(None).expect_err("words are required");
        assert!(
            missing.to_string().contains("missing field `words`"),
            "{missing}"
        );
        assert!(parse_args::<NoArgs>(None).is_ok());
    }

    struct Plain;

    impl Tool<()> for Plain {
        type Args = EchoArgs;
        type Out = NoOut;
        const NAME: &'static str = "Plain";
        const TITLE: &'static str = "Plain";
        const DESCRIPTION: &'static str = "Says the words back, as text only.";
        const HINTS: Hints = Hints::READ;

        fn parse(arguments: Option<JsonObject>) -> Result<EchoArgs, ToolError> {
            parse_args_naming(
                Value::Object(arguments.unwrap_or_default()),
                Self::NAME,
                r#"call it like {"words": "hello"}"#,
            )
        }

        async fn call(&self, _server: &(), args: EchoArgs, _call: Call) -> Outcome {
            Ok(CallToolResult::success(vec![ContentBlock::text(args.words)]).into())
        }
    }

    #[test]
    fn a_tool_without_structured_output_is_listed_without_an_output_schema() {
        let plain = describe::<(), Plain>();
        assert_eq!(plain.output_schema, None);
        assert_eq!(plain.input_schema["required"], serde_json::json!(["words"]));
        assert!(describe::<(), Echo>().output_schema.is_some());
    }

    #[test]
    fn a_tool_may_say_in_its_own_words_what_its_arguments_lacked() {
        let error = Plain::parse(None).expect_err("words are required");
        assert_eq!(
            error.to_string(),
            r#"the Plain arguments are not valid: missing field `words`; call it like {"words": "hello"}"#
        );
        let words = Plain::parse(Some(
            serde_json::from_value(serde_json::json!({"words": "hi"})).expect("an object"),
        ))
        .expect("words");
        assert_eq!(words.words, "hi");
    }

    #[test]
    fn a_tool_failure_is_an_error_result_and_an_rpc_error_stays_one() {
        let result = ToolError::tool("no such file")
            .into_response()
            .expect("a result");
        assert_eq!(result.is_error, Some(true));
        let text = serde_json::to_value(&result.content).expect("content");
        assert_eq!(text[0]["text"], "no such file");
        let rpc = ToolError::internal("broken").into_response();
        assert_eq!(rpc.expect_err("an rpc error").message, "broken");
    }
}
