//! Whole-request token accounting the way providers bill it (docs/design.md, "Token counting").
//!
//! - [`count_message`] counts one message with a breakdown. It is pure (same profile and message,
//!   same result), so callers can cache it by message content.
//! - [`count_request`] adds what belongs to the request as a whole: tool definitions (and their
//!   interaction with the system message) and the reply priming.
//!
//! # OpenAI (exact)
//! Per message: 3 + the role's tokens + the content's tokens; a `name` adds its tokens + 1; every
//! request adds 3 for the reply priming (OpenAI cookbook, "How to count tokens with tiktoken").
//! Content parts are counted part by part; the part `type` keys are not counted (verified by
//! openai-messages-token-helper against the API). Legacy `function` role messages count 2 fewer
//! and include their `name`; a legacy `function_call` counts its name, its arguments and 3
//! (openai-chat-tokens, verified against the API). Tool definitions: see [`tools`]; they cost
//! their rendered tokens plus 9, and when the request has a system message the definitions are
//! merged into the first one: that message is counted with a trailing newline and 4 tokens are
//! saved. All of this lands in `RequestCount::tool_definitions`.
//!
//! Reference figures: `tests/core/count_openai_reference.rs` (OpenAI cookbook, openai-chat-tokens,
//! openai-messages-token-helper, gpt-tokenizer). Where they disagree (descriptions of nested
//! tool parameters; see [`tools`]) the default errs high.
//!
//! Not covered by a published, API-verified figure (counted by the same rules, the uncertain
//! part): `tool` role results (counted as ordinary messages, without `name`/`tool_call_id`;
//! possibly one token high), modern `tool_calls` (each counted like a legacy `function_call`;
//! several parallel calls add the tokens of the `multi_tool_use.parallel` wrapper OpenAI's models
//! emit for them), `tool_choice: "required"` (+7, like a named choice without the name).
//!
//! # Estimated providers
//! Text-derived tokens (text, attachment text, names, tool-call names and arguments, tool JSON) are
//! counted with the profile's encoding, multiplied by its estimate factor and rounded up, per
//! bucket. Framing constants, images and flat allowances are used as they are.

pub mod attachment;
pub mod deferred;
pub mod gemini;
pub mod image;
pub mod profile;
pub mod template;
pub mod tools;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use image::ImageRule;
pub use profile::{CountKind, Framing, Profile, Provider, ToolChoice, ToolRule};

use crate::message::{Content, Message, Part, Role, ToolCall, ToolDef};
use crate::tokens::{self, Encoding};

pub use crate::message::MessageCount;

/// Tokens of a whole request. `total = sum(per_message.total) + tool_definitions + priming`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestCount {
    pub total: usize,
    pub per_message: Vec<MessageCount>,
    /// Tool definitions, including the system-message interaction and `tool_choice` tokens.
    pub tool_definitions: usize,
    /// Reply priming.
    pub priming: usize,
    pub accuracy: CountKind,
}

