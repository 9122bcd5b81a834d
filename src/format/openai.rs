//! OpenAI Chat Completions messages <-> internal model.
//!
//! # Mapping
//!
//! | wire | internal |
//! |---|---|
//! | `system`, `developer` | `Role::System` (`wire.role = "developer"` for the latter) |
//! | `user`, `assistant`, `tool` | same role |
//! | legacy `function` (`name`, `content`) | `Role::Tool`, `wire.role = "function"`, `name`, no `tool_call_id` |
//! | `content` string / `null` or absent / parts | `Content::Text` (`wire.content_was_string`) / empty text (`wire.content_was_null`) / `Content::Parts` |
//! | `text` part | `Part::Text` |
//! | `image_url` part | `Part::Image` with `ImageSource::Url` (https and `data:` URLs alike); `detail`; size from non-standard `width`/`height` hints (part or `image_url` level, kept in `extra` too) or read from a png/jpeg/gif/webp data URL header |
//! | `input_audio` part | `Part::Audio` (everything but `type` in `extra`) |
//! | `file` part | `Part::File`: `name` = `file.filename`, `media_type` from a `file.file_data` data URL, `text` = host-supplied extracted text from a non-standard `text` on the part or `file.text`, else the decoded `file_data` when its media type is textual (`text/*`, JSON, XML…; a changed text is encoded back there) |
//! | `refusal` part and any other part type | `Part::Unknown` (the whole part) |
//! | `tool_calls` | `ToolCall`s (`type: "custom"` calls too: `custom.input` is the arguments) |
//! | legacy `function_call` | one `ToolCall` with empty id, `wire.legacy_function_call` |
//! | `tool_call_id`, `name`, `id` (string) | same fields |
//! | `ctxguard` object | `Markers` |
//! | anything else | `extra`, written back verbatim |
//!
//! Refusal parts are kept as `Part::Unknown` rather than text: they are model output that is
//! never sent as an instruction, carrying them verbatim keeps the round trip exact without a
//! special text flavour, and they are counted as their JSON text.
//!
//! Nested unknown fields live in the part's (or tool call's) `extra` under the key of the object
//! they belong to: `extra["image_url"]` holds the unknown fields of the `image_url` object,
//! `extra["file"]` those of `file` (with `"text": null` marking where a `file.text` was),
//! `ToolCall.extra["function"]` those of `function`. The tool call's `type` stays in its `extra`
//! verbatim (`"function"` is written for calls ctxguard created; a call that had no `type` on
//! the wire is marked in its `extra` bookkeeping and written back without one).
//!
//! A known field whose value is `null` (`name: null`, `tool_calls: null`, ...) and an empty
//! `tool_calls: []` are kept in `extra` verbatim, as clients that serialize every field send
//! them. Exactness bookkeeping (key order, absent content) is described in `format::wire`.
//!
//! # Strictness
//!
//! Errors (with the message index): a non-object message; a missing or non-string role
//! (`InvalidMessage` / `InvalidRole`); an unknown role; content of another type than string,
//! array or null; `null`/absent content on anything but an assistant (`null` is also accepted
//! for legacy `function` results); a part that is not an object or has no string `type`; a
//! `text` part without string `text`; an `image_url` part without an `image_url.url` string; an
//! `input_audio` part without an `input_audio` object; a `file` part without a `file` object or
//! with a non-string `text`; a tool message without `tool_call_id`; a function message without
//! `name`; non-string `name`/`tool_call_id`; `tool_calls` that is not an array or is on a
//! non-assistant message; a tool call without string `id`, without `function.name` or
//! `function.arguments` strings, or of a type other than `function`/`custom`; both `tool_calls`
//! and `function_call` on one message; a `ctxguard` value that is not an object. An assistant
//! with neither content nor tool calls is accepted (empty).

use serde_json::{Map, Value};

use super::image_header::image_size_from_data_url;
use super::wire::{self, kind, MARKERS_KEY, WIRE_INFO_KEY};
use crate::base::error::{Error, ErrorCode, Result};
use crate::message::{Content, Extra, ImageSource, Message, Part, Role, ToolCall, ToolDef};

/// Write internal messages back as OpenAI messages (unknown fields restored).
pub fn to_wire(messages: &[Message]) -> Vec<Value> {
    messages.iter().map(message_to_wire).collect()
}

