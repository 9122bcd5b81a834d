//! OpenAI Responses input items: exact round trips of a realistic agent history (every item kind
//! of `ResponseInputItem`, odd key orders), the parsed model, instructions as the system,
//! reasoning bundles and outputs whose call lives on the server under pair sanitation, tool-output
//! compaction and attachment previews written back in the item shapes, compaction through the
//! pipeline with a summarizer, checkpoints, tools and errors.

use crate::support::{base64_of, clock, guard, pretty};
use ctxguard::format::responses::{parse_messages, parse_tools, to_wire};
use ctxguard::format::{parse_request, ties, write_request, Format, Ties};
use ctxguard::message::{Content, ImageSource, Message, Part, Role};
use ctxguard::pipeline::sanitize::sanitize;
use ctxguard::pipeline::{PrepareOptions, Step};
use ctxguard::ErrorCode;
use serde_json::{json, Value};

const ONE_PX_PNG_B64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// "Reiseplan\nTag 1: Asakusa\nTag 2: Kyoto 京都\n"
const PLAN_B64: &str = "UmVpc2VwbGFuClRhZyAxOiBBc2FrdXNhClRhZyAyOiBLeW90byDkuqzpg70K";

/// An Agents SDK history: developer message, reasoning before calls and before the answer,
/// function and custom calls, built-in tool items, a computer call, an item reference, a
/// compaction item and an output whose call is on the server.
fn history() -> Value {
    json!([
      {"role": "developer", "content": "Talk like a pirate. Antworte kurz."},
      {"role": "user", "content": "What's the weather in Paris? ☀️"},
      {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "**Checking the weather**\n\nI need the forecast."}],
       "encrypted_content": "gAAAAABoZ2VuY3J5cHRlZA=="},
      {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}", "status": "completed"},
      {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "get_time", "arguments": "{\"tz\":\"Europe/Paris\"}", "status": "completed"},
      {"type": "function_call_output", "call_id": "call_1", "output": "{\"temp_c\":18,\"sky\":\"clear\"}"},
      {"call_id": "call_2", "output": [{"type": "input_text", "text": "14:05"}], "type": "function_call_output"},
      {"id": "rs_2", "type": "reasoning", "summary": [], "encrypted_content": "gAAAAABvdGhlcg=="},
      {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "phase": "final_answer",
       "content": [{"type": "output_text", "text": "Arr, 18 °C and clear skies! 🏴‍☠️", "annotations": [], "logprobs": []}]},
      {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "And this picture and my plan?"},
        {"type": "input_image", "image_url": format!("data:image/png;base64,{ONE_PX_PNG_B64}"), "detail": "low"},
        {"type": "input_image", "file_id": "file-img", "detail": "auto"},
        {"type": "input_file", "filename": "plan.txt", "file_data": format!("data:text/plain;base64,{PLAN_B64}")},
        {"type": "input_file", "file_id": "file-pdf"}
      ]},
      {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "Paris weather"}},
      {"type": "custom_tool_call", "call_id": "call_3", "name": "code_exec", "input": "print(1 + 1)"},
      {"type": "custom_tool_call_output", "call_id": "call_3", "output": "2"},
      {"type": "computer_call", "id": "cu_1", "call_id": "call_4", "action": {"type": "screenshot"}, "pending_safety_checks": [], "status": "completed"},
      {"type": "computer_call_output", "call_id": "call_4", "output": {"type": "computer_screenshot", "image_url": format!("data:image/png;base64,{ONE_PX_PNG_B64}")}},
      {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "I can't see that."}], "status": "completed", "id": "msg_2"},
      {"type": "item_reference", "id": "msg_0"},
      {"id": "msg_00"},
      {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAABjb21wYWN0ZWQ="},
      {"role": "system", "content": [{"type": "input_text", "text": "The user is on mobile."}]},
      {"type": "function_call_output", "call_id": "call_on_server", "output": "done"},
      {"role": "user", "content": "Thanks! 🙏"}
    ])
}

fn roundtrip(input: &Value) -> Vec<Message> {
    let parsed = parse_messages(input).unwrap_or_else(|e| panic!("parse failed: {e}"));
    let (system, items) = to_wire(&parsed);
    assert_eq!(system, None);
    assert_eq!(pretty(&Value::Array(items)), pretty(input), "items changed");
    parsed
}

