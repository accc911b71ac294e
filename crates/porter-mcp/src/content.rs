//! The file view's answer as MCP content and structured output.
//!
//! `porter-fileview` writes its blocks exactly as MCP content blocks, so
//! they pass through JSON unchanged; its record serialises as tools'
//! output schemas list it.

use porter_fileview::Block;
use rmcp::model::ContentBlock;

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

#[cfg(test)]
mod tests {
    use super::*;

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
