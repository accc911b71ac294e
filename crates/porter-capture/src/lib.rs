//! `porter-capture` finds the files inside MCP tool results and puts a
//! one-line stub in place of each, so that the bytes never reach the model.
//!
//! [`capture_result`] takes the JSON of a `CallToolResult` exactly as an
//! upstream server sent it (block types rmcp does not know included) and
//! rewrites it in place:
//!
//! - `image`, `audio` and embedded `resource` blocks (blob or text) are
//!   decoded, handed to a [`Keep`], and replaced by the text line it returns.
//!   Data that is not valid base64 is never passed on: the block becomes a
//!   line saying so.
//! - A `resource_link` becomes one line naming it (nothing is fetched); a
//!   block of a type porter does not know becomes a line naming the type, so
//!   nothing is dropped silently.
//! - Wherever else in the result an object has the shape of an image, audio
//!   or embedded resource block (in `structuredContent`, `_meta`, a text
//!   block's `_meta`, a text block that is JSON — structured content
//!   repeated as text), its `data`, `blob` or `text` is kept the same way
//!   and only that string becomes the stub, whatever the policy. A file met
//!   twice in one result (a server that repeats its `content` in
//!   `structuredContent`) is handed to the keeper once and gets one stub.
//!   Structured content that its stubs would make fail the tool's
//!   `outputSchema` is withheld, and a text block says so.
//! - Under [`Policy::capture_base64`], long base64 strings (at least 4,096
//!   characters, standard or URL-safe, optionally a `data:` URI) inside text
//!   blocks and structured content are kept too, but only when they decode
//!   cleanly to something recognisable: a known file signature, readable
//!   text, or a type that a sibling field names (`mimeType`, `fileName`, …)
//!   and the bytes agree with — a type with a signature only vouches for
//!   bytes that carry it, a text type only for text. Only that string is
//!   replaced (JSON-escaped where it sits inside a JSON string); the rest of
//!   the text stays as it was, valid JSON or not. Random tokens, cursors,
//!   hashes and the segments of dotted tokens (JWTs) are left alone, also
//!   beside a `"fileName": "report.pdf"`.
//! - A result with nothing to capture is not touched at all, so it
//!   serialises byte for byte as it came.
//!
//! It deliberately does not store, name or limit files: that is the
//! keeper's business (the gateway's inbox). It hashes only a long file
//! (4 MiB of base64 and up) that a keeper offers to write while it is
//! decoded ([`Keep::stage`]): each decoded block goes to the keeper's file
//! and to SHA-256 on another core while the next one decodes, so a 50 MB
//! capture is not decode, then hash, then write. Nor does it fetch links or
//! read anything but the JSON it is given.
//!
//! ```
//! use porter_capture::{Found, Keep, Policy, capture_result};
//!
//! struct Stub;
//! impl Keep for Stub {
//!     fn keep(&self, found: Found<'_>) -> String {
//!         format!("[file: {} bytes · {}]", found.bytes.len(), found.declared_type.unwrap_or("?"))
//!     }
//! }
//!
//! let mut result = serde_json::json!({"content": [
//!     {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
//! ]});
//! let report = capture_result(&mut result, Policy::default(), None, &Stub);
//! assert_eq!(report.files, 1);
//! assert_eq!(result["content"][0]["text"], "[file: 8 bytes · image/png]");
//! ```

mod free;
mod recognise;
mod scan;
mod schema;
mod siblings;
mod stream;

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};

use porter_fileview::{Cancel, FileInput, Options, WindowRequest, human_size};
use serde_json::{Map, Value};

use free::release;
use recognise::{decode_block_data, decode_into, recognised};
use scan::{Alphabet, MIN_BASE64_CHARS, data_uri, in_dotted_token, next_run, quoting};
use schema::Step;
use siblings::Hints;
use stream::{STAGED_DECODE_CHARS, decode_staged, decoded_size};

/// `Found` is one file found in a result, decoded.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    /// The file's bytes, decoded.
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

    /// Starts writing a file of exactly `size` bytes while it is still
    /// being decoded, so that the write and its SHA-256 (on another core)
    /// overlap the decoding instead of following it. Asked only for long
    /// base64 strings (4 MiB and up) in a result that holds no file twice.
    ///
    /// The capture then writes every decoded block to the staging and
    /// calls [`Staging::keep`] with the whole file and its hash if the
    /// bytes turn out to be a file; it drops the staging, which must leave
    /// nothing behind, when they do not (a token, broken base64). `None`,
    /// the default, has the file handed whole to [`Keep::keep`].
    fn stage(&self, size: u64) -> Option<Box<dyn Staging + '_>> {
        let _ = size;
        None
    }
}

/// `Staging` is a file a keeper writes as the capture decodes it (see
/// [`Keep::stage`]). Dropping it without [`Staging::keep`] removes what
/// was written.
pub trait Staging {
    /// Writes the next decoded block. After an error the capture writes no
    /// more blocks, but still decodes and still calls [`Staging::keep`],
    /// which says why the file was not kept.
    ///
    /// # Errors
    ///
    /// When the block cannot be written or would pass a limit.
    fn write(&mut self, block: &[u8]) -> std::io::Result<()>;

    /// Keeps the file the blocks make up and returns its stub, as
    /// [`Keep::keep`] does: `found.bytes` are every byte written, in order
    /// (unless a write failed), and `sha256` is their SHA-256.
    fn keep(self: Box<Self>, found: Found<'_>, sha256: &[u8; 32]) -> String;
}

/// `Policy` is one upstream server's capture settings. The default is the
/// spec's: blocks are captured, text is passed through, no scaled image.
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
    /// How many files were handed to the keeper. A file met twice in one
    /// result (an image block and its copy in `structuredContent`) is handed
    /// over once and both places get the same stub.
    pub files: usize,
    /// Whether `structuredContent` was withheld because, with its stubs in
    /// place, it would no longer fit the tool's output schema.
    pub structured_withheld: bool,
}

/// Whether [`capture_result`] could change `result` under any policy: a
/// read-only walk that decodes nothing and allocates nothing. `false` means
/// the result holds no file and no string long enough to be one, so it can
/// go to the client as it is, without the capture's walk, a thread for it,
/// or a keeper (the path almost every call takes). It errs towards `true`:
/// a block other than text, a string of 4,096 bytes or more (the shortest
/// base64 it keeps), text that may be JSON holding blocks, or an object
/// shaped like a file block anywhere.
#[must_use]
pub fn may_change(result: &Value) -> bool {
    let Some(members) = result.as_object() else {
        return false;
    };
    members
        .iter()
        .any(|(key, member)| match (key.as_str(), member) {
            ("content", Value::Array(blocks)) => blocks.iter().any(|block| {
                let Some(block) = block.as_object() else {
                    return true;
                };
                block.get("type").and_then(Value::as_str) != Some("text")
                    || block.values().any(|value| may_hold_a_file(value, 0))
            }),
            (_, member) => may_hold_a_file(member, 0),
        })
}