#[test]
fn a_realistic_history_round_trips_exactly() {
    let parsed = roundtrip(&history());
    assert_eq!(parsed.len(), history().as_array().unwrap().len(), "one internal message per item");
    // Odd key orders and every field kept.
    let odd = json!([
      {"content": "hi", "role": "user", "type": "message", "ctxguard": {"pinned": true}},
      {"arguments": "{}", "name": "f", "call_id": "c", "type": "function_call"},
      {"output": "x", "call_id": "c", "type": "function_call_output", "status": "completed", "id": "fco_1"},
      {"role": "assistant", "content": "Done.", "id": "msg_9", "extra": {"b": 1, "a": [2, {"z": 0, "y": null}]}}
    ]);
    roundtrip(&odd);
}

#[test]
fn the_model_of_each_item() {
    let m = parse_messages(&history()).unwrap();
    assert_eq!((m[0].role, m[0].wire.role.as_deref()), (Role::System, Some("developer")));
    assert_eq!(m[1].content, Content::Text("What's the weather in Paris? ☀️".into()));
    // Reasoning: opaque, leading the two calls after it; the answer's reasoning leads the answer.
    assert!(matches!(&m[2].content, Content::Parts(p) if matches!(p[..], [Part::Unknown { .. }])));
    assert_eq!(ties(&m[2]), Ties { leads: 2, ..Ties::default() });
    assert_eq!(ties(&m[3]), Ties { follows: true, ..Ties::default() });
    assert_eq!(ties(&m[4]), Ties { follows: true, ..Ties::default() });
    assert_eq!(ties(&m[5]), Ties::default(), "outputs are not in the bundle");
    assert_eq!((ties(&m[7]).leads, ties(&m[8]).follows), (1, true));
    // Calls and outputs.
    assert_eq!(
        (m[3].role, m[3].tool_calls[0].id.as_str(), m[3].tool_calls[0].name.as_str()),
        (Role::Assistant, "call_1", "get_weather")
    );
    assert_eq!(m[3].tool_calls[0].arguments, "{\"city\":\"Paris\"}");
    assert_eq!((m[5].role, m[5].tool_call_id.as_deref()), (Role::Tool, Some("call_1")));
    assert!(
        matches!(&m[6].content, Content::Parts(p) if matches!(&p[..], [Part::Text { text, .. }] if text == "14:05"))
    );
    assert_eq!(m[11].tool_calls[0].arguments, "print(1 + 1)");
    assert_eq!(m[12].tool_call_id.as_deref(), Some("call_3"));
    assert_eq!((m[13].tool_calls[0].id.as_str(), m[13].tool_calls[0].name.as_str()), ("call_4", "computer_call"));
    assert_eq!(m[14].tool_call_id.as_deref(), Some("call_4"), "an opaque output pairs by call_id");
    // Media of the user message.
    let Content::Parts(parts) = &m[9].content else { panic!() };
    assert!(
        matches!(&parts[1], Part::Image { source: ImageSource::Url(_), width: Some(1), height: Some(1), detail: Some(d), .. } if d == "low")
    );
    assert!(matches!(&parts[2], Part::Image { source: ImageSource::Other, .. }));
    assert!(
        matches!(&parts[3], Part::File { name: Some(n), media_type: Some(t), text: Some(x), .. } if n == "plan.txt" && t == "text/plain" && x.contains("Kyoto 京都"))
    );
    assert!(matches!(&parts[4], Part::File { text: None, .. }));
    // Item references (typed and bare), compaction: opaque assistant items, not in a bundle.
    for k in [16, 17, 18] {
        assert_eq!(m[k].role, Role::Assistant);
        assert_eq!(ties(&m[k]), Ties::default());
    }
    assert_eq!(m[19].role, Role::System, "system message items stay in the messages");
    // The output whose call lives on the server: kept, not paired.
    assert_eq!((m[20].role, m[20].tool_call_id.as_deref()), (Role::Tool, None));
}

#[test]
fn instructions_are_the_system_and_ctxguards_notes_are_system_items() {
    let wire = json!([{"role": "user", "content": "hi"}]);
    let mut req = parse_request(Format::OpenaiResponses, &wire, Some(&json!("Be brief.")), None).unwrap();
    assert_eq!(req.messages[0].role, Role::System);
    let (system, items) = write_request(Format::OpenaiResponses, &req);
    assert_eq!((system, Value::Array(items)), (Some(json!("Be brief.")), wire.clone()));
    req.messages.insert(1, Message::text(Role::System, "[ctxguard:evidence] earlier work"));
    let (system, items) = write_request(Format::OpenaiResponses, &req);
    assert_eq!(system, Some(json!("Be brief.")));
    assert_eq!(
        Value::Array(items),
        json!([{"role": "system", "content": "[ctxguard:evidence] earlier work"}, {"role": "user", "content": "hi"}])
    );
    // No instructions: null; not a string: INVALID_OPTIONS.
    let req = parse_request(Format::OpenaiResponses, &wire, None, None).unwrap();
    assert_eq!(write_request(Format::OpenaiResponses, &req).0, None);
    let err = parse_request(Format::OpenaiResponses, &wire, Some(&json!([{"role": "system", "content": "x"}])), None)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidOptions);
}

