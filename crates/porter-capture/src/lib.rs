//! `porter-capture` finds the files inside MCP tool results. SKELETON: the
//! API below is agreed; helper "capture" writes the bodies (issue 5 brief).

/// `Found` is one file found in a result, decoded.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    pub bytes: &'a [u8],
    /// A name the result gives it (a resource URI's last segment, a sibling
    /// `fileName`/`filename`/`name` field), if any.
    pub name: Option<&'a str>,
    /// The type the result declares (`mimeType`, or a sibling
    /// `contentType`/`mimeType`/`mediaType` field), if any.
    pub declared_type: Option<&'a str>,
}

/// `Keep` is whatever keeps found files (the gateway's inbox).
pub trait Keep {
    /// Keeps one file (or decides not to) and returns the one line that
    /// stands in its place: `[file: …]` or `[file not kept: …]`.
    fn keep(&self, found: Found<'_>) -> String;
}

/// `Policy` is one upstream server's capture settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// `binary_results: capture`: long base64 strings inside text blocks and
    /// structured content are kept too.
    pub capture_base64: bool,
    /// `images: view`: an image block also comes back scaled by the file view
    /// beside its stub.
    pub images_view: bool,
}

/// `Report` says what a capture did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// How many files were handed to the keeper.
    pub files: usize,
}

/// Rewrites `result` (the JSON of an MCP `CallToolResult`, as the upstream
/// sent it) in place: every file in it is handed to `keeper` and replaced by
/// the line it returns. A result with only text blocks and no capture-worthy
/// base64 is left untouched, byte for byte.
pub fn capture_result(
    _result: &mut serde_json::Value,
    _policy: Policy,
    _keeper: &dyn Keep,
) -> Report {
    todo!()
}