/// Whether a value could hold what the capture keeps: a long string, text
/// that may be JSON holding blocks, or an object shaped like a file block.
/// No deeper than the capture walks.
fn may_hold_a_file(value: &Value, depth: usize) -> bool {
    if depth > MAX_STRUCTURED_DEPTH {
        return false;
    }
    match value {
        Value::String(text) => text.len() >= MIN_BASE64_CHARS || may_hold_blocks(text),
        Value::Array(items) => items.iter().any(|item| may_hold_a_file(item, depth + 1)),
        Value::Object(members) => {
            matches!(
                members.get("type").and_then(Value::as_str),
                Some("image" | "audio" | "resource")
            ) || members
                .values()
                .any(|member| may_hold_a_file(member, depth + 1))
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Rewrites `result` (the JSON of an MCP `CallToolResult`, as the upstream
/// sent it) in place: every file in it is handed to `keeper` and replaced by
/// the line it returns. A result with only text blocks and no capture-worthy
/// base64 is left untouched, byte for byte.
///
/// Files are looked for everywhere in the result, not only in `content`:
/// an object shaped like an MCP image, audio or embedded resource block
/// that sits in `structuredContent`, `_meta` or any other member has its
/// `data`, `blob` or `text` kept and replaced by the stub, the rest of the
/// object left as it was, whatever the policy. `output_schema` is the
/// tool's declared `outputSchema`, if any: when a stub in
/// `structuredContent` could make it fail that schema, `structuredContent`
/// is withheld and a text block says so, with the stubs of files found only
/// there, and the result is marked as an error (a client that validates
/// would otherwise refuse it for lacking the structured content).
pub fn capture_result(
    result: &mut Value,
    policy: Policy,
    output_schema: Option<&Map<String, Value>>,
    keeper: &dyn Keep,
) -> Report {
    let mut capture = Capture {
        policy,
        keeper,
        files: 0,
        decoded: Vec::new(),
        seen: worth_remembering(result).then(Seen::default),
        staged: None,
        schema: None,
        path: Vec::new(),
        schema_broken: false,
        stubs: Vec::new(),
        replaced: 0,
    };
    let Some(members) = result.as_object_mut() else {
        return Report::default();
    };
    if let Some(Value::Array(blocks)) = members.get_mut("content") {
        capture.content(blocks);
    }
    if let Some(structured) = members.get_mut("structuredContent") {
        capture.schema = output_schema;
        capture.stubs.clear();
        capture.structured(structured, &Hints::default(), 0);
        capture.schema = None;
    }
    let withheld = capture.schema_broken;
    let only_structured = std::mem::take(&mut capture.stubs);
    for (key, member) in members.iter_mut() {
        if key != "content" && key != "structuredContent" {
            capture.structured(member, &Hints::default(), 0);
        }
    }
    if withheld {
        withhold_structured(members, only_structured);
    }
    release(std::mem::take(&mut capture.decoded));
    Report {
        files: capture.files,
        structured_withheld: withheld,
    }
}

/// Takes `structuredContent` out of a result whose stubs would break its
/// tool's output schema, and says so in `content`, followed by the stubs of
/// the files that were only there.
fn withhold_structured(members: &mut Map<String, Value>, stubs: Vec<String>) {
    members.remove("structuredContent");
    let note = text_block(
        "[structured content withheld: it carried files, now kept in the inbox, and with their \
         stubs in its place it would no longer fit this tool's output schema. The call itself \
         succeeded; the content above and the lines below are its answer.]"
            .to_owned(),
        None,
    );
    let blocks = std::iter::once(note).chain(stubs.into_iter().map(|stub| text_block(stub, None)));
    match members.get_mut("content") {
        Some(Value::Array(content)) => content.extend(blocks),
        _ => {
            members.insert("content".to_owned(), Value::Array(blocks.collect()));
        }
    }
    members.insert("isError".to_owned(), Value::Bool(true));
}

/// Whether a result could hold one file twice: more than one place holds
/// something other than plain text (a block that is not text, a text
/// block's `_meta`, `structuredContent`, the result's `_meta`). Only then
/// are the files' bytes hashed to hand each over once.
fn worth_remembering(result: &Value) -> bool {
    let Some(members) = result.as_object() else {
        return false;
    };
    let in_blocks = members
        .get("content")
        .and_then(Value::as_array)
        .map_or(0, |blocks| {
            blocks
                .iter()
                .filter(|block| match block.as_object() {
                    Some(block) if block.get("type") == Some(&Value::from("text")) => {
                        block
                            .keys()
                            .any(|key| !matches!(key.as_str(), "type" | "text" | "annotations"))
                            || block
                                .get("text")
                                .and_then(Value::as_str)
                                .is_some_and(may_hold_blocks)
                    }
                    _ => true,
                })
                .count()
        });
    let elsewhere = members
        .keys()
        .filter(|key| !matches!(key.as_str(), "content" | "isError" | "resultType"))
        .count();
    in_blocks + elsewhere > 1
}

/// Whether a text could be JSON holding file blocks: it opens an object or
/// array and names a `type` and a block type. Only such a text is parsed.
fn may_hold_blocks(text: &str) -> bool {
    text.trim_start().starts_with(['{', '['])
        && text.contains("\"type\"")
        && ["\"image\"", "\"audio\"", "\"resource\""]
            .iter()
            .any(|kind| text.contains(kind))
}

/// `Seen` remembers the stub of each file kept so far in one result, by a
/// keyed hash of its bytes and their length.
#[derive(Default)]
struct Seen {
    hasher: RandomState,
    stubs: HashMap<(u64, usize), String>,
}

/// `MAX_STRUCTURED_DEPTH` is how deep structured content is walked; JSON
/// parsed by serde_json is never deeper, and a hand-built value cannot make
/// the walk overflow the stack.
const MAX_STRUCTURED_DEPTH: usize = 128;

/// `LINE_FIELD_CHARS` is the most of any one upstream-given field (a name,
/// a description, a type) that goes into a line porter writes.
const LINE_FIELD_CHARS: usize = 200;

/// One capture in progress.
struct Capture<'k> {
    policy: Policy,
    keeper: &'k dyn Keep,
    files: usize,
    /// The one buffer every file is decoded into, so at most one decoded
    /// file is held beside the result.
    decoded: Vec<u8>,
    /// The files kept so far, when the result could hold one twice.
    seen: Option<Seen>,
    /// The file the keeper wrote while it was decoded into `decoded`, and
    /// its SHA-256: what [`Capture::keep`] keeps instead of handing the
    /// bytes over again. Dropped (and so removed) when they are not kept.
    staged: Option<(Box<dyn Staging + 'k>, [u8; 32])>,
    /// The output schema structured content is checked against while it is
    /// walked, and the path to where the walk is.
    schema: Option<&'k Map<String, Value>>,
    path: Vec<Step>,
    /// Whether a replacement could make the structured content fail it.
    schema_broken: bool,
    /// The stubs of the files handed to the keeper (not found again) since
    /// this was last cleared.
    stubs: Vec<String>,
    /// How many strings were replaced in structured values so far.
    replaced: usize,
}

impl Capture<'_> {
    /// Captures the content blocks, rebuilding the array only when a block
    /// is replaced.
    fn content(&mut self, blocks: &mut Vec<Value>) {
        let mut replaced: Vec<(usize, Vec<Value>)> = Vec::new();
        for (index, block) in blocks.iter_mut().enumerate() {
            if let Some(with) = self.block(block) {
                replaced.push((index, with));
            }
        }
        if replaced.is_empty() {
            return;
        }
        let old = std::mem::take(blocks);
        let mut replaced = replaced.into_iter().peekable();
        for (index, block) in old.into_iter().enumerate() {
            match replaced.next_if(|(at, _)| *at == index) {
                Some((_, with)) => blocks.extend(with),
                None => blocks.push(block),
            }
        }
    }

    /// What one block becomes: `None` to leave it where it is (a text block,
    /// changed in place if at all), or the blocks that replace it.
    fn block(&mut self, block: &mut Value) -> Option<Vec<Value>> {
        let Some(object) = block.as_object_mut() else {
            return Some(vec![text_block(
                "[content block not shown: it is not a JSON object]".to_owned(),
                None,
            )]);
        };
        let kind = match object.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            _ => {
                return Some(vec![text_block(
                    "[content block without a type not shown: porter does not know what it holds]"
                        .to_owned(),
                    object.get("annotations"),
                )]);
            }
        };
        match kind.as_str() {
            "text" => {
                for (key, member) in object.iter_mut() {
                    match (key.as_str(), member) {
                        ("type", _) => {}
                        ("text", Value::String(text)) => {
                            if let Some(rewritten) = self.blocks_in_json_text(text) {
                                release(std::mem::replace(text, rewritten).into_bytes());
                            }
                            if self.policy.capture_base64
                                && let Some(captured) = self.in_text(text, &Hints::default())
                            {
                                release(std::mem::replace(text, captured).into_bytes());
                            }
                        }
                        (_, member) => self.structured(member, &Hints::default(), 0),
                    }
                }
                None
            }
            "image" | "audio" => Some(self.media(&kind, object)),
            "resource" => Some(self.resource(object)),
            "resource_link" => Some(vec![text_block(
                link_line(object),
                object.get("annotations"),
            )]),
            other => Some(vec![text_block(
                format!(
                    "[content of type {} not shown: porter does not know this block type]",
                    Value::String(one_line(other, 64))
                ),
                object.get("annotations"),
            )]),
        }
    }

    /// An image or audio block: kept and replaced by its stub, followed by
    /// the scaled view of an image when the policy asks for it.
    fn media(&mut self, kind: &str, object: &Map<String, Value>) -> Vec<Value> {
        let annotations = object.get("annotations");
        let declared = declared_type(object);
        let not_kept = |why: &str| {
            let shown_type = declared.map(|t| format!(" · {}", one_line(t, 100)));
            vec![text_block(
                format!(
                    "[{kind} block not kept: {why}{}]",
                    shown_type.unwrap_or_default()
                ),
                annotations,
            )]
        };
        let Some(data) = object.get("data").and_then(Value::as_str) else {
            return not_kept("it has no data");
        };
        if !decode_block_data(data, |text, alphabet| self.decode(text, alphabet)) {
            return not_kept(&format!(
                "its data is not valid base64 ({} characters)",
                data.len()
            ));
        }
        if self.decoded.is_empty() {
            return not_kept("its data is empty");
        }
        let stub = self.keep(None, declared);
        let mut blocks = vec![text_block(stub, annotations)];
        if kind == "image" && self.policy.images_view {
            blocks.extend(scaled_view(&self.decoded, declared));
        }
        blocks
    }

    /// An embedded resource: its blob or text kept under the URI's last
    /// segment, replaced by the stub.
    fn resource(&mut self, object: &Map<String, Value>) -> Vec<Value> {
        let annotations = object.get("annotations");
        let Some(resource) = object.get("resource").and_then(Value::as_object) else {
            return vec![text_block(
                "[resource block not kept: it holds no resource]".to_owned(),
                annotations,
            )];
        };
        let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
        let name = uri_name(uri);
        let declared = declared_type(resource);
        let not_kept = |why: &str| {
            vec![text_block(
                format!("[resource block not kept: {why} · {}]", shown_uri(uri)),
                annotations,
            )]
        };
        let stub = if let Some(blob) = resource.get("blob").and_then(Value::as_str) {
            if !decode_block_data(blob, |text, alphabet| self.decode(text, alphabet)) {
                return not_kept(&format!(
                    "its blob is not valid base64 ({} characters)",
                    blob.len()
                ));
            }
            self.keep(name.as_deref(), declared)
        } else if let Some(text) = resource.get("text").and_then(Value::as_str) {
            self.keep_from(Some(text), name.as_deref(), declared)
        } else {
            return not_kept("it holds neither a blob nor text");
        };
        vec![text_block(stub, annotations)]
    }

    /// Hands the decoded buffer to the keeper.
    fn keep(&mut self, name: Option<&str>, declared_type: Option<&str>) -> String {
        self.keep_from(None, name, declared_type)
    }

    /// Decodes base64 `text` in `alphabet` into the decoded buffer; false
    /// when it is not clean. A long text is written to the keeper's
    /// staging and hashed while it is decoded, when the keeper offers one
    /// and the result holds no file twice (a file met again is not
    /// written again).
    fn decode(&mut self, text: &[u8], alphabet: Alphabet) -> bool {
        self.staged = None;
        if text.len() >= STAGED_DECODE_CHARS
            && self.seen.is_none()
            && let Some(size) = decoded_size(text)
            && let Some(mut staging) = self.keeper.stage(size as u64)
        {
            return match decode_staged(text, alphabet, &mut self.decoded, |block| {
                staging.write(block)
            }) {
                Some(sha256) => {
                    self.staged = Some((staging, sha256));
                    true
                }
                None => false,
            };
        }
        decode_into(text, alphabet, &mut self.decoded)
    }

    /// Hands a file to the keeper: `text`'s bytes, or the decoded buffer's
    /// when there is no text. A file this result already handed over gets
    /// the stub it got then.
    fn keep_from(
        &mut self,
        text: Option<&str>,
        name: Option<&str>,
        declared_type: Option<&str>,
    ) -> String {
        if text.is_none()
            && let Some((staging, sha256)) = self.staged.take()
        {
            self.files += 1;
            let stub = staging.keep(
                Found {
                    bytes: &self.decoded,
                    name,
                    declared_type,
                },
                &sha256,
            );
            self.stubs.push(stub.clone());
            return stub;
        }
        let bytes = text.map_or(self.decoded.as_slice(), str::as_bytes);
        let key = self
            .seen
            .as_ref()
            .map(|seen| (seen.hasher.hash_one(bytes), bytes.len()));
        if let (Some(seen), Some(key)) = (&self.seen, key)
            && let Some(stub) = seen.stubs.get(&key)
        {
            return stub.clone();
        }
        self.files += 1;
        let stub = self.keeper.keep(Found {
            bytes,
            name,
            declared_type,
        });
        if let (Some(seen), Some(key)) = (&mut self.seen, key) {
            seen.stubs.insert(key, stub.clone());
        }
        self.stubs.push(stub.clone());
        stub
    }

    /// Walks structured content (or any other part of a result but its
    /// content blocks): an object shaped like an MCP file block has its
    /// bytes kept whatever the policy, and under
    /// [`Policy::capture_base64`] long base64 strings are too, each
    /// object's string members giving the hints for its others.
    fn structured(&mut self, value: &mut Value, hints: &Hints, depth: usize) {
        if depth > MAX_STRUCTURED_DEPTH {
            return;
        }
        match value {
            Value::String(text) => {
                if self.policy.capture_base64
                    && let Some(captured) = self.in_text(text, hints)
                {
                    self.replace(text, captured, &[]);
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    self.enter(Step::Index(index));
                    self.structured(item, &Hints::default(), depth + 1);
                    self.leave();
                }
            }
            Value::Object(members) => {
                self.block_shape(members);
                let hints = siblings::in_object(members);
                for (key, member) in members.iter_mut() {
                    self.enter(Step::Key(key.clone()));
                    self.structured(member, &hints, depth + 1);
                    self.leave();
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// A text block that is JSON holding file blocks (a server that repeats
    /// its structured content as text, as the MCP spec suggests): the JSON
    /// with each block's bytes replaced by the stub, written again (compact,
    /// or indented when the text was; keys sorted, as serde_json's map keeps
    /// them), or `None` when it holds none and is left as it is.
    fn blocks_in_json_text(&mut self, text: &str) -> Option<String> {
        if !may_hold_blocks(text) {
            return None;
        }
        let mut value: Value = serde_json::from_str(text).ok()?;
        let replaced = self.replaced;
        let policy = self.policy;
        self.policy.capture_base64 = false;
        self.structured(&mut value, &Hints::default(), 0);
        self.policy = policy;
        if self.replaced == replaced {
            return None;
        }
        let written = if text.contains('\n') {
            serde_json::to_string_pretty(&value)
        } else {
            serde_json::to_string(&value)
        };
        written.ok()
    }

    /// Steps into a member or element, tracking the path only while there
    /// is a schema to check it against.
    fn enter(&mut self, step: Step) {
        if self.schema.is_some() {
            self.path.push(step);
        }
    }

    fn leave(&mut self) {
        if self.schema.is_some() {
            self.path.pop();
        }
    }

    /// Keeps the bytes of an object shaped like an MCP image or audio block
    /// (`type` and `data`) or embedded resource (`type: resource` with a
    /// `resource` holding `blob` or `text`), putting the stub in place of
    /// the string that held them and leaving the rest of the object be.
    fn block_shape(&mut self, members: &mut Map<String, Value>) {
        let kind = match members.get("type").and_then(Value::as_str) {
            Some(kind @ ("image" | "audio")) => kind.to_owned(),
            Some("resource") => {
                if let Some(Value::Object(resource)) = members.get_mut("resource") {
                    self.enter(Step::Key("resource".to_owned()));
                    self.resource_shape(resource);
                    self.leave();
                }
                return;
            }
            _ => return,
        };
        let declared = declared_type(members).map(str::to_owned);
        let Some(Value::String(data)) = members.get_mut("data") else {
            return;
        };
        if data.is_empty() {
            return;
        }
        let line = if decode_block_data(data, |text, alphabet| self.decode(text, alphabet))
            && !self.decoded.is_empty()
        {
            self.keep(None, declared.as_deref())
        } else {
            format!(
                "[{kind} data not kept: it is not valid base64 ({} characters)]",
                data.len()
            )
        };
        self.replace(data, line, &["data"]);
    }

    /// The embedded resource of a resource-shaped object: its blob or text
    /// kept under the URI's last segment.
    fn resource_shape(&mut self, resource: &mut Map<String, Value>) {
        let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
        let name = uri_name(uri);
        let declared = declared_type(resource).map(str::to_owned);
        if let Some(Value::String(blob)) = resource.get_mut("blob") {
            if blob.is_empty() {
                return;
            }
            let line = if decode_block_data(blob, |text, alphabet| self.decode(text, alphabet)) {
                self.keep(name.as_deref(), declared.as_deref())
            } else {
                format!(
                    "[resource blob not kept: it is not valid base64 ({} characters)]",
                    blob.len()
                )
            };
            self.replace(blob, line, &["blob"]);
        } else if let Some(Value::String(text)) = resource.get_mut("text") {
            let line = self.keep_from(Some(text), name.as_deref(), declared.as_deref());
            self.replace(text, line, &["text"]);
        }
    }

    /// Puts `with` in place of the string in `slot`, at the walk's path and
    /// then `keys`, noting whether the output schema could judge it
    /// differently.
    fn replace(&mut self, slot: &mut String, with: String, keys: &[&str]) {
        if let Some(schema) = self.schema {
            let mut path = self.path.clone();
            path.extend(keys.iter().map(|key| Step::Key((*key).to_owned())));
            if !schema::replacement_keeps_validity(schema, &path, slot, &with) {
                self.schema_broken = true;
            }
        }
        self.replaced += 1;
        release(std::mem::replace(slot, with).into_bytes());
    }

    /// The text with every recognisable long base64 string in it replaced
    /// by its stub, or `None` when there was none (the text is then left as
    /// it is). `outer` are the hints of the field holding the text, used
    /// when the string is the whole text.
    fn in_text(&mut self, text: &str, outer: &Hints) -> Option<String> {
        let bytes = text.as_bytes();
        let mut captured: Option<String> = None;
        let mut copied = 0;
        let mut from = 0;
        while let Some(run) = next_run(bytes, from, MIN_BASE64_CHARS) {
            from = run.end;
            if in_dotted_token(bytes, run) {
                continue;
            }
            let uri = data_uri(bytes, run.start);
            let start = uri.map_or(run.start, |uri| uri.start);
            let end = run.end;
            if !self.decode(&bytes[run.start..end], run.alphabet) {
                continue;
            }
            let level = quoting(bytes, start, end);
            let mut hints = Hints {
                declared_type: uri.and_then(|uri| uri.media_type).map(str::to_owned),
                name: None,
            };
            if level == 1 {
                hints = hints.or(&siblings::in_text(bytes, start - 1, end));
            }
            if start == 0 && end == bytes.len() {
                hints = hints.or(outer);
            }
            let Some(hints) = recognised(&self.decoded, &hints) else {
                self.staged = None;
                continue;
            };
            let stub = self.keep(hints.name.as_deref(), hints.declared_type.as_deref());
            let out = captured.get_or_insert_with(|| String::with_capacity(bytes.len() / 16));
            out.push_str(&text[copied..start]);
            out.push_str(&escaped(stub, level));
            copied = end;
        }
        captured.map(|mut out| {
            out.push_str(&text[copied..]);
            out
        })
    }
}

/// A block's declared media type, when it names one.
fn declared_type(object: &Map<String, Value>) -> Option<&str> {
    object
        .get("mimeType")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// A text block, carrying over the replaced block's annotations (audience,
/// priority), which apply to its stand-in just as well.
fn text_block(text: String, annotations: Option<&Value>) -> Value {
    let mut block = Map::new();
    block.insert("type".to_owned(), Value::String("text".to_owned()));
    block.insert("text".to_owned(), Value::String(text));
    if let Some(annotations) = annotations {
        block.insert("annotations".to_owned(), annotations.clone());
    }
    Value::Object(block)
}

/// The file view of an image, for clients that show images: the note saying
/// what it is and the image scaled to fit (or a description when it cannot
/// be read).
fn scaled_view(bytes: &[u8], declared_type: Option<&str>) -> Vec<Value> {
    let input = FileInput {
        bytes,
        name: "image",
        declared_type,
        link: None,
    };
    match porter_fileview::view(
        &input,
        &WindowRequest::default(),
        &Options::default(),
        &Cancel::new(),
    ) {
        Ok(view) => view
            .content
            .iter()
            .filter_map(|block| serde_json::to_value(block).ok())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The line a `resource_link` becomes:
/// `[link: <name> · <uri> · <type> · <size> — <description>]`, the parts
/// the link does not give left out.
fn link_line(object: &Map<String, Value>) -> String {
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let uri = text("uri").unwrap_or("");
    let name = text("name")
        .or_else(|| text("title"))
        .map(str::to_owned)
        .or_else(|| uri_name(uri))
        .unwrap_or_else(|| "unnamed".to_owned());
    let mut parts = vec![one_line(&name, LINE_FIELD_CHARS)];
    if !uri.is_empty() {
        parts.push(shown_uri(uri));
    }
    if let Some(media_type) = text("mimeType") {
        parts.push(one_line(media_type, 100));
    }
    if let Some(size) = object.get("size").and_then(Value::as_u64) {
        parts.push(human_size(size));
    }
    let mut line = format!("[link: {}", parts.join(" · "));
    if let Some(description) = text("description") {
        line.push_str(" — ");
        line.push_str(&one_line(description, LINE_FIELD_CHARS));
    }
    line.push(']');
    line
}

/// A URI as porter shows it: one line, its query as `?…` (a query may carry
/// a signature or token), at most a few hundred characters.
fn shown_uri(uri: &str) -> String {
    let (base, masked) = match uri.split_once('?') {
        Some((base, _)) => (base, true),
        None => (uri, false),
    };
    let mut shown = one_line(base, 400);
    if masked {
        shown.push_str("?…");
    }
    shown
}

/// The name a URI gives its file: its last path segment, percent-decoded,
/// without query or fragment.
fn uri_name(uri: &str) -> Option<String> {
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let last = if path.contains('/') {
        path.rsplit('/').next().unwrap_or_default()
    } else {
        path.rsplit(':').next().unwrap_or_default()
    };
    let name = percent_encoding::percent_decode_str(last)
        .decode_utf8_lossy()
        .into_owned();
    (!name.trim().is_empty()).then_some(name)
}

/// Upstream text made fit for one line porter writes: control characters
/// (line breaks among them) become spaces, and it is cut to `max_chars`
/// with an ellipsis.
fn one_line(text: &str, max_chars: usize) -> String {
    let mut out: String = text
        .chars()
        .take(max_chars)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(max_chars).is_some() {
        out.push('…');
    }
    out
}

/// The stub escaped for the depth of JSON string it goes into.
fn escaped(stub: String, level: usize) -> String {
    (0..level).fold(stub, |text, _| {
        let quoted = Value::String(text).to_string();
        quoted[1..quoted.len() - 1].to_owned()
    })
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    use proptest::strategy::Strategy as _;
    use serde_json::json;

    use super::*;
    use porter_test::noise;

    /// `Kept` is what the test keeper was handed for one file.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Kept {
        bytes: Vec<u8>,
        name: Option<String>,
        declared_type: Option<String>,
    }

    /// `Recorder` keeps nothing: it records what it was handed and answers
    /// with a fixed stub.
    struct Recorder {
        stub: &'static str,
        kept: RefCell<Vec<Kept>>,
    }

    impl Recorder {
        fn new(stub: &'static str) -> Self {
            Self {
                stub,
                kept: RefCell::new(Vec::new()),
            }
        }

        fn kept(&self) -> Vec<Kept> {
            self.kept.borrow().clone()
        }
    }

    impl Keep for Recorder {
        fn keep(&self, found: Found<'_>) -> String {
            self.kept.borrow_mut().push(Kept {
                bytes: found.bytes.to_vec(),
                name: found.name.map(str::to_owned),
                declared_type: found.declared_type.map(str::to_owned),
            });
            self.stub.to_owned()
        }
    }

    const STUB: &str = "[file: volume:inbox:x · stub]";
    const CAPTURE: Policy = Policy {
        capture_base64: true,
        images_view: false,
    };

    fn handed(bytes: &[u8], name: Option<&str>, declared_type: Option<&str>) -> Kept {
        Kept {
            bytes: bytes.to_vec(),
            name: name.map(str::to_owned),
            declared_type: declared_type.map(str::to_owned),
        }
    }

    fn pdf(len: usize) -> Vec<u8> {
        let mut bytes = b"%PDF-1.7\n".to_vec();
        bytes.extend(noise(len - bytes.len(), 11));
        bytes
    }

    fn png_like(len: usize) -> Vec<u8> {
        let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
        bytes.extend(noise(len - bytes.len(), 12));
        bytes
    }

    /// A real 40×30 PNG, for the file view to scale.
    fn real_png() -> Vec<u8> {
        let picture = image::RgbImage::from_pixel(40, 30, image::Rgb([200, 30, 30]));
        let mut out = std::io::Cursor::new(Vec::new());
        picture
            .write_to(&mut out, image::ImageFormat::Png)
            .expect("a PNG encodes in memory");
        out.into_inner()
    }

    fn result_with_text(text: &str) -> Value {
        json!({"content": [{"type": "text", "text": text}], "isError": false})
    }

    /// Runs a capture, returning the result, what was kept and the report.
    fn run(mut result: Value, policy: Policy, stub: &'static str) -> (Value, Vec<Kept>, Report) {
        let keeper = Recorder::new(stub);
        let report = capture_result(&mut result, policy, None, &keeper);
        (result, keeper.kept(), report)
    }

    /// `Stager` stages every long file and logs what happens to it:
    /// `stage N`, `write N` for each block, `keep` or `drop`.
    struct Stager {
        log: RefCell<Vec<String>>,
        written: RefCell<Vec<u8>>,
        kept: RefCell<Vec<(Kept, [u8; 32])>>,
        fail_writes_after: Option<usize>,
    }

    impl Stager {
        fn new(fail_writes_after: Option<usize>) -> Self {
            Self {
                log: RefCell::new(Vec::new()),
                written: RefCell::new(Vec::new()),
                kept: RefCell::new(Vec::new()),
                fail_writes_after,
            }
        }

        /// The log without the `write` lines, and how many there were.
        fn events(&self) -> (Vec<String>, usize) {
            let log = self.log.borrow();
            let writes = log.iter().filter(|l| l.starts_with("write")).count();
            let rest = log
                .iter()
                .filter(|l| !l.starts_with("write"))
                .cloned()
                .collect();
            (rest, writes)
        }
    }

    impl Keep for Stager {
        fn keep(&self, found: Found<'_>) -> String {
            self.log.borrow_mut().push("whole".to_owned());
            format!("[file: {} bytes handed over]", found.bytes.len())
        }

        fn stage(&self, size: u64) -> Option<Box<dyn Staging + '_>> {
            self.log.borrow_mut().push(format!("stage {size}"));
            Some(Box::new(StagerFile {
                stager: self,
                blocks: 0,
            }))
        }
    }

    struct StagerFile<'a> {
        stager: &'a Stager,
        blocks: usize,
    }

    impl Staging for StagerFile<'_> {
        fn write(&mut self, block: &[u8]) -> std::io::Result<()> {
            self.blocks += 1;
            self.stager
                .log
                .borrow_mut()
                .push(format!("write {}", block.len()));
            if self
                .stager
                .fail_writes_after
                .is_some_and(|n| self.blocks > n)
            {
                return Err(std::io::Error::other("disk full"));
            }
            self.stager.written.borrow_mut().extend_from_slice(block);
            Ok(())
        }

        fn keep(self: Box<Self>, found: Found<'_>, sha256: &[u8; 32]) -> String {
            self.stager.log.borrow_mut().push("keep".to_owned());
            self.stager.kept.borrow_mut().push((
                handed(found.bytes, found.name, found.declared_type),
                *sha256,
            ));
            "[file: staged]".to_owned()
        }
    }

    impl Drop for StagerFile<'_> {
        fn drop(&mut self) {
            self.stager.log.borrow_mut().push("drop".to_owned());
        }
    }

    /// A text block holding a JSON object with a PDF of `len` bytes.
    fn long_pdf_text(len: usize) -> (Vec<u8>, String) {
        let bytes = pdf(len);
        let text = format!(
            r#"{{"fileName": "big.pdf", "mimeType": "application/pdf", "data": "{}"}}"#,
            STANDARD.encode(&bytes)
        );
        (bytes, text)
    }

    #[test]
    fn a_long_file_is_written_and_hashed_while_it_is_decoded() {
        use sha2::Digest as _;
        let (bytes, text) = long_pdf_text(4_500_001);
        let stager = Stager::new(None);
        let mut result = result_with_text(&text);
        let report = capture_result(&mut result, CAPTURE, None, &stager);
        assert_eq!(report.files, 1);
        assert_eq!(
            result["content"][0]["text"],
            r#"{"fileName": "big.pdf", "mimeType": "application/pdf", "data": "[file: staged]"}"#
        );
        let (events, writes) = stager.events();
        assert_eq!(events, ["stage 4500001", "keep", "drop"]);
        assert_eq!(writes, 3, "1.5 MiB blocks");
        assert!(*stager.written.borrow() == bytes, "the blocks are the file");
        let kept = stager.kept.borrow();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].0, named(&bytes, "big.pdf", "application/pdf"));
        assert_eq!(kept[0].1, <[u8; 32]>::from(sha2::Sha256::digest(&bytes)));
    }

    #[test]
    fn a_long_string_that_is_no_file_is_written_then_dropped_never_kept() {
        let token = STANDARD.encode(noise(4_000_000, 21));
        let before = result_with_text(&format!(r#"{{"cursor": "{token}"}}"#));
        let stager = Stager::new(None);
        let mut result = before.clone();
        let report = capture_result(&mut result, CAPTURE, None, &stager);
        assert_eq!(report.files, 0);
        assert_eq!(result, before);
        let (events, _) = stager.events();
        assert_eq!(events, ["stage 4000000", "drop"]);
    }

    #[test]
    fn a_failed_write_still_asks_the_keeper_which_says_why() {
        let (bytes, text) = long_pdf_text(4_500_000);
        let stager = Stager::new(Some(1));
        let mut result = result_with_text(&text);
        let report = capture_result(&mut result, CAPTURE, None, &stager);
        assert_eq!(report.files, 1);
        let (events, writes) = stager.events();
        assert_eq!(events, ["stage 4500000", "keep", "drop"]);
        assert_eq!(writes, 2, "no block is written after the one that failed");
        assert_eq!(stager.kept.borrow()[0].0.bytes.len(), bytes.len());
    }

    #[test]
    fn a_file_met_twice_in_one_result_is_handed_over_whole_once() {
        let (bytes, _) = long_pdf_text(4_500_000);
        let data = STANDARD.encode(&bytes);
        let mut result = json!({
            "content": [{"type": "image", "data": data, "mimeType": "image/png"}],
            "structuredContent": {"picture": {"type": "image", "data": data, "mimeType": "image/png"}},
        });
        let stager = Stager::new(None);
        let report = capture_result(&mut result, Policy::default(), None, &stager);
        assert_eq!(report.files, 1);
        assert_eq!(stager.events(), (vec!["whole".to_owned()], 0));
    }

    #[test]
    fn a_pdf_in_a_json_text_block_is_the_only_thing_replaced() {
        let bytes = pdf(6000);
        let mut document = json!({
            "id": 7,
            "attachment": {
                "fileName": "q3/report.pdf",
                "mimeType": "application/pdf",
                "data": STANDARD.encode(&bytes),
                "size": 6000
            },
            "note": "see attached",
            "tags": ["a", "b"]
        });
        let text = serde_json::to_string_pretty(&document).expect("serialises");
        let (result, kept, report) = run(result_with_text(&text), CAPTURE, STUB);

        let after = result["content"][0]["text"].as_str().expect("text");
        let parsed: Value = serde_json::from_str(after).expect("the text is still JSON");
        document["attachment"]["data"] = json!(STUB);
        assert_eq!(parsed, document);
        let encoded = STANDARD.encode(&bytes);
        assert_eq!(
            after,
            text.replace(&encoded, STUB),
            "only the string changed"
        );
        assert_eq!(
            kept,
            vec![named(&bytes, "q3/report.pdf", "application/pdf")]
        );
        assert_eq!(report.files, 1);
    }

    fn named(bytes: &[u8], name: &str, declared_type: &str) -> Kept {
        handed(bytes, Some(name), Some(declared_type))
    }

    /// The texts of the issue's cases, each with what capture makes of it
    /// (`None`: left as it is) and the bytes kept.
    fn issue_cases() -> Vec<(&'static str, String, Option<String>, Vec<Kept>)> {
        let png = png_like(5000);
        let png64 = STANDARD.encode(&png);
        let cursor = STANDARD.encode(noise(3500, 5));
        let pdf_4095 = STANDARD_NO_PAD.encode(pdf(3071));
        let pdf_4096 = STANDARD_NO_PAD.encode(pdf(3072));
        let url_png = {
            // Noise until the URL-safe alphabet shows: `-` or `_` in it.
            let mut seed = 20;
            loop {
                let bytes = [b"\x89PNG\r\n\x1a\n".as_slice(), &noise(4000, seed)].concat();
                let text = URL_SAFE_NO_PAD.encode(&bytes);
                if text.contains(['-', '_']) {
                    break (bytes, text);
                }
                seed += 1;
            }
        };
        let log = "12:00:01 INFO request served in 3 ms\n".repeat(120);
        assert_eq!(pdf_4095.len(), 4095);
        assert_eq!(pdf_4096.len(), 4096);
        vec![
            (
                "a random cursor",
                format!(r#"{{"items": [], "cursor": "{cursor}"}}"#),
                None,
                vec![],
            ),
            (
                "a PNG in broken JSON",
                format!(r#"{{"a": "{png64}" , broken"#),
                Some(format!(r#"{{"a": "{STUB}" , broken"#)),
                vec![handed(&png, None, None)],
            ),
            (
                "4,095 characters",
                format!(r#"{{"mimeType": "application/pdf", "data": "{pdf_4095}"}}"#),
                None,
                vec![],
            ),
            (
                "4,096 characters",
                format!(r#"{{"mimeType": "application/pdf", "data": "{pdf_4096}"}}"#),
                Some(format!(
                    r#"{{"mimeType": "application/pdf", "data": "{STUB}"}}"#
                )),
                vec![handed(&pdf(3072), None, Some("application/pdf"))],
            ),
            (
                "URL-safe base64",
                format!("payload={} end", url_png.1),
                Some(format!("payload={STUB} end")),
                vec![handed(&url_png.0, None, None)],
            ),
            (
                "a data: URI",
                format!(r#"<img src="data:image/png;base64,{png64}"> and"#),
                Some(format!(r#"<img src="{STUB}"> and"#)),
                vec![handed(&png, None, Some("image/png"))],
            ),
            (
                "base64 of readable text, alone in the block",
                STANDARD.encode(&log),
                Some(STUB.to_owned()),
                vec![handed(log.as_bytes(), None, None)],
            ),
            (
                "a file named by a sibling, inside an array of files",
                format!(
                    r#"[{{"name": "a.pdf", "data": "x"}}, {{"name": "b.bin", "data": "{cursor}"}}]"#
                ),
                Some(format!(
                    r#"[{{"name": "a.pdf", "data": "x"}}, {{"name": "b.bin", "data": "{STUB}"}}]"#
                )),
                vec![handed(&noise(3500, 5), Some("b.bin"), None)],
            ),
        ]
    }

    #[test]
    fn base64_in_text_is_captured_only_when_it_is_a_recognisable_file() {
        for (case, text, expected, expected_kept) in issue_cases() {
            let before = result_with_text(&text);
            let (after, kept, report) = run(before.clone(), CAPTURE, STUB);
            match expected {
                Some(expected) => assert_eq!(after, result_with_text(&expected), "{case}"),
                None => assert_eq!(
                    after.to_string(),
                    before.to_string(),
                    "{case}: left as it was"
                ),
            }
            assert_eq!(report.files, expected_kept.len(), "{case}");
            assert_eq!(kept, expected_kept, "{case}");
        }
    }

    #[test]
    fn under_passthrough_no_text_changes() {
        for (case, text, _, _) in issue_cases() {
            let before = result_with_text(&text);
            let (after, kept, report) = run(before.clone(), Policy::default(), STUB);
            assert_eq!(after.to_string(), before.to_string(), "{case}");
            assert!(kept.is_empty(), "{case}");
            assert_eq!(report.files, 0, "{case}");
        }
    }

    #[test]
    fn a_stub_is_json_escaped_as_deep_as_the_string_it_replaces() {
        const ODD: &str = "[file: \"odd\\name\" · stub]";
        let png = png_like(4000);
        let inner = format!(
            r#"{{"mimeType":"image/png","data":"{}"}}"#,
            STANDARD.encode(&png)
        );
        let outer = json!({"body": inner}).to_string();
        let expected = json!({"mimeType": "image/png", "data": ODD});

        let (after, kept, _) = run(result_with_text(&inner), CAPTURE, ODD);
        let text = after["content"][0]["text"].as_str().expect("text");
        let parsed: Value = serde_json::from_str(text).expect("still JSON");
        assert_eq!(parsed, expected);
        assert_eq!(kept, vec![handed(&png, None, Some("image/png"))]);

        let (after, kept, _) = run(result_with_text(&outer), CAPTURE, ODD);
        let text = after["content"][0]["text"].as_str().expect("text");
        let parsed: Value = serde_json::from_str(text).expect("still JSON");
        let body = parsed["body"].as_str().expect("body is a string");
        let parsed: Value = serde_json::from_str(body).expect("the body is still JSON");
        assert_eq!(parsed, expected);
        // Siblings are not read through a second level of quoting; the
        // signature alone recognises the PNG.
        assert_eq!(kept, vec![handed(&png, None, None)]);
    }

    #[test]
    fn a_result_of_text_blocks_only_passes_through_byte_for_byte() {
        let result = json!({
            "content": [
                {"type": "text", "text": "plain words"},
                {"type": "text", "text": "{\"cursor\": \"abc\"}", "annotations": {"priority": 1}}
            ],
            "_meta": {"k": "v"},
            "isError": false
        });
        for policy in [Policy::default(), CAPTURE] {
            let (after, kept, report) = run(result.clone(), policy, STUB);
            assert_eq!(after.to_string(), result.to_string());
            assert!(kept.is_empty());
            assert_eq!(report, Report::default());
        }
    }

    #[test]
    fn each_kind_of_block_becomes_the_line_it_should() {
        let png = png_like(300);
        let wav = b"RIFF\x24\0\0\0WAVEfmt rest".to_vec();
        let cases: Vec<(&str, Value, Vec<Value>, Vec<Kept>)> = vec![
            (
                "image",
                json!({"type": "image", "data": STANDARD.encode(&png), "mimeType": "image/png",
                       "annotations": {"audience": ["user"]}}),
                vec![json!({"type": "text", "text": STUB, "annotations": {"audience": ["user"]}})],
                vec![handed(&png, None, Some("image/png"))],
            ),
            (
                "audio",
                json!({"type": "audio", "data": STANDARD.encode(&wav), "mimeType": "audio/wav"}),
                vec![json!({"type": "text", "text": STUB})],
                vec![handed(&wav, None, Some("audio/wav"))],
            ),
            (
                "resource blob",
                json!({"type": "resource", "resource": {
                    "uri": "file:///srv/docs/Q3%20report.pdf?sig=secret",
                    "mimeType": "application/pdf", "blob": STANDARD.encode(pdf(100))}}),
                vec![json!({"type": "text", "text": STUB})],
                vec![named(&pdf(100), "Q3 report.pdf", "application/pdf")],
            ),
            (
                "resource text",
                json!({"type": "resource", "resource": {
                    "uri": "test://static/resource/notes.md", "text": "# Notes\n"}}),
                vec![json!({"type": "text", "text": STUB})],
                vec![handed(b"# Notes\n", Some("notes.md"), None)],
            ),
            (
                "resource link",
                json!({"type": "resource_link", "uri": "https://h.example/f/r.pdf?token=secret",
                       "name": "r.pdf", "mimeType": "application/pdf", "size": 2867,
                       "description": "Quarterly\nreport"}),
                vec![json!({"type": "text", "text":
                    "[link: r.pdf · https://h.example/f/r.pdf?… · application/pdf · 2.8 KiB — Quarterly report]"})],
                vec![],
            ),
            (
                "resource link with only a URI",
                json!({"type": "resource_link", "uri": "test://static/resource/7"}),
                vec![json!({"type": "text", "text": "[link: 7 · test://static/resource/7]"})],
                vec![],
            ),
            (
                "unknown type",
                json!({"type": "hologram", "data": "AAAA"}),
                vec![json!({"type": "text", "text":
                    "[content of type \"hologram\" not shown: porter does not know this block type]"})],
                vec![],
            ),
            (
                "no type",
                json!({"data": "AAAA"}),
                vec![json!({"type": "text", "text":
                    "[content block without a type not shown: porter does not know what it holds]"})],
                vec![],
            ),
            (
                "bad base64 in an image",
                json!({"type": "image", "data": "not*base64", "mimeType": "image/png"}),
                vec![json!({"type": "text", "text":
                    "[image block not kept: its data is not valid base64 (10 characters) · image/png]"})],
                vec![],
            ),
            (
                "bad base64 in a resource blob",
                json!({"type": "resource", "resource": {"uri": "x:/a.bin", "blob": "%%%%"}}),
                vec![json!({"type": "text", "text":
                    "[resource block not kept: its blob is not valid base64 (4 characters) · x:/a.bin]"})],
                vec![],
            ),
        ];
        for (case, block, expected, expected_kept) in cases {
            let before = json!({"content": [{"type": "text", "text": "before"}, block, {"type": "text", "text": "after"}]});
            let (after, kept, report) = run(before, Policy::default(), STUB);
            let mut want = vec![json!({"type": "text", "text": "before"})];
            want.extend(expected);
            want.push(json!({"type": "text", "text": "after"}));
            assert_eq!(after, json!({"content": want}), "{case}");
            assert_eq!(report.files, expected_kept.len(), "{case}");
            assert_eq!(kept, expected_kept, "{case}");
        }
    }

    #[test]
    fn under_images_view_an_image_is_kept_and_shown_scaled_beside_its_stub() {
        let png = real_png();
        let before = json!({"content": [{"type": "image", "data": STANDARD.encode(&png), "mimeType": "image/png"}]});
        let policy = Policy {
            capture_base64: false,
            images_view: true,
        };
        let (after, kept, _) = run(before, policy, STUB);
        assert_eq!(kept, vec![handed(&png, None, Some("image/png"))]);
        let blocks = after["content"].as_array().expect("content");
        assert_eq!(blocks[0], json!({"type": "text", "text": STUB}));
        let shown = porter_test::decode_image_block(porter_test::first_block(&after, "image"));
        assert_eq!((shown.width(), shown.height()), (40, 30));
        assert_eq!(shown.get_pixel(5, 5).0, [200, 30, 30, 255]);
    }

    #[test]
    fn structured_content_strings_are_captured_with_their_parsed_siblings() {
        let bytes = noise(4000, 9);
        let cursor = STANDARD.encode(noise(3500, 10));
        let before = json!({
            "content": [{"type": "text", "text": "done"}],
            "structuredContent": {
                "files": [
                    {"contentType": "application/x-custom", "fileName": "a.dat", "data": STANDARD.encode(&bytes)},
                    {"data": format!("data:application/pdf;base64,{}", STANDARD.encode(pdf(3500)))}
                ],
                "next": cursor,
                "count": 2
            }
        });
        let (after, kept, report) = run(before.clone(), CAPTURE, STUB);
        let mut expected = before.clone();
        expected["structuredContent"]["files"][0]["data"] = json!(STUB);
        expected["structuredContent"]["files"][1]["data"] = json!(STUB);
        assert_eq!(after, expected);
        assert_eq!(
            kept,
            vec![
                named(&bytes, "a.dat", "application/x-custom"),
                handed(&pdf(3500), None, Some("application/pdf")),
            ]
        );
        assert_eq!(report.files, 2);

        let (untouched, kept, _) = run(before.clone(), Policy::default(), STUB);
        assert_eq!(untouched.to_string(), before.to_string());
        assert!(kept.is_empty());
    }

    #[test]
    fn the_issue_example_keeps_the_pdf_and_leaves_the_cursor_and_the_note() {
        let bytes = pdf(5000);
        let cursor = STANDARD.encode(noise(6000, 31));
        assert_eq!(cursor.len(), 8000);
        let text = json!({
            "fileName": "report.pdf",
            "mimeType": "application/pdf",
            "data": STANDARD.encode(&bytes),
            "cursor": cursor,
            "note": "keep me"
        })
        .to_string();
        let (after, kept, report) = run(result_with_text(&text), CAPTURE, STUB);
        let parsed: Value =
            serde_json::from_str(after["content"][0]["text"].as_str().expect("text"))
                .expect("still JSON");
        assert_eq!(parsed["data"], STUB);
        assert_eq!(parsed["cursor"], cursor.as_str());
        assert_eq!(parsed["note"], "keep me");
        assert_eq!(kept, vec![named(&bytes, "report.pdf", "application/pdf")]);
        assert_eq!(report.files, 1);
    }

    /// A JWT-like token: a JSON header and a long JSON payload, base64url
    /// without padding, and a random signature, joined by dots.
    fn jwt_like(seed: u64) -> String {
        let claims: Vec<String> = (0..120)
            .map(|i| {
                format!(
                    "\"claim{i}\":\"{}\"",
                    URL_SAFE_NO_PAD.encode(noise(12, seed + i))
                )
            })
            .collect();
        let payload = format!("{{{}}}", claims.join(","));
        [
            URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#),
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(noise(32, seed)),
        ]
        .join(".")
    }

    /// Strings that look like base64 files but are not: what a model needs
    /// back as it was.
    fn tokens() -> Vec<(&'static str, String)> {
        let hash: String = noise(4100, 41)
            .iter()
            .fold(String::new(), |hex, b| hex + &format!("{b:02x}"));
        vec![
            ("a cursor", STANDARD.encode(noise(6000, 42))),
            ("a JWT-like token", jwt_like(43)),
            ("a random key", URL_SAFE_NO_PAD.encode(noise(4000, 44))),
            ("a hex hash list", hash),
        ]
    }

    /// Every sibling field name the capture reads, each with a value that
    /// names a type the bytes can be checked against, and bytes that agree.
    fn siblings_with_agreeing_bytes() -> Vec<(&'static str, &'static str, Vec<u8>)> {
        let zip = [b"PK\x03\x04".as_slice(), &noise(4000, 51)].concat();
        let text = "line of notes\n".repeat(300).into_bytes();
        vec![
            ("contentType", "application/pdf", pdf(4000)),
            ("content_type", "image/png", png_like(4000)),
            ("Content-Type", "application/zip", zip.clone()),
            ("mimeType", "application/pdf", pdf(4000)),
            ("mime_type", "text/plain", text.clone()),
            ("mediaType", "image/png", png_like(4000)),
            ("fileName", "report.pdf", pdf(4000)),
            ("filename", "sheet.xlsx", zip),
            ("file_name", "notes.txt", text.clone()),
            ("name", "photo.png", png_like(4000)),
            ("path", "docs/readme.md", text),
        ]
    }

    #[test]
    fn tokens_beside_every_sibling_field_are_left_as_they_are() {
        for (field, label, bytes) in siblings_with_agreeing_bytes() {
            for (kind, token) in tokens() {
                let case = format!("{kind} beside {field}: {label}");
                // A JSON text block.
                let text = json!({field: label, "data": token}).to_string();
                let before = result_with_text(&text);
                let (after, kept, _) = run(before.clone(), CAPTURE, STUB);
                assert_eq!(after.to_string(), before.to_string(), "{case}");
                assert!(kept.is_empty(), "{case}");
                // Structured content.
                let before =
                    json!({"content": [], "structuredContent": {field: label, "next": token}});
                let (after, kept, _) = run(before.clone(), CAPTURE, STUB);
                assert_eq!(after.to_string(), before.to_string(), "{case}");
                assert!(kept.is_empty(), "{case}");
            }
            // The same field does vouch for bytes that agree with it.
            let text = json!({field: label, "data": STANDARD.encode(&bytes)}).to_string();
            let (after, kept, _) = run(result_with_text(&text), CAPTURE, STUB);
            let parsed: Value =
                serde_json::from_str(after["content"][0]["text"].as_str().expect("text"))
                    .expect("still JSON");
            assert_eq!(parsed["data"], STUB, "{field}: {label}");
            assert_eq!(kept.len(), 1, "{field}: {label}");
            assert_eq!(kept[0].bytes, bytes, "{field}: {label}");
        }
    }

    /// A result as server-filesystem's `read_media_file` answers: the block
    /// in `content` and again in `structuredContent`.
    fn media_result(block: &Value) -> Value {
        json!({"content": [block], "structuredContent": {"content": [block], "path": "/srv/a"}})
    }

    #[test]
    fn file_blocks_in_structured_content_share_the_stub_of_the_same_block_in_content() {
        let png = png_like(3000);
        let wav = b"RIFF\x24\0\0\0WAVEfmt rest of it".to_vec();
        let blob = pdf(900);
        let cases: [(&str, Value, Vec<Kept>, &[&str]); 4] = [
            (
                "image",
                json!({"type": "image", "data": STANDARD.encode(&png), "mimeType": "image/png"}),
                vec![handed(&png, None, Some("image/png"))],
                &["data"],
            ),
            (
                "audio",
                json!({"type": "audio", "data": STANDARD.encode(&wav), "mimeType": "audio/wav"}),
                vec![handed(&wav, None, Some("audio/wav"))],
                &["data"],
            ),
            (
                "resource blob",
                json!({"type": "resource", "resource": {"uri": "file:///srv/a/r.pdf",
                       "mimeType": "application/pdf", "blob": STANDARD.encode(&blob)}}),
                vec![named(&blob, "r.pdf", "application/pdf")],
                &["resource", "blob"],
            ),
            (
                "resource text",
                json!({"type": "resource", "resource": {"uri": "file:///srv/a/n.md", "text": "# N\n"}}),
                vec![handed(b"# N\n", Some("n.md"), None)],
                &["resource", "text"],
            ),
        ];
        for (case, block, expected_kept, at) in cases {
            for policy in [Policy::default(), CAPTURE] {
                let (after, kept, report) = run(media_result(&block), policy, STUB);
                assert_eq!(kept, expected_kept, "{case}: one file handed over");
                assert_eq!(report.files, 1, "{case}");
                assert_eq!(
                    after["content"],
                    json!([{"type": "text", "text": STUB}]),
                    "{case}"
                );
                let mut expected = block.clone();
                let pointer = format!("/{}", at.join("/"));
                *expected.pointer_mut(&pointer).expect("the field") = json!(STUB);
                assert_eq!(
                    after["structuredContent"],
                    json!({"content": [expected], "path": "/srv/a"}),
                    "{case}: the rest of the structure kept"
                );
                assert!(!report.structured_withheld, "{case}");
            }
        }
    }

    #[test]
    fn file_blocks_elsewhere_in_a_result_are_captured_too() {
        let png = png_like(3000);
        let image =
            json!({"type": "image", "data": STANDARD.encode(&png), "mimeType": "image/png"});
        let before = json!({
            "content": [{"type": "text", "text": "hi", "_meta": {"preview": image}}],
            "_meta": {"thumbs": [image]},
        });
        let (after, kept, report) = run(before, Policy::default(), STUB);
        assert_eq!(kept, vec![handed(&png, None, Some("image/png"))]);
        assert_eq!(report.files, 1);
        assert_eq!(after["content"][0]["_meta"]["preview"]["data"], STUB);
        assert_eq!(after["_meta"]["thumbs"][0]["data"], STUB);
        assert_eq!(after["content"][0]["text"], "hi");

        let bad = json!({"structuredContent": {"type": "audio", "data": "not*base64"}});
        let (after, kept, _) = run(bad, Policy::default(), STUB);
        assert!(kept.is_empty());
        assert_eq!(
            after["structuredContent"]["data"],
            "[audio data not kept: it is not valid base64 (10 characters)]"
        );
    }

    #[test]
    fn structured_content_repeated_as_json_text_gets_the_same_stub_there() {
        let wav = b"RIFF\x24\0\0\0WAVEfmt and the rest".to_vec();
        let structured = json!({"content": [
            {"type": "audio", "data": STANDARD.encode(&wav), "mimeType": "audio/wav"}
        ], "seconds": 3});
        for text in [
            structured.to_string(),
            serde_json::to_string_pretty(&structured).expect("serialises"),
        ] {
            let before = json!({"content": [{"type": "text", "text": text}], "structuredContent": structured});
            let (after, kept, report) = run(before, Policy::default(), STUB);
            assert_eq!(kept, vec![handed(&wav, None, Some("audio/wav"))]);
            assert_eq!(report.files, 1);
            let mut expected = structured.clone();
            expected["content"][0]["data"] = json!(STUB);
            assert_eq!(after["structuredContent"], expected);
            let text = after["content"][0]["text"].as_str().expect("text");
            let parsed: Value = serde_json::from_str(text).expect("still JSON");
            assert_eq!(parsed, expected);
        }
        // JSON text naming a block type but holding no block is left be.
        let text = r#"{"type": "image", "caption": "a cat"}"#;
        let (after, kept, _) = run(result_with_text(text), Policy::default(), STUB);
        assert!(kept.is_empty());
        assert_eq!(after, result_with_text(text));
    }

    #[test]
    fn structured_content_whose_stub_breaks_the_output_schema_is_withheld_and_said_so() {
        let png = png_like(3000);
        let other = png_like(2000);
        let image = |bytes: &[u8]| json!({"type": "image", "data": STANDARD.encode(bytes), "mimeType": "image/png"});
        let before = json!({
            "content": [image(&png)],
            "structuredContent": {"content": [image(&png), image(&other)]}
        });
        let schema = |data: Value| {
            json!({"type": "object", "properties": {"content": {"type": "array", "items": {
                "type": "object", "properties": {"type": {"enum": ["image", "audio"]}, "data": data,
                "mimeType": {"type": "string"}}}}}})
        };
        let fits = schema(json!({"type": "string"}));
        let strict = schema(json!({"type": "string", "pattern": "^[A-Za-z0-9+/]+=*$"}));

        let keeper = Recorder::new(STUB);
        let mut result = before.clone();
        let report = capture_result(&mut result, Policy::default(), fits.as_object(), &keeper);
        assert!(!report.structured_withheld);
        assert_eq!(result["structuredContent"]["content"][1]["data"], STUB);
        assert_eq!(result.get("isError"), None);

        let keeper = Recorder::new(STUB);
        let mut result = before;
        let report = capture_result(&mut result, Policy::default(), strict.as_object(), &keeper);
        assert!(report.structured_withheld);
        assert_eq!(report.files, 2);
        assert_eq!(result.get("structuredContent"), None);
        assert_eq!(result["isError"], true);
        let lines: Vec<&str> = result["content"]
            .as_array()
            .expect("content")
            .iter()
            .map(|block| block["text"].as_str().expect("text"))
            .collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!(lines[0], STUB);
        assert!(
            lines[1].starts_with("[structured content withheld:"),
            "{}",
            lines[1]
        );
        assert!(lines[1].contains("output schema"));
        assert_eq!(lines[2], STUB, "the file found only there");
    }

    #[test]
    fn one_line_fields_lose_control_characters_and_length() {
        let cases = [
            ("a\nb\tc", 10, "a b c"),
            ("abcdef", 3, "abc…"),
            ("abc", 3, "abc"),
        ];
        for (text, max, expected) in cases {
            assert_eq!(one_line(text, max), expected);
        }
    }

    /// Results the capture leaves as they are, and one of each kind it
    /// changes: the predicate the gateway's fast path trusts tells them apart.
    #[test]
    fn may_change_is_false_for_plain_results_and_true_for_each_kind_of_file() {
        let plain = [
            json!({"content": [{"type": "text", "text": "hello"}]}),
            json!({
                "content": [{"type": "text", "text": "{\"a\": 1}", "annotations": {"priority": 1}}],
                "structuredContent": {"a": 1, "b": ["x", null, true], "type": "text"},
                "_meta": {"k": "v"},
            }),
            json!({"content": [], "isError": true}),
            json!("not an object"),
        ];
        for result in plain {
            assert!(!may_change(&result), "{result}");
        }
        let long = STANDARD.encode(pdf(4000));
        let changing = [
            json!({"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}),
            json!({"content": [{"type": "audio", "data": "", "mimeType": "audio/wav"}]}),
            json!({"content": [{"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hi"}}]}),
            json!({"content": [{"type": "resource_link", "uri": "file:///a", "name": "a"}]}),
            json!({"content": [{"type": "text", "text": long}]}),
            json!({"content": [{"type": "text", "text": format!("see data:application/pdf;base64,{long}")}]}),
            json!({"content": [{"text": "a block without a type"}]}),
            json!({"content": ["not an object"]}),
            json!({"content": [{"type": "text", "text": "[{\"type\": \"image\", \"data\": \"iVBORw0KGgo=\"}]"}]}),
            json!({"content": [], "structuredContent": {"photo": {"type": "image", "data": "iVBORw0KGgo="}}}),
            json!({"content": [], "structuredContent": {"deep": [[{"blob": long}]]}}),
            json!({"content": [], "_meta": {"a": {"type": "resource", "resource": {"uri": "x", "blob": "aGk="}}}}),
        ];
        for result in changing {
            assert!(may_change(&result), "{result}");
            let mut captured = result.clone();
            capture_result(&mut captured, CAPTURE, None, &Recorder::new(STUB));
            assert_ne!(captured, result, "the capture changes it");
        }
    }

    /// Strings that matter to the capture, for the generated results below.
    fn telling_strings() -> Vec<String> {
        let long = STANDARD.encode(pdf(4000));
        vec![
            "image".into(),
            "audio".into(),
            "resource".into(),
            "text".into(),
            "aGVsbG8gd29ybGQ=".into(),
            "data:image/png;base64,iVBORw0KGgo=".into(),
            "{\"type\": \"image\", \"data\": \"iVBORw0KGgo=\"}".into(),
            "[{\"type\": \"text\", \"text\": \"hi\"}]".into(),
            format!("data:application/pdf;base64,{long}"),
            long,
        ]
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[a-z =]{0,12}".prop_map(Value::from),
            proptest::sample::select(telling_strings()).prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 40, 5, |inner| {
            let key = proptest::sample::select(vec![
                "type", "data", "blob", "text", "resource", "uri", "mimeType", "x",
            ]);
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec((key, inner), 0..5).prop_map(|members| {
                    Value::Object(
                        members
                            .into_iter()
                            .map(|(key, value)| (key.to_owned(), value))
                            .collect(),
                    )
                }),
            ]
        })
    }

    proptest::proptest! {
        /// Whatever a result holds, one that `may_change` passes as plain is
        /// left as it was by the capture under every policy, and nothing in
        /// it is kept: the gateway may forward it without capturing.
        #[test]
        fn a_result_may_change_passes_is_left_as_it_was_by_the_capture(
            blocks in proptest::collection::vec(
                proptest::prop_oneof![
                    json_value(),
                    json_value().prop_map(|text| json!({"type": "text", "text": text})),
                    proptest::sample::select(telling_strings())
                        .prop_map(|text| json!({"type": "text", "text": text})),
                ],
                0..4,
            ),
            structured in proptest::option::of(json_value()),
            meta in proptest::option::of(json_value()),
            base64 in proptest::bool::ANY,
            view in proptest::bool::ANY,
        ) {
            let mut result = json!({"content": blocks});
            if let Some(structured) = structured {
                result["structuredContent"] = structured;
            }
            if let Some(meta) = meta {
                result["_meta"] = meta;
            }
            if !may_change(&result) {
                let policy = Policy { capture_base64: base64, images_view: view };
                let recorder = Recorder::new(STUB);
                let mut captured = result.clone();
                let report = capture_result(&mut captured, policy, None, &recorder);
                proptest::prop_assert_eq!(&captured, &result);
                proptest::prop_assert_eq!(report.files, 0);
                proptest::prop_assert!(recorder.kept.borrow().is_empty());
            }
        }
    }
}
