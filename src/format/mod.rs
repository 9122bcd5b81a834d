//! Adapters between wire formats and the internal message model.

pub mod ai_sdk;
pub mod ai_sdk_ui;
pub mod anthropic;
pub mod detect;
pub mod gemini;
mod gemini_parts;
pub mod image_header;
pub mod openai;
mod openai_exact;
pub mod place;
pub mod responses;
mod responses_parts;
mod wire;

pub use openai_exact::parse_messages as parse_openai_messages;
pub(crate) use openai_exact::same_tree;
pub use wire::{ties, Ties, MARKERS_KEY, WIRE_INFO_KEY};

use serde::{Deserialize, Serialize};

use crate::base::error::{Error, ErrorCode, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Openai,
    Anthropic,
    /// Vercel AI SDK model messages (`ModelMessage`).
    #[serde(rename = "ai-sdk")]
    AiSdk,
    /// Vercel AI SDK UI messages (`UIMessage`, what `useChat` holds).
    #[serde(rename = "ai-sdk-ui")]
    AiSdkUi,
    /// OpenAI Responses API input items (`ResponseInputItem`; `instructions` is the system).
    #[serde(rename = "openai-responses")]
    OpenaiResponses,
    /// Gemini `contents` as `@google/genai` sends them (`systemInstruction` is the system).
    Gemini,
}

impl Format {
    /// Whether one message parses the same wherever it stands in the conversation (OpenAI,
    /// Anthropic), so that parsed messages can be kept and reused (`store.rs`). Responses items
    /// and Gemini contents are read in context (reasoning items bind the items after them, a
    /// function response pairs with a call before it by name and order).
    pub fn is_context_free(self) -> bool {
        matches!(self, Format::Openai | Format::Anthropic)
    }

    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "openai" => Ok(Format::Openai),
            "anthropic" => Ok(Format::Anthropic),
            "ai-sdk" => Ok(Format::AiSdk),
            "ai-sdk-ui" => Ok(Format::AiSdkUi),
            "openai-responses" => Ok(Format::OpenaiResponses),
            "gemini" => Ok(Format::Gemini),
            other => Err(Error::new(
                ErrorCode::UnknownFormat,
                format!("unknown format {other:?}; expected \"openai\", \"anthropic\", \"ai-sdk\", \"ai-sdk-ui\", \"openai-responses\" or \"gemini\""),
            )),
        }
    }
}

use serde_json::Value;

use crate::message::{Content, Message, Role, ToolDef};

/// A request as JS hands it over, parsed into the internal model.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDef>,
    /// `tool_choice` (or legacy `function_call`) of the request; it changes the billed count.
    pub tool_choice: crate::count::ToolChoice,
    /// OpenAI: the `system` option was prepended as the first message (and is left out again
    /// when the request is written back).
    pub prepended_system: bool,
}

/// Parse `messages` (+ `system` and `tools`) in `format`.
///
/// OpenAI: `system` (a string or text parts) is prepended as a system message.
/// Anthropic: `system` is the request's top-level `system`.
/// AI SDK: `system` (a string, a system message or an array of them, as `generateText` takes
/// it) is prepended.
/// OpenAI Responses: `system` is the request's `instructions` (a string), prepended as a system
/// message that is written back into `system` only.
/// Gemini: `system` is the request's `systemInstruction` (a string, a Content, a Part or an
/// array of parts), prepended as a system message.
pub fn parse_request(
    format: Format,
    messages: &Value,
    system: Option<&Value>,
    tools: Option<&Value>,
) -> Result<Request> {
    parse_request_in(format, messages, system, tools).map_err(|e| with_format_hint(e, format, messages))
}

impl Format {
    /// The name `format` takes (`"ai-sdk-ui"`...).
    pub fn name(self) -> &'static str {
        match self {
            Format::Openai => "openai",
            Format::Anthropic => "anthropic",
            Format::AiSdk => "ai-sdk",
            Format::AiSdkUi => "ai-sdk-ui",
            Format::OpenaiResponses => "openai-responses",
            Format::Gemini => "gemini",
        }
    }

    /// What messages of this format are, for error messages.
    fn what(self) -> &'static str {
        match self {
            Format::Openai => "OpenAI Chat Completions messages",
            Format::Anthropic => "Anthropic Messages API messages",
            Format::AiSdk => "AI SDK ModelMessages (content)",
            Format::AiSdkUi => "AI SDK UIMessages (parts)",
            Format::OpenaiResponses => "OpenAI Responses input items",
            Format::Gemini => "Gemini contents",
        }
    }
}

