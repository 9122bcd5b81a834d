//! Gemini contents: exact round trips of a realistic `@google/genai` conversation (thoughts and
//! thought signatures, parallel calls with and without ids, media of every kind, code execution),
//! the parsed model, the pairing rule, signatures never split from their calls, the
//! systemInstruction shapes, function-response compaction, attachment previews, compaction
//! through the pipeline with a summarizer, checkpoints, tools and errors.

use crate::support::{base64_of, clock, guard, pretty};
use ctxguard::format::gemini::{parse_messages, parse_system, parse_tools, to_wire};
use ctxguard::format::{parse_request, ties, write_request, Format, Request};
use ctxguard::message::{Content, ImageSource, Message, Part, Role};
use ctxguard::pipeline::sanitize::sanitize;
use ctxguard::pipeline::{PrepareOptions, Step};
use ctxguard::ErrorCode;
use serde_json::{json, Value};

const ONE_PX_PNG_B64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// "Reiseplan\nTag 1: Asakusa\nTag 2: Kyoto 京都\n"
const PLAN_B64: &str = "UmVpc2VwbGFuClRhZyAxOiBBc2FrdXNhClRhZyAyOiBLeW90byDkuqzpg70K";

fn conversation() -> Value {
    json!([
      {"role": "user", "parts": [
        {"text": "Plane eine Reise nach Tokyo 東京 ✈️"},
        {"inlineData": {"mimeType": "image/png", "data": ONE_PX_PNG_B64}},
        {"inlineData": {"mimeType": "text/plain", "data": PLAN_B64, "displayName": "plan.txt"}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "https://generativelanguage.googleapis.com/v1beta/files/abc"}},
        {"fileData": {"fileUri": "gs://bucket/clip.mp4", "mimeType": "video/mp4"}, "videoMetadata": {"startOffset": "1s"}},
        {"inlineData": {"mimeType": "audio/wav", "data": "UklGRg=="}}
      ]},
      {"role": "model", "parts": [
        {"text": "**Planning** I need weather and flights.", "thought": true},
        {"functionCall": {"name": "weather", "args": {"city": "Tokyo", "days": [1, 2.5, {"unit": null}]}}, "thoughtSignature": "c2lnbmF0dXJlLTE="},
        {"functionCall": {"name": "flights", "args": {"from": "BER", "to": "HND"}}}
      ]},
      {"role": "user", "parts": [
        {"functionResponse": {"name": "weather", "response": {"output": "18 °C, klar"}}},
        {"functionResponse": {"name": "flights", "response": {"flights": [{"no": "LH 714", "at": "08:00"}], "count": 1}}}
      ]},
      {"role": "model", "parts": [{"text": "Das Wetter ist klar. 🌤", "thoughtSignature": "c2lnLTI="}]},
      {"role": "user", "parts": [{"text": "Rechne 2**10."}]},
      {"role": "model", "parts": [
        {"executableCode": {"language": "PYTHON", "code": "print(2**10)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1024\n"}},
        {"functionCall": {"id": "call-a", "name": "save", "args": {"value": 1024}}}
      ]},
      {"parts": [{"functionResponse": {"id": "call-a", "name": "save", "response": {"ok": true}}}], "role": "user"},
      {"role": "user", "parts": [{"text": "Danke!"}], "ctxguard": {"checkpointRetained": true}}
    ])
}

fn roundtrip(input: &Value) -> Vec<Message> {
    let parsed = parse_messages(input).unwrap_or_else(|e| panic!("parse failed: {e}"));
    let (system, contents) = to_wire(&parsed);
    assert_eq!(system, None);
    assert_eq!(pretty(&Value::Array(contents)), pretty(input), "contents changed");
    parsed
}

