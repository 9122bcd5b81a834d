//! OpenAI Chat Completions adapter: exact round trips on realistic requests, the parsed model,
//! writing messages ctxguard created, and errors for malformed input.

use ctxguard::format::openai::{parse_tools, to_wire};
use ctxguard::format::parse_openai_messages as parse_messages;
use ctxguard::format::WIRE_INFO_KEY;
use ctxguard::message::{Content, ImageSource, Markers, Message, Part, Role, ToolCall};
use ctxguard::ErrorCode;
use serde_json::{json, Value};

/// parse → to_wire gives back the same JSON text (values and key order).
fn roundtrip(text: &str) -> Vec<Message> {
    let input: Value = serde_json::from_str(text).unwrap();
    let messages = parse_messages(&input).unwrap_or_else(|e| panic!("parse failed: {e}"));
    let back = Value::Array(to_wire(&messages));
    assert_eq!(
        serde_json::to_string_pretty(&back).unwrap(),
        serde_json::to_string_pretty(&input).unwrap(),
        "round trip changed the request"
    );
    messages
}

const AGENT_TURN: &str = r#"[
  {"role": "developer", "content": "You are a travel assistant. Answer in the user's language. Today is 2025-03-14."},
  {"role": "user", "name": "mika", "content": "Wie ist das Wetter in München und in Tokio? Und buche mir ein Hotel 🏨"},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_9Xk2mQ1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"München\",\"unit\":\"celsius\"}"}},
    {"id": "call_7Lp0aZ4", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"東京\",\"unit\":\"celsius\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_9Xk2mQ1", "content": "{\"temp\":4,\"sky\":\"bewölkt\"}"},
  {"role": "tool", "tool_call_id": "call_7Lp0aZ4", "content": [{"type": "text", "text": "{\"temp\":12,\"sky\":\"晴れ\"}"}]},
  {"role": "assistant", "content": "In München sind es 4 °C und bewölkt, in Tokio 12 °C und sonnig ☀️. Für welches Datum soll ich das Hotel buchen?", "refusal": null},
  {"role": "user", "content": "Übermorgen, zwei Nächte."},
  {"role": "assistant", "tool_calls": [
    {"id": "call_Hb3", "type": "function", "function": {"name": "book_hotel", "arguments": "{\"city\":\"東京\",\"nights\":2,\"from\":\"2025-03-16\"}"}}
  ]},
  {"role": "tool", "content": "Error: no availability", "tool_call_id": "call_Hb3"}
]"#;

