//! Anthropic Messages <-> internal model.
//!
//! # Mapping
//!
//! - `system` (a string, or an array of text blocks possibly with `cache_control`) becomes one
//!   leading `Role::System` message: `Content::Text` for a string, `Content::Parts` of
//!   `Part::Text` (block fields such as `cache_control` in the part's `extra`) for blocks.
//! - `messages[i]` has role `user` or `assistant`; `content` a string or blocks:
//!   - `text` → `Part::Text` (`citations`, `cache_control`... in `extra`);
//!   - `image` → `Part::Image`: `base64` source → `ImageSource::Base64` with the pixel size read
//!     from the base64 header, `url` source → `ImageSource::Url`, anything else (`file`...) →
//!     `ImageSource::Other` with the source kept in `extra["source"]`; non-standard `width` /
//!     `height` hints on the block win over the header and stay in `extra`;
//!   - `document` → `Part::File`: `name` = `title`, `media_type` = `source.media_type`; `text`
//!     = the document text for `text` sources (`source.data`) and `content` sources (its text
//!     blocks joined with newlines), else a non-standard host-supplied `text` on the block. The
//!     source stays in `extra["source"]` (without `data` for text sources, whose text lives in
//!     `text` only). A changed `text` is written back into `source.data` (text source) or as a
//!     new `text` source (content source);
//!   - `tool_use` (assistant only) → a `ToolCall` (`arguments` = compact JSON of `input`; the
//!     block's other fields in `ToolCall.extra`) plus `Part::ToolCallRef{index}` at its block
//!     position. `input` is written back by parsing `arguments`, which reproduces it exactly
//!     (serde_json keeps key order and round-trips numbers); arguments that are not JSON (a
//!     call from another format) are written as `input: {}`;
//!   - `tool_result` (user only) → a separate `Role::Tool` message (`tool_call_id` =
//!     `tool_use_id`; `content` string / blocks / absent as `wire.content_was_null`; `is_error`,
//!     `cache_control`... in its `extra`; markers from a `ctxguard` object on the block);
//!   - anything else (`thinking`, `redacted_thinking`, `server_tool_use`,
//!     `web_search_tool_result`, `search_result`...) → `Part::Unknown`, carried whole.
//!
//!   A user message with `tool_result` blocks is split: its `Tool` messages come first (so tool
//!   results directly follow the assistant's calls in the internal list), then one `User`
//!   message with the remaining blocks, if any. All of them get `wire.group = i` and
//!   `wire.block` = block position (for the `User` message: of its first block; the positions of
//!   its other blocks are remembered when tool results sat between them); `to_wire` merges them
//!   back into one message in the original block order. After edits (a tool result dropped by
//!   pair sanitizing, say) the remaining blocks keep their relative order. The message's own fields (`id`,
//!   `ctxguard` markers, unknown fields) go to the `User` part; when there is none (only tool
//!   results) they are kept verbatim in the first `Tool` message's bookkeeping (see
//!   `format::wire`), as its `extra` holds the first block's fields.
//! - `id` (string) → `Message::id`; `ctxguard` → markers; other message fields → `extra`.
//!
//! # Writing messages ctxguard created (no wire info)
//!
//! - Every `Role::System` message goes into `system`, in list order — including a system
//!   message in the middle of the conversation (ctxguard's pinned evidence notes), since the
//!   Messages API has no system role in `messages`. When all system messages have text content,
//!   `system` is one string with their texts joined by a blank line (`"\n\n"`, empty texts
//!   skipped); when any has parts, `system` is an array of blocks (text messages become one
//!   text block each, after the blocks already there, so a cached prefix stays valid).
//!   Markers on system messages cannot be written (the system parameter has no place for them).
//! - A `Role::Tool` message becomes a `tool_result` block in a user message; consecutive tool
//!   messages without `wire.group` are merged into one user message, as the API wants all
//!   results of a turn right after the assistant turn in one message. A tool message's markers
//!   are written under `ctxguard` on its `tool_result` block.
//! - `Content::Text` is written as a string, except on an assistant message with tool calls
//!   (then: a text block unless empty, then the `tool_use` blocks). Tool calls no
//!   `ToolCallRef` points at are appended as `tool_use` blocks after the other blocks.
//!
//! # Strictness
//!
//! Errors (with the wire message index): a non-object message; missing role; a role other than
//! `user` / `assistant` (`InvalidRole`); missing or non-string/array content; a block that is
//! not an object or has no string `type`; a `text` block without string `text`; an `image` or
//! `document` block without a `source` object with a string `type`, a `base64` image without
//! `media_type` / `data` strings, a `url` image without `url`, a `text` document source
//! without string `data`; `tool_use` outside an assistant message or `tool_result` outside a
//! user message (`InvalidContentPart`); `tool_use` without string `id` / `name` or without
//! `input`, `tool_result` without string `tool_use_id` (`InvalidTool`); `tool_use` /
//! `tool_result` nested in a `tool_result`; a `ctxguard` value that is neither an object nor
//! null. Errors in `system` have no index and start with `system`.

