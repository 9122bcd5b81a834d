//! Vercel AI SDK model messages (`ModelMessage`, formerly `CoreMessage`: what `generateText` /
//! `streamText` take as `messages`) <-> internal model. Format name: `"ai-sdk"`.
//!
//! The format only says the shape: which tokenizer and counting profile apply is decided by the
//! guard's model, as for the other formats (AI SDK messages for `gpt-4o` are counted like the
//! same conversation in OpenAI shape, for a Claude model like the Anthropic shape).
//!
//! # Mapping
//!
//! | wire | internal |
//! |---|---|
//! | `system` (`content` a string), in `messages` or the `system` option | `Role::System`, `Content::Text` |
//! | `user` / `assistant` with a string `content` | same role, `Content::Text` |
//! | `user` / `assistant` parts | `Content::Parts` |
//! | `text` part | `Part::Text` |
//! | `image` part, `file` part with an `image/*` (or `image`) `mediaType` | `Part::Image`: a URL string (`https:`, `data:`...) → `ImageSource::Url`, other strings (base64) → `ImageSource::Base64`; pixel size read from the header of base64 / data-URL PNG, JPEG, GIF, WebP (or from non-standard `width` / `height` hints); OpenAI's `providerOptions.openai.imageDetail` is the `detail` |
//! | other `file` part | `Part::File`: `name` = `filename`, `media_type` = `mediaType`; `text` = the decoded file when the media type is textual (`text/*`, JSON, XML, YAML...) and the data is base64 or a base64 `data:` URL; otherwise no text (counted as an opaque file) |
//! | `tool-call` part (assistant) | a `ToolCall` (`arguments` = compact JSON of `input`) plus `Part::ToolCallRef` at its position |
//! | `tool-call` with `providerExecuted: true`, `tool-result` in an assistant message | `Part::Unknown` (provider-executed tools: call and result live in the assistant message and are not paired) |
//! | `reasoning` part after the latest user message (the current turn) | `Part::Text` whose `extra` keeps `type: "reasoning"` (counted as text) |
//! | `reasoning` before the latest user message, `reasoning-file`, `redacted-reasoning`, `tool-approval-request` | kept out of the content (bookkeeping, see below): not counted, not seen by the guards |
//! | `tool` message | one `Role::Tool` message per part (like Anthropic's split `tool_result` blocks), `wire.group` = message index, `wire.block` = part index |
//! | `tool-result` part | `tool_call_id` = `toolCallId`, `name` = `toolName`; content from `output` (below); part fields (`providerOptions`...) in `extra`; markers from a `ctxguard` object on the part |
//! | `tool-approval-response` part (or any other part of a tool message) | a `Role::Tool` message with empty content whose `tool_call_id` is the call its `approvalId` was requested for (so pair sanitation keeps the call while the approval is pending); the part is written back verbatim |
//! | any other part kind | `Part::Unknown`, carried whole and counted as its JSON text |
//! | `providerOptions` and unknown fields of messages and parts | `extra`, written back verbatim, never counted |
//! | `id` (string), `ctxguard` | `Message::id`, markers |
//!
//! Tool outputs (`output`):
//! - `text` / `error-text`: `Content::Text(value)`;
//! - `json` / `error-json`: `Content::Text` of the compact JSON of `value` — the text the AI SDK's
//!   OpenAI provider sends. Written back as `{type: "json", value}` while the text is JSON (a
//!   compacted JSON output stays JSON), as `{type: "text", value}` (`error-text`) otherwise;
//! - `execution-denied`: `Content::Text(reason)` (`"Tool execution denied."` without one);
//! - `content`: `Content::Parts` (`text` items → text parts, `image-data` / `media` / `file-data`
//!   items → images or files as above, `image-url` / `file-url` → URLs, others → unknown);
//! - an unknown output type: its JSON text, written back verbatim while unchanged.
//!
//! AI SDK 4 `CoreMessage` fields are read too: a tool call's `args` instead of `input`, a tool
//! result's `result` instead of `output` (a string becomes the text; anything else its JSON), and
//! `mimeType` instead of `mediaType`. They are written back under the same names.
//!
//! # Binary data
//!
//! Messages cross into ctxguard as JSON. Strings (base64 or URLs) do; a `URL` object does as its
//! `href` (and comes back as that string, which the AI SDK accepts); so do AI SDK 7's tagged file
//! data (`{type: "data" | "url" | "reference" | "text", ...}`, inline `text` read as the file's
//! text) and provider references (`{openai: "file-..."}`, opaque). Raw bytes (`Uint8Array`,
//! `Buffer`, `ArrayBuffer`) do not survive `JSON.stringify` (they arrive as `{"0": 137, ...}`,
//! `{"type": "Buffer", ...}` or `{}`), so such an `image` / `data` is an `INVALID_CONTENT_PART`
//! error naming the part: pass base64 text or a `data:` URL (`Buffer.from(bytes).toString('base64')`)
//! — the AI SDK accepts those unchanged.
//!
//! # Bookkeeping (under `format::WIRE_INFO_KEY`, see `format::wire`)
//!
//! - `order.ai-sdk`: the key-order skeleton, on the message (tool messages: the first piece);
//! - `hidden`: `[[index, part, callId?], ...]` of an assistant message: parts kept out of the
//!   content, put back at their index (an approval request only while its tool call `callId` is
//!   still there);
//! - `message`: the fields of a tool message (kept on its first piece);
//! - `output` / `outputRest` / `reasonAbsent`: a tool result's output type, the output's other
//!   fields, whether an `execution-denied` output had no `reason`;
//! - `part`: a tool message part written back verbatim (approval responses);
//! - `argsKey` (in a `ToolCall`'s `extra`): the v4 `args` name.
//!
//! # System messages
//!
//! Every system message is written into `system` — an array of system messages for
//! `generateText`'s `system` (AI SDK 6) or `instructions` (AI SDK 7) — and none into `messages`,
//! like the Anthropic format: AI SDK 7 rejects system messages in `messages` by default, AI SDK 5
//! and 6 warn, and the AI SDK's Anthropic provider rejects system messages after the first user
//! message. The system messages themselves come back unchanged (`providerOptions` included), in
//! order; ctxguard's own (summaries, evidence notes, guidance) are `{role: "system", content}`
//! (plus `ctxguard` markers in checkpoints). AI SDK 5's `system` takes only a string: pass
//! `[...system, ...messages]` as its `messages` instead.
//!
//! # Writing messages ctxguard created
//!
//! Consecutive tool messages without `wire.group` are merged into one `tool` message.
//!
//! # Strictness
//!
//! Errors (with the message index): a non-object message; a missing or non-string role, or one
//! other than system/user/assistant/tool (`InvalidRole`); missing content; system content that is
//! not a string; user/assistant content that is neither a string nor an array; tool content that
//! is not a non-empty array; a part that is not an object or has no string `type`; a text part
//! without string `text`; an image without `image`, a file without `data`, or binary data (see
//! above); a tool call without string `toolCallId` / `toolName` or without `input`; a tool result
//! without string `toolCallId`, with a non-string `toolName`, or without `output`; an output that
//! is not an object with a string `type`, a `text` output without string `value`, a `json`
//! output without `value`, a `content` output without an array `value`; a `ctxguard` value that
//! is not an object.