/// Parse `tools` (`[{type:"function", function:{...}}]`) or legacy `functions` (`[{name,...}]`).
///
/// `null` means no tools. Function-level unknown fields (`strict`, ...) and wrapper-level ones
/// go to `extra`. `custom` tools (`{type:"custom", custom:{name, description?, format?}}`) and
/// other typed tools are kept with `parameters: null` and their remaining fields in `extra`.
pub fn parse_tools(value: &Value) -> Result<Vec<ToolDef>> {
    wire::tool_list(value, |t, k| parse_tool(t, k).map(Some))
}

// ---------------------------------------------------------------------------------------------
// Parsing

fn msg_err(code: ErrorCode, i: usize, text: impl Into<String>) -> Error {
    Error::at(code, i, text)
}

pub(super) fn parse_message(v: &Value, i: usize) -> Result<Message> {
    let obj = v
        .as_object()
        .ok_or_else(|| msg_err(ErrorCode::InvalidMessage, i, format!("message must be an object, got {}", kind(v))))?;
    let role_value = obj.get("role").ok_or_else(|| msg_err(ErrorCode::InvalidMessage, i, "message without role"))?;
    let role_name = role_value.as_str().ok_or_else(|| {
        msg_err(ErrorCode::InvalidRole, i, format!("role must be a string, got {}", kind(role_value)))
    })?;
    let (role, wire_role) = match role_name {
        "system" => (Role::System, None),
        "developer" => (Role::System, Some("developer")),
        "user" => (Role::User, None),
        "assistant" => (Role::Assistant, None),
        "tool" => (Role::Tool, None),
        "function" => (Role::Tool, Some("function")),
        other => {
            return Err(msg_err(
                ErrorCode::InvalidRole,
                i,
                format!("unknown role {other:?}; expected system, developer, user, assistant, tool or function"),
            ))
        }
    };

    let mut m = Message { role, ..Default::default() };
    m.wire.role = wire_role.map(str::to_string);
    let mut content: Option<&Value> = None;
    let mut tool_calls: Option<&Vec<Value>> = None;
    let mut function_call: Option<&Value> = None;

    for (key, val) in obj {
        match key.as_str() {
            "role" => {}
            WIRE_INFO_KEY => {
                return Err(msg_err(ErrorCode::InvalidMessage, i, format!("{WIRE_INFO_KEY:?} is a reserved key")))
            }
            "content" => content = Some(val),
            // Known fields sent as null by clients that serialize every field: carried verbatim.
            _ if val.is_null() => {
                m.extra.insert(key.clone(), Value::Null);
            }
            "name" => {
                let s = val.as_str().ok_or_else(|| {
                    msg_err(ErrorCode::InvalidMessage, i, format!("name must be a string, got {}", kind(val)))
                })?;
                m.name = Some(s.to_string());
            }
            "tool_call_id" => {
                let s = val.as_str().ok_or_else(|| {
                    msg_err(ErrorCode::InvalidMessage, i, format!("tool_call_id must be a string, got {}", kind(val)))
                })?;
                m.tool_call_id = Some(s.into());
            }
            "id" => match val.as_str() {
                Some(s) => m.id = Some(s.to_string()),
                None => {
                    m.extra.insert(key.clone(), val.clone());
                }
            },
            "tool_calls" => match val {
                Value::Array(a) if a.is_empty() => {
                    m.extra.insert(key.clone(), val.clone());
                }
                Value::Array(a) => tool_calls = Some(a),
                other => {
                    return Err(msg_err(
                        ErrorCode::InvalidTool,
                        i,
                        format!("tool_calls must be an array, got {}", kind(other)),
                    ))
                }
            },
            "function_call" => function_call = Some(val),
            MARKERS_KEY => {
                m.markers = wire::parse_markers(val, &mut m.extra).map_err(|k| {
                    msg_err(ErrorCode::InvalidMessage, i, format!("ctxguard must be an object, got {k}"))
                })?;
            }
            _ => {
                m.extra.insert(key.clone(), val.clone());
            }
        }
    }

    match content {
        None if role == Role::Assistant => {
            m.wire.content_was_null = true;
            wire::set_info(&mut m.extra, "contentAbsent", Value::Bool(true));
        }
        None => return Err(msg_err(ErrorCode::InvalidMessage, i, format!("{role_name} message without content"))),
        Some(Value::Null) if matches!(role_name, "assistant" | "function") => m.wire.content_was_null = true,
        Some(Value::Null) => {
            return Err(msg_err(ErrorCode::InvalidMessage, i, format!("{role_name} message content must not be null")))
        }
        Some(Value::String(s)) => {
            m.content = Content::Text(s.as_str().into());
            m.wire.content_was_string = true;
        }
        Some(Value::Array(parts)) => m.content = Content::Parts(parse_parts(parts, i)?),
        Some(other) => {
            return Err(msg_err(
                ErrorCode::InvalidMessage,
                i,
                format!("content must be a string, an array of content parts or null, got {}", kind(other)),
            ))
        }
    }

    match role_name {
        "tool" if m.tool_call_id.is_none() => {
            return Err(msg_err(ErrorCode::InvalidMessage, i, "tool message without tool_call_id"))
        }
        "function" if m.name.is_none() => {
            return Err(msg_err(ErrorCode::InvalidMessage, i, "function message without name"))
        }
        _ => {}
    }

    if let Some(calls) = tool_calls {
        if role != Role::Assistant {
            return Err(msg_err(
                ErrorCode::InvalidTool,
                i,
                format!("tool_calls are only allowed on assistant messages, not {role_name}"),
            ));
        }
        for (k, c) in calls.iter().enumerate() {
            m.tool_calls.push(parse_tool_call(c, i, k)?);
        }
    }
    if let Some(fc) = function_call {
        if role != Role::Assistant {
            return Err(msg_err(
                ErrorCode::InvalidTool,
                i,
                format!("function_call is only allowed on assistant messages, not {role_name}"),
            ));
        }
        if !m.tool_calls.is_empty() {
            return Err(msg_err(ErrorCode::InvalidTool, i, "both tool_calls and function_call given"));
        }
        m.tool_calls.push(parse_function_call(fc, i)?);
        m.wire.legacy_function_call = true;
    }
    Ok(m)
}

