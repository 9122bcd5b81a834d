//! OpenAI Chat Completions messages <-> internal model.

use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};
use crate::message::{Message, ToolDef};

/// Parse an OpenAI `messages` array. Errors name the offending index.
pub fn parse_messages(value: &Value) -> Result<Vec<Message>> {
    let _ = value;
    Err(Error::new(ErrorCode::Internal, "openai adapter not implemented yet"))
}

/// Write internal messages back as OpenAI messages (unknown fields restored).
pub fn to_wire(messages: &[Message]) -> Vec<Value> {
    let _ = messages;
    Vec::new()
}

/// Parse `tools` (`[{type:"function", function:{...}}]`) or legacy `functions` (`[{name,...}]`).
pub fn parse_tools(value: &Value) -> Result<Vec<ToolDef>> {
    let _ = value;
    Ok(Vec::new())
}
