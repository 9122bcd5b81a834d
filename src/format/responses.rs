//! OpenAI Responses API input items (`ResponseInputItem`, what `responses.create` takes as
//! `input` and what the Agents SDK keeps as its history) <-> internal model. Format name:
//! `"openai-responses"`.
//!
//! The format only says the shape: the guard's model picks the tokenizer and counting rules. For
//! an OpenAI model, message items count exactly like the same messages in Chat Completions (see
//! `docs/formats.md` for what is verified and what is estimated).
//!
//! # Mapping (one internal message per item)
//!
//! | item | internal |
//! |---|---|
//! | `message` (also without `type`: `{ role, content }`), role `user` / `assistant` / `system` | same role |
//! | `message` with role `developer` | `Role::System`, `wire.role = "developer"` |
//! | `content` a string / a list of parts | `Content::Text` (`wire.content_was_string`) / `Content::Parts` |
//! | `input_text`, `output_text` part | `Part::Text` (`type`, `annotations`, `logprobs`... in `extra`) |
//! | `input_image` part | `Part::Image`: `image_url` (an URL or a `data:` URL, pixel size read from its header) or a `file_id` (`ImageSource::Other`); `detail` |
//! | `input_file` part | `Part::File`: `name` = `filename`, `media_type` from a `file_data` data URL, `text` = the decoded file when textual (`text/*`, JSON...) — an attachment preview is written back into `file_data` |
//! | `input_audio` part | `Part::Audio` |
//! | `refusal` and other parts | `Part::Unknown` (counted as their JSON text) |
//! | `function_call`, `custom_tool_call` | `Role::Assistant` with one `ToolCall` (`id` = `call_id`, `arguments` = `arguments` / `input`; the item's other fields, `id` and `status` among them, in the call's `extra`) |
//! | `function_call_output`, `custom_tool_call_output` | `Role::Tool`, `tool_call_id` = `call_id`; `output` a string → `Content::Text`, a list of `input_text` / `input_image` / `input_file` → `Content::Parts` |
//! | `computer_call`, `local_shell_call`, `shell_call`, `apply_patch_call` | `Role::Assistant` with one `ToolCall` (`id` = `call_id`, `name` = the item type, `arguments` = the item's JSON text); the item is written back verbatim |
//! | their `*_output` items (`local_shell_call_output` pairs by its `id`) | `Role::Tool` whose content is the whole item (`Part::Unknown`), written back verbatim |
//! | `reasoning` | `Role::Assistant`, the whole item as `Part::Unknown` (counted as its JSON text, `encrypted_content` included: errs high) |
//! | `web_search_call`, `file_search_call`, `code_interpreter_call`, `image_generation_call`, `mcp_call`, `mcp_list_tools`, `mcp_approval_request`, `mcp_approval_response`, `tool_search_call`, `tool_search_output`, `compaction`, `compaction_trigger`, `item_reference` (also `{ id }` without `type`), unknown item types | `Role::Assistant`, the whole item as `Part::Unknown`: kept or dropped whole, never edited |
//! | `additional_tools` | `Role::System` (never dropped), the whole item as `Part::Unknown` |
//! | `id` of a message item (string), `ctxguard` | `Message::id`, markers (also on outputs) |
//! | other fields (`type: "message"`, `status`, `phase`...) | `extra`, written back verbatim |
//!
//! # Instructions
//!
//! The request's `instructions` is this format's `system`: the `system` option (a string) becomes
//! a leading system message marked as the instructions (bookkeeping `instructions`), written back
//! into `system` only (several: their distinct texts joined by a blank line). System and
//! developer message items of the input stay in the messages; ctxguard's own system messages
//! (summaries, evidence notes, guidance) are written as `{ role: "system", content }` items.
//!
//! # Pairs and ties
//!
//! An output pairs with the call before it whose `call_id` it names. An output whose call is not
//! in the input (its call lives on the server: `previous_response_id`, a conversation, an
//! `item_reference`) is kept as it is: its `call_id` stays in `extra` and it has no
//! `tool_call_id`, so pair sanitation leaves it alone. A call without its output is removed by
//! pair sanitation, as in the other formats.
//!
//! A `reasoning` item (with the reasoning items right after it) and the output items that follow
//! it up to the next reasoning item or the next input item (message items of the assistant,
//! calls, built-in tool items) form one bundle: the API rejects a reasoning item without the item
//! after it, and that item without its reasoning item. Bundles are recorded as ties
//! (`wire::Ties`: `leads` on the first reasoning item, `follows` on the others) and pair
//! sanitation keeps or drops a bundle whole.
//!
//! # Strictness
//!
//! Errors (with the item index): `messages` not an array (`INVALID_MESSAGES`: a string `input`
//! must be passed as `[{ role: "user", content: input }]`); an item that is not an object or has
//! a non-string `type`; a message item without `role`, with a role other than user / assistant /
//! system / developer (`INVALID_ROLE`), without content or with content that is neither a string
//! nor an array; a part that is not an object or has no string `type`, a text part without
//! string `text`, an `input_image` without `image_url` or `file_id`, an `input_file` with a
//! non-string `filename` / `file_data`, an `input_audio` without an object `input_audio`
//! (`INVALID_CONTENT_PART`); a call without string `call_id`, `name` and `arguments` (`input`),
//! an output without string `call_id` (`INVALID_TOOL`), an output without a string or array
//! `output`; a `ctxguard` value that is not an object. `instructions` that is not a string is
//! `INVALID_OPTIONS`.