#[test]
fn agent_turn_with_parallel_tool_calls_round_trips() {
    let m = roundtrip(AGENT_TURN);
    assert_eq!(m.len(), 9);
    assert_eq!(m[0].role, Role::System);
    assert_eq!(m[0].wire.role.as_deref(), Some("developer"));
    assert_eq!(m[1].name.as_deref(), Some("mika"));
    assert!(m[1].wire.content_was_string);
    assert_eq!(m[2].role, Role::Assistant);
    assert!(m[2].wire.content_was_null);
    assert!(m[2].content.is_empty());
    assert_eq!(m[2].tool_calls.len(), 2);
    assert_eq!(m[2].tool_calls[1].id, "call_7Lp0aZ4");
    assert_eq!(m[2].tool_calls[1].name, "get_weather");
    assert_eq!(m[2].tool_calls[1].arguments, r#"{"city":"東京","unit":"celsius"}"#);
    // `type: "function"` is kept verbatim in the call's extra.
    assert_eq!(m[2].tool_calls[1].extra.get("type"), Some(&json!("function")));
    assert_eq!(m[3].role, Role::Tool);
    assert_eq!(m[3].tool_call_id.as_deref(), Some("call_9Xk2mQ1"));
    assert_eq!(m[4].content.text(), r#"{"temp":12,"sky":"晴れ"}"#);
    assert_eq!(m[5].extra.get("refusal"), Some(&Value::Null));
    // No content key at all: still empty, and written back without one.
    assert!(m[7].wire.content_was_null);
    assert_eq!(m[7].tool_calls[0].name, "book_hotel");
    // Canonical key order needs no bookkeeping; a reordered tool message does.
    assert!(!m[3].extra.contains_key(WIRE_INFO_KEY));
    assert!(m[8].extra.contains_key(WIRE_INFO_KEY));
}

#[test]
fn python_sdk_model_dump_round_trips() {
    // `response.choices[0].message.model_dump()` appended as is: content before role, every
    // optional field present as null.
    let m = roundtrip(
        r#"[
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Convert 12 inches to cm"},
      {"content": null, "refusal": null, "role": "assistant", "annotations": [], "audio": null, "function_call": null,
       "tool_calls": [{"id": "call_abc", "function": {"arguments": "{\"value\":12,\"from\":\"in\",\"to\":\"cm\"}", "name": "convert"}, "type": "function"}]},
      {"role": "tool", "tool_call_id": "call_abc", "name": "convert", "content": "30.48"},
      {"content": "12 inches is 30.48 cm.", "refusal": null, "role": "assistant", "annotations": [], "audio": null, "function_call": null, "tool_calls": null}
    ]"#,
    );
    assert_eq!(m[2].tool_calls.len(), 1);
    assert_eq!(m[2].tool_calls[0].arguments, r#"{"value":12,"from":"in","to":"cm"}"#);
    assert!(!m[2].wire.legacy_function_call);
    assert_eq!(m[3].name.as_deref(), Some("convert"));
    assert!(m[4].tool_calls.is_empty());
    assert_eq!(m[4].extra.get("tool_calls"), Some(&Value::Null));
}

#[test]
fn legacy_function_call_round_trips() {
    let m = roundtrip(
        r#"[
      {"role": "system", "content": "You can call functions."},
      {"role": "user", "content": "What's 2^10?"},
      {"role": "assistant", "content": null, "function_call": {"name": "calculator", "arguments": "{\"expr\": \"2**10\"}"}},
      {"role": "function", "name": "calculator", "content": "1024"},
      {"role": "assistant", "content": "2^10 = 1024."}
    ]"#,
    );
    assert!(m[2].wire.legacy_function_call);
    assert_eq!(m[2].tool_calls.len(), 1);
    assert_eq!(m[2].tool_calls[0].id, "");
    assert_eq!(m[2].tool_calls[0].name, "calculator");
    assert_eq!(m[3].role, Role::Tool);
    assert_eq!(m[3].wire.role.as_deref(), Some("function"));
    assert_eq!(m[3].name.as_deref(), Some("calculator"));
    assert_eq!(m[3].tool_call_id, None);
}

const ONE_PX_PNG: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

#[test]
fn multimodal_parts_round_trip() {
    let text = format!(
        r##"[
      {{"role": "user", "id": "msg_01", "createdAt": 1741948800123, "content": [
        {{"type": "text", "text": "Was steht auf diesem Schild? 看板には何と書いてありますか？"}},
        {{"type": "image_url", "image_url": {{"url": "https://images.example.com/sign.jpg", "detail": "high"}}}},
        {{"type": "image_url", "image_url": {{"url": "{ONE_PX_PNG}"}}}},
        {{"type": "image_url", "image_url": {{"url": "https://cdn.example.com/big.webp", "detail": "low"}}, "width": 4032, "height": 3024}},
        {{"type": "input_audio", "input_audio": {{"data": "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=", "format": "wav"}}}},
        {{"type": "file", "file": {{"file_id": "file-6F2ksmvXxt4VdoqmHRw6kL"}}}},
        {{"type": "file", "file": {{"filename": "bericht.pdf", "file_data": "data:application/pdf;base64,JVBERi0xLjQK"}}, "text": "Quartalsbericht Q1: Umsatz +12 %"}},
        {{"type": "file", "file": {{"filename": "notes.md", "text": "# Notes\n- buy milk", "file_data": "data:text/markdown;base64,IyBOb3Rlcwo="}}}},
        {{"type": "text", "text": "Bitte kurz.", "cache_control": {{"type": "ephemeral"}}}},
        {{"type": "video_url", "video_url": {{"url": "https://example.com/v.mp4"}}}}
      ]}},
      {{"role": "assistant", "content": [{{"type": "refusal", "refusal": "I can't identify people in images."}}]}},
      {{"role": "assistant", "content": [{{"type": "text", "text": "Auf dem Schild steht „Ausfahrt freihalten“."}}], "audio": {{"id": "audio_abc"}}}}
    ]"##
    );
    let m = roundtrip(&text);
    assert_eq!(m[0].id.as_deref(), Some("msg_01"));
    assert_eq!(m[0].extra.get("createdAt"), Some(&json!(1741948800123u64)));
    let Content::Parts(parts) = &m[0].content else { panic!("parts expected") };
    assert_eq!(parts.len(), 10);
    match &parts[1] {
        Part::Image { source: ImageSource::Url(u), detail, width, height, .. } => {
            assert_eq!(u, "https://images.example.com/sign.jpg");
            assert_eq!(detail.as_deref(), Some("high"));
            assert_eq!((*width, *height), (None, None));
        }
        other => panic!("image expected, got {other:?}"),
    }
    match &parts[2] {
        Part::Image { source: ImageSource::Url(u), width, height, .. } => {
            assert!(u.starts_with("data:image/png;base64,"));
            assert_eq!((*width, *height), (Some(1), Some(1)));
        }
        other => panic!("image expected, got {other:?}"),
    }
    match &parts[3] {
        Part::Image { width, height, extra, .. } => {
            assert_eq!((*width, *height), (Some(4032), Some(3024)));
            assert_eq!(extra.get("width"), Some(&json!(4032)));
        }
        other => panic!("image expected, got {other:?}"),
    }
    match &parts[4] {
        Part::Audio { extra } => assert_eq!(extra["input_audio"]["format"], json!("wav")),
        other => panic!("audio expected, got {other:?}"),
    }
    match &parts[5] {
        Part::File { name, text, media_type, .. } => {
            assert_eq!((name, text, media_type), (&None, &None, &None));
        }
        other => panic!("file expected, got {other:?}"),
    }
    match &parts[6] {
        Part::File { name, text, media_type, .. } => {
            assert_eq!(name.as_deref(), Some("bericht.pdf"));
            assert_eq!(media_type.as_deref(), Some("application/pdf"));
            assert_eq!(text.as_deref(), Some("Quartalsbericht Q1: Umsatz +12 %"));
        }
        other => panic!("file expected, got {other:?}"),
    }
    match &parts[7] {
        Part::File { name, text, media_type, .. } => {
            assert_eq!(name.as_deref(), Some("notes.md"));
            assert_eq!(media_type.as_deref(), Some("text/markdown"));
            assert_eq!(text.as_deref(), Some("# Notes\n- buy milk"));
        }
        other => panic!("file expected, got {other:?}"),
    }
    match &parts[8] {
        Part::Text { text, extra } => {
            assert_eq!(text, "Bitte kurz.");
            assert_eq!(extra.get("cache_control"), Some(&json!({"type": "ephemeral"})));
        }
        other => panic!("text expected, got {other:?}"),
    }
    assert!(matches!(&parts[9], Part::Unknown { value } if value["type"] == "video_url"));
    // Refusals are carried as unknown parts (documented decision).
    let Content::Parts(refusal) = &m[1].content else { panic!("parts expected") };
    assert!(matches!(&refusal[0], Part::Unknown { value } if value["type"] == "refusal"));
    assert_eq!(m[1].content.text(), "");
}