/// A message error of `format` whose messages carry evidence of another format
/// (`detect::evidence_format`): the error names the format that reads them.
fn with_format_hint(e: Error, format: Format, messages: &Value) -> Error {
    hinted(e, format, || detect::evidence_format(messages))
}

fn hinted(mut e: Error, format: Format, evidence: impl FnOnce() -> Option<Format>) -> Error {
    if !matches!(e.code, ErrorCode::InvalidMessage | ErrorCode::InvalidRole | ErrorCode::InvalidContentPart) {
        return e;
    }
    match evidence() {
        // (Unless the message already says so.)
        Some(found) if found != format && !e.message.contains(&format!("use format: '{}'", found.name())) => {
            e.message = format!("{}; these look like {}: use format: '{}'", e.message, found.what(), found.name());
            e
        }
        _ => e,
    }
}

fn parse_request_in(
    format: Format,
    messages: &Value,
    system: Option<&Value>,
    tools: Option<&Value>,
) -> Result<Request> {
    let system = system.filter(|v| !v.is_null());
    let tools = tools.filter(|v| !v.is_null());
    let mut prepended_system = false;
    let messages = match format {
        Format::Openai => {
            let mut parsed = openai_exact::parse_messages(messages)?;
            if let Some(sys) = system {
                let content = match sys {
                    Value::String(s) => Content::Text(s.as_str().into()),
                    other => {
                        // `[{ "role": "system", "content": other }]`, built directly: `json!` would
                        // copy `other` through serde_json's value serializer (code kept only for it).
                        let entry: serde_json::Map<String, Value> = [
                            ("role".to_string(), Value::String("system".into())),
                            ("content".to_string(), other.clone()),
                        ]
                        .into_iter()
                        .collect();
                        let wrapped = Value::Array(vec![Value::Object(entry)]);
                        let mut m = openai_exact::parse_messages(&wrapped)
                            .map_err(|e| Error::options(format!("system: {}", e.message)))?;
                        m.pop().map(|m| m.content).unwrap_or_default()
                    }
                };
                parsed.insert(0, Message { role: Role::System, content, ..Default::default() });
                prepended_system = true;
            }
            parsed
        }
        Format::Anthropic => anthropic::parse_messages(messages, system)?,
        Format::AiSdk => {
            let parsed = ai_sdk::parse_messages(messages)?;
            match system {
                Some(sys) => ai_sdk::parse_system(sys)?.into_iter().chain(parsed).collect(),
                None => parsed,
            }
        }
        Format::AiSdkUi => {
            let parsed = ai_sdk_ui::parse_messages(messages)?;
            match system {
                Some(sys) => ai_sdk_ui::parse_system(sys)?.into_iter().chain(parsed).collect(),
                None => parsed,
            }
        }
        Format::OpenaiResponses => {
            let parsed = responses::parse_messages(messages)?;
            match system {
                Some(sys) => std::iter::once(responses::parse_instructions(sys)?).chain(parsed).collect(),
                None => parsed,
            }
        }
        Format::Gemini => {
            let parsed = gemini::parse_messages(messages)?;
            match system {
                Some(sys) => std::iter::once(gemini::parse_system(sys)?).chain(parsed).collect(),
                None => parsed,
            }
        }
    };
    let tools = match tools {
        None => Vec::new(),
        Some(t) => match format {
            Format::Openai => openai::parse_tools(t)?,
            Format::Anthropic => anthropic::parse_tools(t)?,
            Format::AiSdk => ai_sdk::parse_tools(t)?,
            Format::AiSdkUi => ai_sdk_ui::parse_tools(t)?,
            Format::OpenaiResponses => responses::parse_tools(t)?,
            Format::Gemini => gemini::parse_tools(t)?,
        },
    };
    Ok(Request { messages, tools, tool_choice: crate::count::ToolChoice::Auto, prepended_system })
}

/// Parse one wire message of `format`, the `index`-th of its conversation (errors name it), into
/// its internal pieces (one for OpenAI; one or more for Anthropic, whose user messages may carry
/// several tool results). Not for the AI SDK format (see [`Format::is_context_free`]). With the
/// pieces, whether writing them back gives exactly `item` (the same tree, key order included)
/// when parsing found out (OpenAI: `Some`), `None` when it did not (Anthropic).
pub fn parse_message_at(format: Format, item: &Value, index: usize) -> Result<(Vec<Message>, Option<bool>)> {
    parse_message_at_in(format, item, index).map_err(|e| hinted(e, format, || detect::item_format(item)))
}

