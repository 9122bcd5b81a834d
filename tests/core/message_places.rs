//! `format::place::places`: for every message ctxguard counts (in `countMessages`' `perMessage`
//! order), where it sits in the caller's input — the system option first, tool results split out
//! of their wire message before the rest of it, the rest naming the parts it kept.

use crate::support::fixtures::*;
use ctxguard::base::error::ErrorCode;
use ctxguard::count::count_request;
use ctxguard::format::place::places;
use ctxguard::format::{parse_request, Format};
use ctxguard::guard::resolve_model;
use ctxguard::provider::models::profile;
use serde_json::{json, Value};

/// `places` of a request as JSON (without `callId`, which `call_ids` checks), after checking it
/// has one place per counted message.
fn placed(format: Format, messages: &Value, system: Option<&Value>) -> Value {
    let mut v = placed_with_calls(format, messages, system);
    for p in v.as_array_mut().unwrap() {
        p.as_object_mut().unwrap().remove("callId");
    }
    v
}

fn placed_with_calls(format: Format, messages: &Value, system: Option<&Value>) -> Value {
    let request = parse_request(format, messages, system, None).unwrap();
    let got = places(format, &request.messages, system).unwrap();
    let per =
        count_request(&profile(&resolve_model(Some("gpt-4o"), None)), &request.messages, &request.tools).per_message;
    assert_eq!(got.len(), per.len(), "{format:?}: one place per perMessage entry");
    serde_json::to_value(got).unwrap()
}

/// The `callId` of each place.
fn call_ids(format: Format, messages: &Value) -> Vec<Value> {
    placed_with_calls(format, messages, None).as_array().unwrap().iter().map(|p| p["callId"].clone()).collect()
}

#[test]
fn a_tool_result_names_the_call_it_is_paired_with() {
    let anthropic = json!([
        { "role": "assistant", "content": [{ "type": "tool_use", "id": "t1", "name": "get", "input": {} }] },
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "x" }, { "type": "text", "text": "and" }] }
    ]);
    assert_eq!(call_ids(Format::Anthropic, &anthropic), [NONE, json!("t1"), NONE]);
    // An AI SDK approval response is paired with the call its approval was requested for.
    let ai = json!([
        { "role": "assistant", "content": [
            { "type": "tool-call", "toolCallId": "c1", "toolName": "rm", "input": {} },
            { "type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c1" }
        ] },
        { "role": "tool", "content": [{ "type": "tool-approval-response", "approvalId": "a1", "approved": false }] }
    ]);
    let ids = call_ids(Format::AiSdk, &ai);
    assert_eq!(ids.last().unwrap(), &json!("c1"), "{ids:?}");
    assert!(ids[..ids.len() - 1].iter().all(Value::is_null));
}

/// `[message, parts, role]` triples as the places' JSON.
fn expect(rows: &[(Value, Value, &str)]) -> Value {
    Value::Array(rows.iter().map(|(m, p, r)| json!({ "message": m, "parts": p, "role": r })).collect())
}

fn at(i: usize) -> Value {
    json!(i)
}

const NONE: Value = Value::Null;

/// The places the Anthropic and Gemini fixtures share: the system, a user and an assistant
/// message, then a user message whose two tool results (blocks 0 and 1) come before its text.
fn fixture_head() -> Vec<(Value, Value, &'static str)> {
    vec![
        (json!("system"), NONE, "system"),
        (at(0), NONE, "user"),
        (at(1), NONE, "assistant"),
        (at(2), json!([0]), "tool"),
        (at(2), json!([1]), "tool"),
        (at(2), json!([2]), "user"),
    ]
}

#[test]
fn openai_one_place_per_message_and_the_system_option_first() {
    let got = placed(Format::Openai, &openai_fixture(), None);
    let roles = ["system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant"];
    let rows: Vec<_> = roles.iter().enumerate().map(|(i, r)| (at(i), NONE, *r)).collect();
    assert_eq!(got, expect(&rows));

    let got = placed(Format::Openai, &json!([{ "role": "user", "content": "hi" }]), Some(&json!("Be brief")));
    assert_eq!(got, expect(&[(json!("system"), NONE, "system"), (at(0), NONE, "user")]));
}