#[test]
fn a_reasoning_item_and_the_call_after_it_are_dropped_together() {
    // The second call has no output: sanitation removes it, and with it the reasoning item and
    // the first call of the same bundle (and so the first call's output).
    let wire = json!([
      {"role": "user", "content": "go"},
      {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"},
      {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
      {"type": "function_call", "call_id": "b", "name": "g", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "a", "output": "A"},
      {"role": "user", "content": "next"}
    ]);
    let mut msgs = parse_messages(&wire).unwrap();
    let report = sanitize(&mut msgs);
    let (_, items) = to_wire(&msgs);
    assert_eq!(Value::Array(items), json!([{"role": "user", "content": "go"}, {"role": "user", "content": "next"}]));
    assert_eq!((report.orphan_calls, report.orphan_results), (2, 1));

    // A reasoning item dropped (the emergency layer drops the oldest messages one by one): the
    // answer after it goes too; a complete bundle is left alone.
    let wire = json!([
      {"role": "user", "content": "q"},
      {"type": "reasoning", "id": "rs_1", "summary": []},
      {"type": "message", "role": "assistant", "id": "msg_1", "content": [{"type": "output_text", "text": "A", "annotations": []}]},
      {"role": "user", "content": "q2"},
      {"type": "reasoning", "id": "rs_2", "summary": []},
      {"type": "message", "role": "assistant", "id": "msg_2", "content": [{"type": "output_text", "text": "B", "annotations": []}]}
    ]);
    let mut msgs = parse_messages(&wire).unwrap();
    assert_eq!(sanitize(&mut msgs.clone()).empty_messages, 0, "complete bundles stay");
    msgs.remove(1);
    let report = sanitize(&mut msgs);
    assert_eq!(report.empty_messages, 1);
    let (_, items) = to_wire(&msgs);
    let ids: Vec<&str> = items.iter().map(|i| i.get("id").and_then(Value::as_str).unwrap_or("-")).collect();
    assert_eq!(ids, ["-", "-", "rs_2", "msg_2"]);
}

#[test]
fn an_output_whose_call_is_on_the_server_is_kept() {
    // `previous_response_id`: the input holds only the outputs.
    let wire = json!([{"type": "function_call_output", "call_id": "call_9", "output": "42"}, {"role": "user", "content": "and?"}]);
    let mut msgs = parse_messages(&wire).unwrap();
    assert!(!sanitize(&mut msgs).changed());
    assert_eq!(Value::Array(to_wire(&msgs).1), wire);
}

#[test]
fn tool_output_compaction_and_previews_are_written_in_the_item_shapes() {
    let log: String = (0..4000).map(|i| format!("{i:04} PASS tests::case_{i}\n")).collect();
    let doc: String = (0..30_000).map(|i| format!("word{} ", i % 1000)).collect();
    let data = format!("data:text/plain;base64,{}", base64_of(&doc));
    let wire = json!([
      {"role": "user", "content": [{"type": "input_text", "text": "Read this"}, {"type": "input_file", "filename": "big.txt", "file_data": data}]},
      {"type": "function_call", "call_id": "c1", "name": "run_tests", "arguments": "{}"},
      {"type": "function_call", "call_id": "c2", "name": "run_tests", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "c1", "output": log},
      {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": log}]},
      {"role": "user", "content": "Why?"}
    ]);
    let req = parse_request(Format::OpenaiResponses, &wire, None, None).unwrap();
    let mut g = guard(json!({"model": "gpt-4o", "toolOutputLimit": 500, "attachmentBudget": 1000}));
    let out = g.guard_sources(&req, false, &clock);
    assert_eq!(out.traces.len(), 2);
    let (_, items) = write_request(Format::OpenaiResponses, &out.request);
    // A string output stays a string, a list stays a list with one input_text.
    let first = items[3]["output"].as_str().unwrap();
    assert!(first.len() < log.len() / 4 && first.contains("0000 PASS"));
    let second = items[4]["output"].as_array().unwrap();
    assert_eq!((second.len(), second[0]["type"].as_str()), (1, Some("input_text")));
    // The preview is written back into file_data as a text data URL.
    let file = &items[0]["content"][1];
    let preview = file["file_data"].as_str().unwrap();
    assert!(preview.starts_with("data:text/plain;base64,") && preview.len() < data.len() / 4);
    assert!(ctxguard::format::parse_request(Format::OpenaiResponses, &Value::Array(items.clone()), None, None).is_ok());
    // The re-read preview is recognized: a second pass changes nothing.
    let again = parse_request(Format::OpenaiResponses, &Value::Array(items.clone()), None, None).unwrap();
    let out2 = g.guard_sources(&again, false, &clock);
    assert_eq!(write_request(Format::OpenaiResponses, &out2.request).1, items);
}

#[test]
fn compaction_through_the_pipeline_keeps_valid_items_and_checkpoints_reload() {
    let filler: String = (0..600).map(|i| format!("line {i} of the earlier discussion\n")).collect();
    let mut wire = vec![];
    for t in 0..6 {
        wire.push(json!({"role": "user", "content": format!("Question {t}: {filler}")}));
        wire.push(json!({"type": "reasoning", "id": format!("rs_{t}"), "summary": [], "encrypted_content": "gAAAA"}));
        wire.push(json!({"type": "function_call", "call_id": format!("c{t}"), "name": "lookup", "arguments": "{}"}));
        wire.push(json!({"type": "function_call_output", "call_id": format!("c{t}"), "output": format!("result {t}")}));
        wire.push(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": format!("Answer {t}"), "annotations": []}]}));
    }
    wire.push(json!({"role": "user", "content": "Final question?"}));
    wire.push(json!({"type": "reasoning", "id": "rs_last", "summary": []}));
    wire.push(json!({"type": "function_call", "call_id": "c_last", "name": "lookup", "arguments": "{}"}));
    wire.push(json!({"type": "function_call_output", "call_id": "c_last", "output": "last"}));
    let wire = Value::Array(wire);
    let req = parse_request(Format::OpenaiResponses, &wire, Some(&json!("You are helpful.")), None).unwrap();
    let mut g = guard(
        json!({"model": "gpt-4o", "contextWindow": 20000, "reservedOutputTokens": 1000, "format": "openai-responses"}),
    );
    let Step::Summarize(p) =
        ctxguard::pipeline::prepare_start(&mut g, &req, &PrepareOptions::default(), &clock).unwrap()
    else {
        panic!("expected a summary request")
    };
    // The summarizer sees Responses-shaped messages.
    let (_, source) = write_request(
        Format::OpenaiResponses,
        &ctxguard::format::Request { messages: p.request.messages.clone(), ..Default::default() },
    );
    assert!(source.iter().any(|i| i["type"] == "function_call"));
    let answer = p.validate(&g, &json!("The user asked six questions; each lookup returned its result.")).unwrap();
    let out = ctxguard::pipeline::prepare_finish(&mut g, *p, Ok(answer), 1, &clock).unwrap();
    assert!(!out.degraded);
    let (system, items) = write_request(Format::OpenaiResponses, &out.request);
    assert_eq!(system, Some(json!("You are helpful.")));
    assert_eq!(items[0]["role"], "system");
    assert!(items[0]["content"].as_str().unwrap().starts_with("[ctxguard:summary]"));
    // The current turn is whole: its reasoning item, call and output, in order.
    let tail: Vec<&str> = items.iter().rev().take(3).map(|i| i["type"].as_str().unwrap_or("message")).collect();
    assert_eq!(tail, ["function_call_output", "function_call", "reasoning"]);
    // The checkpoint reloads: written, parsed again, it resolves to itself.
    let checkpoint = out.checkpoint.unwrap();
    let (cp_system, cp_items) = write_request(
        Format::OpenaiResponses,
        &ctxguard::format::Request { messages: checkpoint, ..Default::default() },
    );
    assert_eq!(cp_system, Some(json!("You are helpful.")));
    let again =
        parse_request(Format::OpenaiResponses, &Value::Array(cp_items.clone()), cp_system.as_ref(), None).unwrap();
    assert!(again.messages.iter().any(|m| ctxguard::message::checkpoint::is_checkpoint_summary(m, None)));
    let turns =
        vec![ctxguard::message::checkpoint::Turn { id: Some("t1".into()), messages: again.messages, status: None }];
    let resolved = ctxguard::message::checkpoint::resolve(&turns, &Default::default(), None);
    assert!(resolved.from_checkpoint);
    let (_, items2) = write_request(
        Format::OpenaiResponses,
        &ctxguard::format::Request { messages: resolved.messages, ..Default::default() },
    );
    assert_eq!(items2, cp_items);
}

#[test]
fn tools_are_flat_and_built_ins_are_kept() {
    let tools = parse_tools(&json!([
      {"type": "function", "name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}, "strict": true},
      {"type": "web_search"},
      {"type": "custom", "name": "code_exec", "description": "Python"}
    ]))
    .unwrap();
    assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["get_weather", "web_search", "code_exec"]);
    assert_eq!(tools[0].extra.get("strict"), Some(&json!(true)));
    assert!(tools[1].parameters.is_null());
    let err = parse_tools(&json!([{"type": "function", "function": {"name": "nested"}}])).unwrap_err();
    assert_eq!((err.code, err.index), (ErrorCode::InvalidTool, Some(0)));
}

#[test]
fn message_items_count_like_the_same_chat_messages() {
    let mut g = guard(json!({"model": "gpt-4o"}));
    let responses = parse_request(Format::OpenaiResponses, &json!([
      {"role": "user", "content": "What's the weather in Paris?"},
      {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Sunny, 18 °C.", "annotations": []}]},
      {"role": "user", "content": [{"type": "input_text", "text": "Thanks"}]}
    ]), Some(&json!("Be brief.")), None).unwrap();
    let chat = parse_request(
        Format::Openai,
        &json!([
          {"role": "system", "content": "Be brief."},
          {"role": "user", "content": "What's the weather in Paris?"},
          {"role": "assistant", "content": "Sunny, 18 °C."},
          {"role": "user", "content": [{"type": "text", "text": "Thanks"}]}
        ]),
        None,
        None,
    )
    .unwrap();
    assert_eq!(g.measure(&responses).used_tokens, g.measure(&chat).used_tokens);
}

#[test]
fn bad_items_name_their_index() {
    let cases: Vec<(Value, ErrorCode)> = vec![
        (json!("a string input"), ErrorCode::InvalidMessages),
        (json!([{"role": "user", "content": "ok"}, 7]), ErrorCode::InvalidMessage),
        (json!([{"role": "user", "content": "ok"}, {"role": "tool", "content": "x"}]), ErrorCode::InvalidRole),
        (json!([{"role": "user", "content": "ok"}, {"role": "user"}]), ErrorCode::InvalidMessage),
        (json!([{"role": "user", "content": "ok"}, {"role": "user", "content": 5}]), ErrorCode::InvalidMessage),
        (
            json!([{"role": "user", "content": "ok"}, {"role": "user", "content": [{"type": "input_text"}]}]),
            ErrorCode::InvalidContentPart,
        ),
        (
            json!([{"role": "user", "content": "ok"}, {"role": "user", "content": [{"type": "input_image"}]}]),
            ErrorCode::InvalidContentPart,
        ),
        (
            json!([{"role": "user", "content": "ok"}, {"type": "function_call", "name": "f", "arguments": "{}"}]),
            ErrorCode::InvalidTool,
        ),
        (
            json!([{"role": "user", "content": "ok"}, {"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]),
            ErrorCode::InvalidTool,
        ),
        (
            json!([{"role": "user", "content": "ok"}, {"type": "function_call_output", "output": "x"}]),
            ErrorCode::InvalidTool,
        ),
        (
            json!([{"role": "user", "content": "ok"}, {"type": "function_call_output", "call_id": "c", "output": 3}]),
            ErrorCode::InvalidMessage,
        ),
        (json!([{"role": "user", "content": "ok"}, {"type": 3}]), ErrorCode::InvalidMessage),
        (
            json!([{"role": "user", "content": "ok"}, {"role": "user", "content": "x", "ctxguard": 1}]),
            ErrorCode::InvalidMessage,
        ),
    ];
    for (wire, code) in cases {
        let err = parse_messages(&wire).unwrap_err();
        assert_eq!(err.code, code, "{wire}: {}", err.message);
        if code != ErrorCode::InvalidMessages {
            assert_eq!(err.index, Some(1), "{wire}");
            assert!(err.message.starts_with("messages[1]"), "{}", err.message);
        }
    }
}