use rustc_hash::FxHashSet;
use serde_json::{Map, Value};

use super::responses_parts::{parse_part, part_to_wire};
use super::wire::{self, kind, rest, MARKERS_KEY, WIRE_INFO_KEY};
use crate::base::error::{Error, ErrorCode, Result};
use crate::message::{Content, Message, Part, Role, ToolCall, ToolDef};

/// Format key of the key-order bookkeeping.
const ORDER: &str = "openai-responses";

/// Calls whose outputs are client-side items pairing by `call_id` (`local_shell_call_output`:
/// by its `id`), kept whole.
const OPAQUE_CALLS: [&str; 4] = ["computer_call", "local_shell_call", "shell_call", "apply_patch_call"];

/// Items the model produces besides messages and calls (they follow a reasoning item).
const MODEL_ITEMS: [&str; 9] = [
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "tool_search_call",
    "tool_search_output",
];

/// What an item is, for the reasoning bundles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Reasoning,
    /// Output of the model: assistant messages, calls, built-in tool items.
    Model,
    Other,
}

/// Parse a Responses `input` array. Errors name the offending index.
pub fn parse_messages(value: &Value) -> Result<Vec<Message>> {
    let items = value.as_array().ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidMessages,
            format!("messages must be an array of Responses input items, got {} (a string input: pass [{{ role: 'user', content: input }}])", kind(value)),
        )
    })?;
    let mut out = Vec::with_capacity(items.len());
    let mut sides = Vec::with_capacity(items.len());
    let mut calls: FxHashSet<String> = FxHashSet::default();
    for (i, item) in items.iter().enumerate() {
        let (mut m, side) = parse_item(item, i, &calls)?;
        calls.extend(m.tool_calls.iter().map(|c| c.id.to_string()));
        if let [produced] = message_to_items(&m).as_slice() {
            wire::remember_order(&mut m.extra, ORDER, produced, item);
        }
        out.push(m);
        sides.push(side);
    }
    tie(&mut out, &sides);
    Ok(out)
}

/// The `system` option: the request's `instructions` (a string).
pub fn parse_instructions(value: &Value) -> Result<Message> {
    match value {
        Value::String(s) => {
            let mut m = Message::text(Role::System, s.as_str());
            m.wire.content_was_string = true;
            wire::set_info(&mut m.extra, "instructions", Value::Bool(true));
            Ok(m)
        }
        other => {
            Err(Error::options(format!("system (the request's instructions) must be a string, got {}", kind(other))))
        }
    }
}

/// Write internal messages back as `(instructions, input items)`.
pub fn to_wire(messages: &[Message]) -> (Option<Value>, Vec<Value>) {
    let mut instructions: Vec<String> = Vec::new();
    let mut items = Vec::with_capacity(messages.len());
    for m in messages {
        if is_instructions(m) {
            let text = m.content.text();
            if !instructions.contains(&text) {
                instructions.push(text);
            }
        } else {
            items.extend(message_to_items(m));
        }
    }
    ((!instructions.is_empty()).then(|| Value::String(instructions.join("\n\n"))), items)
}

/// Parse Responses `tools`: function tools are flat (`{ type: "function", name, description,
/// parameters, strict }`); built-in tools (`web_search`, `file_search`, `mcp`, `custom`...) are
/// kept with `parameters: null`, named by their `name` or else their `type`. `null` means none.
pub fn parse_tools(value: &Value) -> Result<Vec<ToolDef>> {
    wire::tool_list(value, |t, k| parse_tool(t, k).map(Some))
}

