//! Which of the six wire formats a conversation is in (`detectFormat`), from evidence only the
//! format itself has. The rules are listed in docs/formats.md ("Detecting the format"):
//!
//! - a request object decides by its keys: `contents` or `systemInstruction` is Gemini; `input`
//!   or `instructions` is OpenAI Responses; `messages` is read as the messages below, then its
//!   `tools` (an object by name: the AI SDK) and `system` (system messages: the AI SDK; any other
//!   `system`: Anthropic);
//! - in the messages, the first item (in order) carrying evidence decides: the role `model`
//!   (Gemini); `parts` without `content` (AI SDK UI messages when a part has a `type`, the item
//!   an `id` or the role `system` or `assistant`; else Gemini); an item `type` (Responses); `tool_calls`,
//!   `tool_call_id`, `function_call` or a string tool result (OpenAI Chat Completions); a part
//!   type only one format has (see [`part_evidence`]);
//! - messages without evidence (`{ role: 'user', content: 'hi' }` is valid in four formats)
//!   are `openai`, every function's default format;
//! - anything else (not an array or object, an item that is not an object, a request object
//!   without those keys) has no format: `None`.

use serde_json::{Map, Value};

use super::Format;

/// The format of a conversation: a messages array, or a request object (see the module docs).
pub fn detect(value: &Value) -> Option<Format> {
    match value {
        Value::Array(items) => messages_format(items),
        Value::Object(o) => request_format(o),
        _ => None,
    }
}

/// The format a messages array has evidence of (`None` without evidence, or for another value).
pub fn evidence_format(value: &Value) -> Option<Format> {
    match value {
        Value::Array(items) => items.iter().filter_map(Value::as_object).find_map(item_evidence),
        _ => None,
    }
}

/// The format one message has evidence of.
pub fn item_format(item: &Value) -> Option<Format> {
    item.as_object().and_then(item_evidence)
}

fn request_format(o: &Map<String, Value>) -> Option<Format> {
    if o.contains_key("contents") || o.contains_key("systemInstruction") {
        return Some(Format::Gemini);
    }
    if o.contains_key("input") || o.contains_key("instructions") {
        return Some(Format::OpenaiResponses);
    }
    let Some(Value::Array(items)) = o.get("messages") else { return None };
    if let Some(found) = evidence(items)? {
        return Some(found);
    }
    if matches!(o.get("tools"), Some(Value::Object(_))) {
        return Some(Format::AiSdk);
    }
    match o.get("system") {
        None | Some(Value::Null) => Some(Format::Openai),
        Some(Value::Array(list)) if list.iter().any(is_system_message) => Some(Format::AiSdk),
        Some(one) if is_system_message(one) => Some(Format::AiSdk),
        Some(_) => Some(Format::Anthropic),
    }
}

fn is_system_message(v: &Value) -> bool {
    v.get("role").and_then(Value::as_str) == Some("system")
}

fn messages_format(items: &[Value]) -> Option<Format> {
    Some(evidence(items)?.unwrap_or(Format::Openai))
}

/// The first evidence in the items: `None` when an item is not an object (no format takes it),
/// `Some(None)` when no item has any.
fn evidence(items: &[Value]) -> Option<Option<Format>> {
    let mut found = None;
    for item in items {
        let o = item.as_object()?;
        if found.is_none() {
            found = item_evidence(o);
        }
    }
    Some(found)
}

fn item_evidence(o: &Map<String, Value>) -> Option<Format> {
    let role = o.get("role").and_then(Value::as_str);
    if role == Some("model") {
        return Some(Format::Gemini);
    }
    if let (Some(Value::Array(parts)), false) = (o.get("parts"), o.contains_key("content")) {
        // UI messages have an id, the roles system and assistant, and typed parts; Gemini
        // contents have the roles user and model and untyped parts.
        let typed = parts.iter().any(|p| p.get("type").is_some_and(Value::is_string));
        let ui = typed || o.get("id").is_some_and(Value::is_string) || matches!(role, Some("system" | "assistant"));
        return Some(if ui { Format::AiSdkUi } else { Format::Gemini });
    }
    if o.get("type").is_some_and(Value::is_string) {
        return Some(Format::OpenaiResponses);
    }
    if ["tool_calls", "tool_call_id", "function_call"].iter().any(|k| o.contains_key(*k)) {
        return Some(Format::Openai);
    }
    let content = o.get("content");
    if role == Some("tool") && content.is_some_and(Value::is_string) {
        return Some(Format::Openai);
    }
    match content {
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_object).find_map(part_evidence),
        _ => None,
    }
}