fn parse_parts(parts: &[Value], i: usize) -> Result<Vec<Part>> {
    parts.iter().enumerate().map(|(j, p)| parse_part(p, i, j)).collect()
}

fn part_err(i: usize, j: usize, text: impl std::fmt::Display) -> Error {
    msg_err(ErrorCode::InvalidContentPart, i, format!("content[{j}]: {text}"))
}

fn parse_part(p: &Value, i: usize, j: usize) -> Result<Part> {
    let o = p.as_object().ok_or_else(|| part_err(i, j, format!("part must be an object, got {}", kind(p))))?;
    let ty = match o.get("type") {
        None => return Err(part_err(i, j, "part without type")),
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(part_err(i, j, format!("part type must be a string, got {}", kind(other)))),
    };
    match ty {
        "text" => {
            let text = match o.get("text") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => return Err(part_err(i, j, format!("text must be a string, got {}", kind(other)))),
                None => return Err(part_err(i, j, "text part without text")),
            };
            Ok(Part::Text { text: text.into(), extra: rest(o, &["type", "text"]) })
        }
        "image_url" => parse_image_part(o, i, j),
        "input_audio" => {
            match o.get("input_audio") {
                Some(Value::Object(_)) => {}
                Some(other) => {
                    return Err(part_err(i, j, format!("input_audio must be an object, got {}", kind(other))))
                }
                None => return Err(part_err(i, j, "input_audio part without input_audio")),
            }
            Ok(Part::Audio { extra: rest(o, &["type"]) })
        }
        "file" => parse_file_part(o, i, j),
        // `refusal` and unknown kinds: carried whole.
        _ => Ok(Part::Unknown { value: p.clone() }),
    }
}

