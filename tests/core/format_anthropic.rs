//! Anthropic Messages adapter: exact round trips on realistic requests (system blocks, thinking,
//! tool_use / tool_result, documents, images), the parsed model, writing messages ctxguard
//! created, and errors for malformed input.

use crate::support::pretty;
use ctxguard::format::anthropic::{parse_messages, parse_tools, to_wire};
use ctxguard::message::{Content, ImageSource, Message, Part, Role};
use ctxguard::ErrorCode;
use serde_json::{json, Value};

/// parse → to_wire gives back the same system and messages (values and key order).
fn roundtrip(system: Option<&str>, messages: &str) -> Vec<Message> {
    let system: Option<Value> = system.map(|s| serde_json::from_str(s).unwrap());
    let input: Value = serde_json::from_str(messages).unwrap();
    let parsed = parse_messages(&input, system.as_ref()).unwrap_or_else(|e| panic!("parse failed: {e}"));
    let (sys_back, back) = to_wire(&parsed);
    assert_eq!(sys_back.as_ref().map(pretty), system.as_ref().map(pretty), "system changed");
    assert_eq!(pretty(&Value::Array(back)), pretty(&input), "messages changed");
    parsed
}

const SYSTEM_BLOCKS: &str = r#"[
  {"type": "text", "text": "You are Claude Code, a coding agent. Be concise."},
  {"type": "text", "text": "<repo>ctxguard: Rust → WebAssembly</repo>", "cache_control": {"type": "ephemeral"}}
]"#;

const CODING_SESSION: &str = r#"[
  {"role": "user", "content": "Fix the failing test in src/lib.rs, bitte. 🙏"},
  {"role": "assistant", "content": [
    {"type": "thinking", "thinking": "Run the tests first, then read lib.rs.", "signature": "EqQBCkYIBxgCKkBZ..."},
    {"type": "text", "text": "Ich führe zuerst die Tests aus."},
    {"type": "tool_use", "id": "toolu_01A", "name": "bash", "input": {"command": "cargo test 2>&1 | tail -20", "timeout": 120.5}},
    {"type": "tool_use", "id": "toolu_01B", "name": "read_file", "input": {"path": "src/lib.rs", "range": [1, 80], "opts": {"z": null, "a": true}}},
    {"type": "text", "text": "Warte auf die Ausgabe…"}
  ]},
  {"role": "user", "content": [
    {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "test tests::sum ... FAILED\nassertion failed: 2 + 2 == 5", "is_error": true},
    {"type": "tool_result", "tool_use_id": "toolu_01B", "content": [
      {"type": "text", "text": "pub fn sum(a: i32, b: i32) -> i32 { a - b }"}
    ], "cache_control": {"type": "ephemeral"}},
    {"type": "text", "text": "Also: keep the public API stable."}
  ]},
  {"role": "assistant", "content": [
    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"},
    {"type": "tool_use", "id": "toolu_01C", "name": "edit", "input": {"path": "src/lib.rs", "old": "a - b", "new": "a + b"}, "cache_control": {"type": "ephemeral"}}
  ]},
  {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01C"}]},
  {"role": "assistant", "content": "Behoben: `sum` addiert jetzt. ✅"}
]"#;

