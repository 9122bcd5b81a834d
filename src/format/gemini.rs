//! Gemini `contents` (as `@google/genai` sends them to `generateContent`) <-> internal model.
//! Format name: `"gemini"`.
//!
//! The format only says the shape: the guard's model picks the tokenizer and counting rules
//! (Gemini models: an estimate, see `docs/formats.md`).
//!
//! # Mapping
//!
//! | wire | internal |
//! |---|---|
//! | content with role `user` (or no role, or the legacy `function`) | `Role::User` |
//! | content with role `model` | `Role::Assistant` |
//! | `text` part (also with `thought: true`) | `Part::Text` (`thought`, `thoughtSignature`... in `extra`) |
//! | `inlineData` / `fileData` with an `image/*` `mimeType` | `Part::Image` (`ImageSource::Base64` / `ImageSource::Url` of `fileUri`; pixel size read from the base64 header) |
//! | `inlineData` / `fileData` with an `audio/*` `mimeType` | `Part::Audio` |
//! | other `inlineData` / `fileData` (video, PDF, text...) | `Part::File` with `media_type`; `name` = `displayName`; `text` = the decoded bytes of textual inline data (`text/*`, JSON...), written back into `inlineData.data` when an attachment preview changed it |
//! | `functionCall` part (model) | a `ToolCall` (`id` = the call's `id`, or one ctxguard makes up; `arguments` = compact JSON of `args`; the part's other fields, `thoughtSignature` among them, in the call's `extra`) plus `Part::ToolCallRef` at its position |
//! | `functionResponse` part (user) | a separate `Role::Tool` message (`name`, `tool_call_id` by the pairing rule below; like Anthropic's `tool_result` blocks: `wire.group` / `wire.block` put it back in its content) |
//! | `executableCode`, `codeExecutionResult`, `toolCall`, `toolResponse`, unknown parts | `Part::Unknown`, carried whole |
//! | `ctxguard` on a content (on a `functionResponse` part for tool messages) | markers |
//! | other fields | `extra`, written back verbatim |
//!
//! # Function responses
//!
//! The text of a `functionResponse.response` object is the string when the object has one field
//! holding a string (`{ output: "..." }`, `{ result: "..." }`, `{ error: "..." }`), else the object's
//! compact JSON. A changed text (a compacted tool output) is written back under the same single
//! field, or, for a JSON response, as the object the text still parses to, else as
//! `{ output: text }` — the key the Gemini API documents for a function's output — so the
//! response stays an object.
//!
//! # Pairing
//!
//! A `functionResponse` answers the `functionCall` before it with the same `id` when both have
//! one; otherwise the earliest call before it with the same `name` that no response answered yet
//! (parallel calls are answered in order). A response that answers no call is an orphan (the API
//! rejects it) and is removed by pair sanitation, like a call without a response.
//!
//! # Thought signatures
//!
//! A `thoughtSignature` stays on the part it came with (in that part's `extra`, a call's in its
//! `ToolCall`): a call and its signature are kept or dropped together. When a model content
//! holds several calls and any carries a signature (the first call of a parallel step signs the
//! step), its calls are tied (`wire::Ties::calls_together`): pair sanitation removes them all
//! when one of them loses its response.
//!
//! # System instruction
//!
//! `systemInstruction` is this format's `system`: the `system` option (a string, a Content
//! `{ parts }`, a Part or an array of parts) becomes a leading system message. Every system message
//! is written into `system`: alone and unchanged in the shape it came in; with ctxguard's summary,
//! evidence notes or guidance after it, as one Content whose parts are the original parts
//! followed by one `{ text }` part per added message.
//!
//! # Strictness
//!
//! Errors (with the content index): `messages` not an array (`INVALID_MESSAGES`); a content that
//! is not an object, without a `parts` array, with a role other than user / model / function
//! (`INVALID_ROLE`); a part that is not an object, a `text` that is not a string, an `inlineData`
//! / `fileData` that is not an object or lacks a string `data` / `fileUri`, a `functionCall` in a
//! user content or a `functionResponse` in a model content (`INVALID_CONTENT_PART`); a call
//! without string `name`, a response without string `name` or with a `response` that is not an
//! object, a non-string `id` (`INVALID_TOOL`); a `ctxguard` value that is not an object.

