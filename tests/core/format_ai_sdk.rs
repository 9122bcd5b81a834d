//! AI SDK model-message adapter: exact round trips on a realistic AI SDK 5/6 conversation
//! (reasoning, tool calls and results of every output kind, images, files, approvals,
//! providerOptions), the parsed model, writing after ctxguard changed something, AI SDK 4
//! fields, tools, and errors (binary data among them).

use crate::support::pretty;
use ctxguard::format::ai_sdk::{parse_messages, parse_system, parse_tools, to_wire};
use ctxguard::format::{parse_request, write_request, Format};
use ctxguard::message::{Content, ImageSource, Message, Part, Role};
use ctxguard::ErrorCode;
use serde_json::{json, Value};

const ONE_PX_PNG_B64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// "Reiseplan\nTag 1: Asakusa\nTag 2: Kyoto 京都\n"
const PLAN_B64: &str = "UmVpc2VwbGFuClRhZyAxOiBBc2FrdXNhClRhZyAyOiBLeW90byDkuqzpg70K";

/// Written back as one list (the system messages, then the others).
fn written(m: &[Message]) -> Vec<Value> {
    let (system, messages) = to_wire(m);
    let mut all = system.and_then(|s| s.as_array().cloned()).unwrap_or_default();
    all.extend(messages);
    all
}

/// parse → to_wire gives back the same messages (values and key order; the inputs have their
/// system messages first).
fn roundtrip(input: &Value) -> Vec<Message> {
    let parsed = parse_messages(input).unwrap_or_else(|e| panic!("parse failed: {e}"));
    assert_eq!(pretty(&Value::Array(written(&parsed))), pretty(input), "messages changed");
    parsed
}

