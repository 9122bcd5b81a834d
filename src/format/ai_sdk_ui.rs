//! Vercel AI SDK UI messages (`UIMessage[]`: what `useChat` holds and sends, AI SDK 5 and later)
//! <-> internal model. Format name: `"ai-sdk-ui"`. docs/formats.md ("AI SDK UI messages").
//!
//! # Reading
//!
//! A UI message is read as what the AI SDK's own `convertToModelMessages` makes of it (AI SDK 7,
//! without `tools`, `convertDataPart` or `ignoreIncompleteToolCalls`): the model messages are
//! built here, part for part and key for key as that function builds them, and read by the
//! `ai-sdk` adapter. So a `UIMessage[]` counts exactly like `convertToModelMessages` of it in the
//! `ai-sdk` format, and every rule of that format (reasoning of earlier turns not counted,
//! approvals kept with their call, text files read as text...) applies unchanged.
//!
//! | UI message | model messages |
//! |---|---|
//! | `system`: `text` parts | one system message, the texts joined |
//! | `user`: `text` and `file` parts (`url` → `{ type: "url", url }`, `providerReference` → `{ type: "reference" }`) | one user message; other parts (`data-*`...) are not sent |
//! | `assistant`, per step (`step-start` parts divide the steps) | an assistant message (text, reasoning, file, custom parts and a `tool-call` per tool part past `input-streaming`), then a tool message (a `tool-result` per tool part with an output, an error or a denial; approval responses) |
//! | `steering-message` part | a user message between the steps |
//! | `source-url`, `source-document`, `data-*`, `step-start`, unknown part types, `approval-requested` tool parts before the latest user message | not sent: kept in the UI message, not counted |
//!
//! The internal messages of UI message `i` all have `wire.group = i`; the parts of a user or
//! assistant piece name their UI part in `partBlocks` (see `place.rs`), a tool result its UI
//! tool part in `wire.block`. An assistant message with nothing the model sees (only data parts,
//! a step cut off before any text) gives no internal message, and is not written back.
//!
//! # Writing
//!
//! The internal messages of one UI message are written back into that UI message: its own fields
//! as they were (`id`, `metadata`, unknown fields, key order), its parts in their order, each
//! part as it was but for what ctxguard changed in it — a text part's `text`, a file part's `url`
//! (an attachment preview becomes a `data:` URL of the preview text), a tool part's `input`
//! (cleared arguments) and `output` / `errorText` (a compacted or cleared output: a JSON output
//! stays JSON while the compacted text is JSON, else it becomes the text). A tool part whose call
//! was dropped (a call without a result, say) is left out; the parts that are not sent stay with
//! the step they were in. An unchanged conversation is written back byte for byte.
//!
//! System messages that do not come from a UI message (the `system` option, ctxguard's summary,
//! evidence note and guidance) are written into `system` as AI SDK system model messages
//! (`{ role: "system", content }`), for `streamText`'s `instructions` (AI SDK 7) or `system`
//! (AI SDK 6): a UI message list has no place the server takes them from. The app's own UI system
//! messages stay in `messages` where they were.
//!
//! # Bookkeeping (under `format::WIRE_INFO_KEY`)
//!
//! - `ui`: the UI message's fields, its `parts` replaced by `null` (on every piece);
//! - `uiParts`: `[[j, part, how, field?], ...]`, the UI parts a piece writes: `how` is `keep`
//!   (written as stored), `text` / `file` (the stored part's `text` / `url` is `null` and comes
//!   from the internal part), `tool` (`input` from the call; `field`, `output` or `errorText`,
//!   from the tool result), `system` (the parts of a UI system message);
//! - `partBlocks`: the UI part of each internal part.

use serde_json::{Map, Value};

use super::ai_sdk;
use super::wire::{self, kind, MARKERS_KEY, WIRE_INFO_KEY};
use crate::base::error::{Error, ErrorCode, Result};
use crate::message::{Content, Message, Part, Role, ToolCall, ToolDef};

const UI: &str = "ui";
const UI_PARTS: &str = "uiParts";
const PART_BLOCKS: &str = wire::PART_BLOCKS_KEY;

/// What `convertToModelMessages` sends for a dynamic tool part marked unavailable (`dynamic:
/// false`), when it is given no `tools`.
const OMITTED: &str = "Tool output omitted because the tool is no longer available.";
/// What it sends for an `output-denied` tool part without a reason.
const DENIED: &str = "Tool call execution denied.";

/// Where a model message came from: its UI message and, per content part, the UI part.
struct Origin {
    ui: usize,
    parts: Vec<usize>,
}

/// The model messages of a conversation, with their origins and the UI parts that are not sent
/// (`[model message that carries them, UI part]`).
#[derive(Default)]
struct Converted {
    model: Vec<Value>,
    origin: Vec<Origin>,
    carried: Vec<(usize, usize)>,
}

impl Converted {
    fn push(&mut self, message: Value, ui: usize, parts: Vec<usize>) -> usize {
        self.model.push(message);
        self.origin.push(Origin { ui, parts });
        self.model.len() - 1
    }
}