#[test]
fn coding_session_with_system_blocks_round_trips() {
    let m = roundtrip(Some(SYSTEM_BLOCKS), CODING_SESSION);
    // system + 6 wire messages, the third split into 2 tool results + 1 user message.
    let roles: Vec<Role> = m.iter().map(|x| x.role).collect();
    use Role::*;
    assert_eq!(roles, vec![System, User, Assistant, Tool, Tool, User, Assistant, Tool, Assistant]);

    let Content::Parts(sys) = &m[0].content else { panic!("system blocks expected") };
    match &sys[1] {
        Part::Text { text, extra } => {
            assert_eq!(text, "<repo>ctxguard: Rust → WebAssembly</repo>");
            assert_eq!(extra["cache_control"], json!({"type": "ephemeral"}));
        }
        other => panic!("{other:?}"),
    }

    let a = &m[2];
    assert_eq!(a.tool_calls.len(), 2);
    assert_eq!(a.tool_calls[0].id, "toolu_01A");
    assert_eq!(a.tool_calls[0].arguments, r#"{"command":"cargo test 2>&1 | tail -20","timeout":120.5}"#);
    assert_eq!(a.tool_calls[1].arguments, r#"{"path":"src/lib.rs","range":[1,80],"opts":{"z":null,"a":true}}"#);
    let Content::Parts(parts) = &a.content else { panic!() };
    assert!(matches!(&parts[0], Part::Unknown { value } if value["type"] == "thinking"));
    assert!(matches!(&parts[1], Part::Text { .. }));
    assert_eq!(parts[2], Part::ToolCallRef { index: 0 });
    assert_eq!(parts[3], Part::ToolCallRef { index: 1 });
    assert!(matches!(&parts[4], Part::Text { .. }));
    assert_eq!(a.content.text(), "Ich führe zuerst die Tests aus.\nWarte auf die Ausgabe…");

    let (t1, t2, u) = (&m[3], &m[4], &m[5]);
    assert_eq!(t1.tool_call_id.as_deref(), Some("toolu_01A"));
    assert_eq!(t1.extra.get("is_error"), Some(&json!(true)));
    assert!(t1.wire.content_was_string);
    assert_eq!((t1.wire.group, t1.wire.block), (Some(2), Some(0)));
    assert_eq!(t2.content.text(), "pub fn sum(a: i32, b: i32) -> i32 { a - b }");
    assert_eq!(t2.extra.get("cache_control"), Some(&json!({"type": "ephemeral"})));
    assert_eq!((t2.wire.group, t2.wire.block), (Some(2), Some(1)));
    assert_eq!(u.content.text(), "Also: keep the public API stable.");
    assert_eq!((u.wire.group, u.wire.block), (Some(2), Some(2)));

    assert_eq!(m[6].tool_calls[0].extra.get("cache_control"), Some(&json!({"type": "ephemeral"})));
    assert!(m[7].wire.content_was_null);
    assert!(m[7].content.is_empty());
    assert!(m[8].wire.content_was_string);
}

#[test]
fn no_system_and_string_system_round_trip() {
    let m = roundtrip(
        None,
        r#"[{"role": "user", "content": "こんにちは"}, {"role": "assistant", "content": "こんにちは！"}]"#,
    );
    assert_eq!(m.len(), 2);
    let m = roundtrip(Some(r#""Réponds en français.""#), r#"[{"role": "user", "content": "Salut"}]"#);
    assert_eq!(m[0].role, Role::System);
    assert_eq!(m[0].content, Content::Text("Réponds en français.".into()));
    roundtrip(Some(r#""""#), r#"[]"#);
    roundtrip(Some("[]"), r#"[{"role": "user", "content": []}]"#);
    // `system: null` is the same as no system.
    let parsed = parse_messages(&json!([]), Some(&Value::Null)).unwrap();
    assert!(parsed.is_empty());
    assert_eq!(to_wire(&parsed), (None, vec![]));
}

const ONE_PX_PNG_B64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

#[test]
fn documents_and_images_round_trip() {
    let messages = format!(
        r#"[
      {{"role": "user", "content": [
        {{"type": "document", "source": {{"type": "text", "media_type": "text/plain", "data": "Die Katze sitzt auf der Matte.\nThe grass is green."}}, "title": "notes.txt", "context": "Field notes", "citations": {{"enabled": true}}}},
        {{"type": "document", "source": {{"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjcKJcfsj6IK"}}, "cache_control": {{"type": "ephemeral"}}}},
        {{"type": "document", "source": {{"type": "url", "url": "https://arxiv.org/pdf/1706.03762"}}, "title": "Attention Is All You Need", "text": "Abstract: The dominant sequence transduction models..."}},
        {{"type": "document", "source": {{"type": "content", "content": [{{"type": "text", "text": "Chunk one."}}, {{"type": "text", "text": "Chunk two."}}]}}, "title": "chunks"}},
        {{"type": "document", "source": {{"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}}}},
        {{"type": "image", "source": {{"type": "base64", "media_type": "image/png", "data": "{ONE_PX_PNG_B64}"}}}},
        {{"type": "image", "source": {{"type": "url", "url": "https://upload.wikimedia.org/wikipedia/commons/a/a7/Camponotus_flavomarginatus_ant.jpg"}}, "width": 1200, "height": 800}},
        {{"type": "image", "source": {{"type": "file", "file_id": "file_abc"}}}},
        {{"type": "text", "text": "Fasse alles zusammen und beschreibe die Bilder."}}
      ]}},
      {{"role": "assistant", "content": [
        {{"type": "text", "text": "Laut den Notizen ", "citations": null}},
        {{"type": "text", "text": "sitzt die Katze auf der Matte", "citations": [{{"type": "char_location", "cited_text": "Die Katze sitzt auf der Matte.", "document_index": 0, "document_title": "notes.txt", "start_char_index": 0, "end_char_index": 30}}]}},
        {{"type": "text", "text": "."}}
      ]}}
    ]"#
    );
    let m = roundtrip(None, &messages);
    let Content::Parts(p) = &m[0].content else { panic!() };
    match &p[0] {
        Part::File { name, media_type, text, .. } => {
            assert_eq!(name.as_deref(), Some("notes.txt"));
            assert_eq!(media_type.as_deref(), Some("text/plain"));
            assert_eq!(text.as_deref(), Some("Die Katze sitzt auf der Matte.\nThe grass is green."));
        }
        other => panic!("{other:?}"),
    }
    match &p[1] {
        Part::File { name, media_type, text, .. } => {
            assert_eq!(
                (name.as_deref(), media_type.as_deref(), text.as_deref()),
                (None, Some("application/pdf"), None)
            );
        }
        other => panic!("{other:?}"),
    }
    match &p[2] {
        Part::File { text, .. } => assert!(text.as_deref().unwrap().starts_with("Abstract:")),
        other => panic!("{other:?}"),
    }
    match &p[3] {
        Part::File { text, .. } => assert_eq!(text.as_deref(), Some("Chunk one.\nChunk two.")),
        other => panic!("{other:?}"),
    }
    match &p[5] {
        Part::Image { source: ImageSource::Base64 { media_type, .. }, width, height, .. } => {
            assert_eq!(media_type, "image/png");
            assert_eq!((*width, *height), (Some(1), Some(1)));
        }
        other => panic!("{other:?}"),
    }
    match &p[6] {
        Part::Image { source: ImageSource::Url(u), width, height, .. } => {
            assert!(u.ends_with("ant.jpg"));
            assert_eq!((*width, *height), (Some(1200), Some(800)));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&p[7], Part::Image { source: ImageSource::Other, .. }));
}

#[test]
fn replaced_document_text_is_written_back_into_the_source() {
    let input = json!([{"role": "user", "content": [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "long text ..."}, "title": "a.txt"},
        {"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": "c1"}]}}
    ]}]);
    let mut m = parse_messages(&input, None).unwrap();
    let Content::Parts(parts) = &mut m[0].content else { panic!() };
    for p in parts.iter_mut() {
        if let Part::File { text, .. } = p {
            *text = Some("[preview] long…".into());
        }
    }
    let (_, out) = to_wire(&m);
    assert_eq!(
        Value::Array(out),
        json!([{"role": "user", "content": [
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "[preview] long…"}, "title": "a.txt"},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "[preview] long…"}}
        ]}])
    );
}

#[test]
fn server_tools_and_interleaved_blocks_round_trip() {
    let m = roundtrip(
        Some(r#""You can search the web.""#),
        r#"[
      {"role": "user", "content": [{"type": "text", "text": "Wer hat 2024 den Physik-Nobelpreis bekommen?"}]},
      {"role": "assistant", "content": [
        {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "Nobelpreis Physik 2024"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [
          {"type": "web_search_result", "url": "https://www.nobelprize.org/prizes/physics/2024/summary/", "title": "The Nobel Prize in Physics 2024", "encrypted_content": "EqgfCioIARgBIiQ3YTAw", "page_age": "October 8, 2024"}
        ]},
        {"type": "text", "text": "John Hopfield und Geoffrey Hinton."},
        {"type": "tool_use", "id": "toolu_X", "name": "save_note", "input": {}}
      ]},
      {"role": "user", "content": [
        {"type": "text", "text": "Vorher noch:"},
        {"type": "tool_result", "tool_use_id": "toolu_X", "content": "saved"},
        {"type": "text", "text": "und danach."},
        {"type": "search_result", "source": "https://wiki.example/x", "title": "X", "content": [{"type": "text", "text": "x"}]}
      ]}
    ]"#,
    );
    let a = &m[2];
    let Content::Parts(parts) = &a.content else { panic!() };
    assert!(matches!(&parts[0], Part::Unknown { value } if value["type"] == "server_tool_use"));
    assert!(matches!(&parts[1], Part::Unknown { .. }));
    assert_eq!(parts[3], Part::ToolCallRef { index: 0 });
    assert_eq!(a.tool_calls.len(), 1);
    assert_eq!(a.tool_calls[0].arguments, "{}");
    // Tool result first (block 1), then the user's other blocks (first at block 0).
    assert_eq!(m[3].role, Role::Tool);
    assert_eq!(m[3].wire.block, Some(1));
    assert_eq!(m[4].role, Role::User);
    assert_eq!(m[4].wire.block, Some(0));
    assert_eq!(m[4].content.text(), "Vorher noch:\nund danach.");
}

#[test]
fn message_level_fields_and_key_order_round_trip() {
    let m = roundtrip(
        None,
        r#"[
      {"id": "m1", "role": "user", "content": "Hallo", "createdAt": "2025-03-14T10:00:00Z"},
      {"content": [{"text": "Hi!", "type": "text"}], "role": "assistant", "id": "m2", "model": "claude-sonnet-4-5"},
      {"role": "assistant", "content": [{"type": "tool_use", "name": "t", "input": {"b": 1, "a": [2, {"y": 1, "x": 0}]}, "id": "toolu_1"}]},
      {"id": "m4", "role": "user", "content": [{"tool_use_id": "toolu_1", "type": "tool_result", "content": "ok", "is_error": false}], "createdAt": 5, "ctxguard": {"pinned": true}},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "x", "ctxguard": {"compactedToolOutput": true}}, {"type": "text", "text": "weiter"}], "ctxguard": {"checkpointRetained": true}}
    ]"#,
    );
    assert_eq!(m[0].id.as_deref(), Some("m1"));
    assert_eq!(m[0].extra.get("createdAt"), Some(&json!("2025-03-14T10:00:00Z")));
    assert_eq!(m[1].id.as_deref(), Some("m2"));
    assert_eq!(m[2].tool_calls[0].arguments, r#"{"b":1,"a":[2,{"y":1,"x":0}]}"#);
    // A user message of only tool results: its own fields ride along with the tool message.
    assert_eq!(m[3].role, Role::Tool);
    assert_eq!(m[3].extra.get("is_error"), Some(&json!(false)));
    assert!(!m[3].markers.pinned);
    // Tool result markers live on the block, the message's on the user part.
    assert!(m[4].markers.compacted_tool_output);
    assert!(m[5].markers.checkpoint_retained);
    assert!(!m[4].markers.checkpoint_retained);
}