use serde_json::{Map, Value};

use super::image_header::{image_size_from_base64, image_size_from_data_url};
use super::wire::{self, kind, MARKERS_KEY, WIRE_INFO_KEY};
use crate::base::error::{Error, ErrorCode, Result};
use crate::message::{Content, Extra, ImageSource, Message, Part, Role, ToolCall, ToolDef};

/// Parse an Anthropic `messages` array plus the separate `system` (string or text blocks).
/// System content becomes leading `Role::System` messages.
pub fn parse_messages(value: &Value, system: Option<&Value>) -> Result<Vec<Message>> {
    let items = value.as_array().ok_or_else(|| {
        Error::new(ErrorCode::InvalidMessages, format!("messages must be an array, got {}", kind(value)))
    })?;
    let mut out = Vec::with_capacity(items.len() + 1);
    if let Some(sys) = system.filter(|s| !s.is_null()) {
        let mut m = parse_system(sys)?;
        if let Some(produced) = system_to_wire(&[&m]) {
            wire::remember_order(&mut m.extra, "anthropic", &produced, sys);
        }
        out.push(m);
    }
    for (i, item) in items.iter().enumerate() {
        out.extend(parse_item(item, i)?);
    }
    Ok(out)
}

/// Parse one Anthropic message (the `i`-th of its conversation, for errors) into its internal
/// pieces, remembering its key order for the round trip.
pub fn parse_item(item: &Value, i: usize) -> Result<Vec<Message>> {
    let mut pieces = parse_message(item, i)?;
    let produced = {
        let refs: Vec<&Message> = pieces.iter().collect();
        run_to_wire(&refs)
    };
    let carrier = carrier_index(&pieces);
    if let Some(m) = pieces.get_mut(carrier) {
        wire::remember_order(&mut m.extra, "anthropic", &produced, item);
    }
    Ok(pieces)
}

/// Write internal messages back as `(system, messages)`.
pub fn to_wire(messages: &[Message]) -> (Option<Value>, Vec<Value>) {
    let system: Vec<&Message> = messages.iter().filter(|m| m.role == Role::System).collect();
    let rest: Vec<&Message> = messages.iter().filter(|m| m.role != Role::System).collect();
    (system_to_wire(&system), wire::write_runs(&rest, same_run, run_to_wire))
}

/// [`to_wire`], naming the runs `same` recognizes instead of writing them (see
/// `format::write_request_with`).
pub fn to_wire_with(
    messages: &[Message],
    same: &dyn Fn(&[&Message]) -> Option<super::Named>,
) -> (Option<Value>, Vec<super::Written>) {
    let system: Vec<&Message> = messages.iter().filter(|m| m.role == Role::System).collect();
    let rest: Vec<&Message> = messages.iter().filter(|m| m.role != Role::System).collect();
    let written = wire::write_runs(&rest, same_run, |run| super::written(same(run), || run_to_wire(run)));
    (system_to_wire(&system), written)
}

/// Parse Anthropic `tools` (`[{name, description, input_schema}]`).
///
/// `null` means no tools. Server tools (a `type` other than `custom`, e.g.
/// `{type:"web_search_20250305", name:"web_search", max_uses:5}`) are kept with
/// `parameters: null` and their fields other than `name` in `extra`. Custom tools need an
/// `input_schema`; `cache_control` and other fields go to `extra`.
pub fn parse_tools(value: &Value) -> Result<Vec<ToolDef>> {
    wire::tool_list(value, |t, k| parse_tool(t, k).map(Some))
}

