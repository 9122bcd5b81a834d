//! Where an internal message came from in the caller's `messages`: the wire message it was read
//! from, and the place of one of its parts in that message's content. Anthropic `tool_result`
//! blocks, Gemini `functionResponse` parts and AI SDK tool-message parts are messages of their
//! own (`wire.group` names their wire message, `wire.block` their place in it); every other wire
//! message is one internal message, in order.

use serde_json::Value;

use super::wire;
use crate::message::{Message, Role};

/// The index in `messages` (as given to `parse_request` without a `system` option) of each
/// internal message parsed from them.
pub fn wire_indices(messages: &[Message]) -> Vec<usize> {
    let mut next = 0;
    messages
        .iter()
        .map(|m| {
            let at = m.wire.group.unwrap_or(next);
            next = at + 1;
            at
        })
        .collect()
}

/// The index in its wire message's content of the internal part `part` of `m` (`None`: the
/// content is a string). A piece split off a wire message (a tool result) is one block of it:
/// that block's index, whatever part of the piece is meant.
pub fn wire_part(m: &Message, part: Option<usize>) -> Option<usize> {
    if m.wire.group.is_none() {
        return part;
    }
    if m.role == Role::Tool {
        return m.wire.block;
    }
    let k = part?;
    let stored = wire::info(&m.extra, "partBlocks").and_then(Value::as_array);
    match stored.and_then(|s| s.get(k)).and_then(Value::as_u64) {
        Some(p) => usize::try_from(p).ok(),
        None => m.wire.block.map(|b| b + k),
    }
}