/// The entries of `o` except `skip`, in order.
fn rest(o: &Map<String, Value>, skip: &[&str]) -> Extra {
    o.iter().filter(|(k, _)| !skip.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn parse_image_part(o: &Map<String, Value>, i: usize, j: usize) -> Result<Part> {
    let inner = match o.get("image_url") {
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(part_err(i, j, format!("image_url must be an object with a url, got {}", kind(other))))
        }
        None => return Err(part_err(i, j, "image_url part without image_url")),
    };
    let url = match inner.get("url") {
        Some(Value::String(s)) => s,
        Some(other) => return Err(part_err(i, j, format!("image_url.url must be a string, got {}", kind(other)))),
        None => return Err(part_err(i, j, "image_url part without url")),
    };
    let mut detail = None;
    let mut inner_extra = Map::new();
    for (k, v) in inner {
        match (k.as_str(), v) {
            ("url", _) => {}
            ("detail", Value::String(s)) => detail = Some(s.clone()),
            _ => {
                inner_extra.insert(k.clone(), v.clone());
            }
        }
    }
    let mut extra = rest(o, &["type", "image_url"]);
    let hint_w = wire::u32_hint(&extra, "width").or_else(|| wire::u32_hint(&inner_extra, "width"));
    let hint_h = wire::u32_hint(&extra, "height").or_else(|| wire::u32_hint(&inner_extra, "height"));
    let (width, height) = wire::image_dims(hint_w, hint_h, || image_size_from_data_url(url));
    if !inner_extra.is_empty() {
        extra.insert("image_url".to_string(), Value::Object(inner_extra));
    }
    Ok(Part::Image { source: ImageSource::Url(url.clone()), detail, width, height, extra })
}

/// Wire info of a file part whose text is its `file.file_data` decoded (written back there).
const TEXT_FROM_FILE_DATA: &str = "textFromFileData";

fn parse_file_part(o: &Map<String, Value>, i: usize, j: usize) -> Result<Part> {
    let file = match o.get("file") {
        Some(Value::Object(m)) => m,
        Some(other) => return Err(part_err(i, j, format!("file must be an object, got {}", kind(other)))),
        None => return Err(part_err(i, j, "file part without file")),
    };
    let mut text = match o.get("text") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => return Err(part_err(i, j, format!("text must be a string, got {}", kind(other)))),
    };
    let part_level_text = text.is_some();
    let mut name = None;
    let mut media_type = None;
    let mut inner = Map::new();
    for (k, v) in file {
        match (k.as_str(), v) {
            ("filename", Value::String(s)) => name = Some(s.clone()),
            ("text", Value::String(s)) if !part_level_text => {
                text = Some(s.clone());
                // Placeholder: the text goes back here.
                inner.insert(k.clone(), Value::Null);
            }
            ("text", Value::String(_)) => {
                inner.insert(k.clone(), v.clone());
            }
            ("text", other) => return Err(part_err(i, j, format!("file.text must be a string, got {}", kind(other)))),
            ("file_data", Value::String(s)) => {
                media_type = wire::data_url_media_type(s);
                inner.insert(k.clone(), v.clone());
            }
            _ => {
                inner.insert(k.clone(), v.clone());
            }
        }
    }
    let mut extra = rest(o, &["type", "file", "text"]);
    // A text file sent as a data URL (`data:text/plain;base64,…`) is read as text: counted as the
    // text it is and previewed like any attachment, not charged as an opaque file.
    if text.is_none() && media_type.as_deref().is_some_and(wire::is_text_media) {
        let data = inner.get("file_data").and_then(Value::as_str);
        text = data.and_then(wire::data_url_base64).and_then(wire::decode_text);
        if text.is_some() {
            wire::set_info(&mut extra, TEXT_FROM_FILE_DATA, Value::Bool(true));
        }
    }
    if !inner.is_empty() {
        extra.insert("file".to_string(), Value::Object(inner));
    }
    Ok(Part::File { name, media_type, text: text.map(Into::into), extra })
}

fn tool_err(i: usize, text: impl Into<String>) -> Error {
    msg_err(ErrorCode::InvalidTool, i, text)
}