use std::collections::HashMap;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::image_header::{image_size_from_base64, image_size_from_data_url};
use super::wire::{self, data_url_base64, decode_text, is_text_media, kind, MARKERS_KEY, WIRE_INFO_KEY};
use crate::base::error::{Error, ErrorCode, Result};
use crate::message::{Content, Extra, ImageSource, Message, Part, Role, ToolCall, ToolDef};

/// Format key of the key-order bookkeeping.
const ORDER: &str = "ai-sdk";

/// What the AI SDK sends for an `execution-denied` output without a reason.
const DENIED: &str = "Tool execution denied.";

/// Parse an AI SDK `messages` array. Errors name the offending index.
pub fn parse_messages(value: &Value) -> Result<Vec<Message>> {
    let items = value.as_array().ok_or_else(|| {
        Error::new(ErrorCode::InvalidMessages, format!("messages must be an array, got {}", kind(value)))
    })?;
    let latest_user = items.iter().rposition(|m| m.get("role").and_then(Value::as_str) == Some("user"));
    let mut approvals: HashMap<String, String> = HashMap::new();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let current_turn = latest_user.is_none_or(|u| i > u);
        let mut pieces = parse_message(item, i, current_turn, &mut approvals)?;
        let produced = {
            let refs: Vec<&Message> = pieces.iter().collect();
            run_to_wire(&refs)
        };
        if let Some(first) = pieces.first_mut() {
            wire::remember_order(&mut first.extra, ORDER, &produced, item);
        }
        out.extend(pieces);
    }
    Ok(out)
}

/// Write internal messages back as AI SDK `(system, messages)`: every system message goes into
/// `system` (an array of system messages, `None` when there is none), the rest into `messages`.
pub fn to_wire(messages: &[Message]) -> (Option<Value>, Vec<Value>) {
    let system: Vec<Value> = messages.iter().filter(|m| m.role == Role::System).map(message_to_wire).collect();
    let rest: Vec<&Message> = messages.iter().filter(|m| m.role != Role::System).collect();
    ((!system.is_empty()).then_some(Value::Array(system)), wire::write_runs(&rest, same_run, run_to_wire))
}

/// The `system` option (`generateText`'s `system` / `instructions`): a string, a system message
/// or an array of system messages. They become leading system messages.
pub fn parse_system(value: &Value) -> Result<Vec<Message>> {
    let as_messages = match value {
        Value::String(s) => {
            let mut m = Message::text(Role::System, s.clone());
            m.wire.content_was_string = true;
            return Ok(vec![m]);
        }
        Value::Object(_) => Value::Array(vec![value.clone()]),
        Value::Array(_) => value.clone(),
        other => {
            return Err(Error::options(format!(
                "system must be a string, a system message or an array of system messages, got {}",
                kind(other)
            )))
        }
    };
    let parsed = parse_messages(&as_messages).map_err(|e| Error::options(format!("system: {}", e.message)))?;
    if parsed.iter().any(|m| m.role != Role::System) {
        return Err(Error::options("system: every message must have role \"system\""));
    }
    Ok(parsed)
}

