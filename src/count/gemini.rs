//! Gemini requests counted the way Google's local tokenizer counts them
//! (docs/gemini-tokenizer.md), and Gemini's media by Google's published per-media rules.
//!
//! google-genai's `LocalTokenizer.count_tokens` collects texts and tokenizes each on its own with
//! the `gemma3` vocabulary, summing the counts; nothing else is added (no per-turn framing, no
//! role, no reply priming). The texts:
//! - every `text` part;
//! - a function call: its name, then every key of its `args` and every string value, recursively
//!   through objects and arrays (numbers, booleans and null are not counted);
//! - a function response: its name, then its `response` the same way;
//! - a tool declaration: name, description, then the parameters (and response) schema: each
//!   schema's `format`, `description`, `enum` values, `required` names, `properties` keys, and
//!   recursively `items`, `properties` values and string leaves of `example` (`type`, `title`,
//!   `default` are not counted);
//! - the system instruction's text parts.
//!
//! In ctxguard's message model: tool-call `arguments` are JSON text, parsed and walked as `args`
//! (not a JSON object: counted as one text); a `tool` message is a function response: its `name`
//! (when the message has one) and its content, walked as `response` when a text is a JSON
//! object, else counted as text. Any other message's `name` is not counted (Gemini contents have
//! none). Media the local tokenizer refuses are counted by the published rules below and make the
//! request an estimate ([`media_is_estimated`]).

use serde_json::Value;

use super::{audio_tokens, text_tokens, MessageCount, Profile};
use crate::message::{Content, Extra, Message, Part, Role, ToolDef};
use crate::tokens::{self, Encoding};

/// Audio: 32 tokens per second (Gemini API docs, "Understand and count tokens").
pub const AUDIO_TOKENS_PER_SECOND: f64 = 32.0;
/// Video: 263 tokens per second (frames at 1 fps plus the audio track; same page).
pub const VIDEO_TOKENS_PER_SECOND: f64 = 263.0;
/// A video of unknown length is charged one minute.
pub const UNKNOWN_VIDEO_SECONDS: f64 = 60.0;

/// Calls `f` with every text `_TextsAccumulator._any_traverse` collects from a JSON value:
/// strings, and the keys of every object before its values.
pub fn value_texts<'v>(v: &'v Value, f: &mut impl FnMut(&'v str)) {
    match v {
        Value::String(s) => f(s),
        Value::Object(map) => {
            for k in map.keys() {
                f(k);
            }
            for v in map.values() {
                value_texts(v, f);
            }
        }
        Value::Array(items) => items.iter().for_each(|x| value_texts(x, f)),
        _ => {}
    }
}

/// Calls `f` with every text `_TextsAccumulator.add_schema` collects from a schema.
pub fn schema_texts<'v>(schema: &'v Value, f: &mut impl FnMut(&'v str)) {
    let Value::Object(s) = schema else { return };
    for key in ["format", "description"] {
        if let Some(Value::String(t)) = s.get(key) {
            f(t);
        }
    }
    for key in ["enum", "required"] {
        if let Some(Value::Array(items)) = s.get(key) {
            items.iter().filter_map(Value::as_str).for_each(&mut *f);
        }
    }
    if let Some(items) = s.get("items") {
        schema_texts(items, f);
    }
    if let Some(Value::Object(props)) = s.get("properties") {
        for (k, v) in props {
            f(k);
            schema_texts(v, f);
        }
    }
    if let Some(example) = s.get("example") {
        value_texts(example, f);
    }
}

fn count(text: &str) -> usize {
    tokens::count(Encoding::Gemma3, text)
}

/// Tokens of a JSON text walked as function-call `args` / function-response `response` (an
/// object), or of the text itself when it is not a JSON object.
fn json_or_text(text: &str) -> usize {
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => {
            let mut n = 0usize;
            value_texts(&v, &mut |t| n += count(t));
            n
        }
        _ => count(text),
    }
}