#[test]
fn anthropic_tool_results_split_out_before_the_rest_of_their_message() {
    let f = anthropic_fixture();
    let got = placed(Format::Anthropic, &f["messages"], Some(&f["system"]));
    let mut rows = fixture_head();
    rows.extend([(at(3), NONE, "assistant"), (at(4), json!([0]), "tool"), (at(5), NONE, "assistant")]);
    assert_eq!(got, expect(&rows));
    // A tool result between two text blocks: it comes first, the rest keeps blocks 0 and 2.
    let messages = json!([
        { "role": "assistant", "content": [{ "type": "tool_use", "id": "t1", "name": "get", "input": {} }] },
        { "role": "user", "content": [
            { "type": "text", "text": "before" },
            { "type": "tool_result", "tool_use_id": "t1", "content": "one" },
            { "type": "text", "text": "after" }
        ] }
    ]);
    let got = placed(Format::Anthropic, &messages, None);
    assert_eq!(got, expect(&[(at(0), NONE, "assistant"), (at(1), json!([1]), "tool"), (at(1), json!([0, 2]), "user")]));
}

#[test]
fn ai_sdk_tool_messages_one_place_per_part_and_system_messages_in_place() {
    let got = placed(Format::AiSdk, &ai_sdk_fixture(), None);
    assert_eq!(
        got,
        expect(&[
            (at(0), NONE, "system"),
            (at(1), NONE, "user"),
            (at(2), NONE, "assistant"),
            (at(3), json!([0]), "tool"),
            (at(3), json!([1]), "tool"),
            (at(3), json!([2]), "tool"),
            (at(4), NONE, "user"),
            (at(5), NONE, "assistant"),
            (at(6), json!([0]), "tool"),
            (at(6), json!([1]), "tool"),
            (at(7), NONE, "assistant"),
        ])
    );
    // The system option: a string is one place; an array one per system message, by index.
    let user = json!([{ "role": "user", "content": "hi" }]);
    assert_eq!(
        placed(Format::AiSdk, &user, Some(&json!("S"))),
        expect(&[(json!("system"), NONE, "system"), (at(0), NONE, "user")])
    );
    let two = json!([{ "role": "system", "content": "S" }, { "role": "system", "content": "T" }]);
    assert_eq!(
        placed(Format::AiSdk, &user, Some(&two)),
        expect(&[
            (json!("system"), json!([0]), "system"),
            (json!("system"), json!([1]), "system"),
            (at(0), NONE, "user")
        ])
    );
}

#[test]
fn responses_one_place_per_item_after_the_instructions() {
    let got = placed(Format::OpenaiResponses, &responses_fixture(), Some(&json!("Be brief")));
    let roles = [
        "system",
        "user",
        "assistant",
        "assistant",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "assistant",
        "tool",
    ];
    let mut rows = vec![(json!("system"), NONE, "system")];
    rows.extend(roles.iter().enumerate().map(|(i, r)| (at(i), NONE, *r)));
    assert_eq!(got, expect(&rows));
}

#[test]
fn gemini_function_responses_split_out_before_the_rest_of_their_content() {
    let f = gemini_fixture();
    let got = placed(Format::Gemini, &f["messages"], Some(&f["system"]));
    let mut rows = fixture_head();
    rows.push((at(3), NONE, "user"));
    assert_eq!(got, expect(&rows));
    // A response after the text: the response first, then the text part.
    let messages = json!([
        { "role": "model", "parts": [{ "functionCall": { "name": "get", "args": {} } }] },
        { "role": "user", "parts": [{ "text": "and" }, { "functionResponse": { "name": "get", "response": {} } }] },
        { "role": "user", "parts": [{ "functionResponse": { "name": "get", "response": {} } }] }
    ]);
    let got = placed(Format::Gemini, &messages, None);
    assert_eq!(
        got,
        expect(&[
            (at(0), NONE, "assistant"),
            (at(1), json!([1]), "tool"),
            (at(1), json!([0]), "user"),
            (at(2), json!([0]), "tool")
        ])
    );
}

#[test]
fn a_bad_system_option_is_an_error_with_its_code() {
    let request = parse_request(Format::AiSdk, &json!([]), None, None).unwrap();
    let err = places(Format::AiSdk, &request.messages, Some(&json!(42))).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidOptions);
}