use serde_json::{Map, Value};

use super::gemini_parts::{parse_part, part_to_wire};
use super::wire::{self, kind, rest, MARKERS_KEY, WIRE_INFO_KEY};
use crate::base::error::{Error, ErrorCode, Result};
use crate::message::{Content, Extra, Message, Part, Role, ToolCall, ToolDef};

/// Format key of the key-order bookkeeping.
const ORDER: &str = "gemini";

/// The calls issued so far, for the pairing rule.
#[derive(Default)]
struct Pairing {
    /// `(name, id, answered)` in order.
    calls: Vec<(String, String, bool)>,
}

impl Pairing {
    fn issue(&mut self, name: &str, wire_id: Option<&str>, i: usize, j: usize) -> String {
        let id = wire_id.map_or_else(|| format!("gemini-call-{i}-{j}"), str::to_string);
        self.calls.push((name.to_string(), id.clone(), false));
        id
    }

    fn answer(&mut self, name: &str, wire_id: Option<&str>, i: usize, j: usize) -> String {
        let by_id = wire_id.and_then(|w| self.calls.iter().position(|(_, id, _)| id == w));
        let at = by_id.or_else(|| self.calls.iter().position(|(n, _, answered)| n == name && !answered));
        match at.and_then(|k| self.calls.get_mut(k)) {
            Some((_, id, answered)) => {
                *answered = true;
                id.clone()
            }
            None => wire_id.map_or_else(|| format!("gemini-orphan-{i}-{j}"), str::to_string),
        }
    }
}

/// Parse a Gemini `contents` array. Errors name the offending index.
pub fn parse_messages(value: &Value) -> Result<Vec<Message>> {
    let items = value.as_array().ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidMessages,
            format!("messages must be an array of Gemini contents, got {}", kind(value)),
        )
    })?;
    let mut pairing = Pairing::default();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let mut pieces = parse_content(item, i, &mut pairing)?;
        let produced = {
            let refs: Vec<&Message> = pieces.iter().collect();
            run_to_wire(&refs)
        };
        let carrier = pieces.iter().position(|m| m.role != Role::Tool).unwrap_or(0);
        if let Some(m) = pieces.get_mut(carrier) {
            wire::remember_order(&mut m.extra, ORDER, &produced, item);
        }
        out.extend(pieces);
    }
    Ok(out)
}

/// The `system` option: `systemInstruction` (a string, a Content, a Part or an array of parts).
pub fn parse_system(value: &Value) -> Result<Message> {
    let err = |text: String| Error::options(format!("system{text}"));
    let mut m = Message { role: Role::System, ..Default::default() };
    let parts = |items: &[Value]| -> Result<Vec<Part>> {
        items
            .iter()
            .enumerate()
            .map(|(j, p)| match p {
                // Remembered by position (`stringParts`) and written back as strings.
                Value::String(s) => Ok(Part::Text { text: s.as_str().into(), extra: Extra::new() }),
                Value::Object(o) if o.contains_key("functionCall") || o.contains_key("functionResponse") => {
                    Err(err(format!(" part {j}: a system instruction holds no function calls or responses")))
                }
                Value::Object(o) => parse_part(o, p).map_err(|e| err(format!(" part {j}: {e}"))),
                other => Err(err(format!(" part {j}: part must be an object, got {}", kind(other)))),
            })
            .collect()
    };
    let shape = match value {
        Value::String(s) => {
            m.content = Content::Text(s.as_str().into());
            m.wire.content_was_string = true;
            "string"
        }
        Value::Object(o) if o.contains_key("parts") => {
            let items =
                o.get("parts").and_then(Value::as_array).ok_or_else(|| err(".parts must be an array".into()))?;
            m.content = Content::Parts(parts(items)?);
            m.extra = rest(o, &["parts"]);
            "content"
        }
        Value::Object(_) => {
            m.content = Content::Parts(parts(std::slice::from_ref(value))?);
            "part"
        }
        Value::Array(items) => {
            m.content = Content::Parts(parts(items)?);
            "parts"
        }
        other => {
            return Err(err(format!(" must be a string, a Content, a Part or an array of parts, got {}", kind(other))))
        }
    };
    let strings: Vec<Value> = match value {
        Value::Array(items) => {
            items.iter().enumerate().filter(|(_, p)| p.is_string()).map(|(j, _)| Value::from(j)).collect()
        }
        Value::Object(o) => o
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .filter(|(_, p)| p.is_string())
            .map(|(j, _)| Value::from(j))
            .collect(),
        _ => Vec::new(),
    };
    if !strings.is_empty() {
        wire::set_info(&mut m.extra, "stringParts", Value::Array(strings));
    }
    wire::set_info(&mut m.extra, "shape", Value::String(shape.into()));
    if let Some(produced) = system_to_wire(&[&m]) {
        wire::remember_order(&mut m.extra, ORDER, &produced, value);
    }
    Ok(m)
}