/// Count one message.
pub fn count_message(profile: &Profile, message: &Message) -> MessageCount {
    if is_gemini_exact(profile) {
        return gemini::count_message(profile, message);
    }
    if let Some(t) = profile.template {
        let (mut count, facts) = template::count_message(t, profile.encoding, message);
        count.template = facts;
        // Images, files and audio as the profile counts them (templates render text only).
        let (attachments, images) = media_tokens(profile, message);
        count.images = images;
        count.attachments = attachments;
        count.total = count.total.saturating_add(images).saturating_add(attachments);
        return count;
    }
    let enc = profile.encoding;
    let openai = profile.provider == Provider::Openai;
    let role_str = message.wire.role.as_deref().unwrap_or(message.role.as_str());
    let legacy_function_role = role_str == "function";

    // Framing: fixed part, role, name.
    let mut framing = profile.framing.per_message;
    if profile.framing.count_role {
        framing += tokens::count(enc, role_str);
    }
    // OpenAI does not render a name on `tool` results (it has the call id instead); legacy
    // `function` results carry the function name.
    let name_counts = message.role != Role::Tool || legacy_function_role;
    if let Some(name) = message.name.as_deref().filter(|n| !n.is_empty() && name_counts) {
        framing += profile.scale(tokens::count(enc, name)) + profile.framing.per_name;
    }
    if openai && legacy_function_role {
        framing = framing.saturating_sub(2);
    }

    // Content. Google models' media follow Google's rules (`gemini`) in every build.
    let google = profile.provider == Provider::Google;
    let mut raw_text = 0usize;
    let mut raw_attachments = 0usize;
    let mut flat_attachments = 0usize;
    let mut images = 0usize;
    match &message.content {
        Content::Text(s) => {
            let (t, a) = text_tokens(enc, s);
            raw_text += t;
            raw_attachments += a;
        }
        Content::Parts(parts) => {
            for part in parts {
                match part {
                    Part::Text { text, .. } => {
                        let (t, a) = text_tokens(enc, text);
                        raw_text += t;
                        raw_attachments += a;
                    }
                    Part::Image { width, height, detail, extra, .. } => {
                        let level = if google { gemini::image_level(detail, extra) } else { detail.as_deref() };
                        images = images.saturating_add(profile.image_rule.tokens(*width, *height, level));
                    }
                    Part::File { name, text, media_type, extra } => {
                        if let Some(name) = name.as_deref() {
                            raw_attachments += tokens::count(enc, name);
                        }
                        match text.as_deref() {
                            Some(t) => raw_attachments += tokens::count(enc, t),
                            None if google => {
                                flat_attachments += gemini::file_tokens(profile, media_type.as_deref(), extra)
                            }
                            None => flat_attachments += profile.opaque_file_tokens,
                        }
                    }
                    Part::Audio { extra } if google => flat_attachments += gemini::audio_part_tokens(profile, extra),
                    Part::Audio { extra } => {
                        flat_attachments += audio_tokens(profile, extra);
                    }
                    Part::ToolCallRef { .. } => {}
                    Part::Unknown { value } => {
                        raw_text += tokens::count(enc, &crate::base::json_text::text(value));
                    }
                }
            }
        }
    }

    let tool_calls = tool_call_tokens(profile, message);

    let text = profile.scale(raw_text);
    let attachments = profile.scale(raw_attachments).saturating_add(flat_attachments);
    let total =
        framing.saturating_add(text).saturating_add(attachments).saturating_add(images).saturating_add(tool_calls);
    MessageCount { total, text, attachments, images, tool_calls, framing, ..Default::default() }
}

/// `(attachments, images)` of a message's non-text parts, counted as `count_message` counts them
/// (files by name and extracted text or a flat allowance, audio, images by the profile's rule).
fn media_tokens(profile: &Profile, message: &Message) -> (usize, usize) {
    let Content::Parts(parts) = &message.content else { return (0, 0) };
    let enc = profile.encoding;
    let (mut attachments, mut images) = (0usize, 0usize);
    for part in parts {
        match part {
            Part::Image { width, height, detail, .. } => {
                images = images.saturating_add(profile.image_rule.tokens(*width, *height, detail.as_deref()));
            }
            Part::File { name, text, .. } => {
                attachments += name.as_deref().map_or(0, |n| tokens::count(enc, n));
                attachments += match text.as_deref() {
                    Some(t) => tokens::count(enc, t),
                    None => profile.opaque_file_tokens,
                };
            }
            Part::Audio { extra } => attachments += audio_tokens(profile, extra),
            _ => {}
        }
    }
    (attachments, images)
}

/// Count a request with `tool_choice` auto.
pub fn count_request(profile: &Profile, messages: &[Message], tools: &[ToolDef]) -> RequestCount {
    count_request_with(profile, messages, tools, &ToolChoice::Auto)
}

/// Count a request with an explicit `tool_choice`.
pub fn count_request_with(
    profile: &Profile,
    messages: &[Message],
    tools: &[ToolDef],
    tool_choice: &ToolChoice,
) -> RequestCount {
    let per_message = messages.iter().map(|m| count_message(profile, m)).collect();
    count_request_from(profile, messages, per_message, tools, tool_choice)
}