// ---------------------------------------------------------------------------------------------
// Parsing

fn parse_tool(t: &Value, k: usize) -> Result<ToolDef> {
    let err = |text: String| wire::tool_error(k, text);
    let o = t.as_object().ok_or_else(|| err(format!("tool must be an object, got {}", kind(t))))?;
    let name = match o.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(err(format!("name must be a string, got {}", kind(other)))),
        None => return Err(err("tool without name".into())),
    };
    let server = match o.get("type") {
        None => false,
        Some(Value::String(ty)) => ty != "custom",
        Some(other) => return Err(err(format!("type must be a string, got {}", kind(other)))),
    };
    if server {
        return Ok(ToolDef { name, description: None, parameters: Value::Null, extra: rest(o, &["name"]) });
    }
    let description = match o.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => return Err(err(format!("description must be a string, got {}", kind(other)))),
    };
    let parameters = o.get("input_schema").cloned().ok_or_else(|| err("tool without input_schema".into()))?;
    Ok(ToolDef { name, description, parameters, extra: rest(o, &["name", "description", "input_schema"]) })
}

/// The entries of `o` except `skip`, in order.
fn rest(o: &Map<String, Value>, skip: &[&str]) -> Extra {
    o.iter().filter(|(k, _)| !skip.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn parse_system(sys: &Value) -> Result<Message> {
    let sys_err = |code: ErrorCode, text: String| Error::new(code, format!("system{text}"));
    let mut m = Message { role: Role::System, ..Default::default() };
    match sys {
        Value::String(s) => {
            m.content = Content::Text(s.as_str().into());
            m.wire.content_was_string = true;
        }
        Value::Array(blocks) => {
            let mut parts = Vec::with_capacity(blocks.len());
            for (j, b) in blocks.iter().enumerate() {
                let (o, ty) =
                    block_type(b).map_err(|e| sys_err(ErrorCode::InvalidContentPart, format!("[{j}]: {e}")))?;
                let part = parse_block(o, ty, b).map_err(|(code, e)| sys_err(code, format!("[{j}]{e}")))?;
                parts.push(part);
            }
            m.content = Content::Parts(parts);
        }
        other => {
            return Err(sys_err(
                ErrorCode::InvalidMessage,
                format!(" must be a string or an array of text blocks, got {}", kind(other)),
            ))
        }
    }
    Ok(m)
}

/// An error from block parsing: code and a message suffix for the block's path (starting with
/// `": "` or `".field..."`).
type BlockError = (ErrorCode, String);

fn block_type(b: &Value) -> std::result::Result<(&Map<String, Value>, &str), String> {
    let o = b.as_object().ok_or_else(|| format!("block must be an object, got {}", kind(b)))?;
    match o.get("type") {
        Some(Value::String(s)) => Ok((o, s.as_str())),
        Some(other) => Err(format!("block type must be a string, got {}", kind(other))),
        None => Err("block without type".to_string()),
    }
}

fn part_err(text: impl Into<String>) -> BlockError {
    (ErrorCode::InvalidContentPart, format!(": {}", text.into()))
}

/// A content block other than `tool_use` / `tool_result`.
fn parse_block(o: &Map<String, Value>, ty: &str, b: &Value) -> std::result::Result<Part, BlockError> {
    match ty {
        "text" => match o.get("text") {
            Some(Value::String(s)) => Ok(Part::Text { text: s.as_str().into(), extra: rest(o, &["type", "text"]) }),
            Some(other) => Err(part_err(format!("text must be a string, got {}", kind(other)))),
            None => Err(part_err("text block without text")),
        },
        "image" => parse_image(o),
        "document" => parse_document(o),
        _ => Ok(Part::Unknown { value: b.clone() }),
    }
}

fn source_of<'a>(
    o: &'a Map<String, Value>,
    what: &str,
) -> std::result::Result<(&'a Map<String, Value>, &'a str), BlockError> {
    let source = match o.get("source") {
        Some(Value::Object(s)) => s,
        Some(other) => return Err(part_err(format!("source must be an object, got {}", kind(other)))),
        None => return Err(part_err(format!("{what} block without source"))),
    };
    match source.get("type") {
        Some(Value::String(t)) => Ok((source, t.as_str())),
        Some(other) => Err(part_err(format!("source.type must be a string, got {}", kind(other)))),
        None => Err(part_err(format!("{what} source without type"))),
    }
}

fn source_str<'a>(source: &'a Map<String, Value>, key: &str, what: &str) -> std::result::Result<&'a str, BlockError> {
    match source.get(key) {
        Some(Value::String(s)) => Ok(s.as_str()),
        Some(other) => Err(part_err(format!("source.{key} must be a string, got {}", kind(other)))),
        None => Err(part_err(format!("{what} source without {key}"))),
    }
}