/// Parse AI SDK `tools`: a `ToolSet` object (`{ [name]: { description?, inputSchema } }`).
///
/// `inputSchema` (v4: `parameters`) is a JSON schema, or an AI SDK `Schema` (from `jsonSchema()`
/// or `zodSchema()`), whose `jsonSchema` is read. A Zod schema itself cannot be read (it is not
/// JSON): an `INVALID_TOOL` error says to pass `asSchema(schema).jsonSchema`. Provider tools
/// (`type: "provider-defined"` / `"provider"`) are kept with `parameters: null`. `null` means no
/// tools. Other fields (`type`, `providerOptions`...) go to `extra`.
pub fn parse_tools(value: &Value) -> Result<Vec<ToolDef>> {
    let map = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Object(map) => map,
        other => {
            return Err(Error::new(
                ErrorCode::InvalidTool,
                format!("tools must be an object of tools by name (an AI SDK ToolSet), got {}", kind(other)),
            ))
        }
    };
    map.iter().map(|(name, t)| parse_tool(name, t)).collect()
}

// ---------------------------------------------------------------------------------------------
// Parsing

fn parse_tool(name: &str, t: &Value) -> Result<ToolDef> {
    let err = |text: String| Error::new(ErrorCode::InvalidTool, format!("tools.{name}: {text}"));
    let o = t.as_object().ok_or_else(|| err(format!("tool must be an object, got {}", kind(t))))?;
    let description = match o.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => return Err(err(format!("description must be a string, got {}", kind(other)))),
    };
    let provider = matches!(o.get("type").and_then(Value::as_str), Some("provider-defined" | "provider"));
    let parameters = if provider {
        Value::Null
    } else {
        match o.get("inputSchema").or_else(|| o.get("parameters")) {
            None | Some(Value::Null) => Value::Null,
            Some(Value::Object(s)) => match s.get("jsonSchema") {
                Some(inner @ Value::Object(_)) => inner.clone(),
                _ if ["_def", "_zod", "~standard"].iter().any(|k| s.contains_key(*k)) => {
                    return Err(err("inputSchema is a Zod schema, which cannot be read as JSON; pass its JSON schema \
                         (`asSchema(schema).jsonSchema` from 'ai')"
                        .into()))
                }
                _ => Value::Object(s.clone()),
            },
            Some(other) => return Err(err(format!("inputSchema must be a JSON schema object, got {}", kind(other)))),
        }
    };
    let extra = rest(o, &["description", "inputSchema", "parameters"]);
    Ok(ToolDef { name: name.to_string(), description, parameters, extra })
}

