//! Where an internal message came from in the caller's `messages`: the wire message it was read
//! from, and the place of one of its parts in that message's content. Anthropic `tool_result`
//! blocks, Gemini `functionResponse` parts and AI SDK tool-message parts are messages of their
//! own (`wire.group` names their wire message, `wire.block` their place in it); every other wire
//! message is one internal message, in order. `places` says it of every counted message, for
//! `countMessages`' `places` (docs/api.md).

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::{parse_request, wire, Format};
use crate::base::error::Result;
use crate::message::{Content, Message, Role};

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
    let stored = wire::info(&m.extra, wire::PART_BLOCKS_KEY).and_then(Value::as_array);
    match stored.and_then(|s| s.get(k)).and_then(Value::as_u64) {
        Some(p) => usize::try_from(p).ok(),
        None => m.wire.block.map(|b| b + k),
    }
}

/// Where a counted message sits in the caller's input: `message` is its index in `messages` or
/// the `system` option; `parts` the indices in that message's content of the parts it holds
/// (`None`: the whole message); `role` the role ctxguard counts it with; `call_id`, for a tool
/// result, the id of the call ctxguard pairs it with (an AI SDK approval response's is the
/// call its approval was requested for).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Place {
    pub message: Origin,
    pub parts: Option<Vec<usize>>,
    pub role: Role,
    pub call_id: Option<String>,
}

/// `messages[i]` (serialized as `i`), or the `system` option (as `"system"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    System,
    Message(usize),
}

impl Serialize for Origin {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Origin::System => s.serialize_str("system"),
            Origin::Message(i) => i.serialize(s),
        }
    }
}

/// The place of each of `parsed` — `parse_request(format, messages, system, _)`'s messages — in
/// that request, in order (docs/api.md, `countMessages`' `places`). The system option's
/// messages come first; the AI SDK's array of system messages gives one message per element,
/// whose `parts` is `[k]`, its index in the array.
pub fn places(format: Format, parsed: &[Message], system: Option<&Value>) -> Result<Vec<Place>> {
    let system = system.filter(|v| !v.is_null());
    let leading = match system {
        // The system option alone: as many messages as it gives in the whole request.
        Some(sys) => parse_request(format, &Value::Array(Vec::new()), Some(sys), None)?.messages.len(),
        None => 0,
    };
    let (head, rest) = parsed.split_at(leading.min(parsed.len()));
    let listed = matches!(format, Format::AiSdk | Format::AiSdkUi) && matches!(system, Some(Value::Array(_)));
    let mut out: Vec<Place> = head
        .iter()
        .enumerate()
        .map(|(k, m)| Place { message: Origin::System, parts: listed.then(|| vec![k]), role: m.role, call_id: None })
        .collect();
    out.extend(rest.iter().zip(wire_indices(rest)).map(|(m, at)| Place {
        message: Origin::Message(at),
        parts: wire_parts(m),
        role: m.role,
        call_id: if m.role == Role::Tool { m.tool_call_id.as_ref().map(|t| t.as_str().to_string()) } else { None },
    }));
    Ok(out)
}

/// The content indices of the parts of a piece split off a wire message; `None` for a whole one.
fn wire_parts(m: &Message) -> Option<Vec<usize>> {
    m.wire.group?;
    if m.role == Role::Tool {
        return Some(m.wire.block.into_iter().collect());
    }
    let n = match &m.content {
        Content::Parts(p) => p.len(),
        Content::Text(_) => 0,
    };
    Some((0..n).filter_map(|k| wire_part(m, Some(k))).collect())
}