fn parse_image(o: &Map<String, Value>) -> std::result::Result<Part, BlockError> {
    let (source, st) = source_of(o, "image")?;
    let mut extra = rest(o, &["type", "source"]);
    let hint_w = wire::u32_hint(&extra, "width");
    let hint_h = wire::u32_hint(&extra, "height");
    let (source_value, leftovers, header): (ImageSource, Extra, Option<(u32, u32)>) = match st {
        "base64" => {
            let media_type = source_str(source, "media_type", "base64")?;
            let data = source_str(source, "data", "base64")?;
            let header = if hint_w.is_some() && hint_h.is_some() { None } else { image_size_from_base64(data) };
            (
                ImageSource::Base64 { media_type: media_type.to_string(), data: data.into() },
                rest(source, &["type", "media_type", "data"]),
                header,
            )
        }
        "url" => {
            let url = source_str(source, "url", "url")?;
            (ImageSource::Url(url.to_string()), rest(source, &["type", "url"]), image_size_from_data_url(url))
        }
        _ => (ImageSource::Other, source.clone(), None),
    };
    let (width, height) = wire::image_dims(hint_w, hint_h, || header);
    if !leftovers.is_empty() {
        extra.insert("source".into(), Value::Object(leftovers));
    }
    Ok(Part::Image { source: source_value, detail: None, width, height, extra })
}

/// Text of a `content` document source: a string, or its text blocks joined with newlines.
fn content_source_text(source: &Map<String, Value>) -> Option<String> {
    match source.get("content")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            Some(texts.join("\n"))
        }
        _ => None,
    }
}

fn parse_document(o: &Map<String, Value>) -> std::result::Result<Part, BlockError> {
    let (source, st) = source_of(o, "document")?;
    let media_type = source.get("media_type").and_then(Value::as_str).map(str::to_string);
    let name = o.get("title").and_then(Value::as_str).map(str::to_string);
    let mut skip = vec!["type", "source"];
    if name.is_some() {
        skip.push("title");
    }
    let (text, stored_source) = match st {
        "text" => (Some(source_str(source, "data", "text")?.to_string()), rest(source, &["data"])),
        "content" => (content_source_text(source), source.clone()),
        _ => {
            let text = match o.get("text") {
                None => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => return Err(part_err(format!("text must be a string, got {}", kind(other)))),
            };
            if text.is_some() {
                skip.push("text");
            }
            (text, source.clone())
        }
    };
    let mut extra = rest(o, &skip);
    extra.insert("source".into(), Value::Object(stored_source));
    Ok(Part::File { name, media_type, text: text.map(Into::into), extra })
}

fn parse_tool_use(o: &Map<String, Value>) -> std::result::Result<ToolCall, BlockError> {
    let tool_err = |text: String| (ErrorCode::InvalidTool, format!(": {text}"));
    let id = match o.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(tool_err(format!("tool_use id must be a string, got {}", kind(other)))),
        None => return Err(tool_err("tool_use without id".into())),
    };
    let name = match o.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(tool_err(format!("tool_use name must be a string, got {}", kind(other)))),
        None => return Err(tool_err("tool_use without name".into())),
    };
    let input = o.get("input").ok_or_else(|| tool_err("tool_use without input".into()))?;
    let arguments = serde_json::to_string(input)
        .map_err(|e| (ErrorCode::Internal, format!(": cannot serialize tool_use input: {e}")))?;
    Ok(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
        extra: rest(o, &["type", "id", "name", "input"]),
    })
}

