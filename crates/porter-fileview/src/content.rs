//! What a view returns: MCP content blocks, shaped exactly as a tool result
//! carries them, and a structured record of what was found and done.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// `Block` is one MCP content block. Its JSON form is the one the MCP schema
/// gives (`{"type":"text","text":…}`, `{"type":"image","data":…,"mimeType":…}`,
/// …), so a server can put it in a tool result unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Block {
    /// Text the model reads.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64 in `data`.
    Image {
        /// Base64 of the image bytes.
        data: String,
        /// Its media type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64 in `data`.
    Audio {
        /// Base64 of the audio bytes.
        data: String,
        /// Its media type, e.g. `audio/mpeg`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// An embedded resource: video and PDF travel this way, since MCP has no
    /// video or document block.
    Resource {
        /// The blob and where it came from.
        resource: ResourceBlob,
    },
}

/// `ResourceBlob` is the `resource` of an embedded resource block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceBlob {
    /// A URI naming the file (the caller's link, or `file:///<name>`).
    pub uri: String,
    /// Its media type.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// Base64 of the bytes.
    pub blob: String,
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    pub(crate) fn image(bytes: &[u8], mime_type: &str) -> Self {
        Self::Image {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.to_owned(),
        }
    }

    pub(crate) fn audio(bytes: &[u8], mime_type: &str) -> Self {
        Self::Audio {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.to_owned(),
        }
    }

    pub(crate) fn resource(uri: String, bytes: &[u8], mime_type: &str) -> Self {
        Self::Resource {
            resource: ResourceBlob {
                uri,
                mime_type: mime_type.to_owned(),
                blob: base64::engine::general_purpose::STANDARD.encode(bytes),
            },
        }
    }

    /// The block's kind as MCP names it: `text`, `image`, `audio` or `resource`.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text",
            Self::Image { .. } => "image",
            Self::Audio { .. } => "audio",
            Self::Resource { .. } => "resource",
        }
    }
}

/// `View` is the whole answer for one file: the blocks a model sees and the
/// record a program reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct View {
    /// The MCP content blocks, in order.
    pub content: Vec<Block>,
    /// What was found and done, for structured tool output.
    pub structured: Record,
}

/// `Kind` is what a file turned out to be, by its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Plain text in some encoding.
    Text,
    /// A Word document.
    Document,
    /// An Excel (or other) workbook.
    Spreadsheet,
    /// A PowerPoint presentation.
    Presentation,
    /// A PDF.
    Pdf,
    /// An archive, listed.
    Archive,
    /// An image.
    Image,
    /// Audio.
    Audio,
    /// Video.
    Video,
    /// Anything else: described only.
    Other,
}

/// How the file reached the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shown {
    /// As numbered text in a window.
    Text,
    /// As an image block.
    Image,
    /// As an audio block.
    Audio,
    /// As an embedded resource blob (and, for a PDF, its text too).
    Resource,
    /// Only described.
    Described,
}

/// `Record` is the structured side of a [`View`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The file's name as given (control characters replaced).
    pub name: String,
    /// What the bytes are.
    pub kind: Kind,
    /// The media type found from the bytes (or, where the bytes cannot tell,
    /// from the name or the declared type).
    pub mime_type: String,
    /// The file's size in bytes.
    pub size_bytes: u64,
    /// How it is shown.
    pub shown: Shown,
    /// Set when the name or the declared type says another type than the
    /// bytes: the sentence that says both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_note: Option<String>,
    /// The text encoding read, for text shown in windows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// The window shown, for anything paged as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowRecord>,
    /// What was done to an image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageRecord>,
    /// Why the file is only described.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Where a person can open the file, when the caller knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Notes about what was left out or cut.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// A document's headings in order, each with the line of the whole
    /// text it stands on, so a window can start at a section. Present for
    /// documents shown as Markdown (and Markdown files) that have headings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outline: Vec<Heading>,
}

/// `Heading` is one entry of a document's outline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heading {
    /// 1 for a top-level heading (Markdown `#`) to 6 (`######`).
    pub level: u8,
    /// The heading's text, without its `#` marks or Markdown escapes.
    pub text: String,
    /// The line of the whole text the heading stands on, counted from 1:
    /// pass it as `start_line` to read that section.
    pub line: u64,
}

/// `WindowRecord` places a window of numbered lines in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowRecord {
    /// First line shown, counted from 1.
    pub start_line: u64,
    /// Last line shown (equal to `start_line - 1` for an empty file).
    pub end_line: u64,
    /// Lines in the whole file.
    pub total_lines: u64,
    /// Where the next window starts; absent at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start_line: Option<u64>,
}

/// `ImageRecord` says what an image was and what was returned: its sizes
/// before and after, and whether it was turned upright, scaled or
/// re-encoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImageRecord {
    /// Width of the file as stored, in pixels.
    pub original_width: u32,
    /// Height of the file as stored, in pixels.
    pub original_height: u32,
    /// Width returned.
    pub width: u32,
    /// Height returned.
    pub height: u32,
    /// Whether its EXIF orientation turned it upright.
    pub turned_upright: bool,
    /// Whether it was scaled down.
    pub scaled: bool,
    /// Whether the returned bytes differ from the file's.
    pub reencoded: bool,
    /// Type of the returned image.
    pub mime_type: String,
    /// Size of the returned image in bytes.
    pub bytes: u64,
}