/// Parse a `UIMessage[]`. Errors name the UI message's index.
pub fn parse_messages(value: &Value) -> Result<Vec<Message>> {
    let items = value.as_array().ok_or_else(|| {
        Error::new(ErrorCode::InvalidMessages, format!("messages must be an array, got {}", kind(value)))
    })?;
    let checked = items.iter().enumerate().map(|(i, v)| check_message(v, i)).collect::<Result<Vec<_>>>()?;
    let last_user = checked.iter().rposition(|(_, role, _)| *role == Role::User);
    let mut conv = Converted::default();
    for (i, (_, role, parts)) in checked.iter().enumerate() {
        // `convertToModelMessages` drops tool parts still waiting for an approval in messages
        // before the latest user message (they can never be answered).
        let stale =
            |p: &Value| last_user.is_some_and(|u| u > 0 && i < u) && is_tool(p) && state(p) == "approval-requested";
        match role {
            Role::System => {
                let text: String =
                    parts.iter().filter(|p| ptype(p) == "text").filter_map(|p| str_of(p, "text")).collect();
                let mut o = Map::new();
                o.insert("role".into(), "system".into());
                o.insert("content".into(), Value::String(text));
                let merged: Map<String, Value> = parts
                    .iter()
                    .filter(|p| ptype(p) == "text")
                    .filter_map(|p| p.get("providerMetadata").and_then(Value::as_object))
                    .flat_map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())))
                    .collect();
                if !merged.is_empty() {
                    o.insert("providerOptions".into(), Value::Object(merged));
                }
                conv.push(Value::Object(o), i, Vec::new());
            }
            Role::User => {
                let mut content = Vec::new();
                let mut map = Vec::new();
                let mut not_sent = Vec::new();
                for (j, p) in parts.iter().enumerate() {
                    match ptype(p) {
                        "text" | "file" => {
                            content.push(user_content_part(p));
                            map.push(j);
                        }
                        _ => not_sent.push(j),
                    }
                }
                let at = conv.push(model_message("user", content), i, map);
                conv.carried.extend(not_sent.into_iter().map(|j| (at, j)));
            }
            Role::Assistant => convert_assistant(&mut conv, i, parts, &stale),
            Role::Tool => {}
        }
    }
    let parsed = ai_sdk::parse_messages(&Value::Array(conv.model)).map_err(|e| in_ui_terms(e, &conv.origin))?;
    let model_index = super::place::wire_indices(&parsed);
    let mut out = Vec::with_capacity(parsed.len());
    let mut seen_group = None;
    for (mut m, mi) in parsed.into_iter().zip(model_index) {
        let Some(origin) = conv.origin.get(mi) else { continue };
        let Some((obj, _, parts)) = checked.get(origin.ui) else { continue };
        let first = seen_group != Some(origin.ui);
        seen_group = Some(origin.ui);
        annotate(&mut m, mi, origin, obj, parts, &conv.carried, first)?;
        out.push(m);
    }
    Ok(out)
}

/// The `system` option: a string, an AI SDK system model message, a UI system message, or an
/// array of them. UI system messages are read as `convertToModelMessages` converts them (their
/// text parts joined) and come back as system model messages.
pub fn parse_system(value: &Value) -> Result<Vec<Message>> {
    let model = |v: &Value| -> Value {
        match v.get("parts").and_then(Value::as_array) {
            Some(parts) if v.get("content").is_none() => {
                let text: String =
                    parts.iter().filter(|p| ptype(p) == "text").filter_map(|p| str_of(p, "text")).collect();
                let mut o = Map::new();
                o.insert("role".into(), v.get("role").cloned().unwrap_or(Value::Null));
                o.insert("content".into(), Value::String(text));
                Value::Object(o)
            }
            _ => v.clone(),
        }
    };
    match value {
        Value::Array(items) => ai_sdk::parse_system(&Value::Array(items.iter().map(model).collect())),
        Value::Object(_) => ai_sdk::parse_system(&model(value)),
        other => ai_sdk::parse_system(other),
    }
}

/// Tools: an AI SDK `ToolSet`, as for the `ai-sdk` format.
pub fn parse_tools(value: &Value) -> Result<Vec<ToolDef>> {
    ai_sdk::parse_tools(value)
}

/// Write internal messages back as `(system, messages)`: UI messages, and the system messages
/// that are not the app's UI messages as AI SDK system model messages (`None` when there is none).
pub fn to_wire(messages: &[Message]) -> (Option<Value>, Vec<Value>) {
    let is_note = |m: &Message| m.role == Role::System && wire::info(&m.extra, UI).is_none();
    let notes: Vec<Message> = messages.iter().filter(|m| is_note(m)).cloned().collect();
    let (system, _) = ai_sdk::to_wire(&notes);
    let rest: Vec<&Message> = messages.iter().filter(|m| !is_note(m)).collect();
    (system, wire::write_runs(&rest, same_run, run_to_wire))
}

// ---------------------------------------------------------------------------------------------
// Reading

fn ptype(p: &Value) -> &str {
    p.get("type").and_then(Value::as_str).unwrap_or("")
}

fn state(p: &Value) -> &str {
    p.get("state").and_then(Value::as_str).unwrap_or("")
}

fn str_of<'a>(p: &'a Value, key: &str) -> Option<&'a str> {
    p.get(key).and_then(Value::as_str)
}

fn is_tool(p: &Value) -> bool {
    let t = ptype(p);
    t.starts_with("tool-") || t == "dynamic-tool"
}

fn tool_name(p: &Value) -> String {
    match ptype(p) {
        "dynamic-tool" => str_of(p, "toolName").unwrap_or_default().to_string(),
        t => t.get(5..).unwrap_or_default().to_string(),
    }
}