fn parse_tool_result(o: &Map<String, Value>) -> std::result::Result<Message, BlockError> {
    let mut m = Message { role: Role::Tool, ..Default::default() };
    match o.get("tool_use_id") {
        Some(Value::String(s)) => m.tool_call_id = Some(s.as_str().into()),
        Some(other) => {
            return Err((ErrorCode::InvalidTool, format!(": tool_use_id must be a string, got {}", kind(other))))
        }
        None => return Err((ErrorCode::InvalidTool, ": tool_result without tool_use_id".into())),
    }
    match o.get("content") {
        None => m.wire.content_was_null = true,
        Some(Value::String(s)) => {
            m.content = Content::Text(s.as_str().into());
            m.wire.content_was_string = true;
        }
        Some(Value::Array(blocks)) => {
            let mut parts = Vec::with_capacity(blocks.len());
            for (k, b) in blocks.iter().enumerate() {
                let at = |(code, e): BlockError| (code, format!(".content[{k}]{e}"));
                let (bo, ty) = block_type(b).map_err(|e| at(part_err(e)))?;
                if matches!(ty, "tool_use" | "tool_result") {
                    return Err(at(part_err(format!("{ty} block inside tool_result"))));
                }
                parts.push(parse_block(bo, ty, b).map_err(at)?);
            }
            m.content = Content::Parts(parts);
        }
        Some(other) => {
            return Err(part_err(format!(
                "tool_result content must be a string or an array of blocks, got {}",
                kind(other)
            )))
        }
    }
    for (k, v) in o {
        match k.as_str() {
            "type" | "tool_use_id" | "content" => {}
            WIRE_INFO_KEY => return Err(part_err(format!("{WIRE_INFO_KEY:?} is a reserved key"))),
            MARKERS_KEY if !v.is_null() => {
                m.markers = wire::parse_markers(v, &mut m.extra)
                    .map_err(|kd| part_err(format!("ctxguard must be an object, got {kd}")))?;
            }
            _ => {
                m.extra.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(m)
}

/// Parse one wire message into one internal message, or several for a user message with
/// `tool_result` blocks.
fn parse_message(v: &Value, i: usize) -> Result<Vec<Message>> {
    let obj = v.as_object().ok_or_else(|| {
        Error::at(ErrorCode::InvalidMessage, i, format!("message must be an object, got {}", kind(v)))
    })?;
    let role_value = obj.get("role").ok_or_else(|| Error::at(ErrorCode::InvalidMessage, i, "message without role"))?;
    let role = match role_value {
        Value::String(s) if s == "user" => Role::User,
        Value::String(s) if s == "assistant" => Role::Assistant,
        Value::String(s) if s == "system" => {
            return Err(Error::at(
                ErrorCode::InvalidRole,
                i,
                "role \"system\" is not allowed in Anthropic messages; pass it as the system parameter \
                 (or, for OpenAI-shaped messages, set format: 'openai' — the default for Claude models is 'anthropic')",
            ))
        }
        Value::String(s) => {
            return Err(Error::at(
                ErrorCode::InvalidRole,
                i,
                format!("unknown role {s:?}; expected user or assistant (format 'anthropic'; OpenAI-shaped messages need format: 'openai')"),
            ))
        }
        other => {
            return Err(Error::at(ErrorCode::InvalidRole, i, format!("role must be a string, got {}", kind(other))))
        }
    };

    // Message-level fields.
    let mut head = Message { role, ..Default::default() };
    for (key, val) in obj {
        match key.as_str() {
            "role" | "content" => {}
            WIRE_INFO_KEY => {
                return Err(Error::at(ErrorCode::InvalidMessage, i, format!("{WIRE_INFO_KEY:?} is a reserved key")))
            }
            "id" if val.is_string() => head.id = val.as_str().map(str::to_string),
            MARKERS_KEY if !val.is_null() => {
                head.markers = wire::parse_markers(val, &mut head.extra).map_err(|k| {
                    Error::at(ErrorCode::InvalidMessage, i, format!("ctxguard must be an object, got {k}"))
                })?;
            }
            _ => {
                head.extra.insert(key.clone(), val.clone());
            }
        }
    }

    let blocks = match obj.get("content") {
        None => return Err(Error::at(ErrorCode::InvalidMessage, i, "message without content")),
        Some(Value::String(s)) => {
            head.content = Content::Text(s.as_str().into());
            head.wire.content_was_string = true;
            return Ok(vec![head]);
        }
        Some(Value::Array(blocks)) => blocks,
        Some(other) => {
            return Err(Error::at(
                ErrorCode::InvalidMessage,
                i,
                format!("content must be a string or an array of content blocks, got {}", kind(other)),
            ))
        }
    };

    let mut parts = Vec::with_capacity(blocks.len());
    let mut tools: Vec<Message> = Vec::new();
    let mut part_blocks: Vec<usize> = Vec::new();
    for (j, b) in blocks.iter().enumerate() {
        let at = |(code, e): BlockError| Error::at(code, i, format!("content[{j}]{e}"));
        let (o, ty) = block_type(b).map_err(|e| at(part_err(e)))?;
        match (ty, role) {
            ("tool_use", Role::Assistant) => {
                let call = parse_tool_use(o).map_err(at)?;
                parts.push(Part::ToolCallRef { index: head.tool_calls.len() });
                head.tool_calls.push(call);
            }
            ("tool_use", _) => return Err(at(part_err("tool_use blocks are only allowed in assistant messages"))),
            ("tool_result", Role::User) => {
                let mut t = parse_tool_result(o).map_err(at)?;
                t.wire.group = Some(i);
                t.wire.block = Some(j);
                tools.push(t);
            }
            ("tool_result", _) => return Err(at(part_err("tool_result blocks are only allowed in user messages"))),
            _ => {
                parts.push(parse_block(o, ty, b).map_err(at)?);
                part_blocks.push(j);
            }
        }
    }

    if tools.is_empty() {
        head.content = Content::Parts(parts);
        return Ok(vec![head]);
    }
    if parts.is_empty() {
        // Only tool results: the message's own fields ride on the first tool message.
        let message_fields = rest(obj, &["role", "content"]);
        if let (Some(first), false) = (tools.first_mut(), message_fields.is_empty()) {
            wire::set_info(&mut first.extra, "message", Value::Object(message_fields));
        }
        return Ok(tools);
    }
    head.content = Content::Parts(parts);
    head.wire.group = Some(i);
    let first = part_blocks.first().copied();
    head.wire.block = first;
    let contiguous = part_blocks.iter().enumerate().all(|(k, &j)| first.map(|f| f + k) == Some(j));
    if !contiguous {
        // Tool results sat between the other blocks: remember where each of them was.
        let positions = part_blocks.iter().map(|&j| Value::from(j)).collect();
        wire::set_info(&mut head.extra, wire::PART_BLOCKS_KEY, Value::Array(positions));
    }
    tools.push(head);
    Ok(tools)
}

/// Index of the piece that carries a wire message's own fields: the user part, else the first.
fn carrier_index(pieces: &[Message]) -> usize {
    pieces.iter().position(|m| m.role != Role::Tool).unwrap_or(0)
}

// ---------------------------------------------------------------------------------------------
// Writing

/// Whether `next` is written into the same wire message as the run starting at `first`.
fn same_run(first: &Message, next: &Message) -> bool {
    let piece = |m: &Message| matches!(m.role, Role::Tool | Role::User);
    match first.wire.group {
        Some(g) => piece(first) && piece(next) && next.wire.group == Some(g),
        None => first.role == Role::Tool && next.role == Role::Tool && next.wire.group.is_none(),
    }
}

fn typed(ty: &str) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("type".into(), Value::String(ty.to_string()));
    o
}

/// One wire message from a run of internal messages (see `same_run`).
fn run_to_wire(run: &[&Message]) -> Value {
    if !run.iter().any(|m| m.role == Role::Tool) {
        return match run.first() {
            Some(m) => single_to_wire(m),
            None => Value::Null,
        };
    }
    // Every block gets its original position: a tool result its `wire.block`, the user part's
    // blocks consecutive positions from the part's `wire.block` (or the remembered positions when
    // tool results sat between them). Ties (after edits) put tool results first.
    let mut placed: Vec<(usize, usize, Value)> = Vec::new();
    for m in run {
        if m.role == Role::Tool {
            placed.push((m.wire.block.unwrap_or(usize::MAX), 0, tool_result_block(m)));
            continue;
        }
        let stored = wire::info(&m.extra, wire::PART_BLOCKS_KEY).and_then(Value::as_array);
        let blocks: Vec<Value> = match &m.content {
            Content::Text(s) => vec![text_block(s)],
            Content::Parts(parts) => parts.iter().filter_map(part_to_block).collect(),
        };
        let mut next = m.wire.block.unwrap_or(0);
        for (k, b) in blocks.into_iter().enumerate() {
            let remembered =
                stored.and_then(|s| s.get(k)).and_then(Value::as_u64).and_then(|p| usize::try_from(p).ok());
            let pos = remembered.unwrap_or(next);
            next = pos.saturating_add(1);
            placed.push((pos, 1, b));
        }
    }
    let blocks = wire::in_place_order(placed);

    let carrier = run.iter().copied().find(|m| m.role != Role::Tool).or_else(|| run.first().copied());
    let mut o = Map::new();
    match carrier {
        Some(c) if c.role != Role::Tool => {
            if let Some(id) = &c.id {
                o.insert("id".into(), Value::String(id.clone()));
            }
            o.insert("role".into(), Value::String("user".into()));
            o.insert("content".into(), Value::Array(blocks));
            wire::append_extra(&mut o, &c.extra);
            if let Some(markers) = wire::markers_out(&c.markers, &c.extra) {
                o.insert(MARKERS_KEY.into(), markers);
            }
        }
        _ => {
            o.insert("role".into(), Value::String("user".into()));
            o.insert("content".into(), Value::Array(blocks));
            if let Some(Value::Object(fields)) = carrier.and_then(|c| wire::info(&c.extra, "message")) {
                wire::append_fields(&mut o, fields);
            }
        }
    }
    let mut v = Value::Object(o);
    if let Some(c) = carrier {
        wire::restore_order(&c.extra, "anthropic", &mut v);
    }
    v
}

fn single_to_wire(m: &Message) -> Value {
    let mut o = Map::new();
    if let Some(id) = &m.id {
        o.insert("id".into(), Value::String(id.clone()));
    }
    let role = if m.role == Role::Assistant { "assistant" } else { "user" };
    o.insert("role".into(), Value::String(role.into()));
    o.insert("content".into(), content_to_wire(&m.content, &m.tool_calls));
    wire::append_extra(&mut o, &m.extra);
    if let Some(markers) = wire::markers_out(&m.markers, &m.extra) {
        o.insert(MARKERS_KEY.into(), markers);
    }
    let mut v = Value::Object(o);
    wire::restore_order(&m.extra, "anthropic", &mut v);
    v
}

fn content_to_wire(content: &Content, calls: &[ToolCall]) -> Value {
    match content {
        Content::Text(s) if calls.is_empty() => Value::String(s.to_string()),
        Content::Text(s) => {
            let mut blocks = if s.is_empty() { Vec::new() } else { vec![text_block(s)] };
            blocks.extend(calls.iter().map(tool_use_block));
            Value::Array(blocks)
        }
        Content::Parts(parts) => Value::Array(wire::interleave_calls(parts, calls, part_to_block, tool_use_block)),
    }
}

fn text_block(s: &str) -> Value {
    let mut o = typed("text");
    o.insert("text".into(), Value::String(s.to_string()));
    Value::Object(o)
}

fn tool_use_block(c: &ToolCall) -> Value {
    let input = serde_json::from_str::<Value>(&c.arguments).unwrap_or_else(|_| Value::Object(Map::new()));
    let mut o = typed("tool_use");
    o.insert("id".into(), Value::String(c.id.to_string()));
    o.insert("name".into(), Value::String(c.name.to_string()));
    o.insert("input".into(), input);
    wire::append_fields(&mut o, &c.extra);
    Value::Object(o)
}

fn tool_result_block(m: &Message) -> Value {
    let mut o = typed("tool_result");
    o.insert("tool_use_id".into(), Value::String(m.tool_call_id.as_deref().unwrap_or_default().to_string()));
    if !(m.wire.content_was_null && m.content.is_empty()) {
        let content = match &m.content {
            Content::Text(s) => Value::String(s.to_string()),
            Content::Parts(parts) => Value::Array(parts.iter().filter_map(part_to_block).collect()),
        };
        o.insert("content".into(), content);
    }
    wire::append_extra(&mut o, &m.extra);
    if let Some(markers) = wire::markers_out(&m.markers, &m.extra) {
        o.insert(MARKERS_KEY.into(), markers);
    }
    Value::Object(o)
}

fn part_to_block(p: &Part) -> Option<Value> {
    let v = match p {
        Part::Text { text, extra } => {
            let mut o = typed("text");
            o.insert("text".into(), Value::String(text.to_string()));
            wire::append_fields(&mut o, extra);
            Value::Object(o)
        }
        Part::Image { source, extra, .. } => {
            let stored = match extra.get("source") {
                Some(Value::Object(s)) => Some(s),
                _ => None,
            };
            let mut src = Map::new();
            match source {
                ImageSource::Base64 { media_type, data } => {
                    src.insert("type".into(), Value::String("base64".into()));
                    src.insert("media_type".into(), Value::String(media_type.clone()));
                    src.insert("data".into(), Value::String(data.to_string()));
                }
                ImageSource::Url(url) => {
                    src.insert("type".into(), Value::String("url".into()));
                    src.insert("url".into(), Value::String(url.clone()));
                }
                ImageSource::Other => {}
            }
            if let Some(s) = stored {
                wire::append_fields(&mut src, s);
            }
            let mut o = typed("image");
            o.insert("source".into(), Value::Object(src));
            wire::append_fields(&mut o, extra);
            Value::Object(o)
        }
        Part::File { name, text, extra, .. } => document_block(name.as_deref(), text.as_deref(), extra),
        Part::Audio { extra } => {
            let mut o = typed("input_audio");
            wire::append_fields(&mut o, extra);
            Value::Object(o)
        }
        Part::ToolCallRef { .. } => return None,
        Part::Unknown { value } => value.clone(),
    };
    Some(v)
}

/// A plain-text document source (the only media type the API accepts for text sources).
fn text_source(text: &str) -> Map<String, Value> {
    let mut src = typed("text");
    src.insert("media_type".into(), Value::String("text/plain".into()));
    src.insert("data".into(), Value::String(text.to_string()));
    src
}

fn document_block(name: Option<&str>, text: Option<&str>, extra: &Extra) -> Value {
    let stored = match extra.get("source") {
        Some(Value::Object(s)) => Some(s),
        _ => None,
    };
    let stored_type = stored.and_then(|s| s.get("type")).and_then(Value::as_str);
    let mut text_at_block_level = false;
    let source = match (stored, stored_type) {
        (Some(s), Some("text")) => {
            let mut src = s.clone();
            src.insert("data".into(), Value::String(text.unwrap_or_default().to_string()));
            src
        }
        (Some(s), Some("content")) => match text {
            Some(t) if content_source_text(s).as_deref() != Some(t) => text_source(t),
            _ => s.clone(),
        },
        (Some(s), _) => {
            text_at_block_level = text.is_some();
            s.clone()
        }
        (None, _) => text_source(text.unwrap_or_default()),
    };
    let mut o = typed("document");
    o.insert("source".into(), Value::Object(source));
    if let Some(n) = name {
        o.insert("title".into(), Value::String(n.to_string()));
    }
    if text_at_block_level {
        if let Some(t) = text {
            o.insert("text".into(), Value::String(t.to_string()));
        }
    }
    wire::append_fields(&mut o, extra);
    Value::Object(o)
}

fn system_to_wire(system: &[&Message]) -> Option<Value> {
    let first = system.first()?;
    let any_parts = system.iter().any(|m| matches!(m.content, Content::Parts(_)));
    let mut v = if any_parts {
        let mut blocks = Vec::new();
        for m in system {
            match &m.content {
                Content::Text(s) => blocks.push(text_block(s)),
                Content::Parts(parts) => blocks.extend(parts.iter().filter_map(part_to_block)),
            }
        }
        Value::Array(blocks)
    } else {
        let texts: Vec<String> = system.iter().map(|m| m.content.text()).collect();
        let non_empty: Vec<&str> = texts.iter().map(String::as_str).filter(|t| !t.is_empty()).collect();
        Value::String(non_empty.join("\n\n"))
    };
    wire::restore_order(&first.extra, "anthropic", &mut v);
    Some(v)
}