#[test]
fn messages_created_by_ctxguard_are_written_canonically() {
    let input = json!([
        {"role": "user", "content": "Plane die Reise."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "search", "input": {"q": "Zug"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "3 Verbindungen"}]}
    ]);
    let mut m = parse_messages(&input, Some(&json!("Du bist ein Reiseplaner."))).unwrap();

    // A pinned evidence note in the middle of the conversation, and a new tool round
    // written the OpenAI way (one Tool message per result, no wire info).
    let mut note = Message::text(Role::System, "Evidence: search(q=Zug) → 3 Verbindungen");
    note.markers.pinned = true;
    m.insert(2, note);
    let mut call = Message::text(Role::Assistant, "Ich prüfe beide.");
    call.tool_calls = vec![
        ctxguard::ToolCall {
            id: "toolu_b".into(),
            name: "price".into(),
            arguments: r#"{"train":1}"#.into(),
            extra: Default::default(),
        },
        ctxguard::ToolCall {
            id: "toolu_c".into(),
            name: "price".into(),
            arguments: "not json".into(),
            extra: Default::default(),
        },
    ];
    let mut r1 = Message::text(Role::Tool, "49 €");
    r1.tool_call_id = Some("toolu_b".into());
    let mut r2 = Message::text(Role::Tool, "[output truncated]");
    r2.tool_call_id = Some("toolu_c".into());
    r2.markers.compacted_tool_output = true;
    m.extend([call, r1, r2, Message::text(Role::User, "Nimm den günstigeren.")]);

    let (system, out) = to_wire(&m);
    assert_eq!(system, Some(json!("Du bist ein Reiseplaner.\n\nEvidence: search(q=Zug) → 3 Verbindungen")));
    assert_eq!(
        pretty(&Value::Array(out)),
        pretty(&json!([
            {"role": "user", "content": "Plane die Reise."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "search", "input": {"q": "Zug"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "3 Verbindungen"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Ich prüfe beide."},
                {"type": "tool_use", "id": "toolu_b", "name": "price", "input": {"train": 1}},
                {"type": "tool_use", "id": "toolu_c", "name": "price", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "49 €"},
                {"type": "tool_result", "tool_use_id": "toolu_c", "content": "[output truncated]", "ctxguard": {"compactedToolOutput": true}}
            ]},
            {"role": "user", "content": "Nimm den günstigeren."}
        ]))
    );

    // With block system prompts, notes are appended as blocks after the cached ones.
    let mut m =
        parse_messages(&json!([{"role": "user", "content": "x"}]), Some(&serde_json::from_str(SYSTEM_BLOCKS).unwrap()))
            .unwrap();
    m.push(Message::text(Role::System, "Note."));
    let (system, _) = to_wire(&m);
    let blocks = system.unwrap();
    assert_eq!(blocks.as_array().unwrap().len(), 3);
    assert_eq!(blocks[1]["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(blocks[2], json!({"type": "text", "text": "Note."}));
}

#[test]
fn dropping_a_split_tool_result_keeps_the_rest_in_order() {
    let input = json!([
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "a", "input": {}},
            {"type": "tool_use", "id": "t2", "name": "b", "input": {}}
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "r1"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "r2"},
            {"type": "text", "text": "go on"}
        ]}
    ]);
    let mut m = parse_messages(&input, None).unwrap();
    // Sanitizing removes the first call and its result.
    m[0].tool_calls.remove(0);
    m[0].content = Content::Parts(vec![Part::ToolCallRef { index: 0 }]);
    m.remove(1);
    let (_, out) = to_wire(&m);
    assert_eq!(
        Value::Array(out),
        json!([
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "b", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t2", "content": "r2"},
                {"type": "text", "text": "go on"}
            ]}
        ])
    );
}