#[test]
fn a_realistic_conversation_round_trips_exactly() {
    roundtrip(&conversation());
    roundtrip(&json!([
      {"parts": [{"text": "no role"}]},
      {"role": "function", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
      {"parts": [{"text": "a"}, {"functionResponse": {"name": "f", "response": {"output": "x"}}}, {"text": "b"}], "role": "user", "extra": {"b": 1, "a": 2}},
      {"role": "model", "parts": [{"thoughtSignature": "c2ln", "functionCall": {"args": {}, "name": "g", "willContinue": false}}]},
      {"role": "user", "parts": [{"functionResponse": {"willContinue": false, "response": {"error": "boom"}, "name": "g"}, "ctxguard": {"compactedToolOutput": true}}]}
    ]));
}

#[test]
fn the_model_of_each_part() {
    let m = parse_messages(&conversation()).unwrap();
    let Content::Parts(user) = &m[0].content else { panic!() };
    assert!(
        matches!(&user[1], Part::Image { source: ImageSource::Base64 { media_type, .. }, width: Some(1), height: Some(1), .. } if media_type == "image/png")
    );
    assert!(
        matches!(&user[2], Part::File { name: Some(n), media_type: Some(t), text: Some(x), .. } if n == "plan.txt" && t == "text/plain" && x.contains("Kyoto 京都"))
    );
    assert!(matches!(&user[3], Part::File { media_type: Some(t), text: None, .. } if t == "application/pdf"));
    assert!(matches!(&user[4], Part::File { media_type: Some(t), .. } if t == "video/mp4"));
    assert!(matches!(&user[5], Part::Audio { .. }));
    // The model turn: thought text, two calls with made-up ids, the signature with the first.
    assert_eq!(m[1].role, Role::Assistant);
    let calls = &m[1].tool_calls;
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].arguments, r#"{"city":"Tokyo","days":[1,2.5,{"unit":null}]}"#);
    assert_eq!(calls[0].extra.get("thoughtSignature"), Some(&json!("c2lnbmF0dXJlLTE=")));
    assert_eq!(ties(&m[1]).calls_together, 2, "signed parallel calls stand together");
    // Responses pair by name and order; text of a one-string-field response is that string.
    assert_eq!((m[2].role, m[2].tool_call_id.as_ref()), (Role::Tool, Some(&calls[0].id)));
    assert_eq!(m[2].content, Content::Text("18 °C, klar".into()));
    assert_eq!(m[3].tool_call_id.as_ref(), Some(&calls[1].id));
    assert_eq!(m[3].content, Content::Text(r#"{"flights":[{"no":"LH 714","at":"08:00"}],"count":1}"#.into()));
    // Code execution parts are carried whole; an explicit id pairs by id.
    let Content::Parts(code) = &m[6].content else { panic!() };
    assert!(matches!(&code[..2], [Part::Unknown { .. }, Part::Unknown { .. }]));
    assert_eq!((m[6].tool_calls[0].id.as_str(), m[7].tool_call_id.as_deref()), ("call-a", Some("call-a")));
    assert!(m[8].markers.checkpoint_retained);
    // A changed text is written under the same single field; a JSON response whose text is no
    // longer JSON becomes { output: text }, an object as the API wants.
    let mut edited = m.clone();
    edited[2].content = Content::Text("short".into());
    edited[3].content = Content::Text("not json any more".into());
    let (_, contents) = to_wire(&edited);
    assert_eq!(contents[2]["parts"][0]["functionResponse"]["response"], json!({"output": "short"}));
    assert_eq!(contents[2]["parts"][1]["functionResponse"]["response"], json!({"output": "not json any more"}));
    edited[3].content = Content::Text(r#"{"count":0}"#.into());
    assert_eq!(to_wire(&edited).1[2]["parts"][1]["functionResponse"]["response"], json!({"count": 0}));
}

#[test]
fn pairing_by_id_else_by_name_and_order() {
    let wire = json!([
      {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"n": 1}}}, {"functionCall": {"name": "f", "args": {"n": 2}}}, {"functionCall": {"name": "g", "args": {}}}]},
      {"role": "user", "parts": [{"functionResponse": {"name": "g", "response": {"output": "G"}}}, {"functionResponse": {"name": "f", "response": {"output": "F1"}}}, {"functionResponse": {"name": "f", "response": {"output": "F2"}}}]},
      {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"output": "extra"}}}]}
    ]);
    let mut m = parse_messages(&wire).unwrap();
    let ids: Vec<String> = m[0].tool_calls.iter().map(|c| c.id.to_string()).collect();
    let answered: Vec<String> = m[1..4].iter().map(|t| t.tool_call_id.clone().unwrap().to_string()).collect();
    assert_eq!(answered, [ids[2].clone(), ids[0].clone(), ids[1].clone()]);
    // The third f response answers no call: an orphan, removed by sanitation.
    let report = sanitize(&mut m);
    assert_eq!(report.orphan_results, 1);
    let (_, contents) = to_wire(&m);
    assert_eq!(Value::Array(contents), json!([wire[0].clone(), wire[1].clone()]));
}

