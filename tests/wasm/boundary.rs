//! The exports themselves, called through their Rust signatures with JS values built by the JS
//! engine: results are plain JS data, failures are real JS `Error`s with `name` and `code`.
//!
//! Not compiled yet: it needs the binding reachable from integration tests. To enable it, in
//! src/lib.rs write `#[doc(hidden)] pub mod wasm;` (instead of `mod wasm;`), in src/wasm/mod.rs add
//! `pub use count::{count_tokens, known_models, model_info}; pub use guard::{count_messages, ContextGuard};`,
//! and uncomment the `mod boundary;` lines in tests/wasm_node.rs and tests/wasm_browser.rs.
//! (Verified: with those two lines it compiles, is clippy-clean for wasm32, and passes in Node and Chromium.)

use ctxguard::wasm::{count_messages, count_tokens, known_models, model_info, ContextGuard};
use js_sys::{Array, Reflect, JSON};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn js(json: &str) -> JsValue {
    JSON::parse(json).unwrap_or(JsValue::UNDEFINED)
}

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn stringify(value: &JsValue) -> String {
    JSON::stringify(value).ok().and_then(|s| s.as_string()).unwrap_or_default()
}

/// (name, code) of a thrown value, after checking that it is a real `Error`.
fn error_of(thrown: JsValue) -> (String, String) {
    assert!(thrown.is_instance_of::<js_sys::Error>(), "not an Error: {thrown:?}");
    let e: js_sys::Error = thrown.unchecked_into();
    assert!(!String::from(e.message()).is_empty());
    (String::from(e.name()), get(&e, "code").as_string().unwrap_or_default())
}

const COOKBOOK: &str = r#"[
  {"role":"system","content":"You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
  {"role":"system","name":"example_user","content":"New synergies will help drive top-line growth."},
  {"role":"system","name":"example_assistant","content":"Things working well together will increase revenue."},
  {"role":"system","name":"example_user","content":"Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
  {"role":"system","name":"example_assistant","content":"Let's talk later when we're less busy about how to do better."},
  {"role":"user","content":"This late pivot means we don't have time to boil the ocean for the client deliverable."}
]"#;

#[wasm_bindgen_test]
fn count_tokens_export() {
    let cl100k = js(r#"{"encoding":"cl100k_base"}"#);
    assert_eq!(count_tokens(JsValue::from_str("hello world"), JsValue::UNDEFINED).ok(), Some(2));
    assert_eq!(count_tokens(JsValue::from_str("tiktoken is great!"), cl100k).ok(), Some(6));
    assert_eq!(
        count_tokens(js(r#""abc\ud800def""#), JsValue::NULL).ok(),
        count_tokens(JsValue::from_str("abc\u{FFFD}def"), JsValue::NULL).ok()
    );
}

#[wasm_bindgen_test]
fn errors_are_js_errors_with_a_code() {
    let cases = [
        (count_tokens(JsValue::from_f64(42.0), JsValue::UNDEFINED).err(), "INVALID_TEXT"),
        (count_tokens(JsValue::from_str("x"), js(r#"{"encoding":"p50k_base"}"#)).err(), "UNKNOWN_ENCODING"),
        (count_tokens(JsValue::from_str("x"), js(r#"{"encodnig":"o200k_base"}"#)).err(), "INVALID_OPTIONS"),
        (count_messages(js(r#""hello""#), JsValue::UNDEFINED).err(), "INVALID_MESSAGES"),
        (count_messages(js(r#"[{"role":"wizard","content":"x"}]"#), JsValue::UNDEFINED).err(), "INVALID_ROLE"),
        (
            ContextGuard::new(js(r#"{"contextWindow":100,"maxOutputTokens":100,"reservedOutputTokens":100}"#)).err(),
            "INVALID_BUDGET",
        ),
        (ContextGuard::new(js(r#"{"model":"my-private-finetune"}"#)).err(), "UNKNOWN_MODEL"),
    ];
    for (thrown, code) in cases {
        let thrown = thrown.unwrap_or_else(|| JsValue::from_str("nothing thrown"));
        assert_eq!(error_of(thrown), ("CtxguardError".to_string(), code.to_string()));
    }
    // The instance is still usable after the errors.
    assert_eq!(count_tokens(JsValue::from_str("hello world"), JsValue::UNDEFINED).ok(), Some(2));
}

#[wasm_bindgen_test]
fn count_messages_export_matches_the_cookbook() {
    let messages = js(COOKBOOK);
    let before = stringify(&messages);
    let gpt4 = count_messages(messages.clone(), js(r#"{"model":"gpt-4"}"#)).unwrap_or(JsValue::NULL);
    assert_eq!(get(&gpt4, "total").as_f64(), Some(129.0));
    assert_eq!(get(&gpt4, "encoding").as_string().as_deref(), Some("cl100k_base"));
    assert!(Array::is_array(&get(&gpt4, "perMessage")));
    let gpt4o = count_messages(messages.clone(), js(r#"{"model":"gpt-4o"}"#)).unwrap_or(JsValue::NULL);
    assert_eq!(get(&gpt4o, "total").as_f64(), Some(124.0));
    assert_eq!(stringify(&messages), before, "the input was modified");
}

#[wasm_bindgen_test]
fn context_guard_export() {
    let guard = ContextGuard::new(js(
        r#"{"model":"gpt-4o","contextWindow":1000,"maxOutputTokens":200,"reservedOutputTokens":100}"#,
    ));
    assert!(guard.is_ok(), "constructor failed: {:?}", guard.as_ref().err());
    let Ok(guard) = guard else { return };
    let budget = guard.budget().unwrap_or(JsValue::NULL);
    assert_eq!(get(&budget, "usableLimit").as_f64(), Some(900.0));
    assert_eq!(get(&budget, "economicBudget"), JsValue::NULL, "None is null, not undefined");
    let messages = js(r#"[{"role":"system","content":"You are terse."},{"role":"user","content":"hello world"}]"#);
    let metrics = guard.measure(messages, JsValue::UNDEFINED).unwrap_or(JsValue::NULL);
    assert_eq!(get(&metrics, "usedTokens").as_f64(), Some(17.0));
    assert_eq!(get(&metrics, "state").as_string().as_deref(), Some("ok"));
    assert_eq!(get(&metrics, "lastCompaction"), JsValue::NULL);
    // Plain data: a JSON round trip changes nothing.
    assert_eq!(stringify(&js(&stringify(&metrics))), stringify(&metrics));
}

#[wasm_bindgen_test]
fn model_table_exports() {
    let info = model_info(JsValue::from_str("claude-sonnet-4-5")).unwrap_or(JsValue::NULL);
    assert_eq!(get(&info, "kind").as_string().as_deref(), Some("estimate"));
    let all = known_models().unwrap_or(JsValue::NULL);
    assert!(Array::is_array(&all) && Array::from(&all).length() > 10);
}