/// Write internal messages back as `(systemInstruction, contents)`.
pub fn to_wire(messages: &[Message]) -> (Option<Value>, Vec<Value>) {
    let system: Vec<&Message> = messages.iter().filter(|m| m.role == Role::System).collect();
    let rest: Vec<&Message> = messages.iter().filter(|m| m.role != Role::System).collect();
    (system_to_wire(&system), wire::write_runs(&rest, same_run, run_to_wire))
}

/// Parse Gemini `tools` (`[{ functionDeclarations: [{ name, description, parameters }] },
/// { googleSearch: {} }, ...]`): each declaration is a tool (`parameters`, else
/// `parametersJsonSchema`); each other field of a tool object is a built-in tool kept with
/// `parameters: null`. `null` means none.
pub fn parse_tools(value: &Value) -> Result<Vec<ToolDef>> {
    wire::tool_list(value, parse_tool)
}

/// The tools of `tools[k]`: each function declaration, and each other field as a built-in tool.
fn parse_tool(t: &Value, k: usize) -> Result<Vec<ToolDef>> {
    let err =
        |text: String| Error { code: ErrorCode::InvalidTool, message: format!("tools[{k}]{text}"), index: Some(k) };
    let o = t.as_object().ok_or_else(|| err(format!(": tool must be an object, got {}", kind(t))))?;
    let mut out = Vec::new();
    for (key, v) in o {
        if key != "functionDeclarations" {
            let mut extra = Map::new();
            extra.insert(key.clone(), v.clone());
            out.push(ToolDef { name: key.clone(), description: None, parameters: Value::Null, extra });
            continue;
        }
        let decls =
            v.as_array().ok_or_else(|| err(format!(".functionDeclarations must be an array, got {}", kind(v))))?;
        for (d, decl) in decls.iter().enumerate() {
            let at = |text: String| err(format!(".functionDeclarations[{d}]: {text}"));
            let f = decl.as_object().ok_or_else(|| at(format!("declaration must be an object, got {}", kind(decl))))?;
            let name =
                f.get("name").and_then(Value::as_str).ok_or_else(|| at("declaration without string name".into()))?;
            let description = match f.get("description") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => return Err(at(format!("description must be a string, got {}", kind(other)))),
            };
            let parameters =
                f.get("parameters").or_else(|| f.get("parametersJsonSchema")).cloned().unwrap_or(Value::Null);
            let extra = rest(f, &["name", "description", "parameters", "parametersJsonSchema"]);
            out.push(ToolDef { name: name.to_string(), description, parameters, extra });
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Parsing

fn parse_content(item: &Value, i: usize, pairing: &mut Pairing) -> Result<Vec<Message>> {
    let obj = item.as_object().ok_or_else(|| {
        Error::at(ErrorCode::InvalidMessage, i, format!("content must be an object, got {}", kind(item)))
    })?;
    let (role, wire_role) = match obj.get("role") {
        None | Some(Value::Null) => (Role::User, None),
        Some(Value::String(s)) => match s.as_str() {
            "user" => (Role::User, None),
            "model" => (Role::Assistant, None),
            "function" => (Role::User, Some("function")),
            other => {
                let hint = if matches!(other, "system" | "assistant") {
                    " (a system prompt is the system option: systemInstruction)"
                } else {
                    ""
                };
                return Err(Error::at(
                    ErrorCode::InvalidRole,
                    i,
                    format!("unknown role {other:?}; expected user or model{hint}"),
                ));
            }
        },
        Some(other) => {
            return Err(Error::at(ErrorCode::InvalidRole, i, format!("role must be a string, got {}", kind(other))))
        }
    };
    let mut head = Message { role, ..Default::default() };
    head.wire.role = wire_role.map(str::to_string);
    match obj.get("role") {
        None => wire::set_info(&mut head.extra, "roleAbsent", Value::Bool(true)),
        Some(Value::Null) => wire::set_info(&mut head.extra, "roleNull", Value::Bool(true)),
        Some(_) => {}
    }
    for (key, val) in obj {
        match key.as_str() {
            "role" | "parts" => {}
            WIRE_INFO_KEY => {
                return Err(Error::at(ErrorCode::InvalidMessage, i, format!("{WIRE_INFO_KEY:?} is a reserved key")))
            }
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
    let items = match obj.get("parts") {
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(Error::at(ErrorCode::InvalidMessage, i, format!("parts must be an array, got {}", kind(other))))
        }
        None => return Err(Error::at(ErrorCode::InvalidMessage, i, "content without parts")),
    };

    let mut parts = Vec::with_capacity(items.len());
    let mut tools: Vec<Message> = Vec::new();
    let mut part_blocks: Vec<usize> = Vec::new();
    for (j, p) in items.iter().enumerate() {
        let at = |code: ErrorCode, e: String| Error::at(code, i, format!("parts[{j}]: {e}"));
        let o = p
            .as_object()
            .ok_or_else(|| at(ErrorCode::InvalidContentPart, format!("part must be an object, got {}", kind(p))))?;
        if let Some(fc) = o.get("functionCall") {
            if role != Role::Assistant {
                return Err(at(ErrorCode::InvalidContentPart, "functionCall parts belong in model contents".into()));
            }
            let call = parse_call(o, fc, pairing, i, j).map_err(|e| at(ErrorCode::InvalidTool, e))?;
            parts.push(Part::ToolCallRef { index: head.tool_calls.len() });
            head.tool_calls.push(call);
        } else if let Some(fr) = o.get("functionResponse") {
            if role == Role::Assistant {
                return Err(at(ErrorCode::InvalidContentPart, "functionResponse parts belong in user contents".into()));
            }
            let mut t = parse_response(o, fr, pairing, i, j).map_err(|(code, e)| at(code, e))?;
            t.wire.group = Some(i);
            t.wire.block = Some(j);
            tools.push(t);
        } else {
            parts.push(parse_part(o, p).map_err(|e| at(ErrorCode::InvalidContentPart, e))?);
            part_blocks.push(j);
        }
    }
    let signed = head.tool_calls.iter().any(|c| c.extra.contains_key("thoughtSignature"));
    if head.tool_calls.len() > 1 && signed {
        wire::set_info(&mut head.extra, "callsTogether", Value::from(head.tool_calls.len()));
    }

    if tools.is_empty() {
        head.content = Content::Parts(parts);
        return Ok(vec![head]);
    }
    if parts.is_empty() {
        // Only function responses: the content's own fields ride on the first tool message.
        let fields = rest(obj, &["parts"]);
        if let Some(first) = tools.first_mut() {
            wire::set_info(&mut first.extra, "message", Value::Object(fields));
        }
        return Ok(tools);
    }
    head.content = Content::Parts(parts);
    head.wire.group = Some(i);
    let first = part_blocks.first().copied();
    head.wire.block = first;
    let contiguous = part_blocks.iter().enumerate().all(|(k, &j)| first.map(|f| f + k) == Some(j));
    if !contiguous {
        let positions = part_blocks.iter().map(|&j| Value::from(j)).collect();
        wire::set_info(&mut head.extra, wire::PART_BLOCKS_KEY, Value::Array(positions));
    }
    tools.push(head);
    Ok(tools)
}

/// An optional string `id`.
fn wire_id(f: &Map<String, Value>) -> std::result::Result<Option<&str>, String> {
    match f.get("id") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(other) => Err(format!("id must be a string, got {}", kind(other))),
    }
}

fn parse_call(
    o: &Map<String, Value>,
    fc: &Value,
    pairing: &mut Pairing,
    i: usize,
    j: usize,
) -> std::result::Result<ToolCall, String> {
    let f = fc.as_object().ok_or_else(|| format!("functionCall must be an object, got {}", kind(fc)))?;
    let name = f.get("name").and_then(Value::as_str).ok_or("functionCall without string name")?;
    let id = wire_id(f)?;
    let mut extra = rest(o, &["functionCall"]);
    // A null `id` stays where it was, among the call's other fields.
    let inner = rest(f, if id.is_some() { &["id", "name", "args"] } else { &["name", "args"] });
    if !inner.is_empty() {
        extra.insert("functionCall".into(), Value::Object(inner));
    }
    if id.is_none() {
        wire::set_info(&mut extra, "idAbsent", Value::Bool(true));
    }
    let arguments = match f.get("args") {
        Some(args) => crate::base::json_text::text(args),
        None => {
            wire::set_info(&mut extra, "argsAbsent", Value::Bool(true));
            "{}".to_string()
        }
    };
    Ok(ToolCall { id: pairing.issue(name, id, i, j).into(), name: name.into(), arguments: arguments.into(), extra })
}

fn parse_response(
    o: &Map<String, Value>,
    fr: &Value,
    pairing: &mut Pairing,
    i: usize,
    j: usize,
) -> std::result::Result<Message, (ErrorCode, String)> {
    let tool = |e: String| (ErrorCode::InvalidTool, e);
    let f = fr.as_object().ok_or_else(|| tool(format!("functionResponse must be an object, got {}", kind(fr))))?;
    let name =
        f.get("name").and_then(Value::as_str).ok_or_else(|| tool("functionResponse without string name".into()))?;
    let id = wire_id(f).map_err(tool)?;
    let mut m = Message { role: Role::Tool, name: Some(name.to_string()), ..Default::default() };
    let paired = pairing.answer(name, id, i, j);
    match id {
        None => wire::set_info(&mut m.extra, "idAbsent", Value::Bool(true)),
        // Paired by name with a call of another (or no) id: its own id is written back.
        Some(w) if w != paired => wire::set_info(&mut m.extra, "wireId", Value::String(w.to_string())),
        Some(_) => {}
    }
    m.tool_call_id = Some(paired.into());
    let text = match f.get("response") {
        None | Some(Value::Null) => {
            wire::set_info(&mut m.extra, "responseAbsent", Value::Bool(true));
            String::new()
        }
        Some(Value::Object(r)) => match r.iter().next() {
            Some((key, Value::String(s))) if r.len() == 1 => {
                wire::set_info(&mut m.extra, "responseKey", Value::String(key.clone()));
                s.clone()
            }
            _ => crate::base::json_text::text(&Value::Object(r.clone())),
        },
        Some(other) => return Err(tool(format!("functionResponse.response must be an object, got {}", kind(other)))),
    };
    m.content = Content::Text(text.into());
    for (key, val) in o {
        match key.as_str() {
            "functionResponse" => {}
            MARKERS_KEY if !val.is_null() => {
                m.markers = wire::parse_markers(val, &mut m.extra)
                    .map_err(|k| (ErrorCode::InvalidContentPart, format!("ctxguard must be an object, got {k}")))?;
            }
            _ => {
                m.extra.insert(key.clone(), val.clone());
            }
        }
    }
    // A null `id` or `response` stays where it was, among the response's other fields.
    let mut skip = vec!["name"];
    if id.is_some() {
        skip.push("id");
    }
    if f.get("response").is_some_and(Value::is_object) {
        skip.push("response");
    }
    let inner = rest(f, &skip);
    if !inner.is_empty() {
        m.extra.insert("functionResponse".into(), Value::Object(inner));
    }
    Ok(m)
}

// ---------------------------------------------------------------------------------------------
// Writing

/// Whether `next` is written into the same content as the run starting at `first` (see
/// `format::anthropic`: function responses of one content, or consecutive ones ctxguard made).
fn same_run(first: &Message, next: &Message) -> bool {
    let piece = |m: &Message| matches!(m.role, Role::Tool | Role::User);
    match first.wire.group {
        Some(g) => piece(first) && piece(next) && next.wire.group == Some(g),
        None => first.role == Role::Tool && next.role == Role::Tool && next.wire.group.is_none(),
    }
}

fn flag(extra: &Extra, key: &str) -> bool {
    wire::info(extra, key).and_then(Value::as_bool) == Some(true)
}

/// The `role` a content is written with (`None`: it had none).
fn role_of(m: &Message) -> Option<Value> {
    if flag(&m.extra, "roleAbsent") {
        return None;
    }
    if flag(&m.extra, "roleNull") {
        return Some(Value::Null);
    }
    Some(Value::String(m.wire.role.clone().unwrap_or_else(|| {
        if m.role == Role::Assistant {
            "model".into()
        } else {
            "user".into()
        }
    })))
}

/// One content from a run of internal messages (see `same_run`).
fn run_to_wire(run: &[&Message]) -> Value {
    if !run.iter().any(|m| m.role == Role::Tool) {
        return run.first().map_or(Value::Null, |m| single_to_wire(m));
    }
    // Every part back at its position (see `format::anthropic::run_to_wire`).
    let mut placed: Vec<(usize, usize, Value)> = Vec::new();
    for m in run {
        if m.role == Role::Tool {
            placed.push((m.wire.block.unwrap_or(usize::MAX), 0, response_part(m)));
            continue;
        }
        let stored = wire::info(&m.extra, wire::PART_BLOCKS_KEY).and_then(Value::as_array);
        let mut next = m.wire.block.unwrap_or(0);
        for (k, p) in parts_to_wire(m).into_iter().enumerate() {
            let remembered =
                stored.and_then(|s| s.get(k)).and_then(Value::as_u64).and_then(|p| usize::try_from(p).ok());
            let pos = remembered.unwrap_or(next);
            next = pos.saturating_add(1);
            placed.push((pos, 1, p));
        }
    }
    let parts = Value::Array(wire::in_place_order(placed));
    let carrier = run.iter().copied().find(|m| m.role != Role::Tool).or_else(|| run.first().copied());
    let mut o = Map::new();
    match carrier {
        Some(c) if c.role != Role::Tool => {
            if let Some(role) = role_of(c) {
                o.insert("role".into(), role);
            }
            o.insert("parts".into(), parts);
            wire::append_extra(&mut o, &c.extra);
            if let Some(markers) = wire::markers_out(&c.markers, &c.extra) {
                o.insert(MARKERS_KEY.into(), markers);
            }
        }
        _ => match carrier.and_then(|c| wire::info(&c.extra, "message")) {
            Some(Value::Object(fields)) => {
                o = fields.clone();
                o.insert("parts".into(), parts);
            }
            _ => {
                o.insert("role".into(), Value::String("user".into()));
                o.insert("parts".into(), parts);
            }
        },
    }
    let mut v = Value::Object(o);
    if let Some(c) = carrier {
        wire::restore_order(&c.extra, ORDER, &mut v);
    }
    v
}

fn single_to_wire(m: &Message) -> Value {
    let mut o = Map::new();
    if let Some(role) = role_of(m) {
        o.insert("role".into(), role);
    }
    o.insert("parts".into(), Value::Array(parts_to_wire(m)));
    wire::append_extra(&mut o, &m.extra);
    if let Some(markers) = wire::markers_out(&m.markers, &m.extra) {
        o.insert(MARKERS_KEY.into(), markers);
    }
    let mut v = Value::Object(o);
    wire::restore_order(&m.extra, ORDER, &mut v);
    v
}

/// The parts of a user or model message, calls at their `ToolCallRef`s.
fn parts_to_wire(m: &Message) -> Vec<Value> {
    match &m.content {
        Content::Text(s) => {
            let mut out = if s.is_empty() && !m.tool_calls.is_empty() { Vec::new() } else { vec![text_part(s)] };
            out.extend(m.tool_calls.iter().map(call_part));
            out
        }
        Content::Parts(parts) => wire::interleave_calls(parts, &m.tool_calls, part_to_wire, call_part),
    }
}

fn text_part(s: &str) -> Value {
    let mut o = Map::new();
    o.insert("text".into(), Value::String(s.to_string()));
    Value::Object(o)
}

fn call_part(c: &ToolCall) -> Value {
    let mut f = Map::new();
    if !flag(&c.extra, "idAbsent") {
        f.insert("id".into(), Value::String(c.id.to_string()));
    }
    f.insert("name".into(), Value::String(c.name.to_string()));
    if !(flag(&c.extra, "argsAbsent") && c.arguments.as_str() == "{}") {
        let args = serde_json::from_str::<Value>(&c.arguments).unwrap_or_else(|_| Value::Object(Map::new()));
        f.insert("args".into(), args);
    }
    if let Some(Value::Object(inner)) = c.extra.get("functionCall") {
        wire::append_fields(&mut f, inner);
    }
    let mut o = Map::new();
    o.insert("functionCall".into(), Value::Object(f));
    wire::append_extra(&mut o, &c.extra);
    Value::Object(o)
}

fn response_part(m: &Message) -> Value {
    let mut f = Map::new();
    if let Some(w) = wire::info(&m.extra, "wireId") {
        f.insert("id".into(), w.clone());
    } else if let (false, Some(id)) = (flag(&m.extra, "idAbsent"), &m.tool_call_id) {
        f.insert("id".into(), Value::String(id.to_string()));
    }
    f.insert("name".into(), Value::String(m.name.clone().unwrap_or_default()));
    let text = m.content.text();
    if !(flag(&m.extra, "responseAbsent") && text.is_empty()) {
        let response = match wire::info(&m.extra, "responseKey").and_then(Value::as_str) {
            Some(key) => {
                let mut r = Map::new();
                r.insert(key.to_string(), Value::String(text));
                Value::Object(r)
            }
            None => match serde_json::from_str::<Value>(&text) {
                Ok(v @ Value::Object(_)) => v,
                _ => {
                    let mut r = Map::new();
                    r.insert("output".into(), Value::String(text));
                    Value::Object(r)
                }
            },
        };
        f.insert("response".into(), response);
    }
    if let Some(Value::Object(inner)) = m.extra.get("functionResponse") {
        wire::append_fields(&mut f, inner);
    }
    let mut o = Map::new();
    o.insert("functionResponse".into(), Value::Object(f));
    wire::append_extra(&mut o, &m.extra);
    if let Some(markers) = wire::markers_out(&m.markers, &m.extra) {
        o.insert(MARKERS_KEY.into(), markers);
    }
    Value::Object(o)
}

/// `systemInstruction` from the system messages (see the module doc).
fn system_to_wire(system: &[&Message]) -> Option<Value> {
    let first = system.first()?;
    let shape = wire::info(&first.extra, "shape").and_then(Value::as_str);
    let wire_parts = |m: &Message| -> Vec<Value> {
        let strings = wire::info(&m.extra, "stringParts").and_then(Value::as_array);
        let was_string = |k: usize| strings.is_some_and(|s| s.iter().any(|x| x.as_u64() == Some(k as u64)));
        match &m.content {
            Content::Text(s) => vec![text_part(s)],
            Content::Parts(parts) => parts
                .iter()
                .enumerate()
                .filter_map(|(k, p)| match p {
                    Part::Text { text, extra } if extra.is_empty() && was_string(k) => {
                        Some(Value::String(text.to_string()))
                    }
                    _ => part_to_wire(p),
                })
                .collect(),
        }
    };
    let mut v = match (system, shape, &first.content) {
        ([_], Some("string"), Content::Text(s)) => Value::String(s.to_string()),
        ([_], Some("part"), Content::Parts(p)) if p.len() == 1 => {
            wire_parts(first).into_iter().next().unwrap_or(Value::Null)
        }
        ([_], Some("parts"), _) => Value::Array(wire_parts(first)),
        _ => {
            let mut o = Map::new();
            o.insert("parts".into(), Value::Array(system.iter().flat_map(|m| wire_parts(m)).collect()));
            if shape == Some("content") {
                wire::append_extra(&mut o, &first.extra);
            }
            Value::Object(o)
        }
    };
    if system.len() == 1 {
        wire::restore_order(&first.extra, ORDER, &mut v);
    }
    Some(v)
}
