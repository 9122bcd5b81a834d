//! AI SDK UI-message adapter (`format: 'ai-sdk-ui'`): exact round trips of a `useChat`
//! conversation (steps, reasoning, every tool state, approvals, provider-executed tools, files,
//! data and source parts), counts equal to the AI SDK's own `convertToModelMessages` of it
//! (tests/support/ai_sdk_ui.json was written by AI SDK 7; tests/js/usechat.test.mjs
//! checks the same against the live package), writing after ctxguard changed something, the
//! system option, detection and errors that name the right format.

use ctxguard::count::count_request;
use ctxguard::format::ai_sdk_ui::{parse_messages, parse_system, to_wire};
use ctxguard::format::detect::detect;
use ctxguard::format::{ai_sdk, parse_request, Format};
use ctxguard::guard::resolve_model;
use ctxguard::message::{Content, Message, Part, Role};
use ctxguard::provider::models::profile;
use ctxguard::ErrorCode;
use serde_json::{json, Value};

fn fixture() -> (Value, Value) {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/ai_sdk_ui.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    (v["ui"].clone(), v["model"].clone())
}

fn text_of(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap()
}

fn messages_of(m: &[Message]) -> Value {
    let (system, messages) = to_wire(m);
    assert_eq!(system, None, "no system option, no note: nothing goes to system");
    Value::Array(messages)
}

#[test]
fn a_use_chat_conversation_round_trips_exactly() {
    let (ui, _) = fixture();
    let parsed = parse_messages(&ui).unwrap();
    assert_eq!(text_of(&messages_of(&parsed)), text_of(&ui));
    // Every piece of a UI message names it; the first carries its id.
    let groups: Vec<usize> = parsed.iter().map(|m| m.wire.group.unwrap()).collect();
    // a1: step 1 (assistant, two results), step 2 (assistant, one result), step 3; a2: one
    // assistant message, then a tool message of approval responses and results (four pieces).
    assert_eq!(groups, vec![0, 1, 2, 2, 2, 2, 2, 2, 3, 4, 4, 4, 4, 4, 5]);
    assert_eq!(parsed[2].id.as_deref(), Some("a1"));
    assert_eq!(parsed[3].id, None);
    // Parsing through `parse_request` and the key-order-sensitive text: the same.
    let r = parse_request(Format::AiSdkUi, &ui, None, None).unwrap();
    let (_, back) = ctxguard::format::write_request(Format::AiSdkUi, &r);
    assert_eq!(serde_json::to_string(&Value::Array(back)).unwrap(), serde_json::to_string(&ui).unwrap());
}

#[test]
fn counts_equal_the_ai_sdks_own_conversion() {
    let (ui, model) = fixture();
    for name in ["gpt-4o", "gpt-4", "claude-sonnet-4-5", "gemini-2.5-pro"] {
        let p = profile(&resolve_model(Some(name), None));
        let ours = count_request(&p, &parse_messages(&ui).unwrap(), &[]);
        let theirs = count_request(&p, &ai_sdk::parse_messages(&model).unwrap(), &[]);
        assert_eq!(ours.total, theirs.total, "{name}");
        assert_eq!(ours.per_message, theirs.per_message, "{name}");
    }
}