// ---------------------------------------------------------------------------------------------
// Parsing

fn parse_tool(t: &Value, k: usize) -> Result<ToolDef> {
    let err = |text: String| wire::tool_error(k, text);
    let o = t.as_object().ok_or_else(|| err(format!("tool must be an object, got {}", kind(t))))?;
    let ty = match o.get("type") {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(err(format!("type must be a string, got {}", kind(other)))),
        None => return Err(err("tool without type".into())),
    };
    let name = match o.get("name") {
        Some(Value::String(s)) => Some(s.clone()),
        None | Some(Value::Null) => None,
        Some(other) => return Err(err(format!("name must be a string, got {}", kind(other)))),
    };
    if ty != "function" {
        return Ok(ToolDef {
            name: name.unwrap_or_else(|| ty.to_string()),
            description: None,
            parameters: Value::Null,
            extra: rest(o, &["name"]),
        });
    }
    let name = name.ok_or_else(|| err("function tool without name".into()))?;
    let description = match o.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => return Err(err(format!("description must be a string, got {}", kind(other)))),
    };
    let parameters = o.get("parameters").cloned().unwrap_or(Value::Null);
    Ok(ToolDef { name, description, parameters, extra: rest(o, &["name", "description", "parameters"]) })
}

/// Parse item `i`; `calls`: the call ids issued before it.
fn parse_item(item: &Value, i: usize, calls: &FxHashSet<String>) -> Result<(Message, Side)> {
    let o = item.as_object().ok_or_else(|| {
        Error::at(ErrorCode::InvalidMessage, i, format!("item must be an object, got {}", kind(item)))
    })?;
    if o.contains_key(WIRE_INFO_KEY) {
        return Err(Error::at(ErrorCode::InvalidMessage, i, format!("{WIRE_INFO_KEY:?} is a reserved key")));
    }
    let ty = match o.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(other) => {
            return Err(Error::at(ErrorCode::InvalidMessage, i, format!("type must be a string, got {}", kind(other))))
        }
    };
    let tool_err = |text: String| Error::at(ErrorCode::InvalidTool, i, text);
    let parsed = match ty {
        // An item reference may omit its type: `{ id }`.
        None if !o.contains_key("role") && o.get("id").is_some_and(Value::is_string) => {
            (opaque(item, Role::Assistant), Side::Other)
        }
        None | Some("message") => {
            let m = parse_message_item(o, i)?;
            let side = if m.role == Role::Assistant { Side::Model } else { Side::Other };
            (m, side)
        }
        Some(t @ ("function_call" | "custom_tool_call")) => {
            let args = if t == "custom_tool_call" { "input" } else { "arguments" };
            let s = |k: &str| match o.get(k) {
                Some(Value::String(s)) => Ok(s.as_str()),
                Some(other) => Err(tool_err(format!("{t} {k} must be a string, got {}", kind(other)))),
                None => Err(tool_err(format!("{t} without {k}"))),
            };
            let call = ToolCall {
                id: s("call_id")?.into(),
                name: s("name")?.into(),
                arguments: s(args)?.into(),
                extra: rest(o, &["call_id", "name", args]),
            };
            (call_message(call), Side::Model)
        }
        Some(t @ ("function_call_output" | "custom_tool_call_output")) => (parse_output(o, i, t, calls)?, Side::Other),
        Some(t) if OPAQUE_CALLS.contains(&t) => {
            let id = string_field(o, "call_id").ok_or_else(|| tool_err(format!("{t} without string call_id")))?;
            let mut extra = Map::new();
            wire::set_info(&mut extra, "item", item.clone());
            let call =
                ToolCall { id: id.into(), name: t.into(), arguments: crate::base::json_text::text(item).into(), extra };
            (call_message(call), Side::Model)
        }
        Some(t) if t.strip_suffix("_output").is_some_and(|c| OPAQUE_CALLS.contains(&c)) => {
            let key = if t == "local_shell_call_output" { "id" } else { "call_id" };
            let id = string_field(o, key).ok_or_else(|| tool_err(format!("{t} without string {key}")))?;
            let mut m = opaque(item, Role::Tool);
            m.tool_call_id = calls.contains(id).then(|| id.into());
            (m, Side::Other)
        }
        Some("reasoning") => (opaque(item, Role::Assistant), Side::Reasoning),
        Some("additional_tools") => (opaque(item, Role::System), Side::Other),
        Some(t) if MODEL_ITEMS.contains(&t) => (opaque(item, Role::Assistant), Side::Model),
        Some(_) => (opaque(item, Role::Assistant), Side::Other),
    };
    Ok(parsed)
}