/// One message by the local tokenizer's rules, media by the published rules.
pub fn count_message(profile: &Profile, message: &Message) -> MessageCount {
    let enc = profile.encoding;
    let is_response = message.role == Role::Tool;
    let (mut text, mut attachments, mut images) = (0usize, 0usize, 0usize);
    // A function response's name.
    let framing = match message.name.as_deref() {
        Some(name) if is_response => tokens::count(enc, name),
        _ => 0,
    };
    match &message.content {
        Content::Text(s) if is_response => text += json_or_text(s),
        Content::Text(s) => {
            let (t, a) = text_tokens(enc, s);
            text += t;
            attachments += a;
        }
        Content::Parts(parts) => {
            for part in parts {
                match part {
                    Part::Text { text: s, .. } if is_response => text += json_or_text(s),
                    Part::Text { text: s, .. } => {
                        let (t, a) = text_tokens(enc, s);
                        text += t;
                        attachments += a;
                    }
                    Part::Image { width, height, detail, extra, .. } => {
                        images = images.saturating_add(profile.image_rule.tokens(
                            *width,
                            *height,
                            image_level(detail, extra),
                        ));
                    }
                    Part::File { name, text: Some(t), .. } => {
                        attachments += name.as_deref().map_or(0, |n| tokens::count(enc, n)) + tokens::count(enc, t);
                    }
                    Part::File { media_type, extra, .. } => {
                        attachments = attachments.saturating_add(file_tokens(profile, media_type.as_deref(), extra));
                    }
                    Part::Audio { extra } => {
                        attachments = attachments.saturating_add(audio_part_tokens(profile, extra))
                    }
                    Part::ToolCallRef { .. } => {}
                    Part::Unknown { value } => text += tokens::count(enc, &crate::base::json_text::text(value)),
                }
            }
        }
    }
    let tool_calls: usize =
        message.tool_calls.iter().map(|c| tokens::count(enc, &c.name) + json_or_text(&c.arguments)).sum();
    let total =
        framing.saturating_add(text).saturating_add(attachments).saturating_add(images).saturating_add(tool_calls);
    MessageCount { total, text, attachments, images, tool_calls, framing, ..Default::default() }
}

/// Tool declarations: name, description, the parameters schema and, when the definition carries
/// one (`response`, kept in `extra`), the response schema.
pub fn tool_definition_tokens(tools: &[ToolDef]) -> usize {
    let mut n = 0usize;
    let mut add = |t: &str| n += count(t);
    for tool in tools {
        add(&tool.name);
        if let Some(d) = tool.description.as_deref() {
            add(d);
        }
        schema_texts(&tool.parameters, &mut add);
        if let Some(r) = tool.extra.get("response") {
            schema_texts(r, &mut add);
        }
    }
    n
}

/// Whether the messages hold media the local tokenizer cannot count (it refuses them): their
/// tokens come from the published per-media rules and allowances, so the request is an estimate.
pub fn media_is_estimated(messages: &[Message]) -> bool {
    messages.iter().any(|m| match &m.content {
        Content::Parts(parts) => parts.iter().any(|p| match p {
            Part::Image { .. } | Part::Audio { .. } => true,
            Part::File { text, .. } => text.is_none(),
            _ => false,
        }),
        Content::Text(_) => false,
    })
}

/// An audio part: 32 tokens/s when its length is known, else the profile's allowance (from the
/// payload size, or flat).
pub fn audio_part_tokens(profile: &Profile, extra: &Extra) -> usize {
    match duration_seconds(extra) {
        Some(s) => per_second(s, AUDIO_TOKENS_PER_SECOND),
        None => audio_tokens(profile, extra),
    }
}

/// A file part without extracted text: video by its length (263 tokens/s, one minute when the
/// length is unknown); anything else (PDF, documents) the profile's flat allowance.
pub fn file_tokens(profile: &Profile, media_type: Option<&str>, extra: &Extra) -> usize {
    let video = media_type.is_some_and(|t| t.to_ascii_lowercase().starts_with("video/"));
    if video {
        return per_second(duration_seconds(extra).unwrap_or(UNKNOWN_VIDEO_SECONDS), VIDEO_TOKENS_PER_SECOND);
    }
    profile.opaque_file_tokens
}

fn per_second(seconds: f64, rate: f64) -> usize {
    // `as` saturates; lengths are far below f64's exact range.
    (seconds.max(0.0) * rate).ceil() as usize
}

/// A media length the host supplied: `durationSeconds` (a number), or Gemini's `videoMetadata`
/// clip (`startOffset` / `endOffset` such as `"12.5s"`) when it has an end.
pub fn duration_seconds(extra: &Extra) -> Option<f64> {
    if let Some(s) = extra.get("durationSeconds").and_then(Value::as_f64).filter(|s| s.is_finite() && *s >= 0.0) {
        return Some(s);
    }
    let clip = extra.get("videoMetadata")?;
    let secs = |k: &str| {
        clip.get(k).and_then(Value::as_str).and_then(|s| s.strip_suffix('s')).and_then(|s| s.parse::<f64>().ok())
    };
    let end = secs("endOffset")?;
    let start = secs("startOffset").unwrap_or(0.0);
    Some((end - start).max(0.0)).filter(|s| s.is_finite())
}

/// An image's level for the image rule: `detail`, else Gemini 3's per-part `mediaResolution`
/// (`{ level: "MEDIA_RESOLUTION_HIGH" }` or a string).
pub fn image_level<'a>(detail: &'a Option<String>, extra: &'a Extra) -> Option<&'a str> {
    detail.as_deref().or_else(|| {
        let r = extra.get("mediaResolution")?;
        r.as_str().or_else(|| r.get("level").and_then(Value::as_str))
    })
}