/// Assemble a request count from per-message counts the caller already has (cached by content).
/// `per_message` must be `count_message(profile, m)` for each of `messages`, in order.
pub fn count_request_from(
    profile: &Profile,
    messages: &[Message],
    mut per_message: Vec<MessageCount>,
    tools: &[ToolDef],
    tool_choice: &ToolChoice,
) -> RequestCount {
    join_system(profile, messages.iter().map(|m| m.role), &mut per_message);
    let tool_definitions = match deferred::in_context(tools, messages) {
        None => tool_definition_tokens(profile, messages, tools, tool_choice),
        Some(loaded) => tool_definition_tokens(profile, messages, &loaded, tool_choice),
    };
    let priming = priming(profile, messages.iter().map(|m| m.role).zip(per_message.iter().copied()));
    let accuracy = if is_gemini_exact(profile) && gemini::media_is_estimated(messages) {
        CountKind::Estimate
    } else {
        profile.accuracy
    };
    let total = per_message
        .iter()
        .fold(0usize, |acc, m| acc.saturating_add(m.total))
        .saturating_add(tool_definitions)
        .saturating_add(priming);
    RequestCount { total, per_message, tool_definitions, priming, accuracy }
}

/// A request's per-message counts as the provider reads them when it joins every system message
/// into one system text (`Profile::system_joined`): the system messages after the first carry
/// no framing of their own. The blank line between two texts is not counted: it joins the last
/// piece of the text before it (`.\n\n` is one piece) as often as not.
pub fn join_system(profile: &Profile, roles: impl Iterator<Item = Role>, per_message: &mut [MessageCount]) {
    if !profile.system_joined {
        return;
    }
    let mut first = true;
    for (role, c) in roles.zip(per_message.iter_mut()) {
        if role != Role::System {
            continue;
        }
        if std::mem::take(&mut first) {
            continue;
        }
        c.total = c.total.saturating_sub(c.framing);
        c.framing = 0;
    }
}

/// Tokens outside the messages' own counts: the reply priming, or for a chat template its
/// request-level tokens (`template::overhead`), from each message's role and count.
pub fn priming(profile: &Profile, turns: impl Iterator<Item = (Role, MessageCount)>) -> usize {
    match profile.template {
        Some(t) => {
            let turns: Vec<(Role, MessageCount, crate::message::TemplateFacts)> =
                turns.map(|(r, c)| (r, c, c.template)).collect();
            template::overhead(t, profile.encoding, &turns)
        }
        None => profile.framing.reply_priming,
    }
}

/// Gemini with its own tokenizer: Google's local tokenizer's rules (`gemini`).
fn is_gemini_exact(profile: &Profile) -> bool {
    profile.provider == Provider::Google && profile.accuracy == CountKind::Exact
}

/// Tokens of the tool definitions as the request's model sees them, including OpenAI's
/// system-message interaction and the `tool_choice` tokens. 0 without tools.
pub fn tool_definition_tokens(
    profile: &Profile,
    messages: &[Message],
    tools: &[ToolDef],
    tool_choice: &ToolChoice,
) -> usize {
    if tools.is_empty() {
        return 0;
    }
    let enc = profile.encoding;
    if let Some(t) = profile.template {
        let first_system = messages.first().filter(|m| m.role == Role::System);
        return template::tool_definition_tokens(t, enc, first_system, tools);
    }
    match profile.tool_rule {
        ToolRule::OpenaiNamespace { nested_descriptions } => {
            let rendered = tools::render_openai_namespace(tools, nested_descriptions);
            let mut n = tokens::count(enc, &rendered) + OPENAI_TOOLS_OVERHEAD;
            if let Some(system) = messages.iter().find(|m| m.role == Role::System) {
                n = n.saturating_add(system_padding_delta(enc, system)).saturating_sub(OPENAI_TOOLS_SYSTEM_SAVING);
            }
            n + openai_tool_choice_tokens(enc, tool_choice)
        }
        ToolRule::JsonSchema { system_prompt_tokens } => {
            let raw = tools.iter().map(|t| tokens::count(enc, &tools::tool_json(t))).sum();
            profile.scale(raw).saturating_add(system_prompt_tokens)
        }
        ToolRule::GeminiDeclarations => gemini::tool_definition_tokens(tools),
    }
}

/// Tokens the tool block adds beyond its rendered text (openai-chat-tokens: "+9 per completion").
const OPENAI_TOOLS_OVERHEAD: usize = 9;
/// Tokens saved when the tool block joins an existing system message (openai-chat-tokens: "-4").
const OPENAI_TOOLS_SYSTEM_SAVING: usize = 4;