fn string_field<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    o.get(key).and_then(Value::as_str)
}

/// An assistant message holding one call item.
fn call_message(call: ToolCall) -> Message {
    let mut m = Message { role: Role::Assistant, tool_calls: vec![call], ..Default::default() };
    m.wire.content_was_null = true;
    m
}

/// An item kept whole: its content is the item itself.
fn opaque(item: &Value, role: Role) -> Message {
    let mut m =
        Message { role, content: Content::Parts(vec![Part::Unknown { value: item.clone() }]), ..Default::default() };
    wire::set_info(&mut m.extra, "opaque", Value::Bool(true));
    m
}

fn parse_message_item(o: &Map<String, Value>, i: usize) -> Result<Message> {
    let (role, wire_role) = match o.get("role") {
        Some(Value::String(s)) => match s.as_str() {
            "user" => (Role::User, None),
            "assistant" => (Role::Assistant, None),
            "system" => (Role::System, None),
            "developer" => (Role::System, Some("developer")),
            other => {
                return Err(Error::at(
                    ErrorCode::InvalidRole,
                    i,
                    format!("unknown role {other:?}; expected user, assistant, system or developer"),
                ))
            }
        },
        Some(other) => {
            return Err(Error::at(ErrorCode::InvalidRole, i, format!("role must be a string, got {}", kind(other))))
        }
        None => return Err(Error::at(ErrorCode::InvalidMessage, i, "message item without role")),
    };
    let mut m = Message { role, ..Default::default() };
    m.wire.role = wire_role.map(str::to_string);
    read_fields(&mut m, o, i, &["role", "content"])?;
    read_body(&mut m, o, i, "content", "message item")?;
    Ok(m)
}

/// The item's `field` (`content` or `output`): a string, or an array of content parts.
fn read_body(m: &mut Message, o: &Map<String, Value>, i: usize, field: &str, what: &str) -> Result<()> {
    match o.get(field) {
        Some(Value::String(s)) => {
            m.content = Content::Text(s.as_str().into());
            m.wire.content_was_string = true;
        }
        Some(Value::Array(parts)) => {
            let parsed = parts
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    parse_part(p).map_err(|e| Error::at(ErrorCode::InvalidContentPart, i, format!("{field}[{j}]: {e}")))
                })
                .collect::<Result<Vec<Part>>>()?;
            m.content = Content::Parts(parsed);
        }
        Some(other) => {
            let prefix = if field == "content" { String::new() } else { format!("{what} ") };
            return Err(Error::at(
                ErrorCode::InvalidMessage,
                i,
                format!("{prefix}{field} must be a string or an array of content parts, got {}", kind(other)),
            ));
        }
        None => return Err(Error::at(ErrorCode::InvalidMessage, i, format!("{what} without {field}"))),
    }
    Ok(())
}