#[test]
fn a_signed_call_is_never_split_from_its_signature_or_its_step() {
    // The second call has no response: removing it alone would leave the step with a call whose
    // signature signs a step that no longer exists; the whole step goes, and its answered call's
    // response with it. The signature is never moved to another part.
    let wire = json!([
      {"role": "user", "parts": [{"text": "go"}]},
      {"role": "model", "parts": [
        {"functionCall": {"name": "a", "args": {}}, "thoughtSignature": "c2lnLWE="},
        {"functionCall": {"name": "b", "args": {}}}
      ]},
      {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {"output": "A"}}}]},
      {"role": "user", "parts": [{"text": "next"}]}
    ]);
    let mut m = parse_messages(&wire).unwrap();
    let report = sanitize(&mut m);
    assert_eq!((report.orphan_calls, report.orphan_results), (2, 1));
    let (_, contents) = to_wire(&m);
    assert_eq!(
        Value::Array(contents),
        json!([{"role": "user", "parts": [{"text": "go"}]}, {"role": "user", "parts": [{"text": "next"}]}])
    );
    // Unsigned parallel calls are independent: only the unanswered one goes.
    let unsigned = json!([
      {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}}, {"functionCall": {"name": "b", "args": {}}}]},
      {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {"output": "A"}}}]}
    ]);
    let mut m = parse_messages(&unsigned).unwrap();
    sanitize(&mut m);
    let (_, contents) = to_wire(&m);
    assert_eq!(contents[0], json!({"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}}]}));
    // A single signed call keeps its signature through any edit that keeps the call.
    let single = json!([
      {"role": "model", "parts": [{"text": "thinking", "thought": true}, {"functionCall": {"name": "a", "args": {}}, "thoughtSignature": "c2ln"}]},
      {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {"output": "A"}}}]}
    ]);
    let mut m = parse_messages(&single).unwrap();
    assert!(!sanitize(&mut m).changed());
    assert_eq!(Value::Array(to_wire(&m).1), single);
}

#[test]
fn system_instruction_shapes_and_notes_appended_as_parts() {
    let contents = json!([{"role": "user", "parts": [{"text": "hi"}]}]);
    for sys in [
        json!("Be brief."),
        json!({"parts": [{"text": "Be brief."}]}),
        json!({"role": "user", "parts": [{"text": "Be brief."}]}),
        json!({"text": "Be brief."}),
        json!([{"text": "Be"}, {"text": "brief."}]),
    ] {
        let req = parse_request(Format::Gemini, &contents, Some(&sys), None).unwrap();
        let (system, out) = write_request(Format::Gemini, &req);
        assert_eq!((system, Value::Array(out)), (Some(sys.clone()), contents.clone()), "{sys}");
        // With ctxguard's note after it: one Content, the note as a text part.
        let mut req = req;
        req.messages.push(Message::text(Role::System, "[ctxguard:evidence] earlier"));
        let (system, _) = write_request(Format::Gemini, &req);
        let parts = system.as_ref().unwrap()["parts"].as_array().unwrap().clone();
        assert_eq!(parts.last().unwrap(), &json!({"text": "[ctxguard:evidence] earlier"}), "{sys}");
    }
    // ctxguard's note alone: a Content.
    let mut req = parse_request(Format::Gemini, &contents, None, None).unwrap();
    req.messages.insert(0, Message::text(Role::System, "note"));
    assert_eq!(write_request(Format::Gemini, &req).0, Some(json!({"parts": [{"text": "note"}]})));
    assert_eq!(parse_system(&json!(3)).unwrap_err().code, ErrorCode::InvalidOptions);
}

