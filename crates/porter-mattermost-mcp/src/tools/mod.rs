//! The tools, filed by noun: each file holds its tools' arguments, their
//! questions and their calls.

use porter_mcp::tool::ToolError;
use rmcp::model::CallToolResult;

/// `Reply` is what a tool's work comes to: its result for the model (text
/// and structured content), or the error the model reads.
pub(crate) type Reply = Result<CallToolResult, ToolError>;

/// `method_tools!` declares the tools whose whole call is one method of the
/// server, as a table: `Tool = method(args) { name, title, hints, args, out,
/// description }`, each a [`porter_mcp::tool!`] for
/// [`crate::server::MattermostServer`]. The method is handed what its parentheses
/// name: nothing, the arguments (`args`), or the arguments and the
/// request's context (`args, context`), and its result is the tool's
/// answer; or, for a tool that asks the person first, the tool's name, the
/// arguments, the call and what the arguments come to (`tool, args, call,
/// make`), and its result is the tool's outcome.
macro_rules! method_tools {
    ($(
        $(#[$attr:meta])*
        $tool:ident = $method:ident $with:tt { $($fields:tt)* }
    )+) => {
        $(method_tools!(@tool $(#[$attr])* $tool, $method, $with, { $($fields)* });)+
    };
    (@tool $(#[$attr:meta])* $tool:ident, $method:ident, (), { $($fields:tt)* }) => {
        porter_mcp::tool! {
            $(#[$attr])*
            pub(crate) $tool for crate::server::MattermostServer {
                $($fields)*
                call: |server, _args, _call| Ok(server.$method().await?.into()),
            }
        }
    };
    (@tool $(#[$attr:meta])* $tool:ident, $method:ident, (args), { $($fields:tt)* }) => {
        porter_mcp::tool! {
            $(#[$attr])*
            pub(crate) $tool for crate::server::MattermostServer {
                $($fields)*
                call: |server, args, _call| Ok(server.$method(args).await?.into()),
            }
        }
    };
    (@tool $(#[$attr:meta])* $tool:ident, $method:ident, (args, context), { $($fields:tt)* }) => {
        porter_mcp::tool! {
            $(#[$attr])*
            pub(crate) $tool for crate::server::MattermostServer {
                $($fields)*
                call: |server, args, call| Ok(server.$method(args, &call.context).await?.into()),
            }
        }
    };
    (@tool $(#[$attr:meta])* $tool:ident, $method:ident, (tool, args, call, $make:expr), { $($fields:tt)* }) => {
        porter_mcp::tool! {
            $(#[$attr])*
            pub(crate) $tool for crate::server::MattermostServer {
                $($fields)*
                call: |server, args, call| server.$method(Self::NAME, args, call, $make).await,
            }
        }
    };
}

pub(crate) mod channels;
pub(crate) mod drafts;
pub(crate) mod files;
pub(crate) mod posts;
pub(crate) mod status;
pub(crate) mod teams;
pub(crate) mod threads;
pub(crate) mod users;