fn travel() -> Value {
    json!([
      {"role": "system", "content": "You are a travel assistant. Antworte kurz."},
      {"role": "user", "content": [
        {"type": "text", "text": "Plane eine Reise nach Tokyo 東京 ✈️"},
        {"type": "image", "image": format!("data:image/png;base64,{ONE_PX_PNG_B64}"), "mediaType": "image/png"},
        {"type": "file", "data": PLAN_B64, "mediaType": "text/plain", "filename": "plan.txt"},
        {"type": "file", "data": "https://example.com/ticket.pdf", "mediaType": "application/pdf",
         "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}}
      ], "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}},
      {"role": "assistant", "content": [
        {"type": "reasoning", "text": "Need weather and flights.", "providerOptions": {"anthropic": {"signature": "sig"}}},
        {"type": "text", "text": "Ich prüfe das Wetter."},
        {"type": "tool-call", "toolCallId": "call_1", "toolName": "weather", "input": {"city": "Tokyo", "days": [1, 2.5, {"unit": null}]}},
        {"type": "tool-call", "toolCallId": "call_2", "toolName": "flights", "input": {"from": "BER", "to": "HND"},
         "providerOptions": {"openai": {"itemId": "fc_1"}}}
      ]},
      {"role": "tool", "content": [
        {"type": "tool-result", "toolCallId": "call_1", "toolName": "weather", "output": {"type": "json", "value": {"temp_c": 18, "sky": "klar"}}},
        {"type": "tool-result", "toolCallId": "call_2", "toolName": "flights", "output": {"type": "text", "value": "LH 714 08:00"},
         "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}}
      ]},
      {"role": "assistant", "content": "Das Wetter ist klar. 🌤"},
      {"role": "user", "content": "Danke! Und Hotels?"},
      {"role": "assistant", "content": [
        {"type": "reasoning", "text": "Search hotels, needs approval."},
        {"type": "tool-call", "toolCallId": "call_3", "toolName": "book_hotel", "input": {"city": "Tokyo"}},
        {"type": "tool-approval-request", "approvalId": "ap_1", "toolCallId": "call_3"}
      ]},
      {"role": "tool", "content": [{"type": "tool-approval-response", "approvalId": "ap_1", "approved": true}]}
    ])
}

#[test]
fn travel_conversation_round_trips_and_parses() {
    let m = roundtrip(&travel());
    use Role::*;
    let roles: Vec<Role> = m.iter().map(|x| x.role).collect();
    assert_eq!(roles, vec![System, User, Assistant, Tool, Tool, Assistant, User, Assistant, Tool]);

    // User parts: text, a 1x1 image, a text file with its decoded text, an opaque PDF URL.
    let Content::Parts(parts) = &m[1].content else { panic!("parts") };
    assert!(matches!(&parts[0], Part::Text { text, .. } if text.contains("東京")));
    assert!(matches!(&parts[1], Part::Image { source: ImageSource::Url(_), width: Some(1), height: Some(1), .. }));
    match &parts[2] {
        Part::File { name, media_type, text, .. } => {
            assert_eq!(name.as_deref(), Some("plan.txt"));
            assert_eq!(media_type.as_deref(), Some("text/plain"));
            assert_eq!(text.as_deref(), Some("Reiseplan\nTag 1: Asakusa\nTag 2: Kyoto 京都\n"));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&parts[3], Part::File { text: None, .. }));
    assert!(m[1].extra.contains_key("providerOptions"));

    // Reasoning before the latest user message is not model-visible: kept out of the content.
    let Content::Parts(parts) = &m[2].content else { panic!("parts") };
    assert_eq!(parts.len(), 3);
    assert!(matches!(&parts[1], Part::ToolCallRef { index: 0 }));
    assert_eq!(m[2].tool_calls[0].arguments, r#"{"city":"Tokyo","days":[1,2.5,{"unit":null}]}"#);
    assert_eq!(m[2].tool_calls[1].extra["providerOptions"]["openai"]["itemId"], "fc_1");

    // The tool message became one message per result.
    assert_eq!(m[3].tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(m[3].name.as_deref(), Some("weather"));
    assert_eq!(m[3].content, Content::Text(r#"{"temp_c":18,"sky":"klar"}"#.into()));
    assert_eq!(m[4].content, Content::Text("LH 714 08:00".into()));
    assert_eq!((m[3].wire.group, m[4].wire.group), (Some(3), Some(3)));

    // Current-turn reasoning is counted as text; the approval response answers call_3.
    let Content::Parts(parts) = &m[7].content else { panic!("parts") };
    assert!(
        matches!(&parts[0], Part::Text { text, extra } if text.starts_with("Search") && extra["type"] == "reasoning")
    );
    assert_eq!(parts.len(), 2);
    assert_eq!(m[8].tool_call_id.as_deref(), Some("call_3"));
    assert!(m[8].content.is_empty());
}

#[test]
fn every_output_kind_round_trips() {
    let input = json!([
      {"role": "assistant", "content": [
        {"type": "tool-call", "toolCallId": "a", "toolName": "t", "input": {}},
        {"type": "tool-call", "toolCallId": "b", "toolName": "t", "input": "raw"},
        {"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": null},
        {"type": "tool-call", "toolCallId": "d", "toolName": "t", "input": [1]},
        {"type": "tool-call", "toolCallId": "e", "toolName": "t", "input": {}},
        {"type": "tool-call", "toolCallId": "f", "toolName": "t", "input": {}},
        {"type": "tool-call", "toolCallId": "g", "toolName": "t", "input": {}},
        {"type": "tool-call", "toolCallId": "ws", "toolName": "web_search", "input": {"q": "x"}, "providerExecuted": true},
        {"type": "tool-result", "toolCallId": "ws", "toolName": "web_search", "output": {"type": "json", "value": [{"url": "https://a"}]}}
      ]},
      {"role": "tool", "content": [
        {"type": "tool-result", "toolCallId": "a", "toolName": "t", "output": {"type": "error-text", "value": "boom"}},
        {"type": "tool-result", "toolCallId": "b", "toolName": "t", "output": {"type": "error-json", "value": {"code": 500}, "providerOptions": {"x": {"y": 1}}}},
        {"type": "tool-result", "toolCallId": "c", "toolName": "t", "output": {"type": "execution-denied"}},
        {"type": "tool-result", "toolCallId": "d", "toolName": "t", "output": {"type": "execution-denied", "reason": "Nein."}},
        {"type": "tool-result", "toolCallId": "e", "toolName": "t", "output": {"type": "content", "value": [
          {"type": "text", "text": "Screenshot:"},
          {"type": "image-data", "data": ONE_PX_PNG_B64, "mediaType": "image/png"},
          {"type": "media", "data": ONE_PX_PNG_B64, "mediaType": "image/png"},
          {"type": "file-data", "data": PLAN_B64, "mediaType": "text/plain", "filename": "p.txt"},
          {"type": "image-url", "url": "https://example.com/a.png"},
          {"type": "file-id", "fileId": {"openai": "file-1"}}
        ]}},
        {"type": "tool-result", "toolCallId": "f", "toolName": "t", "output": {"type": "future-kind", "value": 1}},
        {"type": "tool-result", "toolCallId": "g", "toolName": "t", "output": {"value": "v", "type": "text"}, "ctxguard": {"compactedToolOutput": true}}
      ], "providerOptions": {"z": {}}}
    ]);
    let m = roundtrip(&input);
    assert_eq!(m.len(), 8);
    assert_eq!(m[0].tool_calls.len(), 7, "the provider-executed call is not paired");
    assert_eq!(m[3].content, Content::Text("Tool execution denied.".into()));
    let Content::Parts(items) = &m[5].content else { panic!("parts") };
    assert!(matches!(&items[1], Part::Image { source: ImageSource::Base64 { .. }, width: Some(1), .. }));
    assert!(matches!(&items[2], Part::Image { width: Some(1), .. }));
    assert!(matches!(&items[3], Part::File { text: Some(t), .. } if t.starts_with("Reiseplan")));
    assert!(matches!(&items[4], Part::Image { source: ImageSource::Url(_), .. }));
    assert!(matches!(&items[5], Part::Unknown { .. }));
    assert!(m[7].markers.compacted_tool_output);
}

#[test]
fn key_orders_and_strings_round_trip() {
    roundtrip(&json!([
      {"content": "sys", "providerOptions": {"a": 1}, "role": "system"},
      {"id": "u1", "content": [{"text": "hi", "type": "text"}], "role": "user", "ctxguard": {"pinned": true, "x": 1}},
      {"content": [{"input": {"b": 1, "a": 2}, "toolName": "t", "type": "tool-call", "toolCallId": "1"}], "role": "assistant"},
      {"content": [{"output": {"value": {"z": 1, "a": [3, 2]}, "type": "json"}, "toolName": "t", "toolCallId": "1", "type": "tool-result"}], "role": "tool"},
      {"role": "user", "content": ""},
      {"role": "assistant", "content": []}
    ]));
}

#[test]
fn ai_sdk_4_core_messages_round_trip() {
    let m = roundtrip(&json!([
      {"role": "user", "content": [{"type": "image", "image": ONE_PX_PNG_B64, "mimeType": "image/png"},
                                   {"type": "file", "data": PLAN_B64, "mimeType": "text/markdown"}]},
      {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "get", "args": {"id": 7}}]},
      {"role": "tool", "content": [
        {"type": "tool-result", "toolCallId": "c1", "toolName": "get", "result": {"ok": true}, "isError": false},
        {"type": "tool-result", "toolCallId": "c1", "toolName": "get", "result": "plain"}
      ]}
    ]));
    assert!(matches!(&m[0].content, Content::Parts(p) if matches!(&p[0], Part::Image { width: Some(1), .. })));
    assert!(matches!(&m[0].content, Content::Parts(p) if matches!(&p[1], Part::File { text: Some(_), .. })));
    assert_eq!(m[1].tool_calls[0].arguments, r#"{"id":7}"#);
    assert_eq!(m[2].content, Content::Text(r#"{"ok":true}"#.into()));
    assert_eq!(m[3].content, Content::Text("plain".into()));
}

#[test]
fn ai_sdk_7_file_data_round_trips() {
    let m = roundtrip(&json!([
      {"role": "user", "content": [
        {"type": "file", "data": {"type": "text", "text": "Inline notes 📝"}, "mediaType": "text", "filename": "n.txt"},
        {"type": "file", "data": {"type": "url", "url": "https://example.com/a.pdf"}, "mediaType": "application/pdf"},
        {"type": "file", "data": {"type": "reference", "reference": {"openai": "file-1"}}, "mediaType": "application/pdf"},
        {"type": "file", "data": {"openai": "file-2"}, "mediaType": "application/pdf"},
        {"type": "file", "data": {"type": "data", "data": ONE_PX_PNG_B64}, "mediaType": "image"},
        {"type": "image", "image": {"anthropic": "file-3"}}
      ]},
      {"role": "assistant", "content": [{"type": "custom", "kind": "x"}, {"type": "reasoning-file", "data": "AA==", "mediaType": "image/png"}, {"type": "text", "text": "ok"}]}
    ]));
    let Content::Parts(parts) = &m[0].content else { panic!("parts") };
    assert!(matches!(&parts[0], Part::File { text: Some(t), .. } if t == "Inline notes 📝"));
    assert!(matches!(&parts[1], Part::File { text: None, .. }));
    assert!(matches!(&parts[3], Part::File { text: None, .. }));
    assert!(matches!(&parts[4], Part::Image { width: Some(1), .. }));
    assert!(matches!(&parts[5], Part::Image { source: ImageSource::Other, .. }));
    let Content::Parts(parts) = &m[1].content else { panic!("parts") };
    assert_eq!(parts.len(), 2, "the reasoning file is kept out of the content");

    // A preview of an inline text file stays inline text.
    let mut m = m;
    if let Content::Parts(parts) = &mut m[0].content {
        if let Part::File { text, .. } = &mut parts[0] {
            *text = Some("Inline [preview]".into());
        }
    }
    assert_eq!(written(&m)[0]["content"][0]["data"], json!({"type": "text", "text": "Inline [preview]"}));
}

#[test]
fn changed_outputs_and_files_stay_valid() {
    let mut m = parse_messages(&travel()).unwrap();
    // A JSON output compacted to other JSON stays a json output; one cut as lines becomes text.
    m[3].content = Content::Text(r#"{"temp_c":18,"_ctxguard":"cut"}"#.into());
    m[4].content = Content::Text("LH 714 [cut]".into());
    // An attachment preview of the text file is written back as the file's data.
    if let Content::Parts(parts) = &mut m[1].content {
        if let Part::File { text, .. } = &mut parts[2] {
            *text = Some("Reiseplan [preview]".into());
        }
    }
    let out = written(&m);
    assert_eq!(out[3]["content"][0]["output"], json!({"type": "json", "value": {"temp_c": 18, "_ctxguard": "cut"}}));
    assert_eq!(out[3]["content"][1]["output"], json!({"type": "text", "value": "LH 714 [cut]"}));
    let data = out[1]["content"][2]["data"].as_str().unwrap();
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    assert_eq!(String::from_utf8(decoded).unwrap(), "Reiseplan [preview]");

    m[3].content = Content::Text("not json any more".into());
    let out = written(&m);
    assert_eq!(out[3]["content"][0]["output"], json!({"type": "text", "value": "not json any more"}));
}

#[test]
fn dropped_calls_take_their_approval_request_and_pieces_merge() {
    let mut m = parse_messages(&travel()).unwrap();
    // Pair sanitation dropped call_3 and its (approval) result.
    m[7].tool_calls.clear();
    m[7].content = Content::Parts(vec![Part::Text { text: "ok".into(), extra: Default::default() }]);
    m.truncate(8);
    let out = written(&m);
    assert_eq!(out.len(), 7);
    assert_eq!(out[6]["content"], json!([{"type": "text", "text": "ok"}]));

    // Messages ctxguard created: a summary system message and ungrouped tool results merge.
    let mut created = vec![Message::text(Role::System, "[ctxguard:summary] x")];
    created[0].markers.summary_compacted = true;
    created.push(Message {
        role: Role::Tool,
        tool_call_id: Some("a".into()),
        name: Some("t".into()),
        ..Message::text(Role::Tool, "1")
    });
    created.push(Message { role: Role::Tool, tool_call_id: Some("b".into()), ..Message::text(Role::Tool, "2") });
    let (system, messages) = to_wire(&created);
    assert_eq!(
        system,
        Some(json!([{"role": "system", "content": "[ctxguard:summary] x", "ctxguard": {"summaryCompacted": true}}]))
    );
    assert_eq!(
        Value::Array(messages),
        json!([
          {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "a", "toolName": "t", "output": {"type": "text", "value": "1"}},
            {"type": "tool-result", "toolCallId": "b", "output": {"type": "text", "value": "2"}}
          ]}
        ])
    );
}

#[test]
fn system_option_and_request_round_trip() {
    let msgs = json!([{"role": "user", "content": "Hi"}]);
    let with_options = json!({"role": "system", "content": "Be brief.", "providerOptions": {"a": {}}});
    for (sys, back) in [
        (json!("Be brief."), json!([{"role": "system", "content": "Be brief."}])),
        (with_options.clone(), json!([with_options])),
        (
            json!([with_options, {"role": "system", "content": "Zwei"}]),
            json!([with_options, {"role": "system", "content": "Zwei"}]),
        ),
    ] {
        let r = parse_request(Format::AiSdk, &msgs, Some(&sys), None).unwrap();
        assert_eq!(r.messages[0].content.text(), "Be brief.");
        assert_eq!(write_request(Format::AiSdk, &r), (Some(back), vec![msgs[0].clone()]));
    }
    // System messages in `messages` (AI SDK 5/6 style) are written into `system` too, in order.
    let inline = json!([{"role": "system", "content": "A"}, {"role": "user", "content": "Hi"}, {"role": "system", "content": "B"}]);
    let r = parse_request(Format::AiSdk, &inline, None, None).unwrap();
    assert_eq!(
        write_request(Format::AiSdk, &r),
        (
            Some(json!([{"role": "system", "content": "A"}, {"role": "system", "content": "B"}])),
            vec![inline[1].clone()]
        )
    );
    assert_eq!(parse_system(&json!(["x"])).unwrap_err().code, ErrorCode::InvalidOptions);
    assert_eq!(parse_system(&json!(1)).unwrap_err().code, ErrorCode::InvalidOptions);
    assert_eq!(parse_system(&json!({"role": "user", "content": "x"})).unwrap_err().code, ErrorCode::InvalidOptions);
    assert_eq!(Format::from_name("ai-sdk").unwrap(), Format::AiSdk);
    assert_eq!(serde_json::to_value(Format::AiSdk).unwrap(), json!("ai-sdk"));
}

#[test]
fn tool_sets_are_read() {
    let tools = parse_tools(&json!({
      "weather": {"description": "Weather of a city", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
      "wrapped": {"inputSchema": {"jsonSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}},
      "v4": {"parameters": {"type": "object", "properties": {}}},
      "web_search": {"type": "provider-defined", "id": "openai.web_search", "args": {}}
    }))
    .unwrap();
    assert_eq!(tools.len(), 4);
    assert_eq!(tools[0].name, "weather");
    assert_eq!(tools[0].description.as_deref(), Some("Weather of a city"));
    assert_eq!(tools[1].parameters["properties"]["q"]["type"], "string");
    assert_eq!(tools[3].parameters, Value::Null);
    let zod = parse_tools(&json!({"t": {"inputSchema": {"~standard": {"vendor": "zod", "version": 1}, "def": {}}}}))
        .unwrap_err();
    assert_eq!(zod.code, ErrorCode::InvalidTool);
    assert!(zod.message.contains("asSchema"), "{}", zod.message);
    assert_eq!(parse_tools(&json!([])).unwrap_err().code, ErrorCode::InvalidTool);
    assert!(parse_tools(&Value::Null).unwrap().is_empty());
}

#[test]
fn malformed_messages_are_typed_errors() {
    let cases: Vec<(Value, ErrorCode, &str)> = vec![
        (json!({}), ErrorCode::InvalidMessages, "messages must be an array"),
        (json!([1]), ErrorCode::InvalidMessage, "messages[0]: message must be an object"),
        (json!([{"role": "developer", "content": "x"}]), ErrorCode::InvalidRole, "unknown role"),
        (json!([{"role": "user"}]), ErrorCode::InvalidMessage, "without content"),
        (
            json!([{"role": "system", "content": [{"type": "text", "text": "x"}]}]),
            ErrorCode::InvalidMessage,
            "must be a string",
        ),
        (json!([{"role": "tool", "content": []}]), ErrorCode::InvalidMessage, "non-empty array"),
        (
            json!([{"role": "user", "content": [{"type": "text"}]}]),
            ErrorCode::InvalidContentPart,
            "content[0]: text part without text",
        ),
        (
            json!([{"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "1", "toolName": "t"}]}]),
            ErrorCode::InvalidTool,
            "without input",
        ),
        (
            json!([{"role": "tool", "content": [{"type": "tool-result", "toolCallId": "1", "toolName": "t"}]}]),
            ErrorCode::InvalidTool,
            "without output",
        ),
        (
            json!([{"role": "tool", "content": [{"type": "tool-result", "toolCallId": "1", "output": {"type": "text", "value": 1}}]}]),
            ErrorCode::InvalidContentPart,
            "value must be a string",
        ),
        // Binary data after JSON.stringify: a Uint8Array, a Buffer, an ArrayBuffer.
        (
            json!([{"role": "user", "content": [{"type": "image", "image": {"0": 137, "1": 80}}]}]),
            ErrorCode::InvalidContentPart,
            "binary data",
        ),
        (
            json!([{"role": "user", "content": [{"type": "file", "data": {"type": "Buffer", "data": [1]}, "mediaType": "application/pdf"}]}]),
            ErrorCode::InvalidContentPart,
            "binary data",
        ),
        (
            json!([{"role": "user", "content": [{"type": "file", "data": {}, "mediaType": "text/plain"}]}]),
            ErrorCode::InvalidContentPart,
            "binary data",
        ),
        (
            json!([{"role": "user", "content": "x", "ctxguard": 1}]),
            ErrorCode::InvalidMessage,
            "ctxguard must be an object",
        ),
    ];
    for (input, code, needle) in cases {
        let e = parse_messages(&input).unwrap_err();
        assert_eq!(e.code, code, "{input}: {e}");
        assert!(e.message.contains(needle), "{input}: {}", e.message);
    }
}