#[test]
fn dropping_an_interleaved_tool_result_keeps_block_order() {
    let input = json!([{"role": "user", "content": [
        {"type": "text", "text": "A"},
        {"type": "tool_result", "tool_use_id": "x", "content": "X"},
        {"type": "tool_result", "tool_use_id": "y", "content": "Y"},
        {"type": "text", "text": "B"}
    ]}]);
    let mut m = parse_messages(&input, None).unwrap();
    assert_eq!(m.iter().map(|x| x.role).collect::<Vec<_>>(), vec![Role::Tool, Role::Tool, Role::User]);
    m.remove(0);
    let (_, out) = to_wire(&m);
    assert_eq!(
        Value::Array(out),
        json!([{"role": "user", "content": [
            {"type": "text", "text": "A"},
            {"type": "tool_result", "tool_use_id": "y", "content": "Y"},
            {"type": "text", "text": "B"}
        ]}])
    );
}

#[test]
fn input_is_never_mutated_and_parsing_is_repeatable() {
    let input: Value = serde_json::from_str(CODING_SESSION).unwrap();
    let system: Value = serde_json::from_str(SYSTEM_BLOCKS).unwrap();
    let (before, sys_before) = (input.clone(), system.clone());
    let a = parse_messages(&input, Some(&system)).unwrap();
    let (s, w) = to_wire(&a);
    let b = parse_messages(&Value::Array(w), s.as_ref()).unwrap();
    assert_eq!((input, system), (before, sys_before));
    assert_eq!(a, b);
}