#[test]
fn replaced_file_text_is_written_where_it_came_from() {
    let input = json!([{"role": "user", "content": [
        {"type": "file", "file": {"filename": "a.txt", "text": "full text", "file_id": "file-1"}},
        {"type": "file", "file": {"filename": "b.txt"}, "text": "full text b"}
    ]}]);
    let mut m = parse_messages(&input).unwrap();
    let Content::Parts(parts) = &mut m[0].content else { panic!() };
    for p in parts.iter_mut() {
        if let Part::File { text, .. } = p {
            *text = Some("preview".into());
        }
    }
    assert_eq!(
        Value::Array(to_wire(&m)),
        json!([{"role": "user", "content": [
            {"type": "file", "file": {"filename": "a.txt", "text": "preview", "file_id": "file-1"}},
            {"type": "file", "file": {"filename": "b.txt"}, "text": "preview"}
        ]}])
    );
}

#[test]
fn custom_tool_calls_and_odd_but_valid_shapes_round_trip() {
    let m = roundtrip(
        r#"[
      {"role": "user", "content": "Run the SQL."},
      {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_c1", "type": "custom", "custom": {"name": "sql", "input": "SELECT 1;"}},
        {"index": 1, "id": "call_f2", "type": "function", "function": {"name": "noop", "arguments": "{}", "x-trace": "t1"}}
      ], "tool_calls_extra": true},
      {"role": "tool", "tool_call_id": "call_c1", "content": "1"},
      {"role": "tool", "tool_call_id": "call_f2", "content": ""},
      {"role": "assistant", "content": "Done.", "tool_calls": []},
      {"role": "assistant"},
      {"role": "user", "content": [], "name": null}
    ]"#,
    );
    assert_eq!(m[1].tool_calls[0].name, "sql");
    assert_eq!(m[1].tool_calls[0].arguments, "SELECT 1;");
    assert_eq!(m[1].tool_calls[1].extra.get("index"), Some(&json!(1)));
    assert!(m[4].tool_calls.is_empty());
    assert!(m[5].content.is_empty());
    assert!(m[5].tool_calls.is_empty());
}