fn openai_tool_choice_tokens(enc: Encoding, choice: &ToolChoice) -> usize {
    match choice {
        ToolChoice::Auto => 0,
        ToolChoice::None => 1,
        ToolChoice::Required => 7,
        ToolChoice::Named(name) => tokens::count(enc, name) + 7,
        ToolChoice::NamedFunction(name) => tokens::count(enc, name) + 4,
    }
}

/// How many tokens appending "\n" to the first system message adds (openai-chat-tokens: with
/// functions present, the first system message is counted with a trailing newline). Only the
/// last line is re-tokenized: the position after the last `\n` that is followed by a
/// non-whitespace character is a pre-tokenizer boundary in both encodings, so the tokens before
/// it do not change.
fn system_padding_delta(enc: Encoding, system: &Message) -> usize {
    let Content::Text(s) = &system.content else {
        return 0;
    };
    let tail = tail_after_last_line_break(s);
    let mut padded = String::with_capacity(tail.len() + 1);
    padded.push_str(tail);
    padded.push('\n');
    tokens::count(enc, &padded).saturating_sub(tokens::count(enc, tail))
}

fn tail_after_last_line_break(s: &str) -> &str {
    match s.rfind('\n') {
        Some(i) => {
            let rest = s.get(i + 1..).unwrap_or("");
            match rest.chars().next() {
                Some(c) if !c.is_whitespace() => rest,
                _ => s,
            }
        }
        None => s,
    }
}

/// `(text, attachments)` raw tokens of a text, attachment blocks split out. The text total is
/// the exact count of the whole string; attachment blocks are counted on their own and
/// subtracted, so `text + attachments` stays exact.
fn text_tokens(enc: Encoding, s: &str) -> (usize, usize) {
    let total = tokens::count(enc, s);
    let blocks = attachment::blocks(s);
    if blocks.is_empty() {
        return (total, 0);
    }
    let att: usize = blocks.iter().map(|&(a, b)| s.get(a..b).map_or(0, |block| tokens::count(enc, block))).sum();
    let att = att.min(total);
    (total - att, att)
}

/// Assistant tool calls: names and arguments (scaled), `per_tool_call` each; on OpenAI several
/// calls of one message also pay for the `multi_tool_use.parallel` wrapper.
fn tool_call_tokens(profile: &Profile, message: &Message) -> usize {
    let calls: &[ToolCall] = &message.tool_calls;
    if calls.is_empty() {
        return 0;
    }
    let enc = profile.encoding;
    let raw: usize = calls.iter().map(|c| tokens::count(enc, &c.name) + tokens::count(enc, &c.arguments)).sum();
    let mut n = profile.scale(raw).saturating_add(calls.len().saturating_mul(profile.framing.per_tool_call));
    if profile.provider == Provider::Openai && calls.len() > 1 {
        n = n.saturating_add(tokens::count(enc, &parallel_wrapper_skeleton(calls.len())));
    }
    n
}

/// The text around the calls when an OpenAI model makes several in one turn:
/// `multi_tool_use.parallel` with `{"tool_uses":[{"recipient_name":"functions.<name>",
/// "parameters":<arguments>},...]}`; names and arguments are counted separately.
fn parallel_wrapper_skeleton(n: usize) -> String {
    let item = "{\"recipient_name\":\"functions.\",\"parameters\":}";
    let mut s = String::with_capacity(48 + n * (item.len() + 1));
    s.push_str("multi_tool_use.parallel {\"tool_uses\":[");
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push_str(item);
    }
    s.push_str("]}");
    s
}

/// Audio part: from the base64 payload size when there is one (OpenAI `input_audio.data`),
/// assuming 16 kB per second (128 kbit/s MP3, or 8 kHz 16-bit WAV) and 25 tokens per second,
/// i.e. one token per 640 bytes — above OpenAI's rates for common formats. Without a payload:
/// the profile's flat allowance.
fn audio_tokens(profile: &Profile, extra: &serde_json::Map<String, Value>) -> usize {
    let data =
        extra.get("input_audio").and_then(|a| a.get("data")).or_else(|| extra.get("data")).and_then(Value::as_str);
    match data {
        Some(b64) => {
            let bytes = b64.len() / 4 * 3;
            bytes.div_ceil(640).max(1)
        }
        None => profile.opaque_audio_tokens,
    }
}