/// The entries of `o` except `skip`, in order.
fn rest(o: &Map<String, Value>, skip: &[&str]) -> Extra {
    o.iter().filter(|(k, _)| !skip.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn part_err(i: usize, j: usize, code: ErrorCode, text: impl std::fmt::Display) -> Error {
    Error::at(code, i, format!("content[{j}]: {text}"))
}

/// The part as an object and its `type`.
fn part_type(p: &Value) -> std::result::Result<(&Map<String, Value>, &str), String> {
    let o = p.as_object().ok_or_else(|| format!("part must be an object, got {}", kind(p)))?;
    match o.get("type") {
        Some(Value::String(s)) => Ok((o, s.as_str())),
        Some(other) => Err(format!("part type must be a string, got {}", kind(other))),
        None => Err("part without type".to_string()),
    }
}

fn parse_message(
    v: &Value,
    i: usize,
    current_turn: bool,
    approvals: &mut HashMap<String, String>,
) -> Result<Vec<Message>> {
    let obj = v.as_object().ok_or_else(|| {
        Error::at(ErrorCode::InvalidMessage, i, format!("message must be an object, got {}", kind(v)))
    })?;
    let role = match obj.get("role") {
        None => return Err(Error::at(ErrorCode::InvalidMessage, i, "message without role")),
        Some(Value::String(s)) => match s.as_str() {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            other => {
                return Err(Error::at(
                    ErrorCode::InvalidRole,
                    i,
                    format!("unknown role {other:?}; expected system, user, assistant or tool"),
                ))
            }
        },
        Some(other) => {
            return Err(Error::at(ErrorCode::InvalidRole, i, format!("role must be a string, got {}", kind(other))))
        }
    };
    let mut m = Message { role, ..Default::default() };
    for (key, val) in obj {
        match key.as_str() {
            "role" | "content" => {}
            WIRE_INFO_KEY => {
                return Err(Error::at(ErrorCode::InvalidMessage, i, format!("{WIRE_INFO_KEY:?} is a reserved key")))
            }
            // A tool message's own fields ride verbatim on its first piece (below).
            _ if role == Role::Tool => {}
            "id" if val.is_string() => m.id = val.as_str().map(str::to_string),
            MARKERS_KEY if !val.is_null() => {
                m.markers = wire::parse_markers(val, &mut m.extra).map_err(|k| {
                    Error::at(ErrorCode::InvalidMessage, i, format!("ctxguard must be an object, got {k}"))
                })?;
            }
            _ => {
                m.extra.insert(key.clone(), val.clone());
            }
        }
    }
    let content =
        obj.get("content").ok_or_else(|| Error::at(ErrorCode::InvalidMessage, i, "message without content"))?;
    let role_name = role.as_str();
    match (role, content) {
        (Role::Tool, Value::Array(parts)) if !parts.is_empty() => {
            let mut pieces = parts
                .iter()
                .enumerate()
                .map(|(j, p)| parse_tool_piece(p, i, j, approvals))
                .collect::<Result<Vec<Message>>>()?;
            let fields = rest(obj, &["role", "content"]);
            if let (Some(first), false) = (pieces.first_mut(), fields.is_empty()) {
                wire::set_info(&mut first.extra, "message", Value::Object(fields));
            }
            Ok(pieces)
        }
        (Role::Tool, other) => Err(Error::at(
            ErrorCode::InvalidMessage,
            i,
            format!("tool message content must be a non-empty array of tool-result parts, got {}", kind(other)),
        )),
        (_, Value::String(s)) => {
            m.content = Content::Text(s.as_str().into());
            m.wire.content_was_string = true;
            Ok(vec![m])
        }
        (Role::System, other) => Err(Error::at(
            ErrorCode::InvalidMessage,
            i,
            format!("system message content must be a string, got {}", kind(other)),
        )),
        (_, Value::Array(parts)) => {
            let mut out = Vec::with_capacity(parts.len());
            let mut hidden = Vec::new();
            for (j, p) in parts.iter().enumerate() {
                let (o, ty) = part_type(p).map_err(|e| part_err(i, j, ErrorCode::InvalidContentPart, e))?;
                if role == Role::Assistant {
                    if let Some(part) = assistant_part(&mut m, o, ty, p, current_turn, approvals) {
                        match part {
                            Ok(part) => out.push(part),
                            Err(e) => return Err(part_err(i, j, ErrorCode::InvalidTool, e)),
                        }
                        continue;
                    }
                    if is_hidden(ty, o, current_turn) {
                        hidden.push((j, p));
                        continue;
                    }
                }
                out.push(parse_part(o, ty, p).map_err(|e| part_err(i, j, ErrorCode::InvalidContentPart, e))?);
            }
            if !hidden.is_empty() {
                let entries = hidden.into_iter().map(|(j, p)| hidden_entry(j, p, &m.tool_calls)).collect();
                wire::set_info(&mut m.extra, "hidden", Value::Array(entries));
            }
            m.content = Content::Parts(out);
            Ok(vec![m])
        }
        (_, other) => Err(Error::at(
            ErrorCode::InvalidMessage,
            i,
            format!("{role_name} message content must be a string or an array of parts, got {}", kind(other)),
        )),
    }
}

/// A `hidden` bookkeeping entry: `[index, part]`, plus the call id for an approval request whose
/// tool call is in the message (it is written back only while that call is).
fn hidden_entry(j: usize, p: &Value, calls: &[ToolCall]) -> Value {
    let mut entry = vec![Value::from(j), p.clone()];
    if p.get("type").and_then(Value::as_str) == Some("tool-approval-request") {
        if let Some(id) = p.get("toolCallId").and_then(Value::as_str).filter(|id| calls.iter().any(|c| c.id == *id)) {
            entry.push(Value::String(id.to_string()));
        }
    }
    Value::Array(entry)
}

/// Parts kept out of an assistant message's content (not model-visible, or not counted).
fn is_hidden(ty: &str, o: &Map<String, Value>, current_turn: bool) -> bool {
    match ty {
        "reasoning" => !(current_turn && o.get("text").is_some_and(Value::is_string)),
        "reasoning-file" | "redacted-reasoning" | "tool-approval-request" => true,
        _ => false,
    }
}

/// Assistant-only parts: tool calls (added to `m.tool_calls`) and current-turn reasoning.
/// `None` for the other kinds; `Some(Err)` for a malformed tool call.
fn assistant_part(
    m: &mut Message,
    o: &Map<String, Value>,
    ty: &str,
    p: &Value,
    current_turn: bool,
    approvals: &mut HashMap<String, String>,
) -> Option<std::result::Result<Part, String>> {
    match ty {
        "tool-call" if o.get("providerExecuted") == Some(&Value::Bool(true)) => {
            Some(Ok(Part::Unknown { value: p.clone() }))
        }
        "tool-call" => Some(parse_tool_call(o).map(|call| {
            m.tool_calls.push(call);
            Part::ToolCallRef { index: m.tool_calls.len() - 1 }
        })),
        "tool-result" => Some(Ok(Part::Unknown { value: p.clone() })),
        "reasoning" if current_turn => {
            let text = o.get("text").and_then(Value::as_str)?;
            Some(Ok(Part::Text { text: text.into(), extra: rest(o, &["text"]) }))
        }
        "tool-approval-request" => {
            let approval = o.get("approvalId").and_then(Value::as_str);
            let call = o.get("toolCallId").and_then(Value::as_str);
            if let (Some(a), Some(c)) = (approval, call) {
                approvals.insert(a.to_string(), c.to_string());
            }
            None
        }
        _ => None,
    }
}

fn parse_tool_call(o: &Map<String, Value>) -> std::result::Result<ToolCall, String> {
    let id = match o.get("toolCallId") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(format!("toolCallId must be a string, got {}", kind(other))),
        None => return Err("tool-call without toolCallId".into()),
    };
    let name = match o.get("toolName") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(format!("toolName must be a string, got {}", kind(other))),
        None => return Err("tool-call without toolName".into()),
    };
    let (key, input) = match (o.get("input"), o.get("args")) {
        (Some(v), _) => ("input", v),
        (None, Some(v)) => ("args", v),
        (None, None) => return Err("tool-call without input".into()),
    };
    let arguments = serde_json::to_string(input).map_err(|e| format!("cannot serialize the input: {e}"))?;
    let mut extra = rest(o, &["type", "toolCallId", "toolName", key]);
    if key == "args" {
        wire::set_info(&mut extra, "argsKey", Value::String(key.into()));
    }
    Ok(ToolCall { id: id.into(), name: name.into(), arguments: arguments.into(), extra })
}