#[test]
fn markers_round_trip_and_are_written_when_set() {
    let m = roundtrip(
        r#"[
      {"role": "user", "content": "[summary] ...", "ctxguard": {"summaryCompacted": true}},
      {"role": "user", "content": "Frage", "ctxguard": {"checkpointRetained": true, "pinned": true}},
      {"role": "tool", "tool_call_id": "c", "content": "head…tail", "ctxguard": {"compactedToolOutput": true, "pinned": false, "futureMarker": 3}},
      {"role": "user", "content": "x", "ctxguard": {}}
    ]"#,
    );
    assert!(m[0].markers.summary_compacted);
    assert!(m[1].markers.checkpoint_retained && m[1].markers.pinned);
    assert!(m[2].markers.compacted_tool_output && !m[2].markers.pinned);
    assert!(m[3].markers.is_empty());

    // Changing markers writes the canonical form; clearing them removes the key.
    let mut changed = m.clone();
    changed[2].markers.pinned = true;
    changed[0].markers = Markers::default();
    let out = to_wire(&changed);
    assert_eq!(out[2]["ctxguard"], json!({"pinned": true, "compactedToolOutput": true}));
    assert!(out[0].get("ctxguard").is_none());
}

#[test]
fn messages_created_by_ctxguard_are_written_canonically() {
    let mut summary = Message::text(Role::User, "Summary of the earlier conversation: …");
    summary.markers.summary_compacted = true;
    let note = Message::text(Role::System, "Pinned evidence: get_weather(München) → 4 °C");
    let call = Message {
        role: Role::Assistant,
        tool_calls: vec![ToolCall {
            id: "call_1".into(),
            name: "read_attachment".into(),
            arguments: r#"{"id":"att_1","offset":0}"#.into(),
            extra: Default::default(),
        }],
        ..Default::default()
    };
    let mut result = Message::text(Role::Tool, "page 1 of 3 …");
    result.tool_call_id = Some("call_1".into());
    result.markers.compacted_tool_output = true;
    let image = Message {
        role: Role::User,
        content: Content::Parts(vec![
            Part::Text { text: "see".into(), extra: Default::default() },
            Part::Image {
                source: ImageSource::Base64 { media_type: "image/png".into(), data: "iVBORw0K".into() },
                detail: None,
                width: None,
                height: None,
                extra: Default::default(),
            },
        ]),
        ..Default::default()
    };
    let out = Value::Array(to_wire(&[note, summary, call, result, image]));
    assert_eq!(
        serde_json::to_string(&out).unwrap(),
        serde_json::to_string(&json!([
            {"role": "system", "content": "Pinned evidence: get_weather(München) → 4 °C"},
            {"role": "user", "content": "Summary of the earlier conversation: …", "ctxguard": {"summaryCompacted": true}},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "read_attachment", "arguments": "{\"id\":\"att_1\",\"offset\":0}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "page 1 of 3 …", "ctxguard": {"compactedToolOutput": true}},
            {"role": "user", "content": [
                {"type": "text", "text": "see"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}}
            ]}
        ]))
        .unwrap()
    );
}