/// A content part only one format has. Parts shared by several (`text`, `refusal`,
/// `input_audio`) are no evidence.
fn part_evidence(p: &Map<String, Value>) -> Option<Format> {
    let has = |k: &str| p.contains_key(k);
    match p.get("type").and_then(Value::as_str)? {
        "tool-call" | "tool-result" | "reasoning" | "tool-approval-request" | "tool-approval-response" => {
            Some(Format::AiSdk)
        }
        "image" if has("image") => Some(Format::AiSdk),
        "file" if has("data") || has("mediaType") => Some(Format::AiSdk),
        "tool_use" | "tool_result" | "thinking" | "redacted_thinking" | "document" | "server_tool_use"
        | "search_result" => Some(Format::Anthropic),
        "image" if has("source") => Some(Format::Anthropic),
        "input_text" | "output_text" | "input_image" | "input_file" => Some(Format::OpenaiResponses),
        "image_url" => Some(Format::Openai),
        "file" if has("file") => Some(Format::Openai),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_messages_are_openai_and_other_values_have_no_format() {
        assert_eq!(detect(&json!([{ "role": "user", "content": "hi" }])), Some(Format::Openai));
        assert_eq!(detect(&json!([])), Some(Format::Openai));
        assert_eq!(
            detect(&json!([{ "role": "system", "content": "s" }, { "role": "user", "content": "hi" }])),
            Some(Format::Openai)
        );
        assert_eq!(detect(&json!("hi")), None);
        assert_eq!(detect(&json!(42)), None);
        assert_eq!(detect(&json!([1, { "role": "user", "content": "hi" }])), None);
        assert_eq!(detect(&json!({ "model": "gpt-4o" })), None);
        assert_eq!(detect(&json!({ "messages": "hi" })), None);
    }

    #[test]
    fn request_keys_decide() {
        assert_eq!(detect(&json!({ "contents": [] })), Some(Format::Gemini));
        assert_eq!(detect(&json!({ "input": "hi", "instructions": "be brief" })), Some(Format::OpenaiResponses));
        assert_eq!(
            detect(&json!({ "messages": [{ "role": "user", "content": "hi" }], "system": "be brief" })),
            Some(Format::Anthropic)
        );
        assert_eq!(
            detect(&json!({ "messages": [], "system": [{ "role": "system", "content": "s" }] })),
            Some(Format::AiSdk)
        );
        assert_eq!(detect(&json!({ "messages": [], "tools": { "get": {} } })), Some(Format::AiSdk));
        assert_eq!(detect(&json!({ "messages": [], "tools": [] })), Some(Format::Openai));
        // The messages' evidence comes first: tool calls with a `system` are still OpenAI's.
        let calls = json!([{ "role": "assistant", "content": null, "tool_calls": [] }]);
        assert_eq!(detect(&json!({ "messages": calls, "system": "s" })), Some(Format::Openai));
    }

    #[test]
    fn the_first_item_with_evidence_decides() {
        let v = json!([
            { "role": "user", "content": "hi" },
            { "role": "assistant", "content": [{ "type": "tool-call", "toolCallId": "c", "toolName": "t", "input": {} }] },
            { "role": "tool", "tool_call_id": "c", "content": "x" }
        ]);
        assert_eq!(detect(&v), Some(Format::AiSdk));
        assert_eq!(detect(&json!([{ "role": "tool", "tool_call_id": "c", "content": "x" }])), Some(Format::Openai));
        assert_eq!(
            detect(&json!([{ "role": "user", "content": [{ "type": "document", "source": {} }] }])),
            Some(Format::Anthropic)
        );
        assert_eq!(detect(&json!([{ "role": "user", "parts": [{ "text": "hi" }] }])), Some(Format::Gemini));
        assert_eq!(
            detect(&json!([{ "id": "m1", "role": "user", "parts": [{ "type": "text", "text": "hi" }] }])),
            Some(Format::AiSdkUi)
        );
        assert_eq!(detect(&json!([{ "id": "m1", "role": "user", "parts": [] }])), Some(Format::AiSdkUi));
        assert_eq!(detect(&json!([{ "role": "assistant", "parts": [] }])), Some(Format::AiSdkUi));
        assert_eq!(
            detect(&json!({ "id": "chat", "messages": [{ "id": "m1", "role": "user", "parts": [] }] })),
            Some(Format::AiSdkUi)
        );
        assert_eq!(
            detect(&json!([{ "type": "function_call_output", "call_id": "c", "output": "x" }])),
            Some(Format::OpenaiResponses)
        );
        assert_eq!(
            detect(&json!([{ "role": "user", "content": [{ "type": "input_text", "text": "hi" }] }])),
            Some(Format::OpenaiResponses)
        );
    }
}