#[test]
fn malformed_requests_get_typed_errors() {
    use ErrorCode::*;
    let ok = json!({"role": "user", "content": "hi"});
    let table: Vec<(Value, ErrorCode, Option<usize>, &str)> = vec![
        (json!({"role": "user"}), InvalidMessages, None, "messages must be an array, got an object"),
        (json!([ok, "hi"]), InvalidMessage, Some(1), "messages[1]: message must be an object, got a string"),
        (json!([{"content": "hi"}]), InvalidMessage, Some(0), "message without role"),
        (json!([ok, {"role": "system", "content": "x"}]), InvalidRole, Some(1), "pass it as the system parameter"),
        (
            json!([{"role": "tool", "content": "x"}]),
            InvalidRole,
            Some(0),
            "unknown role \"tool\"; expected user or assistant",
        ),
        (json!([{"role": null, "content": "x"}]), InvalidRole, Some(0), "role must be a string, got null"),
        (
            json!([{"role": "user", "content": 42}]),
            InvalidMessage,
            Some(0),
            "content must be a string or an array of content blocks, got a number",
        ),
        (json!([{"role": "user"}]), InvalidMessage, Some(0), "message without content"),
        (json!([{"role": "user", "content": null}]), InvalidMessage, Some(0), "got null"),
        (
            json!([{"role": "user", "content": [{"text": "x"}]}]),
            InvalidContentPart,
            Some(0),
            "content[0]: block without type",
        ),
        (
            json!([{"role": "user", "content": [{"type": "text", "text": "a"}, 7]}]),
            InvalidContentPart,
            Some(0),
            "content[1]: block must be an object, got a number",
        ),
        (
            json!([{"role": "user", "content": [{"type": "text", "text": 1}]}]),
            InvalidContentPart,
            Some(0),
            "content[0]: text must be a string",
        ),
        (
            json!([{"role": "user", "content": [{"type": "image"}]}]),
            InvalidContentPart,
            Some(0),
            "content[0]: image block without source",
        ),
        (
            json!([{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "data": "AAAA"}}]}]),
            InvalidContentPart,
            Some(0),
            "base64 source without media_type",
        ),
        (
            json!([{"role": "user", "content": [{"type": "image", "source": {"type": "url"}}]}]),
            InvalidContentPart,
            Some(0),
            "url source without url",
        ),
        (
            json!([{"role": "user", "content": [{"type": "image", "source": {"url": "https://x"}}]}]),
            InvalidContentPart,
            Some(0),
            "image source without type",
        ),
        (
            json!([{"role": "user", "content": [{"type": "document", "source": {"type": "text", "media_type": "text/plain"}}]}]),
            InvalidContentPart,
            Some(0),
            "text source without data",
        ),
        (
            json!([ok, ok, {"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {}}]}]),
            InvalidContentPart,
            Some(2),
            "messages[2]: content[0]: tool_use blocks are only allowed in assistant messages",
        ),
        (
            json!([{"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "tool_result", "tool_use_id": "t", "content": "r"}]}]),
            InvalidContentPart,
            Some(0),
            "content[1]: tool_result blocks are only allowed in user messages",
        ),
        (
            json!([{"role": "assistant", "content": [{"type": "tool_use", "name": "n", "input": {}}]}]),
            InvalidTool,
            Some(0),
            "content[0]: tool_use without id",
        ),
        (
            json!([{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "input": {}}]}]),
            InvalidTool,
            Some(0),
            "tool_use without name",
        ),
        (
            json!([{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n"}]}]),
            InvalidTool,
            Some(0),
            "tool_use without input",
        ),
        (
            json!([{"role": "user", "content": [{"type": "tool_result", "content": "r"}]}]),
            InvalidTool,
            Some(0),
            "tool_result without tool_use_id",
        ),
        (
            json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": 5}]}]),
            InvalidContentPart,
            Some(0),
            "tool_result content must be a string or an array of blocks",
        ),
        (
            json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text"}]}]}]),
            InvalidContentPart,
            Some(0),
            "content[0].content[0]: text block without text",
        ),
        (
            json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "tool_result", "tool_use_id": "u"}]}]}]),
            InvalidContentPart,
            Some(0),
            "tool_result block inside tool_result",
        ),
        (
            json!([{"role": "user", "content": "x", "ctxguard": []}]),
            InvalidMessage,
            Some(0),
            "ctxguard must be an object, got an array",
        ),
    ];
    for (input, code, index, text) in table {
        let e = parse_messages(&input, None).unwrap_err();
        assert_eq!(e.code, code, "code for {input}: {e}");
        assert_eq!(e.index, index, "index for {input}: {e}");
        assert!(e.message.contains(text), "message for {input}: {:?} should contain {text:?}", e.message);
    }

    let sys_table: Vec<(Value, ErrorCode, &str)> = vec![
        (json!(42), InvalidMessage, "system must be a string or an array of text blocks, got a number"),
        (json!([{"type": "text", "text": "a"}, "b"]), InvalidContentPart, "system[1]: block must be an object"),
        (json!([{"type": "text"}]), InvalidContentPart, "system[0]: text block without text"),
    ];
    for (system, code, text) in sys_table {
        let e = parse_messages(&json!([]), Some(&system)).unwrap_err();
        assert_eq!(e.code, code, "code for {system}: {e}");
        assert_eq!(e.index, None);
        assert!(e.message.contains(text), "message for {system}: {:?} should contain {text:?}", e.message);
    }
}