#[test]
fn compacted_function_responses_stay_objects_and_previews_are_written_back() {
    let log: String = (0..4000).map(|i| format!("{i:04} PASS tests::case_{i}\n")).collect();
    let doc: String = (0..30_000).map(|i| format!("word{} ", i % 1000)).collect();
    let doc_b64 = base64_of(&doc);
    let wire = json!([
      {"role": "user", "parts": [{"text": "Read this"}, {"inlineData": {"mimeType": "text/plain", "data": doc_b64}}]},
      {"role": "model", "parts": [{"functionCall": {"name": "run", "args": {}}}, {"functionCall": {"name": "dump", "args": {}}}]},
      {"role": "user", "parts": [
        {"functionResponse": {"name": "run", "response": {"output": log}}},
        {"functionResponse": {"name": "dump", "response": {"lines": log.lines().collect::<Vec<_>>()}}}
      ]},
      {"role": "user", "parts": [{"text": "Why?"}]}
    ]);
    let req = parse_request(Format::Gemini, &wire, None, None).unwrap();
    let mut g = guard(json!({"model": "gemini-2.5-pro", "toolOutputLimit": 500, "attachmentBudget": 1000}));
    let out = g.guard_sources(&req, false, &clock);
    assert_eq!(out.traces.len(), 2);
    let (_, contents) = write_request(Format::Gemini, &out.request);
    let run = &contents[2]["parts"][0]["functionResponse"]["response"];
    let run_text = run["output"].as_str().unwrap();
    assert!(run_text.len() < log.len() / 4 && run_text.contains("0000 PASS"), "the one string field keeps its key");
    let dump = &contents[2]["parts"][1]["functionResponse"]["response"];
    // JSON outputs are compacted as JSON (long arrays shortened): the response stays that object.
    assert!(
        dump["lines"].as_array().unwrap().len() < 100 && dump.to_string().contains("[ctxguard:compacted-tool-output]"),
        "{dump}"
    );
    let data = contents[0]["parts"][1]["inlineData"]["data"].as_str().unwrap();
    assert!(data.len() < doc_b64.len() / 4);
    let again = parse_request(Format::Gemini, &Value::Array(contents.clone()), None, None).unwrap();
    let out2 = g.guard_sources(&again, false, &clock);
    assert_eq!(
        write_request(Format::Gemini, &out2.request).1,
        contents,
        "recognized as compacted: nothing changes twice"
    );
}