/// `value != null` in JS terms: present and not `null`.
fn present<'a>(p: &'a Value, key: &str) -> Option<&'a Value> {
    p.get(key).filter(|v| !v.is_null())
}

fn model_message(role: &str, content: Vec<Value>) -> Value {
    let mut o = Map::new();
    o.insert("role".into(), Value::String(role.into()));
    o.insert("content".into(), Value::Array(content));
    Value::Object(o)
}

/// A UI message checked for the shape every UI message has: `(object, role, parts)`.
fn check_message(v: &Value, i: usize) -> Result<(&Map<String, Value>, Role, &Vec<Value>)> {
    let obj = v.as_object().ok_or_else(|| {
        Error::at(ErrorCode::InvalidMessage, i, format!("message must be an object, got {}", kind(v)))
    })?;
    if obj.contains_key(WIRE_INFO_KEY) {
        return Err(Error::at(ErrorCode::InvalidMessage, i, format!("{WIRE_INFO_KEY:?} is a reserved key")));
    }
    let role = match obj.get("role") {
        None => return Err(Error::at(ErrorCode::InvalidMessage, i, "message without role")),
        Some(Value::String(s)) => match s.as_str() {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            other => {
                return Err(Error::at(
                    ErrorCode::InvalidRole,
                    i,
                    format!(
                        "unknown role {other:?}; UIMessages have the roles system, user and assistant (tool calls \
                         and results are tool-<name> parts of assistant messages); for AI SDK ModelMessages use \
                         format: 'ai-sdk'"
                    ),
                ))
            }
        },
        Some(other) => {
            return Err(Error::at(ErrorCode::InvalidRole, i, format!("role must be a string, got {}", kind(other))))
        }
    };
    let parts = match obj.get("parts") {
        Some(Value::Array(parts)) => parts,
        Some(other) => {
            return Err(Error::at(ErrorCode::InvalidMessage, i, format!("parts must be an array, got {}", kind(other))))
        }
        None if obj.contains_key("content") => {
            return Err(Error::at(
                ErrorCode::InvalidMessage,
                i,
                "message without parts; it has content, so it looks like an AI SDK ModelMessage: use format: \
                 'ai-sdk' for those (what convertToModelMessages returns), or pass useChat's UIMessages as they are",
            ))
        }
        None => return Err(Error::at(ErrorCode::InvalidMessage, i, "message without parts")),
    };
    for (j, p) in parts.iter().enumerate() {
        check_part(p, role).map_err(|e| Error::at(ErrorCode::InvalidContentPart, i, format!("parts[{j}]: {e}")))?;
    }
    Ok((obj, role, parts))
}