#[test]
fn changed_outputs_files_and_dropped_calls_are_written_into_their_parts() {
    let (ui, _) = fixture();
    let mut m = parse_messages(&ui).unwrap();
    // The pieces of a1: [assistant step 1, tool results step 1, assistant step 2, tool step 2, text].
    let results = m.iter().position(|x| x.role == Role::Tool).unwrap();
    assert_eq!(m[results].tool_call_id.as_deref(), Some("call_1"));
    m[results].content = Content::Text(r#"{"temp_c":18,"_ctxguard":"cut"}"#.into());
    m[results + 1].content = Content::Text("time… [cut]".into());
    let lookup = m.iter().position(|x| x.tool_call_id.as_deref() == Some("call_3")).unwrap();
    m[lookup].content = Content::Text("[cleared: lookup {id: 7}]".into());
    // An attachment preview of the text file.
    if let Content::Parts(parts) = &mut m[1].content {
        match &mut parts[2] {
            Part::File { text, .. } => *text = Some("Hallo [preview]".into()),
            other => panic!("{other:?}"),
        }
    }
    let out = messages_of(&m);
    let parts = &out[2]["parts"];
    assert_eq!(parts[3]["output"], json!({"temp_c": 18, "_ctxguard": "cut"}), "JSON stays JSON");
    assert_eq!(parts[4]["errorText"], json!("time… [cut]"));
    assert_eq!(parts[7]["output"], json!("[cleared: lookup {id: 7}]"));
    // Everything else of the tool part, and its place, is as it was.
    let mut expected = ui[2]["parts"][3].clone();
    expected["output"] = json!({"temp_c": 18, "_ctxguard": "cut"});
    assert_eq!(parts[3], expected);
    assert_eq!(parts.as_array().unwrap().len(), ui[2]["parts"].as_array().unwrap().len());
    let url = out[1]["parts"][2]["url"].as_str().unwrap();
    assert_eq!(url, "data:text/plain;base64,SGFsbG8gW3ByZXZpZXdd");

    // A JSON output compacted as lines becomes its text.
    m[results].content = Content::Text("{\"temp_c\":18, …".into());
    assert_eq!(messages_of(&m)[2]["parts"][3]["output"], json!("{\"temp_c\":18, …"));

    // Pair sanitation dropped call_3 and its result: the tool part goes, its step's boundary stays.
    let step2 = lookup - 1;
    m[step2].tool_calls.clear();
    m[step2].content = Content::Parts(Vec::new());
    m.remove(lookup);
    let out = messages_of(&m);
    let types: Vec<&str> = out[2]["parts"].as_array().unwrap().iter().map(|p| p["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "step-start",
            "reasoning",
            "text",
            "tool-weather",
            "dynamic-tool",
            "source-url",
            "step-start",
            "step-start",
            "text"
        ]
    );
}

#[test]
fn notes_go_to_system_and_retained_messages_keep_their_id() {
    let (ui, _) = fixture();
    let mut m = parse_messages(&ui).unwrap();
    let mut summary = Message::text(Role::System, "[ctxguard:summary] earlier turns");
    summary.markers.summary_compacted = true;
    // A retained clone of u2 as the pipeline makes it, and as the model-visible form leaves it.
    let u2 = m.iter().position(|x| x.id.as_deref() == Some("u2")).unwrap();
    let u3 = m.iter().position(|x| x.id.as_deref() == Some("u3")).unwrap();
    let mut retained = m[u2].clone();
    retained.id = Some("ctxguard-retained-1".into());
    retained.markers.checkpoint_retained = true;
    let chain = vec![m[0].clone(), summary.clone(), retained.clone(), m[u3].clone()];
    let (system, messages) = to_wire(&chain);
    assert_eq!(
        system,
        Some(
            json!([{"role": "system", "content": "[ctxguard:summary] earlier turns", "ctxguard": {"summaryCompacted": true}}])
        )
    );
    assert_eq!(messages[0], ui[0]);
    assert_eq!(messages[1]["id"], "u2", "the app's id, also on ctxguard's copy");
    assert_eq!(messages[1]["ctxguard"], json!({"checkpointRetained": true}));
    retained.strip_metadata();
    let (_, messages) = to_wire(&[retained]);
    assert_eq!(messages[0], ui[3], "model-visible: the app's own message, id included");

    // The checkpoint's system reads back (markers included).
    let back = parse_system(&system.unwrap()).unwrap();
    assert!(back[0].markers.summary_compacted);
    m.truncate(1);
}

#[test]
fn the_system_option_takes_strings_model_and_ui_system_messages() {
    let msgs = json!([{"id": "u", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}]);
    for sys in [
        json!("Be brief."),
        json!({"role": "system", "content": "Be brief."}),
        json!({"id": "s", "role": "system", "parts": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}]}),
        json!([{"id": "s", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]}]),
    ] {
        let r = parse_request(Format::AiSdkUi, &msgs, Some(&sys), None).unwrap();
        assert_eq!(r.messages[0].content.text(), "Be brief.", "{sys}");
        let (system, messages) = ctxguard::format::write_request(Format::AiSdkUi, &r);
        assert_eq!(system.unwrap()[0], json!({"role": "system", "content": "Be brief."}));
        assert_eq!(Value::Array(messages), msgs);
    }
}