fn parse_tool_call(c: &Value, i: usize, k: usize) -> Result<ToolCall> {
    let o = c.as_object().ok_or_else(|| tool_err(i, format!("tool_calls[{k}] must be an object, got {}", kind(c))))?;
    let body_key = match o.get("type") {
        None => "function",
        Some(Value::String(s)) if s == "function" => "function",
        Some(Value::String(s)) if s == "custom" => "custom",
        Some(Value::String(s)) => {
            return Err(tool_err(i, format!("tool_calls[{k}]: unsupported type {s:?}; expected \"function\"")))
        }
        Some(other) => return Err(tool_err(i, format!("tool_calls[{k}].type must be a string, got {}", kind(other)))),
    };
    let id = match o.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(tool_err(i, format!("tool_calls[{k}].id must be a string, got {}", kind(other)))),
        None => return Err(tool_err(i, format!("tool_calls[{k}] without id"))),
    };
    let body = match o.get(body_key) {
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(tool_err(i, format!("tool_calls[{k}].{body_key} must be an object, got {}", kind(other))))
        }
        None => return Err(tool_err(i, format!("tool_calls[{k}] without {body_key}"))),
    };
    let args_key = if body_key == "custom" { "input" } else { "arguments" };
    let (name, arguments, inner) =
        parse_call_body(body, args_key).map_err(|what| tool_err(i, format!("tool_calls[{k}].{body_key}{what}")))?;
    let mut extra = rest(o, &["id", body_key]);
    if !inner.is_empty() {
        extra.insert(body_key.to_string(), Value::Object(inner));
    }
    if !o.contains_key("type") {
        // The API requires `type`, but some clients leave it out: write it back the same way.
        wire::set_info(&mut extra, "typeAbsent", Value::Bool(true));
    }
    Ok(ToolCall { id: id.into(), name: name.into(), arguments: arguments.into(), extra })
}

/// `(name, arguments, other fields)` of a `function` / `custom` / `function_call` object; the
/// error is a suffix for the object's path.
fn parse_call_body(body: &Map<String, Value>, args_key: &str) -> std::result::Result<(String, String, Extra), String> {
    let name = match body.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(format!(".name must be a string, got {}", kind(other))),
        None => return Err(" without name".to_string()),
    };
    let arguments = match body.get(args_key) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(format!(".{args_key} must be a string (JSON text), got {}", kind(other))),
        None => return Err(format!(" without {args_key}")),
    };
    Ok((name, arguments, rest(body, &["name", args_key])))
}

fn parse_function_call(fc: &Value, i: usize) -> Result<ToolCall> {
    let o = fc.as_object().ok_or_else(|| tool_err(i, format!("function_call must be an object, got {}", kind(fc))))?;
    let (name, arguments, extra) =
        parse_call_body(o, "arguments").map_err(|what| tool_err(i, format!("function_call{what}")))?;
    Ok(ToolCall { id: Default::default(), name: name.into(), arguments: arguments.into(), extra })
}

fn tooldef_err(list: &str, k: usize, text: impl std::fmt::Display) -> Error {
    Error { code: ErrorCode::InvalidTool, message: format!("{list}[{k}]: {text}"), index: Some(k) }
}

fn parse_tool(t: &Value, k: usize) -> Result<ToolDef> {
    let o = t.as_object().ok_or_else(|| tooldef_err("tools", k, format!("tool must be an object, got {}", kind(t))))?;
    match o.get("type") {
        // Legacy `functions` entry.
        None => parse_function_def(o, "functions", k, Extra::new()),
        Some(Value::String(ty)) if ty == "function" => {
            let f = match o.get("function") {
                Some(Value::Object(f)) => f,
                Some(other) => {
                    return Err(tooldef_err("tools", k, format!("function must be an object, got {}", kind(other))))
                }
                None => return Err(tooldef_err("tools", k, "function tool without function")),
            };
            parse_function_def(f, "tools", k, rest(o, &["type", "function"]))
        }
        Some(Value::String(ty)) => {
            // `custom` tools keep their definition under the key named by the type.
            let body = o.get(ty.as_str()).and_then(Value::as_object);
            let name = body
                .and_then(|b| b.get("name"))
                .or_else(|| o.get("name"))
                .and_then(Value::as_str)
                .unwrap_or(ty)
                .to_string();
            let description = body.and_then(|b| b.get("description")).and_then(Value::as_str).map(str::to_string);
            Ok(ToolDef { name, description, parameters: Value::Null, extra: rest(o, &[]) })
        }
        Some(other) => Err(tooldef_err("tools", k, format!("type must be a string, got {}", kind(other)))),
    }
}

fn parse_function_def(f: &Map<String, Value>, list: &str, k: usize, mut extra: Extra) -> Result<ToolDef> {
    let name = match f.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(tooldef_err(list, k, format!("name must be a string, got {}", kind(other)))),
        None => return Err(tooldef_err(list, k, "function without name")),
    };
    let description = match f.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => return Err(tooldef_err(list, k, format!("description must be a string, got {}", kind(other)))),
    };
    let parameters = f.get("parameters").cloned().unwrap_or(Value::Null);
    for (key, v) in f {
        if !matches!(key.as_str(), "name" | "description" | "parameters") {
            extra.insert(key.clone(), v.clone());
        }
    }
    Ok(ToolDef { name, description, parameters, extra })
}

