//! `detect_format` on the five formats' fixtures and on inputs valid in several formats.

use crate::support::fixtures::*;
use ctxguard::format::detect::detect;
use ctxguard::format::Format;
use serde_json::json;

#[test]
fn the_fixtures_are_recognized() {
    assert_eq!(detect(&openai_fixture()), Some(Format::Openai));
    assert_eq!(detect(&anthropic_fixture()), Some(Format::Anthropic));
    assert_eq!(detect(&ai_sdk_fixture()), Some(Format::AiSdk));
    assert_eq!(detect(&responses_fixture()), Some(Format::OpenaiResponses));
    assert_eq!(detect(&gemini_fixture()), Some(Format::Gemini));
    // As a bare messages array too, and as the requests the SDKs send.
    assert_eq!(detect(&anthropic_fixture()["messages"]), Some(Format::Anthropic));
    assert_eq!(detect(&gemini_fixture()["messages"]), Some(Format::Gemini));
    assert_eq!(
        detect(&json!({"contents": gemini_fixture()["messages"], "systemInstruction": gemini_fixture()["system"]})),
        Some(Format::Gemini)
    );
    assert_eq!(
        detect(&json!({"input": responses_fixture(), "instructions": "Be brief."})),
        Some(Format::OpenaiResponses)
    );
    assert_eq!(detect(&json!({"model": "gpt-4o", "messages": openai_fixture()})), Some(Format::Openai));
}

#[test]
fn each_fixture_parses_in_the_format_detected() {
    for v in [openai_fixture(), anthropic_fixture(), ai_sdk_fixture(), responses_fixture(), gemini_fixture()] {
        let format = detect(&v).unwrap();
        let (messages, system) = match v.get("messages") {
            Some(m) => (m.clone(), v.get("system").cloned()),
            None => (v.clone(), None),
        };
        assert!(ctxguard::format::parse_request(format, &messages, system.as_ref(), None).is_ok(), "{format:?}");
    }
}

#[test]
fn ambiguous_messages_are_openai() {
    // Plain text messages are valid in OpenAI, Anthropic, the AI SDK and Responses alike.
    let plain = json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]);
    assert_eq!(detect(&plain), Some(Format::Openai));
    for format in [Format::Openai, Format::Anthropic, Format::AiSdk, Format::OpenaiResponses] {
        assert!(ctxguard::format::parse_request(format, &plain, None, None).is_ok(), "{format:?}");
    }
    // Text parts are shared too; a system message is OpenAI's, the AI SDK's and Responses'.
    assert_eq!(
        detect(
            &json!([{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "hi"}]}])
        ),
        Some(Format::Openai)
    );
    // The same messages with a `system` beside them: Anthropic's request shape.
    assert_eq!(detect(&json!({"messages": plain, "system": "Be brief."})), Some(Format::Anthropic));
}

#[test]
fn no_format_for_other_values() {
    for v in [json!(null), json!(true), json!("hi"), json!({}), json!({"messages": {}}), json!([[]]), json!([null])] {
        assert_eq!(detect(&v), None, "{v}");
    }
}