/// Text, image and file parts (and unknown kinds), in any message or a `content` tool output.
fn parse_part(o: &Map<String, Value>, ty: &str, p: &Value) -> std::result::Result<Part, String> {
    match ty {
        "text" => match o.get("text") {
            Some(Value::String(s)) => Ok(Part::Text { text: s.as_str().into(), extra: rest(o, &["type", "text"]) }),
            Some(other) => Err(format!("text must be a string, got {}", kind(other))),
            None => Err("text part without text".into()),
        },
        "image" => parse_media(o, "image", true),
        "file" => parse_media(o, "data", false),
        // `content` tool-output items.
        "image-data" | "media" | "file-data" => parse_media(o, "data", false),
        "image-url" => parse_media(o, "url", true),
        "file-url" => parse_media(o, "url", false),
        _ => Ok(Part::Unknown { value: p.clone() }),
    }
}

/// Where a part's bytes are.
enum Payload<'a> {
    /// A URL string (`https:`, `data:`...).
    Url(&'a str),
    /// A base64 string.
    Base64(&'a str),
    /// AI SDK 7 inline text (`{ type: "text", text }`).
    Text(&'a str),
    /// A provider reference or another form ctxguard cannot look into.
    Opaque,
}

/// Whether `s` starts with a URL scheme (`https:`, `data:`); base64 never contains a colon.
fn is_url(s: &str) -> bool {
    let Some(colon) = s.find(':') else { return false };
    let scheme = s.get(..colon).unwrap_or("");
    scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn payload_of<'a>(v: &'a Value, field: &str) -> std::result::Result<Payload<'a>, String> {
    let binary = || {
        format!(
            "{field} is binary data (a Uint8Array, Buffer or ArrayBuffer), which does not survive JSON; \
             pass it as a base64 string or a data: URL"
        )
    };
    match v {
        Value::String(s) if is_url(s) => Ok(Payload::Url(s)),
        Value::String(s) => Ok(Payload::Base64(s)),
        // AI SDK 7 tagged file data.
        Value::Object(o) => match (o.get("type").and_then(Value::as_str), o) {
            (Some("url"), o) => o.get("url").and_then(Value::as_str).map(Payload::Url).ok_or_else(binary),
            (Some("data"), o) => match o.get("data") {
                Some(Value::String(s)) => Ok(Payload::Base64(s)),
                _ => Err(binary()),
            },
            (Some("text"), o) => o.get("text").and_then(Value::as_str).map(Payload::Text).ok_or_else(binary),
            (Some("reference"), _) => Ok(Payload::Opaque),
            // AI SDK 7 bare provider reference (`{ openai: "file-abc" }`); a Uint8Array reads as
            // `{ "0": 137, ... }`, an ArrayBuffer as `{}`.
            (None, o) if !o.is_empty() && o.values().all(Value::is_string) => Ok(Payload::Opaque),
            _ => Err(binary()),
        },
        _ => Err(binary()),
    }
}

fn media_type_of(o: &Map<String, Value>) -> Option<&str> {
    o.get("mediaType").or_else(|| o.get("mimeType")).and_then(Value::as_str)
}

/// The text of a file payload, when its media type is textual.
fn payload_text(payload: &Payload<'_>, media_type: Option<&str>) -> Option<String> {
    if let Payload::Text(t) = payload {
        return Some((*t).to_string());
    }
    let textual = media_type.is_some_and(is_text_media)
        || matches!(payload, Payload::Url(u) if wire::data_url_media_type(u).as_deref().is_some_and(is_text_media));
    if !textual {
        return None;
    }
    match payload {
        Payload::Base64(b) => decode_text(b),
        Payload::Url(u) => data_url_base64(u).and_then(decode_text),
        _ => None,
    }
}

/// An image or file part whose bytes are under `field`. `image`: an `image` part (or
/// `image-url` item), always an image; otherwise an image only for an `image/*` media type.
fn parse_media(o: &Map<String, Value>, field: &str, image: bool) -> std::result::Result<Part, String> {
    let raw = o.get(field).ok_or_else(|| format!("part without {field}"))?;
    let payload = payload_of(raw, field)?;
    let media_type = media_type_of(o);
    let data_url_type = match payload {
        Payload::Url(u) => wire::data_url_media_type(u),
        _ => None,
    };
    // AI SDK 7 allows the top-level segment alone (`image`).
    let is_image = image
        || media_type.or(data_url_type.as_deref()).is_some_and(|mt| {
            let mt = mt.to_ascii_lowercase();
            mt == "image" || mt.starts_with("image/")
        });
    if !is_image {
        let name = o.get("filename").and_then(Value::as_str).map(str::to_string);
        let text = payload_text(&payload, media_type);
        let skip: &[&str] = if name.is_some() { &["filename"] } else { &[] };
        let media_type = media_type.map(str::to_string).or(data_url_type);
        return Ok(Part::File { name, media_type, text: text.map(Into::into), extra: rest(o, skip) });
    }
    let (source, header) = match payload {
        Payload::Url(u) => (ImageSource::Url(u.to_string()), image_size_from_data_url(u)),
        Payload::Base64(b) => (
            ImageSource::Base64 { media_type: media_type.unwrap_or_default().to_string(), data: b.into() },
            image_size_from_base64(b),
        ),
        Payload::Text(_) | Payload::Opaque => (ImageSource::Other, None),
    };
    // A string payload lives in the source; tagged file data and references stay verbatim.
    let extra = if raw.is_string() { rest(o, &[field]) } else { rest(o, &[]) };
    let (width, height) = wire::image_dims(wire::u32_hint(o, "width"), wire::u32_hint(o, "height"), || header);
    let detail = o
        .get("providerOptions")
        .and_then(|p| p.get("openai"))
        .and_then(|p| p.get("imageDetail"))
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Part::Image { source, detail, width, height, extra })
}