fn parse_message_at_in(format: Format, item: &Value, index: usize) -> Result<(Vec<Message>, Option<bool>)> {
    match format {
        Format::Openai => openai_exact::parse(item, index, true).map(|(m, exact)| (vec![m], Some(exact))),
        Format::Anthropic => anthropic::parse_item(item, index).map(|pieces| (pieces, None)),
        // AI SDK messages, Responses items and Gemini contents are read in context (see
        // `Format::is_context_free`): they are parsed as a whole only.
        Format::AiSdk | Format::AiSdkUi | Format::OpenaiResponses | Format::Gemini => {
            Err(Error::new(ErrorCode::Internal, "these messages are parsed as a whole conversation"))
        }
    }
}

/// Write a request's messages back in `format`: `(system, messages)`; `system` is `Some` only
/// for Anthropic, the AI SDK (its system messages, for `generateText`'s `system` /
/// `instructions`), Responses (`instructions`) and Gemini (`systemInstruction`). A system prompt
/// that came in through the `system` option is not repeated in the OpenAI messages.
pub fn write_request(format: Format, request: &Request) -> (Option<Value>, Vec<Value>) {
    let (mut system, mut messages) = match format {
        Format::Openai => {
            let skip = usize::from(request.prepended_system);
            (None, openai::to_wire(request.messages.get(skip..).unwrap_or(&[])))
        }
        Format::Anthropic => anthropic::to_wire(&request.messages),
        Format::AiSdk => ai_sdk::to_wire(&request.messages),
        Format::AiSdkUi => ai_sdk_ui::to_wire(&request.messages),
        Format::OpenaiResponses => responses::to_wire(&request.messages),
        Format::Gemini => gemini::to_wire(&request.messages),
    };
    system.iter_mut().chain(messages.iter_mut()).for_each(crate::base::json_text::doubles_for_unsafe_integers);
    (system, messages)
}

/// One wire message of [`write_request_with`]: the caller's own `messages[k]`, a value the
/// caller kept from an earlier result under a name, or a value (with the name to keep it under).
#[derive(Debug, Clone, PartialEq)]
pub enum Written {
    Same(usize),
    Kept(String),
    Value(Value),
    Keep(Value, String),
}

/// What `write_request_with`'s `same` says of a run of internal messages: the caller's
/// `messages[k]` unchanged, a value the caller kept under this name, or one to write and keep
/// under this name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    Same(usize),
    Kept(String),
    Keep(String),
}

/// The wire message of a run `same` said `named` of (`write` makes its value).
pub(crate) fn written(named: Option<Named>, write: impl FnOnce() -> Value) -> Written {
    match named {
        Some(Named::Same(k)) => Written::Same(k),
        Some(Named::Kept(key)) => Written::Kept(key),
        Some(Named::Keep(key)) => Written::Keep(write(), key),
        None => Written::Value(write()),
    }
}

/// [`write_request`], except that a wire message whose internal messages `same` recognizes as
/// the caller's own `messages[k]` (unchanged) is not written but named: `Written::Same(k)`, and
/// one `same` names as kept by the caller is not written either (`Written::Kept`). `same` sees
/// exactly the run of internal messages that would make up one wire message, so the result,
/// with each `Same(k)` / `Kept(name)` replaced by what it names, is `write_request`'s.
pub fn write_request_with(
    format: Format,
    request: &Request,
    same: &dyn Fn(&[&Message]) -> Option<Named>,
) -> (Option<Value>, Vec<Written>) {
    let (mut system, mut written) = write_request_with_in(format, request, same);
    system.iter_mut().for_each(crate::base::json_text::doubles_for_unsafe_integers);
    for w in &mut written {
        if let Written::Value(v) | Written::Keep(v, _) = w {
            crate::base::json_text::doubles_for_unsafe_integers(v);
        }
    }
    (system, written)
}

fn write_request_with_in(
    format: Format,
    request: &Request,
    same: &dyn Fn(&[&Message]) -> Option<Named>,
) -> (Option<Value>, Vec<Written>) {
    match format {
        Format::Openai => {
            let skip = usize::from(request.prepended_system);
            let messages = request.messages.get(skip..).unwrap_or(&[]);
            let written = messages.iter().map(|m| written(same(&[m]), || openai::message_to_wire(m))).collect();
            (None, written)
        }
        Format::Anthropic => anthropic::to_wire_with(&request.messages, same),
        Format::AiSdk | Format::AiSdkUi | Format::OpenaiResponses | Format::Gemini => {
            let (system, messages) = write_request(format, request);
            (system, messages.into_iter().map(Written::Value).collect())
        }
    }
}
