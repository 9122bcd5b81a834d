//! The figures an overflow error states (`promptTokens`, `completionTokens`, `requestedTokens`,
//! `limit`, `countQualifier`), on a table of real messages with where each was seen: every wording
//! ctxguard reads a figure from, the overflow wordings that state none, localized ones, and errors
//! of other kinds whose numbers must never be read.

use ctxguard::provider::overflow::{classify_value, ErrorKind, OverflowCounts, Qualifier};
use serde_json::{json, Value};

use Qualifier::{About, AtLeast, Exact};

/// The table, shared with `tests/js/overflow.test.mjs`: `{ source, error, figures }`, where
/// `error` is what a host passes and `figures` the stated ones (absent: not stated).
const TABLE: &str = include_str!("../js/fixtures/overflow-figures.json");

const FIGURES: [&str; 5] = ["promptTokens", "completionTokens", "requestedTokens", "limit", "countQualifier"];

fn none() -> OverflowCounts {
    OverflowCounts::default()
}

fn msg(m: &str) -> Value {
    json!({ "status": 400, "message": m })
}

#[test]
fn every_wording_gives_its_figures() {
    let cases: Vec<Value> = serde_json::from_str(TABLE).unwrap();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let (mut stated, mut silent) = (0, 0);
    let mut failures = Vec::new();
    for c in &cases {
        let source = c["source"].as_str().unwrap();
        let got = classify_value(&c["error"]);
        let mut want = serde_json::Map::new();
        for key in FIGURES {
            want.insert(key.into(), c["figures"].get(key).cloned().unwrap_or(Value::Null));
        }
        if c["figures"].as_object().unwrap().is_empty() {
            silent += 1;
        } else {
            stated += 1;
        }
        if got.kind != ErrorKind::ContextOverflow {
            failures.push(format!("{source}\n    not an overflow: {:?} {}", got.kind, got.reason));
        } else if serde_json::to_value(got.counts).unwrap() != Value::Object(want.clone()) {
            failures.push(format!(
                "{source}\n    want {}\n    got  {}",
                Value::Object(want),
                serde_json::to_value(got.counts).unwrap()
            ));
        }
    }
    assert!(failures.is_empty(), "{} of {} wrong:\n{}", failures.len(), cases.len(), failures.join("\n"));
    assert!(stated >= 45 && silent >= 12, "{stated} with figures, {silent} without");
}

#[test]
fn the_qualifiers() {
    let q = |m: &str| classify_value(&msg(m)).counts.qualifier;
    assert_eq!(q("prompt is too long: 202609 tokens > 200000 maximum"), Some(Exact));
    assert_eq!(q("This model's maximum context length is 4096 tokens. However, you requested 1 output tokens and your prompt contains at least 4096 input tokens, for a total of at least 4097 tokens."), Some(AtLeast));
    assert_eq!(q("This endpoint's maximum context length is 16384 tokens. However, you requested about 94307 tokens (94307 of text input)."), Some(About));
    // A limit alone has no qualifier.
    assert_eq!(q("Range of input length should be [1, 983616]"), None);
}

#[test]
fn new_wordings_are_overflows_with_their_own_reason() {
    let reason = |m: &str| classify_value(&msg(m)).reason;
    assert_eq!(
        reason("This model's maximum prompt length is 131072 but the request contains 136973 tokens."),
        "marker:maximum_prompt_length"
    );
    assert_eq!(reason("prompt token count of 65446 exceeds the limit of 64000"), "marker:prompt_token_count");
    assert_eq!(
        reason(
            "Unable to submit request because the input token count is 1251952 but model only supports up to 1048576."
        ),
        "marker:input_token_count"
    );
    assert_eq!(
        reason("Prompt has 300,000 tokens, but the configured context size is 131,072 tokens"),
        "marker:configured_context_size"
    );
    assert_eq!(
        reason("Input length 265330 exceeds the maximum allowed input length of 262144 tokens."),
        "marker:maximum_input_length"
    );
    assert_eq!(reason("输入令牌数(3377151)超过了允许的最大令牌数(1048576)。"), "marker:zh_context");
    assert_eq!(classify_value(&json!({"code": "model_max_prompt_tokens_exceeded"})).reason, "marker:context_exceeded");
}

/// Numbers in errors of other kinds are never read, nor numbers a pattern cannot hold.
#[test]
fn no_figures_outside_overflows_or_beyond_u32() {
    let others = [
        json!({"status": 429, "message": "Rate limit reached for gpt-4o in organization org-XXXX on tokens per min (TPM): Limit 30000, Used 14567, Requested 24754."}),
        json!({"status": 413, "body": {"error": {"message": "Request too large for model `llama-3.1-70b-versatile` in organization `org_01` on tokens per minute (TPM): Limit 6000, Requested 14368, please reduce your message size and try again.", "type": "tokens", "code": "rate_limit_exceeded"}}}),
        json!({"body": {"error": {"code": "rate_limit_error", "message": "This request would exceed the rate limit for your organization of 20,000 input tokens per minute."}}}),
        json!({"status": 400, "body": {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: 10000 > 4096, which is the maximum allowed number of output tokens for claude-3-5-sonnet-20240620"}}}),
        json!({"status": 400, "message": "400 max_tokens must be less than or equal to 16384, the maximum value for max_tokens is less than the context_window for this model"}),
        json!({"status": 413, "message": "image exceeds 5 MB maximum: 7471104 bytes > 5242880 bytes"}),
        json!({"status": 400, "body": {"n_prompt_tokens": 9000, "n_ctx": 8192}}),
    ];
    for v in others {
        let c = classify_value(&v);
        assert_ne!(c.kind, ErrorKind::ContextOverflow, "{v}");
        assert_eq!(c.counts, none(), "{v}");
    }
    // A figure too large for a u32 is not read (nor anything after it in that pattern).
    let c = classify_value(&msg("prompt is too long: 99999999999 tokens > 200000 maximum"));
    assert_eq!((c.kind, c.counts), (ErrorKind::ContextOverflow, none()));
    // Whole numbers as floats (what a JS body holds) are read; fractions and strings are not.
    let c = classify_value(
        &json!({"body": {"error": {"type": "exceed_context_size_error", "n_prompt_tokens": 14429.0, "n_ctx": 8192.0}}}),
    );
    assert_eq!((c.counts.prompt_tokens, c.counts.limit), (Some(14_429), Some(8_192)));
    // Fields that are not whole numbers are not read.
    let c = classify_value(
        &json!({"body": {"error": {"type": "exceed_context_size_error", "n_prompt_tokens": 14429.5, "n_ctx": "8192"}}}),
    );
    assert_eq!(c.counts, none());
}

#[test]
fn the_json_shape() {
    let v = serde_json::to_value(classify_value(&msg("prompt is too long: 202609 tokens > 200000 maximum"))).unwrap();
    assert_eq!(
        v,
        json!({"kind": "context_overflow", "compactAndRetry": true, "reason": "marker:prompt_too_long",
            "promptTokens": 202609, "completionTokens": null, "requestedTokens": null, "limit": 200000, "countQualifier": "exact"})
    );
    let v = serde_json::to_value(classify_value(&json!({"status": 400}))).unwrap();
    assert_eq!(
        v,
        json!({"kind": "other", "compactAndRetry": false, "reason": "none",
            "promptTokens": null, "completionTokens": null, "requestedTokens": null, "limit": null, "countQualifier": null})
    );
}