#[test]
fn tool_definitions_parse() {
    let tools = parse_tools(&json!([
        {"name": "get_weather", "description": "Wetter für eine Stadt", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}, "cache_control": {"type": "ephemeral"}},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
        {"type": "custom", "name": "c", "input_schema": {"type": "object"}}
    ]))
    .unwrap();
    assert_eq!(tools.len(), 3);
    assert_eq!(tools[0].description.as_deref(), Some("Wetter für eine Stadt"));
    assert_eq!(tools[0].parameters["properties"]["city"], json!({"type": "string"}));
    assert_eq!(tools[0].extra.get("cache_control"), Some(&json!({"type": "ephemeral"})));
    assert_eq!(tools[1].name, "web_search");
    assert_eq!(tools[1].parameters, Value::Null);
    assert_eq!(tools[1].extra.get("max_uses"), Some(&json!(5)));
    assert_eq!(tools[2].extra.get("type"), Some(&json!("custom")));
    assert!(parse_tools(&Value::Null).unwrap().is_empty());

    for (input, text) in [
        (json!("x"), "tools must be an array"),
        (json!([1]), "tools[0]: tool must be an object"),
        (json!([{"input_schema": {}}]), "tools[0]: tool without name"),
        (json!([{"name": "a", "input_schema": {}}, {"name": "b"}]), "tools[1]: tool without input_schema"),
    ] {
        let e = parse_tools(&input).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidTool);
        assert!(e.message.contains(text), "{:?} should contain {text:?}", e.message);
    }
}