#[test]
fn compaction_through_the_pipeline_and_the_checkpoint_reloads() {
    let filler: String = (0..600).map(|i| format!("line {i} of the earlier discussion\n")).collect();
    let mut wire = vec![];
    for t in 0..6 {
        wire.push(json!({"role": "user", "parts": [{"text": format!("Question {t}: {filler}")}]}));
        wire.push(json!({"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {"q": t}}, "thoughtSignature": "c2ln"}]}));
        wire.push(json!({"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {"output": format!("result {t}")}}}]}));
        wire.push(json!({"role": "model", "parts": [{"text": format!("Answer {t}")}]}));
    }
    wire.push(json!({"role": "user", "parts": [{"text": "Final question?"}]}));
    wire.push(json!({"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {"q": "last"}}, "thoughtSignature": "bGFzdA=="}]}));
    wire.push(
        json!({"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {"output": "last"}}}]}),
    );
    let wire = Value::Array(wire);
    let sys = json!({"parts": [{"text": "You are helpful."}]});
    let req = parse_request(Format::Gemini, &wire, Some(&sys), None).unwrap();
    let mut g = guard(
        json!({"model": "gemini-2.5-pro", "contextWindow": 20000, "reservedOutputTokens": 1000, "format": "gemini"}),
    );
    let Step::Summarize(p) =
        ctxguard::pipeline::prepare_start(&mut g, &req, &PrepareOptions::default(), &clock).unwrap()
    else {
        panic!("expected a summary request")
    };
    let answer = p.validate(&g, &json!("Six lookups, each returned its result.")).unwrap();
    let out = ctxguard::pipeline::prepare_finish(&mut g, *p, Ok(answer), 1, &clock).unwrap();
    assert!(!out.degraded);
    let (system, contents) = write_request(Format::Gemini, &out.request);
    let parts = system.unwrap()["parts"].as_array().unwrap().clone();
    assert_eq!(parts[0], json!({"text": "You are helpful."}));
    assert!(parts[1]["text"].as_str().unwrap().starts_with("[ctxguard:summary]"));
    // The current turn is whole, the signature still on its call.
    let n = contents.len();
    assert_eq!(contents[n - 2]["parts"][0]["thoughtSignature"], "bGFzdA==");
    assert_eq!(contents[n - 1]["parts"][0]["functionResponse"]["name"], "lookup");
    assert!(contents.iter().all(|c| c["role"] == "user" || c["role"] == "model"));
    // Checkpoint: written, re-read, resolved to itself.
    let checkpoint = out.checkpoint.unwrap();
    let (cp_system, cp_contents) =
        write_request(Format::Gemini, &Request { messages: checkpoint, ..Default::default() });
    let again = parse_request(Format::Gemini, &Value::Array(cp_contents.clone()), cp_system.as_ref(), None).unwrap();
    let turns =
        vec![ctxguard::message::checkpoint::Turn { id: Some("t".into()), messages: again.messages, status: None }];
    let resolved = ctxguard::message::checkpoint::resolve(&turns, &Default::default(), None);
    assert!(resolved.from_checkpoint);
    let (s2, c2) = write_request(Format::Gemini, &Request { messages: resolved.messages, ..Default::default() });
    assert_eq!((s2, c2), (cp_system, cp_contents));
}

#[test]
fn tools_declarations_and_built_ins() {
    let tools = parse_tools(&json!([
      {"functionDeclarations": [
        {"name": "weather", "description": "Weather", "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}},
        {"name": "json_schema_tool", "parametersJsonSchema": {"type": "object", "properties": {}}}
      ]},
      {"googleSearch": {}},
      {"codeExecution": {}}
    ]))
    .unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["weather", "json_schema_tool", "googleSearch", "codeExecution"]
    );
    assert!(tools[1].parameters.is_object() && tools[2].parameters.is_null());
    let err = parse_tools(&json!([{"functionDeclarations": [{"description": "no name"}]}])).unwrap_err();
    assert_eq!((err.code, err.index), (ErrorCode::InvalidTool, Some(0)));
}

#[test]
fn bad_contents_name_their_index() {
    let ok = json!({"role": "user", "parts": [{"text": "ok"}]});
    let cases: Vec<(Value, ErrorCode)> = vec![
        (json!({"contents": []}), ErrorCode::InvalidMessages),
        (json!([ok, "text"]), ErrorCode::InvalidMessage),
        (json!([ok, {"role": "assistant", "parts": [{"text": "x"}]}]), ErrorCode::InvalidRole),
        (json!([ok, {"role": "system", "parts": [{"text": "x"}]}]), ErrorCode::InvalidRole),
        (json!([ok, {"role": "user"}]), ErrorCode::InvalidMessage),
        (json!([ok, {"role": "user", "parts": "x"}]), ErrorCode::InvalidMessage),
        (json!([ok, {"role": "user", "parts": [{"text": 1}]}]), ErrorCode::InvalidContentPart),
        (
            json!([ok, {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png"}}]}]),
            ErrorCode::InvalidContentPart,
        ),
        (json!([ok, {"role": "user", "parts": [{"functionCall": {"name": "f"}}]}]), ErrorCode::InvalidContentPart),
        (
            json!([ok, {"role": "model", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]),
            ErrorCode::InvalidContentPart,
        ),
        (json!([ok, {"role": "model", "parts": [{"functionCall": {"args": {}}}]}]), ErrorCode::InvalidTool),
        (
            json!([ok, {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": "x"}}]}]),
            ErrorCode::InvalidTool,
        ),
        (json!([ok, {"role": "model", "parts": [{"functionCall": {"id": 3, "name": "f"}}]}]), ErrorCode::InvalidTool),
        (json!([ok, {"role": "user", "parts": [{"text": "x"}], "ctxguard": "yes"}]), ErrorCode::InvalidMessage),
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
