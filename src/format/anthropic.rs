//! Anthropic Messages <-> internal model.

use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};
use crate::message::{Message, ToolDef};

/// Parse an Anthropic `messages` array plus the separate `system` (string or text blocks).
/// System content becomes leading `Role::System` messages.
pub fn parse_messages(value: &Value, system: Option<&Value>) -> Result<Vec<Message>> {
    let _ = (value, system);
    Err(Error::new(ErrorCode::Internal, "anthropic adapter not implemented yet"))
}

/// Write internal messages back as `(system, messages)`.
pub fn to_wire(messages: &[Message]) -> (Option<Value>, Vec<Value>) {
    let _ = messages;
    (None, Vec::new())
}

/// Parse Anthropic `tools` (`[{name, description, input_schema}]`).
pub fn parse_tools(value: &Value) -> Result<Vec<ToolDef>> {
    let _ = value;
    Ok(Vec::new())
}