fn check_part(p: &Value, role: Role) -> std::result::Result<(), String> {
    let o = p.as_object().ok_or_else(|| format!("part must be an object, got {}", kind(p)))?;
    let ty = match o.get("type") {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(format!("part type must be a string, got {}", kind(other))),
        None => return Err("part without type".into()),
    };
    if o.contains_key(WIRE_INFO_KEY) {
        return Err(format!("{WIRE_INFO_KEY:?} is a reserved key"));
    }
    let string = |key: &str| match o.get(key) {
        Some(Value::String(_)) => Ok(()),
        Some(other) => Err(format!("{ty} part: {key} must be a string, got {}", kind(other))),
        None => Err(format!("{ty} part without {key}")),
    };
    match ty {
        "text" | "reasoning" => string("text"),
        "file" => {
            string("mediaType")?;
            if present(p, "providerReference").is_some() {
                Ok(())
            } else {
                string("url")
            }
        }
        "reasoning-file" if role == Role::Assistant => {
            string("mediaType")?;
            string("url")
        }
        "steering-message" if role == Role::Assistant => match o.get("parts") {
            Some(Value::Array(inner)) => inner.iter().enumerate().try_for_each(|(k, q)| {
                check_part(q, Role::User).map_err(|e| format!("steering-message part parts[{k}]: {e}"))
            }),
            _ => Err("steering-message part without parts".into()),
        },
        _ if role == Role::Assistant && (ty.starts_with("tool-") || ty == "dynamic-tool") => {
            string("toolCallId")?;
            string("state")?;
            if ty == "dynamic-tool" {
                string("toolName")?;
            }
            if o.contains_key(MARKERS_KEY) && !o.get(MARKERS_KEY).is_some_and(|v| v.is_object() || v.is_null()) {
                return Err(format!("{ty} part: ctxguard must be an object"));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `convertUserContentUIPart`: a text part, or a file part (anything else is read as a file).
fn user_content_part(p: &Value) -> Value {
    if ptype(p) == "text" {
        let mut o = wire::typed("type", "text");
        o.insert("text".into(), p.get("text").cloned().unwrap_or(Value::Null));
        if let Some(meta) = present(p, "providerMetadata") {
            o.insert("providerOptions".into(), meta.clone());
        }
        return Value::Object(o);
    }
    file_part(p, "file")
}

/// A model `file` (or `reasoning-file`) part of a UI file part.
fn file_part(p: &Value, ty: &str) -> Value {
    let mut o = wire::typed("type", ty);
    let data = |o: &mut Map<String, Value>| {
        let data = match present(p, "providerReference").filter(|_| ty == "file") {
            Some(reference) => {
                let mut d = wire::typed("type", "reference");
                d.insert("reference".into(), reference.clone());
                d
            }
            None => {
                let mut d = wire::typed("type", "url");
                d.insert("url".into(), p.get("url").cloned().unwrap_or(Value::Null));
                d
            }
        };
        o.insert("data".into(), Value::Object(data));
    };
    if ty == "reasoning-file" {
        data(&mut o);
        o.insert("mediaType".into(), p.get("mediaType").cloned().unwrap_or(Value::Null));
        if let Some(meta) = p.get("providerMetadata") {
            o.insert("providerOptions".into(), meta.clone());
        }
        return Value::Object(o);
    }
    o.insert("mediaType".into(), p.get("mediaType").cloned().unwrap_or(Value::Null));
    if let Some(name) = p.get("filename") {
        o.insert("filename".into(), name.clone());
    }
    data(&mut o);
    if let Some(meta) = present(p, "providerMetadata") {
        o.insert("providerOptions".into(), meta.clone());
    }
    Value::Object(o)
}

/// The model output of a tool part (`createToolModelOutput` without tools).
fn model_output(p: &Value, error: Option<&str>) -> Value {
    let mut o = Map::new();
    if let Some(mode) = error {
        let value = p.get("errorText").cloned().unwrap_or(Value::Null);
        let value = match (mode, value) {
            ("error-text", Value::String(s)) => Value::String(s),
            ("error-text", Value::Null) => Value::String("unknown error".into()),
            ("error-text", other) => Value::String(crate::base::json_text::text(&other)),
            (_, v) => v,
        };
        o.insert("type".into(), Value::String(mode.into()));
        o.insert("value".into(), value);
        return Value::Object(o);
    }
    if ptype(p) == "dynamic-tool" && p.get("dynamic") == Some(&Value::Bool(false)) {
        o.insert("type".into(), "text".into());
        o.insert("value".into(), OMITTED.into());
        return Value::Object(o);
    }
    match p.get("output") {
        Some(Value::String(s)) => {
            o.insert("type".into(), "text".into());
            o.insert("value".into(), Value::String(s.clone()));
        }
        other => {
            o.insert("type".into(), "json".into());
            o.insert("value".into(), other.cloned().unwrap_or(Value::Null));
        }
    }
    Value::Object(o)
}

/// A model `tool-result` part; `markers`: with the tool part's `ctxguard` markers (a result in a
/// tool message; a provider-executed result in the assistant message is carried whole).
fn tool_result(p: &Value, output: Value, meta: Option<&Value>, markers: bool) -> Value {
    let mut o = wire::typed("type", "tool-result");
    o.insert("toolCallId".into(), p.get("toolCallId").cloned().unwrap_or(Value::Null));
    o.insert("toolName".into(), Value::String(tool_name(p)));
    o.insert("output".into(), output);
    if let Some(meta) = meta {
        o.insert("providerOptions".into(), meta.clone());
    }
    if let Some(m) = present(p, MARKERS_KEY).filter(|_| markers) {
        o.insert(MARKERS_KEY.into(), m.clone());
    }
    Value::Object(o)
}

/// The steps of an assistant UI message, as `convertToModelMessages` sends them.
fn convert_assistant(conv: &mut Converted, i: usize, parts: &[Value], stale: &dyn Fn(&Value) -> bool) {
    let first_model = conv.model.len();
    let mut block: Vec<usize> = Vec::new();
    let mut waiting: Vec<usize> = Vec::new();
    for (j, p) in parts.iter().enumerate() {
        if stale(p) {
            waiting.push(j);
            continue;
        }
        match ptype(p) {
            "text" | "custom" | "reasoning" | "reasoning-file" | "file" => block.push(j),
            t if t.starts_with("data-") || is_tool(p) => block.push(j),
            "step-start" => {
                let made = process_block(conv, i, parts, &block);
                block.clear();
                carry(conv, &mut waiting, made);
                // The step's boundary stays with the step after it (or, when none sends
                // anything, with the message's last model message): a step that is removed (its
                // only part an unanswered call) takes its own boundary, not the next one's.
                waiting.push(j);
            }
            "steering-message" => {
                let made = process_block(conv, i, parts, &block);
                block.clear();
                carry(conv, &mut waiting, made);
                let content = p
                    .get("parts")
                    .and_then(Value::as_array)
                    .map(|inner| inner.iter().map(user_content_part).collect::<Vec<_>>())
                    .unwrap_or_default();
                let n = content.len();
                conv.push(model_message("user", content), i, vec![j; n]);
            }
            _ => waiting.push(j),
        }
    }
    let made = process_block(conv, i, parts, &block);
    carry(conv, &mut waiting, made);
    // Parts of steps that sent nothing go with the message's last model message, if any.
    if conv.model.len() > first_model {
        let last = conv.model.len() - 1;
        conv.carried.extend(waiting.into_iter().map(|j| (last, j)));
    }
}

/// Give the parts waiting for a carrier to the first model message of a step, if it made one.
fn carry(conv: &mut Converted, waiting: &mut Vec<usize>, made: Option<usize>) {
    if let Some(at) = made {
        conv.carried.extend(waiting.drain(..).map(|j| (at, j)));
    }
}

/// One step (`processBlock`): an assistant message, then a tool message. The index of the first
/// model message it made, if any.
fn process_block(conv: &mut Converted, i: usize, parts: &[Value], block: &[usize]) -> Option<usize> {
    let mut content = Vec::new();
    let mut map = Vec::new();
    let mut not_sent = Vec::new();
    for &j in block {
        let Some(p) = parts.get(j) else { continue };
        let before = content.len();
        match ptype(p) {
            "text" => {
                let mut o = wire::typed("type", "text");
                o.insert("text".into(), p.get("text").cloned().unwrap_or(Value::Null));
                if let Some(meta) = present(p, "providerMetadata") {
                    o.insert("providerOptions".into(), meta.clone());
                }
                content.push(Value::Object(o));
            }
            "custom" => {
                let mut o = wire::typed("type", "custom");
                if let Some(k) = p.get("kind") {
                    o.insert("kind".into(), k.clone());
                }
                if let Some(meta) = present(p, "providerMetadata") {
                    o.insert("providerOptions".into(), meta.clone());
                }
                content.push(Value::Object(o));
            }
            "file" => content.push(file_part(p, "file")),
            "reasoning-file" => content.push(file_part(p, "reasoning-file")),
            "reasoning" => {
                let mut o = wire::typed("type", "reasoning");
                o.insert("text".into(), p.get("text").cloned().unwrap_or(Value::Null));
                if let Some(meta) = p.get("providerMetadata") {
                    o.insert("providerOptions".into(), meta.clone());
                }
                content.push(Value::Object(o));
            }
            _ if is_tool(p) && state(p) != "input-streaming" => {
                let st = state(p);
                let call_meta = present(p, "callProviderMetadata").or_else(|| {
                    if st == "output-error" {
                        present(p, "resultProviderMetadata")
                    } else {
                        None
                    }
                });
                let mut o = wire::typed("type", "tool-call");
                o.insert("toolCallId".into(), p.get("toolCallId").cloned().unwrap_or(Value::Null));
                o.insert("toolName".into(), Value::String(tool_name(p)));
                let input = if st == "output-error" {
                    present(p, "input").or_else(|| p.get("rawInput"))
                } else {
                    p.get("input")
                };
                o.insert("input".into(), input.cloned().unwrap_or(Value::Null));
                if let Some(pe) = p.get("providerExecuted") {
                    o.insert("providerExecuted".into(), pe.clone());
                }
                if let Some(meta) = call_meta {
                    o.insert("providerOptions".into(), meta.clone());
                }
                content.push(Value::Object(o));
                if let Some(approval) = present(p, "approval") {
                    let mut a = wire::typed("type", "tool-approval-request");
                    a.insert("approvalId".into(), approval.get("id").cloned().unwrap_or(Value::Null));
                    a.insert("toolCallId".into(), p.get("toolCallId").cloned().unwrap_or(Value::Null));
                    content.push(Value::Object(a));
                }
                let provider = p.get("providerExecuted") == Some(&Value::Bool(true));
                if provider && st != "approval-responded" && (st == "output-available" || st == "output-error") {
                    let meta = present(p, "resultProviderMetadata").or_else(|| present(p, "callProviderMetadata"));
                    let error = (st == "output-error").then_some("error-json");
                    content.push(tool_result(p, model_output(p, error), meta, false));
                }
            }
            _ => not_sent.push(j),
        }
        map.extend(std::iter::repeat_n(j, content.len() - before));
    }
    let mut first = None;
    if !content.is_empty() {
        first = Some(conv.push(model_message("assistant", content), i, map));
    }
    let mut results = Vec::new();
    let mut rmap = Vec::new();
    for &j in block {
        let Some(p) = parts.get(j) else { continue };
        if !is_tool(p) {
            continue;
        }
        let approval = present(p, "approval");
        let approved = approval.and_then(|a| present(a, "approved"));
        let provider = p.get("providerExecuted") == Some(&Value::Bool(true));
        if provider && approved.is_none() {
            continue;
        }
        let before = results.len();
        let call_meta = present(p, "callProviderMetadata");
        if let (Some(a), Some(ok)) = (approval, approved) {
            let mut r = wire::typed("type", "tool-approval-response");
            r.insert("approvalId".into(), a.get("id").cloned().unwrap_or(Value::Null));
            r.insert("approved".into(), ok.clone());
            if let Some(reason) = a.get("reason") {
                r.insert("reason".into(), reason.clone());
            }
            if let Some(pe) = p.get("providerExecuted") {
                r.insert("providerExecuted".into(), pe.clone());
            }
            results.push(Value::Object(r));
            if state(p) == "approval-responded" && ok == &Value::Bool(false) {
                let mut out = wire::typed("type", "execution-denied");
                if let Some(reason) = a.get("reason") {
                    out.insert("reason".into(), reason.clone());
                }
                results.push(tool_result(p, Value::Object(out), call_meta, true));
            }
        }
        if !provider {
            match state(p) {
                "output-denied" => {
                    let reason = approval.and_then(|a| present(a, "reason")).cloned();
                    let mut out = wire::typed("type", "error-text");
                    out.insert("value".into(), reason.unwrap_or_else(|| DENIED.into()));
                    results.push(tool_result(p, Value::Object(out), call_meta, true));
                }
                "output-error" => results.push(tool_result(p, model_output(p, Some("error-text")), call_meta, true)),
                "output-available" => results.push(tool_result(p, model_output(p, None), call_meta, true)),
                _ => {}
            }
        }
        rmap.extend(std::iter::repeat_n(j, results.len() - before));
    }
    if !results.is_empty() {
        let at = conv.push(model_message("tool", results), i, rmap);
        first = first.or(Some(at));
    }
    if let Some(at) = first {
        conv.carried.extend(not_sent.into_iter().map(|j| (at, j)));
    }
    first
}

/// An error of the `ai-sdk` adapter about a converted message, said of its UI message.
fn in_ui_terms(e: Error, origin: &[Origin]) -> Error {
    let Some(mi) = e.index else { return e };
    let Some(o) = origin.get(mi) else { return e };
    let prefix = format!("messages[{mi}]: ");
    let rest = e.message.strip_prefix(&prefix).unwrap_or(&e.message).to_string();
    Error::at(e.code, o.ui, format!("(as a model message) {rest}"))
}

/// How a UI part is written back from an internal part.
fn skeleton(p: &Value, field: &str) -> Value {
    let mut s = p.clone();
    if let Some(v) = s.as_object_mut().and_then(|o| o.get_mut(field)) {
        *v = Value::Null;
    }
    s
}

/// The bookkeeping entry of UI part `j` for an internal part.
fn entry_for(j: usize, p: &Value, internal: &Part) -> Value {
    let entry = |part: Value, how: &str, field: Option<&str>| {
        let mut e = vec![Value::from(j), part, Value::String(how.into())];
        if let Some(f) = field {
            e.push(Value::String(f.into()));
        }
        Value::Array(e)
    };
    match (internal, ptype(p)) {
        (Part::Text { .. }, "text" | "reasoning") => entry(skeleton(p, "text"), "text", None),
        (Part::File { .. } | Part::Image { .. }, "file")
            if present(p, "providerReference").is_none() && p.get("url").is_some_and(Value::is_string) =>
        {
            entry(skeleton(p, "url"), "file", None)
        }
        (Part::ToolCallRef { .. }, _) if is_tool(p) => {
            let mut s = p.clone();
            if let Some(o) = s.as_object_mut() {
                o.remove(MARKERS_KEY);
            }
            let field = match state(p) {
                "output-available"
                    if !(ptype(p) == "dynamic-tool" && p.get("dynamic") == Some(&Value::Bool(false))) =>
                {
                    Some("output")
                }
                "output-error" => Some("errorText"),
                _ => None,
            };
            let field = field.filter(|f| p.get(*f).is_some());
            let mut s = if p.get("input").is_some() && state(p) != "output-error" { skeleton(&s, "input") } else { s };
            if let Some(f) = field {
                s = skeleton(&s, f);
            }
            entry(s, "tool", field)
        }
        _ => entry(p.clone(), "keep", None),
    }
}

/// Turn an internal message read from model message `mi` into a piece of its UI message.
fn annotate(
    m: &mut Message,
    mi: usize,
    origin: &Origin,
    obj: &Map<String, Value>,
    parts: &[Value],
    carried: &[(usize, usize)],
    first: bool,
) -> Result<()> {
    let i = origin.ui;
    // The `ai-sdk` adapter's own bookkeeping is not needed: the UI parts are written from ours.
    let hidden: Vec<usize> = wire::info(&m.extra, "hidden")
        .and_then(Value::as_array)
        .map(|h| {
            h.iter().filter_map(|e| e.get(0).and_then(Value::as_u64)).filter_map(|n| usize::try_from(n).ok()).collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(info)) = m.extra.get_mut(WIRE_INFO_KEY) {
        info.retain(|k, _| !matches!(k.as_str(), "hidden" | "message" | "order.ai-sdk"));
        if info.is_empty() {
            m.extra.remove(WIRE_INFO_KEY);
        }
    }
    let mut entries: Vec<Value> = Vec::new();
    let mut have: Vec<usize> = Vec::new();
    let mut add = |j: usize, e: Value, have: &mut Vec<usize>| {
        if !have.contains(&j) {
            have.push(j);
            entries.push(e);
        }
    };
    m.wire.group = Some(i);
    if m.role == Role::Tool {
        let j = m.wire.block.and_then(|b| origin.parts.get(b)).copied();
        m.wire.block = j;
    } else if let Content::Parts(internal) = &m.content {
        let visible: Vec<usize> = (0..origin.parts.len()).filter(|k| !hidden.contains(k)).collect();
        let mut blocks = Vec::with_capacity(internal.len());
        for (k, part) in internal.iter().enumerate() {
            let j = visible.get(k).and_then(|mk| origin.parts.get(*mk)).copied().unwrap_or(usize::MAX);
            blocks.push(Value::from(j));
            if let Some(p) = parts.get(j) {
                // A steering message's parts all stand for the one UI part.
                let e = if ptype(p) == "steering-message" { keep_entry(j, p) } else { entry_for(j, p, part) };
                add(j, e, &mut have);
            }
        }
        // Model parts the `ai-sdk` adapter kept out of the content (reasoning of earlier turns,
        // approval requests): their UI parts, unless an internal part writes them.
        for mk in hidden {
            if let Some(&j) = origin.parts.get(mk) {
                if let Some(p) = parts.get(j).filter(|p| !is_tool(p)) {
                    add(j, keep_entry(j, p), &mut have);
                }
            }
        }
        wire::set_info(&mut m.extra, PART_BLOCKS, Value::Array(blocks));
    } else if m.role == Role::System {
        for (j, p) in parts.iter().enumerate() {
            let e = Value::Array(vec![Value::from(j), p.clone(), Value::String("system".into())]);
            add(j, e, &mut have);
        }
    }
    for &(_, j) in carried.iter().filter(|(at, _)| *at == mi) {
        if let Some(p) = parts.get(j) {
            add(j, keep_entry(j, p), &mut have);
        }
    }
    if !entries.is_empty() {
        wire::set_info(&mut m.extra, UI_PARTS, Value::Array(entries));
    }
    let mut fields = Map::new();
    for (k, v) in obj {
        match k.as_str() {
            "parts" => {
                fields.insert(k.clone(), Value::Null);
            }
            MARKERS_KEY => {}
            _ => {
                fields.insert(k.clone(), v.clone());
            }
        }
    }
    if first {
        m.id = obj.get("id").and_then(Value::as_str).map(str::to_string);
        if let Some(v) = obj.get(MARKERS_KEY).filter(|v| !v.is_null()) {
            m.markers = wire::parse_markers(v, &mut m.extra)
                .map_err(|k| Error::at(ErrorCode::InvalidMessage, i, format!("ctxguard must be an object, got {k}")))?;
        }
    }
    wire::set_info(&mut m.extra, UI, Value::Object(fields));
    Ok(())
}

fn keep_entry(j: usize, p: &Value) -> Value {
    Value::Array(vec![Value::from(j), p.clone(), Value::String("keep".into())])
}

// ---------------------------------------------------------------------------------------------
// Writing

fn same_run(first: &Message, next: &Message) -> bool {
    first.wire.group.is_some()
        && first.wire.group == next.wire.group
        && wire::info(&first.extra, UI).is_some()
        && wire::info(&next.extra, UI).is_some()
}

/// The UI parts written so far, by part index.
struct Written(Vec<(usize, Value)>);

impl Written {
    fn has(&self, j: usize) -> bool {
        self.0.iter().any(|(k, _)| *k == j)
    }
    fn get_mut(&mut self, j: usize) -> Option<&mut Value> {
        self.0.iter_mut().find(|(k, _)| *k == j).map(|(_, v)| v)
    }
    fn put(&mut self, j: usize, v: Value) {
        if !self.has(j) {
            self.0.push((j, v));
        }
    }
}

fn entries(m: &Message) -> &[Value] {
    wire::info(&m.extra, UI_PARTS).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

fn entry_at(m: &Message, j: usize) -> Option<(&Value, &str, Option<&str>)> {
    entries(m).iter().find(|e| e.get(0).and_then(Value::as_u64) == Some(j as u64)).map(|e| {
        (
            e.get(1).unwrap_or(&Value::Null),
            e.get(2).and_then(Value::as_str).unwrap_or("keep"),
            e.get(3).and_then(Value::as_str),
        )
    })
}

/// Set `field` of a part object (in place, keeping its key order).
fn set(v: &mut Value, field: &str, value: Value) {
    if let Some(o) = v.as_object_mut() {
        o.insert(field.to_string(), value);
    }
}

/// One UI message from a run of its pieces.
fn run_to_wire(run: &[&Message]) -> Value {
    let Some(first) = run.first() else { return Value::Null };
    let Some(Value::Object(fields)) = wire::info(&first.extra, UI) else { return made_message(first) };
    let mut written = Written(Vec::new());
    for m in run.iter().filter(|m| m.role != Role::Tool) {
        write_piece(m, &mut written);
    }
    for m in run.iter().filter(|m| m.role == Role::Tool) {
        write_result(m, &mut written);
    }
    let placed = written.0.into_iter().map(|(j, v)| (j, 0, v)).collect();
    let parts = wire::in_place_order(placed);
    let mut o = fields.clone();
    // The app's own id, also on a copy ctxguard made of its message (a retained user message:
    // the copy's `ctxguard-` id would be a message the app never had).
    let own = fields.get("id").and_then(Value::as_str).is_some_and(|id| !id.starts_with("ctxguard-"));
    if let Some(id) = run.iter().find_map(|m| m.id.as_ref()).filter(|id| !(own && id.starts_with("ctxguard-"))) {
        o.insert("id".into(), Value::String(id.clone()));
    }
    o.insert("parts".into(), Value::Array(parts));
    let markers = run.iter().filter(|m| m.role != Role::Tool).find(|m| !m.markers.is_empty()).unwrap_or(first);
    if let Some(v) = wire::markers_out(&markers.markers, &markers.extra) {
        o.insert(MARKERS_KEY.into(), v);
    }
    Value::Object(o)
}

/// The parts a user, assistant or system piece writes.
fn write_piece(m: &Message, written: &mut Written) {
    // Parts written as they were: those not sent, and those ctxguard does not look into.
    for e in entries(m) {
        let (Some(j), Some(p), Some("keep")) = (
            e.get(0).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok()),
            e.get(1),
            e.get(2).and_then(Value::as_str),
        ) else {
            continue;
        };
        written.put(j, p.clone());
    }
    match &m.content {
        Content::Text(text) if m.role == Role::System => {
            let parts: Vec<(usize, &Value)> = entries(m)
                .iter()
                .filter_map(|e| Some((e.get(0)?.as_u64().and_then(|n| usize::try_from(n).ok())?, e.get(1)?)))
                .collect();
            let joined: String =
                parts.iter().filter(|(_, p)| ptype(p) == "text").filter_map(|(_, p)| str_of(p, "text")).collect();
            let mut first_text = true;
            for (j, p) in parts {
                if ptype(p) != "text" || joined == text.as_str() {
                    written.put(j, p.clone());
                } else if first_text {
                    first_text = false;
                    let mut q = p.clone();
                    set(&mut q, "text", Value::String(text.to_string()));
                    written.put(j, q);
                }
            }
        }
        Content::Text(_) => {}
        Content::Parts(parts) => {
            let blocks = wire::info(&m.extra, PART_BLOCKS).and_then(Value::as_array);
            for (k, part) in parts.iter().enumerate() {
                let Some(j) =
                    blocks.and_then(|b| b.get(k)).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok())
                else {
                    continue;
                };
                if written.has(j) {
                    continue;
                }
                let Some((skel, how, _)) = entry_at(m, j) else { continue };
                let mut v = skel.clone();
                match (how, part) {
                    ("text", Part::Text { text, .. }) => set(&mut v, "text", Value::String(text.to_string())),
                    ("file", Part::File { text, extra, .. }) => {
                        if let Some(url) = file_url(text.as_deref(), extra) {
                            set(&mut v, "url", Value::String(url));
                        }
                    }
                    ("file", Part::Image { extra, .. }) => {
                        if let Some(url) = extra.get("data").and_then(|d| d.get("url")) {
                            set(&mut v, "url", url.clone());
                        }
                    }
                    ("tool", Part::ToolCallRef { index }) => {
                        let Some(call) = m.tool_calls.get(*index) else { continue };
                        if v.get("input").is_some() && state(&v) != "output-error" {
                            set(&mut v, "input", call_input(call));
                        }
                    }
                    _ => {}
                }
                written.put(j, v);
            }
        }
    }
}

/// The `url` of a file part: as it was, or a `data:` URL of the attachment preview when the text
/// was changed (the original's `data:` header kept, `text/plain` for a URL that was not one).
fn file_url(text: Option<&str>, extra: &Map<String, Value>) -> Option<String> {
    let url = extra.get("data").and_then(|d| d.get("url")).and_then(Value::as_str)?;
    let Some(text) = text else { return Some(url.to_string()) };
    if wire::data_url_base64(url).and_then(wire::decode_text).as_deref() == Some(text) {
        return Some(url.to_string());
    }
    let head = match wire::data_url_base64(url) {
        Some(_) => url.find(',').and_then(|c| url.get(..=c)).unwrap_or("data:text/plain;base64,"),
        None => "data:text/plain;base64,",
    };
    Some(format!("{head}{}", wire::encode_text(text)))
}

fn call_input(call: &ToolCall) -> Value {
    serde_json::from_str::<Value>(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.to_string()))
}

/// A tool result written into its tool part (already written by its call's piece).
fn write_result(m: &Message, written: &mut Written) {
    let Some(j) = m.wire.block else { return };
    let Some(v) = written.get_mut(j) else { return };
    if let Some(markers) = wire::markers_out(&m.markers, &m.extra) {
        set(v, MARKERS_KEY, markers);
    }
    // Approval responses carry no output.
    if wire::info(&m.extra, "part").is_some() {
        return;
    }
    let field = match state(v) {
        "output-available" if v.get("output").is_some() => "output",
        "output-error" if v.get("errorText").is_some() => "errorText",
        _ => return,
    };
    if field == "output" && ptype(v) == "dynamic-tool" && v.get("dynamic") == Some(&Value::Bool(false)) {
        return;
    }
    let text = m.content.text();
    let value = match wire::info(&m.extra, "output").and_then(Value::as_str) {
        Some("json") => serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text)),
        _ => Value::String(text),
    };
    set(v, field, value);
}

/// A UI message for an internal message that did not come from one (not one of the app's).
fn made_message(m: &Message) -> Value {
    let mut o = Map::new();
    let role = match m.role {
        Role::User => "user",
        _ => "assistant",
    };
    o.insert("id".into(), Value::String(m.id.clone().unwrap_or_else(|| format!("ctxguard-{}", m.role.as_str()))));
    o.insert("role".into(), Value::String(role.into()));
    let mut parts = Vec::new();
    let text = m.content.text();
    if m.role == Role::Tool {
        let mut t = wire::typed("type", "dynamic-tool");
        t.insert("toolName".into(), Value::String(m.name.clone().unwrap_or_default()));
        t.insert("toolCallId".into(), Value::String(m.tool_call_id.as_deref().unwrap_or_default().to_string()));
        t.insert("state".into(), "output-available".into());
        t.insert("input".into(), Value::Null);
        t.insert("output".into(), Value::String(text));
        parts.push(Value::Object(t));
    } else {
        if !text.is_empty() {
            let mut t = wire::typed("type", "text");
            t.insert("text".into(), Value::String(text));
            parts.push(Value::Object(t));
        }
        for c in &m.tool_calls {
            let mut t = wire::typed("type", "dynamic-tool");
            t.insert("toolName".into(), Value::String(c.name.to_string()));
            t.insert("toolCallId".into(), Value::String(c.id.to_string()));
            t.insert("state".into(), "input-available".into());
            t.insert("input".into(), call_input(c));
            parts.push(Value::Object(t));
        }
    }
    o.insert("parts".into(), Value::Array(parts));
    if let Some(v) = wire::markers_out(&m.markers, &m.extra) {
        o.insert(MARKERS_KEY.into(), v);
    }
    Value::Object(o)
}