#[test]
fn edited_content_keeps_the_original_key_order() {
    let input: Value =
        serde_json::from_str(r#"[{"role": "tool", "content": "very long output", "tool_call_id": "call_1", "x": 1}]"#)
            .unwrap();
    let mut m = parse_messages(&input).unwrap();
    m[0].content = Content::Text("head … tail".into());
    m[0].markers.compacted_tool_output = true;
    let out = serde_json::to_string(&Value::Array(to_wire(&m))).unwrap();
    assert_eq!(
        out,
        r#"[{"role":"tool","content":"head … tail","tool_call_id":"call_1","x":1,"ctxguard":{"compactedToolOutput":true}}]"#
    );
}

#[test]
fn input_is_never_mutated_and_parsing_is_repeatable() {
    let input: Value = serde_json::from_str(AGENT_TURN).unwrap();
    let before = input.clone();
    let a = parse_messages(&input).unwrap();
    let b = parse_messages(&Value::Array(to_wire(&a))).unwrap();
    assert_eq!(input, before);
    assert_eq!(a, b);
}

fn err(input: Value) -> ctxguard::Error {
    match parse_messages(&input) {
        Ok(m) => panic!("expected an error for {input}, parsed {m:?}"),
        Err(e) => e,
    }
}

#[test]
fn malformed_requests_get_typed_errors() {
    use ErrorCode::*;
    let ok = json!({"role": "user", "content": "hi"});
    let table: Vec<(Value, ErrorCode, Option<usize>, &str)> = vec![
        (json!({"messages": []}), InvalidMessages, None, "messages must be an array, got an object"),
        (json!("hello"), InvalidMessages, None, "got a string"),
        (json!(null), InvalidMessages, None, "got null"),
        (json!([ok, 42]), InvalidMessage, Some(1), "messages[1]: message must be an object, got a number"),
        (json!([{"content": "hi"}]), InvalidMessage, Some(0), "message without role"),
        (json!([ok, ok, {"role": "robot", "content": "hi"}]), InvalidRole, Some(2), "unknown role \"robot\""),
        (json!([{"role": 1, "content": "hi"}]), InvalidRole, Some(0), "role must be a string"),
        (
            json!([{"role": "user", "content": 42}]),
            InvalidMessage,
            Some(0),
            "content must be a string, an array of content parts or null, got a number",
        ),
        (json!([{"role": "user", "content": {"text": "hi"}}]), InvalidMessage, Some(0), "got an object"),
        (json!([{"role": "user"}]), InvalidMessage, Some(0), "user message without content"),
        (
            json!([{"role": "system", "content": null}]),
            InvalidMessage,
            Some(0),
            "system message content must not be null",
        ),
        (
            json!([ok, {"role": "user", "content": [{"type": "text", "text": "a"}, {"text": "b"}]}]),
            InvalidContentPart,
            Some(1),
            "messages[1]: content[1]: part without type",
        ),
        (
            json!([{"role": "user", "content": ["hi"]}]),
            InvalidContentPart,
            Some(0),
            "content[0]: part must be an object, got a string",
        ),
        (
            json!([{"role": "user", "content": [{"type": 3}]}]),
            InvalidContentPart,
            Some(0),
            "part type must be a string",
        ),
        (
            json!([{"role": "user", "content": [{"type": "text"}]}]),
            InvalidContentPart,
            Some(0),
            "text part without text",
        ),
        (
            json!([{"role": "user", "content": [{"type": "text", "text": ["a"]}]}]),
            InvalidContentPart,
            Some(0),
            "text must be a string",
        ),
        (
            json!([ok, ok, ok, {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"detail": "low"}}]}]),
            InvalidContentPart,
            Some(3),
            "messages[3]: content[1]: image_url part without url",
        ),
        (
            json!([{"role": "user", "content": [{"type": "image_url"}]}]),
            InvalidContentPart,
            Some(0),
            "image_url part without image_url",
        ),
        (
            json!([{"role": "user", "content": [{"type": "image_url", "image_url": "https://x/y.png"}]}]),
            InvalidContentPart,
            Some(0),
            "image_url must be an object with a url, got a string",
        ),
        (
            json!([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": 5}}]}]),
            InvalidContentPart,
            Some(0),
            "image_url.url must be a string",
        ),
        (
            json!([{"role": "user", "content": [{"type": "input_audio", "data": "AAAA"}]}]),
            InvalidContentPart,
            Some(0),
            "input_audio part without input_audio",
        ),
        (
            json!([{"role": "user", "content": [{"type": "file", "file_id": "f"}]}]),
            InvalidContentPart,
            Some(0),
            "file part without file",
        ),
        (
            json!([{"role": "user", "content": [{"type": "file", "file": {"file_id": "f"}, "text": 1}]}]),
            InvalidContentPart,
            Some(0),
            "text must be a string",
        ),
        (
            json!([{"role": "user", "content": [{"type": "file", "file": {"file_id": "f", "text": null}}]}]),
            InvalidContentPart,
            Some(0),
            "file.text must be a string",
        ),
        (json!([ok, {"role": "tool", "content": "42"}]), InvalidMessage, Some(1), "tool message without tool_call_id"),
        (
            json!([{"role": "tool", "tool_call_id": null, "content": "42"}]),
            InvalidMessage,
            Some(0),
            "tool message without tool_call_id",
        ),
        (
            json!([{"role": "tool", "tool_call_id": 7, "content": "42"}]),
            InvalidMessage,
            Some(0),
            "tool_call_id must be a string",
        ),
        (json!([{"role": "function", "content": "42"}]), InvalidMessage, Some(0), "function message without name"),
        (json!([{"role": "user", "name": 5, "content": "hi"}]), InvalidMessage, Some(0), "name must be a string"),
        (
            json!([{"role": "assistant", "content": null, "tool_calls": {"id": "c"}}]),
            InvalidTool,
            Some(0),
            "tool_calls must be an array, got an object",
        ),
        (json!([{"role": "assistant", "tool_calls": ["c"]}]), InvalidTool, Some(0), "tool_calls[0] must be an object"),
        (
            json!([{"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}, {"id": "c", "type": "function", "function": {"arguments": "{}"}}]}]),
            InvalidTool,
            Some(0),
            "tool_calls[1].function without name",
        ),
        (
            json!([{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}]),
            InvalidTool,
            Some(0),
            "tool_calls[0] without id",
        ),
        (
            json!([{"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]}]),
            InvalidTool,
            Some(0),
            "tool_calls[0] without function",
        ),
        (
            json!([{"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}]),
            InvalidTool,
            Some(0),
            "tool_calls[0].function.arguments must be a string (JSON text), got an object",
        ),
        (
            json!([{"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}]}]),
            InvalidTool,
            Some(0),
            "without arguments",
        ),
        (
            json!([{"role": "assistant", "tool_calls": [{"id": "c", "type": "retrieval"}]}]),
            InvalidTool,
            Some(0),
            "unsupported type \"retrieval\"",
        ),
        (
            json!([{"role": "user", "content": "hi", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]),
            InvalidTool,
            Some(0),
            "only allowed on assistant messages",
        ),
        (
            json!([{"role": "assistant", "content": null, "function_call": {"arguments": "{}"}}]),
            InvalidTool,
            Some(0),
            "function_call without name",
        ),
        (
            json!([{"role": "assistant", "function_call": {"name": "f", "arguments": "{}"}, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]),
            InvalidTool,
            Some(0),
            "both tool_calls and function_call",
        ),
        (
            json!([{"role": "user", "content": "hi", "ctxguard": true}]),
            InvalidMessage,
            Some(0),
            "ctxguard must be an object, got a boolean",
        ),
        (json!([{"role": "user", "content": "hi", "ctxguard:wire": {}}]), InvalidMessage, Some(0), "reserved key"),
    ];
    for (input, code, index, text) in table {
        let e = err(input.clone());
        assert_eq!(e.code, code, "code for {input}: {e}");
        assert_eq!(e.index, index, "index for {input}: {e}");
        assert!(e.message.contains(text), "message for {input}: {:?} should contain {text:?}", e.message);
    }
}

#[test]
fn tool_definitions_parse() {
    let tools = parse_tools(&json!([
        {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}, "strict": true}},
        {"type": "function", "function": {"name": "ping"}},
        {"type": "custom", "custom": {"name": "sql", "description": "Run SQL", "format": {"type": "text"}}}
    ]))
    .unwrap();
    assert_eq!(tools.len(), 3);
    assert_eq!(tools[0].name, "get_weather");
    assert_eq!(tools[0].description.as_deref(), Some("Weather for a city"));
    assert_eq!(tools[0].parameters["required"], json!(["city"]));
    assert_eq!(tools[0].extra.get("strict"), Some(&json!(true)));
    assert_eq!(tools[1].parameters, Value::Null);
    assert_eq!(tools[2].name, "sql");
    assert_eq!(tools[2].description.as_deref(), Some("Run SQL"));
    assert_eq!(tools[2].parameters, Value::Null);

    let legacy =
        parse_tools(&json!([{"name": "calculator", "description": "math", "parameters": {"type": "object"}}])).unwrap();
    assert_eq!(legacy[0].name, "calculator");
    assert_eq!(legacy[0].parameters, json!({"type": "object"}));
    assert!(parse_tools(&Value::Null).unwrap().is_empty());

    let bad = [
        (json!({"type": "function"}), "tools must be an array"),
        (json!([{"type": "function", "function": {"name": "ok"}}, 3]), "tools[1]: tool must be an object"),
        (json!([{"type": "function", "function": {"description": "x"}}]), "tools[0]: function without name"),
        (json!([{"type": "function"}]), "tools[0]: function tool without function"),
        (json!([{"description": "no name"}]), "functions[0]: function without name"),
        (json!([{"type": "function", "function": {"name": "f", "description": 3}}]), "description must be a string"),
    ];
    for (input, text) in bad {
        let e = parse_tools(&input).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidTool);
        assert!(e.message.contains(text), "{:?} should contain {text:?}", e.message);
    }
}