// ---------------------------------------------------------------------------------------------
// Writing

pub(crate) fn message_to_wire(m: &Message) -> Value {
    let mut o = Map::new();
    if let Some(id) = &m.id {
        o.insert("id".into(), Value::String(id.clone()));
    }
    let role = m.wire.role.clone().unwrap_or_else(|| m.role.as_str().to_string());
    o.insert("role".into(), Value::String(role));
    if let Some(name) = &m.name {
        o.insert("name".into(), Value::String(name.clone()));
    }
    if let Some(id) = &m.tool_call_id {
        o.insert("tool_call_id".into(), Value::String(id.to_string()));
    }
    if m.wire.content_was_null && m.content.is_empty() {
        if wire::info(&m.extra, "contentAbsent").is_none() {
            o.insert("content".into(), Value::Null);
        }
    } else {
        o.insert("content".into(), content_to_wire(&m.content));
    }
    if m.wire.legacy_function_call {
        if let Some(call) = m.tool_calls.first() {
            o.insert("function_call".into(), function_call_to_wire(call));
        }
    } else if !m.tool_calls.is_empty() {
        o.insert("tool_calls".into(), Value::Array(m.tool_calls.iter().map(tool_call_to_wire).collect()));
    }
    wire::append_extra(&mut o, &m.extra);
    if let Some(markers) = wire::markers_out(&m.markers, &m.extra) {
        o.insert(MARKERS_KEY.into(), markers);
    }
    let mut v = Value::Object(o);
    wire::restore_order(&m.extra, "openai", &mut v);
    v
}

fn content_to_wire(c: &Content) -> Value {
    match c {
        Content::Text(s) => Value::String(s.to_string()),
        Content::Parts(parts) => Value::Array(parts.iter().filter_map(part_to_wire).collect()),
    }
}

fn typed(ty: &str) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("type".into(), Value::String(ty.to_string()));
    o
}

