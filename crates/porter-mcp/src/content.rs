//! The file view's answer as MCP content and structured output.
//!
//! `porter-fileview` writes its blocks exactly as MCP content blocks, so
//! they pass through JSON unchanged; its record is re-stated here only
//! where a tool's output schema describes it ([`ImageOut`]).

use porter_fileview::{Block, ImageRecord};
use rmcp::model::ContentBlock;
use schemars::JsonSchema;
use serde::Serialize;

use crate::tool::ToolError;

/// `content` is the file view's blocks as rmcp content.
pub fn content(blocks: &[Block]) -> Result<Vec<ContentBlock>, ToolError> {
    blocks
        .iter()
        .map(|block| {
            serde_json::to_value(block)
                .and_then(serde_json::from_value::<ContentBlock>)
                .map_err(|e| {
                    ToolError::internal(format!(
                        "a {} block could not be carried: {e}",
                        block.kind()
                    ))
                })
        })
        .collect()
}

/// `ImageOut` says what an image was and what was returned: the file
/// view's [`ImageRecord`] with the schema a tool's output lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ImageOut {
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

impl From<&ImageRecord> for ImageOut {
    fn from(image: &ImageRecord) -> Self {
        ImageOut {
            original_width: image.original_width,
            original_height: image.original_height,
            width: image.width,
            height: image.height,
            turned_upright: image.turned_upright,
            scaled: image.scaled,
            reencoded: image.reencoded,
            mime_type: image.mime_type.clone(),
            bytes: image.bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_out_serialises_as_the_view_record_does() {
        let record = ImageRecord {
            original_width: 4000,
            original_height: 3000,
            width: 1568,
            height: 1176,
            turned_upright: true,
            scaled: true,
            reencoded: true,
            mime_type: "image/jpeg".to_owned(),
            bytes: 123_456,
        };
        assert_eq!(
            serde_json::to_value(ImageOut::from(&record)).expect("json"),
            serde_json::to_value(&record).expect("json")
        );
    }

    #[test]
    fn text_blocks_become_text_content() {
        let blocks = content(&[Block::text("hello")]).expect("carried");
        let value = serde_json::to_value(&blocks).expect("json");
        assert_eq!(
            value,
            serde_json::json!([{"type": "text", "text": "hello"}])
        );
    }
}