#[test]
fn detection_and_errors_name_the_format() {
    let (ui, model) = fixture();
    assert_eq!(detect(&ui), Some(Format::AiSdkUi));
    assert_eq!(detect(&model), Some(Format::AiSdk));
    assert_eq!(
        detect(&json!({"id": "chat", "messages": ui.clone(), "trigger": "submit-message"})),
        Some(Format::AiSdkUi)
    );
    // Gemini contents stay Gemini's.
    assert_eq!(detect(&json!([{"role": "user", "parts": [{"text": "hi"}]}])), Some(Format::Gemini));

    let e = parse_request(Format::AiSdk, &ui, None, None).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidMessage);
    assert!(e.message.contains("these look like AI SDK UIMessages (parts): use format: 'ai-sdk-ui'"), "{}", e.message);
    let e = parse_request(Format::Openai, &ui, None, None).unwrap_err();
    assert!(e.message.contains("use format: 'ai-sdk-ui'"), "{}", e.message);
    // One message at a time (the guard's store reads OpenAI and Anthropic messages so): the same.
    let e = ctxguard::format::parse_message_at(Format::Openai, &ui[1], 1).unwrap_err();
    assert!(e.message.contains("use format: 'ai-sdk-ui'"), "{}", e.message);
    let e = parse_request(Format::AiSdkUi, &model, None, None).unwrap_err();
    assert!(e.message.contains("looks like an AI SDK ModelMessage: use format: 'ai-sdk'"), "{}", e.message);
    let e = parse_request(Format::AiSdkUi, &json!([{"id": "t", "role": "tool", "parts": []}]), None, None).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidRole);
    for (bad, code, says) in [
        (json!([{"role": "user"}]), ErrorCode::InvalidMessage, "messages[0]: message without parts"),
        (
            json!([{"role": "user", "parts": [{"text": "x"}]}]),
            ErrorCode::InvalidContentPart,
            "parts[0]: part without type",
        ),
        (
            json!([{"role": "user", "parts": [{"type": "text"}]}]),
            ErrorCode::InvalidContentPart,
            "text part without text",
        ),
        (
            json!([{"role": "user", "parts": [{"type": "file", "url": "x"}]}]),
            ErrorCode::InvalidContentPart,
            "without mediaType",
        ),
        (
            json!([{"role": "assistant", "parts": [{"type": "tool-x", "state": "input-available", "input": {}}]}]),
            ErrorCode::InvalidContentPart,
            "without toolCallId",
        ),
        (json!("x"), ErrorCode::InvalidMessages, "must be an array"),
    ] {
        let e = parse_messages(&bad).unwrap_err();
        assert_eq!(e.code, code, "{bad}");
        assert!(e.message.contains(says), "{bad}: {}", e.message);
    }
}

#[test]
fn states_without_a_result_and_empty_steps() {
    let ui = json!([
      {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Go"}]},
      {"id": "a1", "role": "assistant", "parts": [
        {"type": "step-start"},
        {"type": "tool-x", "toolCallId": "c1", "state": "input-streaming", "input": {"a": 1}},
        {"type": "tool-y", "toolCallId": "c2", "state": "input-available", "input": {}},
        {"type": "text", "text": "waiting"}
      ]},
      {"id": "a2", "role": "assistant", "parts": [{"type": "step-start"}, {"type": "data-progress", "data": 1}]}
    ]);
    let m = parse_messages(&ui).unwrap();
    // a2 sends nothing: no message; a1's streaming input is not sent, the waiting call is.
    assert_eq!(m.len(), 2);
    assert_eq!(m[1].tool_calls.len(), 1);
    assert_eq!(m[1].tool_calls[0].id.as_str(), "c2");
    let out = messages_of(&m);
    assert_eq!(out, json!([ui[0], ui[1]]));
}