fn part_to_wire(p: &Part) -> Option<Value> {
    let v = match p {
        Part::Text { text, extra } => {
            let mut o = typed("text");
            o.insert("text".into(), Value::String(text.to_string()));
            wire::append_fields(&mut o, extra);
            Value::Object(o)
        }
        Part::Image { source, detail, extra, .. } => {
            let mut inner = Map::new();
            match source {
                ImageSource::Url(url) => {
                    inner.insert("url".into(), Value::String(url.clone()));
                }
                ImageSource::Base64 { media_type, data } => {
                    inner.insert("url".into(), Value::String(format!("data:{media_type};base64,{data}")));
                }
                ImageSource::Other => {}
            }
            if let Some(d) = detail {
                inner.insert("detail".into(), Value::String(d.clone()));
            }
            if let Some(Value::Object(rest)) = extra.get("image_url") {
                wire::append_fields(&mut inner, rest);
            }
            let mut o = typed("image_url");
            o.insert("image_url".into(), Value::Object(inner));
            wire::append_fields(&mut o, extra);
            Value::Object(o)
        }
        Part::File { name, text, extra, .. } => {
            let mut file = Map::new();
            if let Some(n) = name {
                file.insert("filename".into(), Value::String(n.clone()));
            }
            let mut text_placed = false;
            if let Some(Value::Object(inner)) = extra.get("file") {
                for (k, v) in inner {
                    if k == "text" && v.is_null() {
                        if let Some(t) = text {
                            file.insert(k.clone(), Value::String(t.to_string()));
                        }
                        text_placed = true;
                    } else if !file.contains_key(k) {
                        file.insert(k.clone(), v.clone());
                    }
                }
            }
            let from_data = wire::info(extra, TEXT_FROM_FILE_DATA).is_some();
            if let (true, Some(t)) = (from_data, text) {
                // The text is the data URL's: unchanged, the URL stays as it was; a preview is
                // encoded in its place, under the same header.
                let data = file.get("file_data").and_then(Value::as_str);
                let same = data.and_then(wire::data_url_base64).and_then(wire::decode_text).as_deref() == Some(t);
                if !same {
                    let head =
                        data.and_then(|d| d.find(',').and_then(|c| d.get(..=c))).unwrap_or("data:text/plain;base64,");
                    file.insert("file_data".into(), Value::String(format!("{head}{}", wire::encode_text(t))));
                }
                text_placed = true;
            }
            let mut o = typed("file");
            o.insert("file".into(), Value::Object(file));
            if !text_placed {
                if let Some(t) = text {
                    o.insert("text".into(), Value::String(t.to_string()));
                }
            }
            for (k, v) in extra {
                if k != wire::WIRE_INFO_KEY && !o.contains_key(k) {
                    o.insert(k.clone(), v.clone());
                }
            }
            Value::Object(o)
        }
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

fn tool_call_to_wire(c: &ToolCall) -> Value {
    let ty = c.extra.get("type").cloned().unwrap_or_else(|| Value::String("function".into()));
    let custom = ty.as_str() == Some("custom");
    let (body_key, args_key) = if custom { ("custom", "input") } else { ("function", "arguments") };
    let mut body = Map::new();
    body.insert("name".into(), Value::String(c.name.to_string()));
    body.insert(args_key.into(), Value::String(c.arguments.to_string()));
    if let Some(Value::Object(inner)) = c.extra.get(body_key) {
        wire::append_fields(&mut body, inner);
    }
    let mut o = Map::new();
    o.insert("id".into(), Value::String(c.id.to_string()));
    if wire::info(&c.extra, "typeAbsent").is_none() {
        o.insert("type".into(), ty);
    }
    o.insert(body_key.into(), Value::Object(body));
    wire::append_extra(&mut o, &c.extra);
    Value::Object(o)
}

fn function_call_to_wire(c: &ToolCall) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), Value::String(c.name.to_string()));
    o.insert("arguments".into(), Value::String(c.arguments.to_string()));
    wire::append_fields(&mut o, &c.extra);
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::format::{parse_request, write_request, Format};
    use crate::message::{Content, Part};

    fn file_text(m: &crate::message::Message) -> Option<String> {
        match &m.content {
            Content::Parts(parts) => parts.iter().find_map(|p| match p {
                Part::File { text, .. } => text.as_ref().map(|t| t.to_string()),
                _ => None,
            }),
            Content::Text(_) => None,
        }
    }

    #[test]
    fn a_text_file_data_url_is_read_as_its_text_and_written_back_as_it_was() {
        // Unpadded base64 of "hello\n": written back byte for byte while the text is unchanged.
        let wire = json!([{ "role": "user", "content": [
            { "type": "text", "text": "read this" },
            { "type": "file", "file": { "filename": "a.txt", "file_data": "data:text/plain;base64,aGVsbG8K" } }
        ]}]);
        let mut r = parse_request(Format::Openai, &wire, None, None).unwrap();
        assert_eq!(file_text(&r.messages[0]).as_deref(), Some("hello\n"));
        assert_eq!(serde_json::Value::Array(write_request(Format::Openai, &r).1), wire);
        // A changed text (a preview) goes back into file_data, under the same header.
        if let Content::Parts(parts) = &mut r.messages[0].content {
            if let Some(Part::File { text, .. }) = parts.get_mut(1) {
                *text = Some("bye".into());
            }
        }
        let out = write_request(Format::Openai, &r).1;
        assert_eq!(
            out[0]["content"][1],
            json!({ "type": "file", "file": { "filename": "a.txt", "file_data": "data:text/plain;base64,Ynll" } })
        );
    }

    #[test]
    fn a_pdf_stays_opaque_and_host_text_wins() {
        let wire = json!([{ "role": "user", "content": [
            { "type": "file", "file": { "file_data": "data:application/pdf;base64,JVBERi0=" } },
            { "type": "file", "text": "extracted", "file": { "file_data": "data:text/plain;base64,aGVsbG8K" } }
        ]}]);
        let r = parse_request(Format::Openai, &wire, None, None).unwrap();
        let Content::Parts(parts) = &r.messages[0].content else { panic!("parts") };
        assert!(matches!(&parts[0], Part::File { text: None, .. }));
        assert!(matches!(&parts[1], Part::File { text: Some(t), .. } if t.as_str() == "extracted"));
        assert_eq!(serde_json::Value::Array(write_request(Format::Openai, &r).1), wire);
    }
}