/// One piece of a tool message: a tool result, or another part carried verbatim.
fn parse_tool_piece(p: &Value, i: usize, j: usize, approvals: &HashMap<String, String>) -> Result<Message> {
    let (o, ty) = part_type(p).map_err(|e| part_err(i, j, ErrorCode::InvalidContentPart, e))?;
    let mut m = Message { role: Role::Tool, ..Default::default() };
    m.wire.group = Some(i);
    m.wire.block = Some(j);
    if ty != "tool-result" {
        // Approval responses (and unknown kinds) are not model-visible: an empty tool message
        // answering the call the approval was requested for, written back verbatim.
        m.tool_call_id =
            o.get("approvalId").and_then(Value::as_str).and_then(|a| approvals.get(a)).map(|a| a.as_str().into());
        wire::set_info(&mut m.extra, "part", p.clone());
        return Ok(m);
    }
    let tool_err = |text: String| part_err(i, j, ErrorCode::InvalidTool, text);
    match o.get("toolCallId") {
        Some(Value::String(s)) => m.tool_call_id = Some(s.as_str().into()),
        Some(other) => return Err(tool_err(format!("toolCallId must be a string, got {}", kind(other)))),
        None => return Err(tool_err("tool-result without toolCallId".into())),
    }
    match o.get("toolName") {
        None => {}
        Some(Value::String(s)) => m.name = Some(s.clone()),
        Some(other) => return Err(tool_err(format!("toolName must be a string, got {}", kind(other)))),
    }
    let output_key = if o.contains_key("output") { "output" } else { "result" };
    match o.get(output_key) {
        Some(out) if output_key == "output" => {
            parse_output(&mut m, out).map_err(|e| part_err(i, j, ErrorCode::InvalidContentPart, e))?
        }
        Some(Value::String(s)) => {
            m.content = Content::Text(s.as_str().into());
            wire::set_info(&mut m.extra, "output", Value::String("result-text".into()));
        }
        Some(v) => {
            m.content = Content::Text(crate::base::json_text::text(v).into());
            wire::set_info(&mut m.extra, "output", Value::String("result-json".into()));
        }
        None => return Err(tool_err("tool-result without output".into())),
    }
    for (k, v) in o {
        match k.as_str() {
            "type" | "toolCallId" | "toolName" => {}
            _ if k == output_key => {}
            WIRE_INFO_KEY => {
                return Err(part_err(
                    i,
                    j,
                    ErrorCode::InvalidContentPart,
                    format!("{WIRE_INFO_KEY:?} is a reserved key"),
                ))
            }
            MARKERS_KEY if !v.is_null() => {
                m.markers = wire::parse_markers(v, &mut m.extra).map_err(|kd| {
                    part_err(i, j, ErrorCode::InvalidContentPart, format!("ctxguard must be an object, got {kd}"))
                })?;
            }
            _ => {
                m.extra.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(m)
}

fn parse_output(m: &mut Message, out: &Value) -> std::result::Result<(), String> {
    let o = out.as_object().ok_or_else(|| format!("output must be an object with a type, got {}", kind(out)))?;
    let ty = match o.get("type") {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(format!("output.type must be a string, got {}", kind(other))),
        None => return Err("output without type".into()),
    };
    let mut known = vec!["type", "value"];
    match ty {
        "text" | "error-text" => match o.get("value") {
            Some(Value::String(s)) => m.content = Content::Text(s.as_str().into()),
            Some(other) => return Err(format!("output.value must be a string, got {}", kind(other))),
            None => return Err("output without value".into()),
        },
        "json" | "error-json" => match o.get("value") {
            Some(v) => m.content = Content::Text(crate::base::json_text::text(v).into()),
            None => return Err("output without value".into()),
        },
        "execution-denied" => {
            known = vec!["type", "reason"];
            match o.get("reason") {
                None => {
                    m.content = Content::Text(DENIED.into());
                    wire::set_info(&mut m.extra, "reasonAbsent", Value::Bool(true));
                }
                Some(Value::String(s)) => m.content = Content::Text(s.as_str().into()),
                Some(other) => return Err(format!("output.reason must be a string, got {}", kind(other))),
            }
        }
        "content" => match o.get("value") {
            Some(Value::Array(items)) => {
                let parts = items
                    .iter()
                    .enumerate()
                    .map(|(k, item)| {
                        let (io, ity) = part_type(item).map_err(|e| format!("output.value[{k}]: {e}"))?;
                        parse_part(io, ity, item).map_err(|e| format!("output.value[{k}]: {e}"))
                    })
                    .collect::<std::result::Result<Vec<Part>, String>>()?;
                m.content = Content::Parts(parts);
            }
            Some(other) => return Err(format!("output.value must be an array, got {}", kind(other))),
            None => return Err("output without value".into()),
        },
        _ => {
            m.content = Content::Text(crate::base::json_text::text(out).into());
            wire::set_info(&mut m.extra, "output", Value::String("raw".into()));
            return Ok(());
        }
    }
    wire::set_info(&mut m.extra, "output", Value::String(ty.to_string()));
    let others = rest(o, &known);
    if !others.is_empty() {
        wire::set_info(&mut m.extra, "outputRest", Value::Object(others));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Writing

/// Whether `next` is written into the same wire message as the run starting at `first`.
fn same_run(first: &Message, next: &Message) -> bool {
    first.role == Role::Tool && next.role == Role::Tool && first.wire.group == next.wire.group
}

fn typed(ty: &str) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("type".into(), Value::String(ty.to_string()));
    o
}

fn info_str<'a>(extra: &'a Extra, key: &str) -> Option<&'a str> {
    wire::info(extra, key).and_then(Value::as_str)
}

/// One wire message from a run of internal messages (see `same_run`).
fn run_to_wire(run: &[&Message]) -> Value {
    let Some(first) = run.first() else { return Value::Null };
    if first.role != Role::Tool {
        return message_to_wire(first);
    }
    let placed: Vec<(usize, usize, Value)> = run
        .iter()
        .enumerate()
        .map(|(k, m)| {
            let part = wire::info(&m.extra, "part").cloned().unwrap_or_else(|| tool_result_part(m));
            (m.wire.block.unwrap_or(usize::MAX), k, part)
        })
        .collect();
    let mut o = Map::new();
    o.insert("role".into(), Value::String("tool".into()));
    o.insert("content".into(), Value::Array(wire::in_place_order(placed)));
    // The message's own fields and key order ride on its first piece (or the first one left).
    let carrier = run
        .iter()
        .find(|m| {
            wire::info(&m.extra, "message").is_some() || wire::info(&m.extra, &format!("order.{ORDER}")).is_some()
        })
        .unwrap_or(first);
    if let Some(Value::Object(fields)) = wire::info(&carrier.extra, "message") {
        wire::append_fields(&mut o, fields);
    }
    let mut v = Value::Object(o);
    wire::restore_order(&carrier.extra, ORDER, &mut v);
    v
}

fn message_to_wire(m: &Message) -> Value {
    let mut o = Map::new();
    if let Some(id) = &m.id {
        o.insert("id".into(), Value::String(id.clone()));
    }
    o.insert("role".into(), Value::String(m.role.as_str().into()));
    let hidden = wire::info(&m.extra, "hidden").and_then(Value::as_array);
    let content = match (&m.content, m.role) {
        (c, Role::System) => Value::String(c.text()),
        (Content::Text(s), _) if m.tool_calls.is_empty() && hidden.is_none() => Value::String(s.to_string()),
        (c, _) => Value::Array(parts_to_wire(c, &m.tool_calls, hidden)),
    };
    o.insert("content".into(), content);
    wire::append_extra(&mut o, &m.extra);
    if let Some(markers) = wire::markers_out(&m.markers, &m.extra) {
        o.insert(MARKERS_KEY.into(), markers);
    }
    let mut v = Value::Object(o);
    wire::restore_order(&m.extra, ORDER, &mut v);
    v
}

/// Parts of a user or assistant message: tool calls at their `ToolCallRef`s (calls no ref points
/// at after the other parts), then the hidden parts put back at their index.
fn parts_to_wire(content: &Content, calls: &[ToolCall], hidden: Option<&Vec<Value>>) -> Vec<Value> {
    let mut out = match content {
        Content::Text(s) => {
            let mut out = if s.is_empty() { Vec::new() } else { vec![Value::Object(text_part(s, &Extra::new()))] };
            out.extend(calls.iter().map(tool_call_part));
            out
        }
        Content::Parts(parts) => wire::interleave_calls(parts, calls, part_to_wire, tool_call_part),
    };
    for entry in hidden.into_iter().flatten() {
        let (Some(at), Some(part)) = (entry.get(0).and_then(Value::as_u64), entry.get(1)) else { continue };
        // An approval request goes with its tool call (dropped by pair sanitation, say).
        if let Some(call) = entry.get(2).and_then(Value::as_str) {
            if !calls.iter().any(|c| c.id == call) {
                continue;
            }
        }
        let at = usize::try_from(at).unwrap_or(usize::MAX).min(out.len());
        out.insert(at, part.clone());
    }
    out
}

/// A text part; a reasoning part keeps its `type` in `extra`.
fn text_part(text: &str, extra: &Extra) -> Map<String, Value> {
    let ty = extra.get("type").and_then(Value::as_str).unwrap_or("text");
    let mut o = typed(ty);
    o.insert("text".into(), Value::String(text.to_string()));
    wire::append_fields(&mut o, extra);
    o
}

/// The field an image or file part keeps its bytes under, by part type.
fn payload_field(ty: &str) -> &'static str {
    match ty {
        "image" => "image",
        "image-url" | "file-url" => "url",
        _ => "data",
    }
}

fn part_to_wire(p: &Part) -> Option<Value> {
    let v = match p {
        Part::Text { text, extra } => Value::Object(text_part(text, extra)),
        Part::Image { source, extra, .. } => {
            let ty = extra.get("type").and_then(Value::as_str).unwrap_or("image");
            let mut o = typed(ty);
            let field = payload_field(ty);
            if !extra.contains_key(field) {
                match source {
                    ImageSource::Url(u) => {
                        o.insert(field.into(), Value::String(u.clone()));
                    }
                    ImageSource::Base64 { data, .. } => {
                        o.insert(field.into(), Value::String(data.to_string()));
                    }
                    ImageSource::Other => {}
                }
            }
            wire::append_fields(&mut o, extra);
            Value::Object(o)
        }
        Part::File { name, text, extra, .. } => Value::Object(file_part(name.as_deref(), text.as_deref(), extra)),
        Part::Audio { extra } => {
            let mut o = typed("file");
            wire::append_fields(&mut o, extra);
            Value::Object(o)
        }
        Part::ToolCallRef { .. } => return None,
        Part::Unknown { value } => value.clone(),
    };
    Some(v)
}

/// A file part: its original fields, with the payload re-encoded when the text was changed
/// (an attachment preview).
fn file_part(name: Option<&str>, text: Option<&str>, extra: &Extra) -> Map<String, Value> {
    let ty = extra.get("type").and_then(Value::as_str).unwrap_or("file");
    let field = payload_field(ty);
    let mut o = typed(ty);
    wire::append_fields(&mut o, extra);
    if let Some(n) = name {
        o.insert("filename".into(), Value::String(n.to_string()));
    }
    let Some(text) = text else { return o };
    let media_type = media_type_of(&o).map(str::to_string);
    let current =
        o.get(field).and_then(|v| payload_of(v, field).ok()).and_then(|p| payload_text(&p, media_type.as_deref()));
    if current.as_deref() == Some(text) {
        return o;
    }
    let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let new = match o.get(field) {
        Some(Value::Object(tagged)) if tagged.get("type").and_then(Value::as_str) == Some("text") => {
            let mut t = tagged.clone();
            t.insert("text".into(), Value::String(text.to_string()));
            Value::Object(t)
        }
        Some(Value::String(s)) if data_url_base64(s).is_some() => {
            let head = s.find(',').and_then(|c| s.get(..=c)).unwrap_or("data:text/plain;base64,");
            Value::String(format!("{head}{b64}"))
        }
        Some(Value::Object(tagged)) if tagged.get("type").and_then(Value::as_str) == Some("data") => {
            let mut t = tagged.clone();
            t.insert("data".into(), Value::String(b64));
            Value::Object(t)
        }
        _ => Value::String(b64),
    };
    o.insert(field.into(), new);
    if !o.contains_key("mediaType") && !o.contains_key("mimeType") {
        o.insert("mediaType".into(), Value::String("text/plain".into()));
    }
    o
}

fn tool_call_part(c: &ToolCall) -> Value {
    let key = info_str(&c.extra, "argsKey").unwrap_or("input");
    let input = serde_json::from_str::<Value>(&c.arguments).unwrap_or_else(|_| Value::String(c.arguments.to_string()));
    let mut o = typed("tool-call");
    o.insert("toolCallId".into(), Value::String(c.id.to_string()));
    o.insert("toolName".into(), Value::String(c.name.to_string()));
    o.insert(key.into(), input);
    wire::append_extra(&mut o, &c.extra);
    Value::Object(o)
}

fn tool_result_part(m: &Message) -> Value {
    let mut o = typed("tool-result");
    o.insert("toolCallId".into(), Value::String(m.tool_call_id.as_deref().unwrap_or_default().to_string()));
    if let Some(n) = &m.name {
        o.insert("toolName".into(), Value::String(n.clone()));
    }
    let kind = info_str(&m.extra, "output");
    let text = || m.content.text();
    match kind {
        Some("result-text") => {
            o.insert("result".into(), Value::String(text()));
        }
        Some("result-json") => {
            let t = text();
            o.insert("result".into(), serde_json::from_str(&t).unwrap_or(Value::String(t)));
        }
        _ => {
            o.insert("output".into(), output_to_wire(m, kind));
        }
    }
    wire::append_extra(&mut o, &m.extra);
    if let Some(markers) = wire::markers_out(&m.markers, &m.extra) {
        o.insert(MARKERS_KEY.into(), markers);
    }
    Value::Object(o)
}

fn output_to_wire(m: &Message, kind: Option<&str>) -> Value {
    let text = m.content.text();
    let mut o = match kind {
        Some(ty @ ("json" | "error-json")) => match serde_json::from_str::<Value>(&text) {
            Ok(v) => value_output(ty, v),
            // No longer JSON (compacted as lines): the same kind as text.
            Err(_) => value_output(if ty == "json" { "text" } else { "error-text" }, Value::String(text)),
        },
        Some("execution-denied") => {
            let mut o = typed("execution-denied");
            if !(wire::info(&m.extra, "reasonAbsent").is_some() && text == DENIED) {
                o.insert("reason".into(), Value::String(text));
            }
            o
        }
        Some("content") => {
            let items = match &m.content {
                Content::Text(t) => vec![Value::Object(text_part(t, &Extra::new()))],
                Content::Parts(parts) => parts.iter().filter_map(part_to_wire).collect(),
            };
            value_output("content", Value::Array(items))
        }
        Some("raw") => match serde_json::from_str::<Value>(&text) {
            Ok(v) => return v,
            Err(_) => value_output("text", Value::String(text)),
        },
        Some(ty @ "error-text") => value_output(ty, Value::String(text)),
        _ => value_output("text", Value::String(text)),
    };
    if let Some(Value::Object(others)) = wire::info(&m.extra, "outputRest") {
        wire::append_fields(&mut o, others);
    }
    Value::Object(o)
}

fn value_output(ty: &str, value: Value) -> Map<String, Value> {
    let mut o = typed(ty);
    o.insert("value".into(), value);
    o
}