/// The item's fields other than `skip`: a string `id` (message items), `ctxguard` markers, the
/// rest into `extra`.
fn read_fields(m: &mut Message, o: &Map<String, Value>, i: usize, skip: &[&str]) -> Result<()> {
    for (key, val) in o {
        match key.as_str() {
            k if skip.contains(&k) => {}
            "id" if val.is_string() && m.role != Role::Tool => m.id = val.as_str().map(str::to_string),
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
    Ok(())
}

fn parse_output(o: &Map<String, Value>, i: usize, ty: &str, calls: &FxHashSet<String>) -> Result<Message> {
    let id = match o.get("call_id") {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            return Err(Error::at(
                ErrorCode::InvalidTool,
                i,
                format!("{ty} call_id must be a string, got {}", kind(other)),
            ))
        }
        None => return Err(Error::at(ErrorCode::InvalidTool, i, format!("{ty} without call_id"))),
    };
    let mut m = Message { role: Role::Tool, ..Default::default() };
    // An output whose call is not in the input keeps its `call_id` as a plain field.
    let paired = calls.contains(id);
    if paired {
        m.tool_call_id = Some(id.into());
    }
    read_fields(&mut m, o, i, if paired { &["call_id", "output"] } else { &["output"] })?;
    read_body(&mut m, o, i, "output", ty)?;
    Ok(m)
}

/// Record the reasoning bundles (see the module doc) as ties.
fn tie(out: &mut [Message], sides: &[Side]) {
    let mut k = 0;
    while k < sides.len() {
        if sides.get(k) != Some(&Side::Reasoning) {
            k += 1;
            continue;
        }
        let start = k;
        k += 1;
        while sides.get(k) == Some(&Side::Reasoning) {
            k += 1;
        }
        while sides.get(k) == Some(&Side::Model) {
            k += 1;
        }
        let followers = k - start - 1;
        if followers == 0 {
            continue;
        }
        if let Some(lead) = out.get_mut(start) {
            wire::set_info(&mut lead.extra, "leads", Value::from(followers));
        }
        for m in out.get_mut(start + 1..k).into_iter().flatten() {
            wire::set_info(&mut m.extra, "follows", Value::Bool(true));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Writing

fn is_instructions(m: &Message) -> bool {
    m.role == Role::System && wire::info(&m.extra, "instructions").and_then(Value::as_bool) == Some(true)
}

/// The items of one internal message: one for everything ctxguard read; an assistant message
/// with text and calls (none is read that way) gives its message item, then one item per call.
fn message_to_items(m: &Message) -> Vec<Value> {
    if wire::info(&m.extra, "opaque").is_some() {
        if let Content::Parts(parts) = &m.content {
            return parts
                .iter()
                .filter_map(|p| if let Part::Unknown { value } = p { Some(value.clone()) } else { None })
                .collect();
        }
    }
    let mut out = Vec::with_capacity(1 + m.tool_calls.len());
    match m.role {
        Role::Tool => out.push(output_to_wire(m)),
        Role::Assistant if !m.tool_calls.is_empty() => {
            let empty = match &m.content {
                Content::Text(t) => t.is_empty(),
                Content::Parts(p) => p.iter().all(|p| matches!(p, Part::ToolCallRef { .. })),
            };
            if !empty {
                out.push(message_item(m));
            }
            out.extend(m.tool_calls.iter().map(call_to_wire));
        }
        _ => out.push(message_item(m)),
    }
    if let [one] = out.as_mut_slice() {
        wire::restore_order(&m.extra, ORDER, one);
    }
    out
}

fn message_item(m: &Message) -> Value {
    let mut o = Map::new();
    if let Some(id) = &m.id {
        o.insert("id".into(), Value::String(id.clone()));
    }
    o.insert("role".into(), Value::String(m.wire.role.clone().unwrap_or_else(|| m.role.as_str().to_string())));
    let assistant = m.role == Role::Assistant;
    let content = match &m.content {
        Content::Text(s) => Value::String(s.to_string()),
        Content::Parts(parts) => Value::Array(parts.iter().filter_map(|p| part_to_wire(p, assistant)).collect()),
    };
    o.insert("content".into(), content);
    wire::append_extra(&mut o, &m.extra);
    if let Some(markers) = wire::markers_out(&m.markers, &m.extra) {
        o.insert(MARKERS_KEY.into(), markers);
    }
    Value::Object(o)
}

fn output_to_wire(m: &Message) -> Value {
    let ty = m.extra.get("type").and_then(Value::as_str).unwrap_or("function_call_output");
    let mut o = wire::typed("type", ty);
    if let Some(id) = &m.tool_call_id {
        o.insert("call_id".into(), Value::String(id.to_string()));
    }
    let output = match &m.content {
        Content::Text(s) => Value::String(s.to_string()),
        Content::Parts(parts) => Value::Array(parts.iter().filter_map(|p| part_to_wire(p, false)).collect()),
    };
    o.insert("output".into(), output);
    wire::append_extra(&mut o, &m.extra);
    if let Some(markers) = wire::markers_out(&m.markers, &m.extra) {
        o.insert(MARKERS_KEY.into(), markers);
    }
    Value::Object(o)
}

fn call_to_wire(c: &ToolCall) -> Value {
    if let Some(item) = wire::info(&c.extra, "item") {
        return item.clone();
    }
    let ty = c.extra.get("type").and_then(Value::as_str).unwrap_or("function_call");
    let args = if ty == "custom_tool_call" { "input" } else { "arguments" };
    let mut o = wire::typed("type", ty);
    o.insert("call_id".into(), Value::String(c.id.to_string()));
    o.insert("name".into(), Value::String(c.name.to_string()));
    o.insert(args.into(), Value::String(c.arguments.to_string()));
    wire::append_extra(&mut o, &c.extra);
    Value::Object(o)
}
