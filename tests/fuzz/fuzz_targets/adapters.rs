//! The message adapters on arbitrary JSON: parsing never panics, and whatever parses writes
//! back to a wire form that parses again and writes back identically (a fixpoint).
#![no_main]
use ctxguard::format::{parse_request, write_request, Format};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else { return };
    // Either the whole value is the messages array, or an object {messages, system, tools}.
    let (messages, system, tools) = match &v {
        Value::Object(o) => (o.get("messages").cloned().unwrap_or(Value::Null), o.get("system"), o.get("tools")),
        _ => (v.clone(), None, None),
    };
    for format in [Format::Openai, Format::Anthropic, Format::AiSdk, Format::OpenaiResponses, Format::Gemini] {
        let Ok(req) = parse_request(format, &messages, system, tools) else { continue };
        let (sys1, wire1) = write_request(format, &req);
        let again = parse_request(format, &Value::Array(wire1.clone()), sys1.as_ref(), None);
        let Ok(again) = again else {
            panic!("{format:?}: written wire does not parse again: {:?}", again.err());
        };
        let (sys2, wire2) = write_request(format, &again);
        assert_eq!((sys1, wire1), (sys2, wire2), "{format:?}: write(parse(write(x))) != write(x)");
    }
});
