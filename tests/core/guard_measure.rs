//! ContextGuard::measure end to end on the native core: parse -> count (cached) -> metrics.

use crate::support::model_guard;
use ctxguard::format::{parse_request, Format};
use ctxguard::guard::{Guard, GuardConfig};
use ctxguard::report::metrics::ContextState;
use serde_json::json;

fn conversation(turns: usize) -> serde_json::Value {
    let mut msgs = vec![json!({"role": "system", "content": "You are a careful build assistant."})];
    for i in 0..turns {
        msgs.push(json!({"role": "user", "content": format!("Turn {i}: why does test_{i} fail? 为什么失败？")}));
        msgs.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_{i}"), "type": "function", "function": {"name": "run_tests", "arguments": format!("{{\"filter\":\"test_{i}\"}}")}}
        ]}));
        msgs.push(json!({"role": "tool", "tool_call_id": format!("call_{i}"), "content": "FAILED: assertion left == right\n".repeat(20)}));
        msgs.push(json!({"role": "assistant", "content": format!("Test {i} fails because the fixture is stale.")}));
    }
    serde_json::Value::Array(msgs)
}

#[test]
fn measure_equals_count_request_and_fills_the_breakdown() {
    let wire = conversation(5);
    let req = parse_request(Format::Openai, &wire, None, None).unwrap();
    let mut g = model_guard("gpt-4o");
    let m = g.measure(&req);
    let profile = ctxguard::provider::models::profile(&g.model);
    let direct = ctxguard::count::count_request(&profile, &req.messages, &req.tools);
    assert_eq!(m.used_tokens as usize, direct.total);
    let b = m.breakdown;
    assert!(b.system > 0 && b.user > 0 && b.assistant > 0 && b.tool_outputs > 0 && b.framing > 0);
    assert_eq!(b.tool_definitions, 0);
    assert_eq!(m.message_count, 21);
    assert_eq!(m.state, ContextState::Ok);
    assert_eq!(m.usable_limit, 128_000 - 16_384);
    assert!(!m.compacted);
}

#[test]
fn a_grown_conversation_only_counts_the_new_message() {
    let mut g = model_guard("gpt-4o");
    let wire = conversation(50);
    let req = parse_request(Format::Openai, &wire, None, None).unwrap();
    let first = g.measure(&req);
    let (_, hits0, misses0) = g.counter.cache_stats();
    assert_eq!(hits0, 0);
    // identical messages repeat in this conversation? No: each turn differs by its index.
    assert_eq!(misses0, 201);
    let mut grown = wire.as_array().unwrap().clone();
    grown.push(json!({"role": "user", "content": "And now?"}));
    let req2 = parse_request(Format::Openai, &serde_json::Value::Array(grown), None, None).unwrap();
    let second = g.measure(&req2);
    let (_, hits, misses) = g.counter.cache_stats();
    assert_eq!(misses - misses0, 1, "only the new message is counted");
    assert_eq!(hits - hits0, 201);
    let fresh = model_guard("gpt-4o").measure(&req2);
    assert_eq!(second.used_tokens, fresh.used_tokens, "cached counts equal a fresh count");
    assert!(second.used_tokens > first.used_tokens);
}

#[test]
fn states_follow_the_budget() {
    let wire = conversation(40);
    let req = parse_request(Format::Openai, &wire, None, None).unwrap();
    let used = model_guard("gpt-4o").measure(&req).used_tokens as f64;
    let cfg = |window: f64| GuardConfig {
        model: Some("gpt-4o".into()),
        context_window: Some(window),
        reserved_output_tokens: Some(0.0),
        ..Default::default()
    };
    let state = |window: f64| Guard::new(&cfg(window)).unwrap().measure(&req).state;
    assert_eq!(state((used * 3.0).ceil()), ContextState::Ok);
    assert_eq!(state((used / 0.78).ceil()), ContextState::NearTrigger);
    assert_eq!(state((used / 0.9).ceil()), ContextState::OverTrigger);
    assert_eq!(state((used / 1.1).floor()), ContextState::OverLimit);
}

#[test]
fn estimated_models_say_so_and_count_more() {
    let wire = conversation(3);
    let req = parse_request(Format::Openai, &wire, None, None).unwrap();
    let exact = model_guard("gpt-4o").measure(&req);
    let claude = model_guard("claude-sonnet-4-5").measure(&req);
    assert_eq!(serde_json::to_value(exact.kind).unwrap(), "exact");
    assert_eq!(serde_json::to_value(claude.kind).unwrap(), "estimate");
    assert!(claude.used_tokens > exact.used_tokens);
}

#[test]
fn config_errors_have_codes() {
    let e = Guard::new(&GuardConfig { model: Some("nope".into()), ..Default::default() }).err().unwrap();
    assert_eq!(e.code.as_str(), "UNKNOWN_MODEL");
    let bad: Result<GuardConfig, _> = serde_json::from_value(json!({"model": "gpt-4o", "triggerRatoi": 0.9}));
    assert!(bad.is_err());
}

#[test]
fn model_resolution_with_and_without_names() {
    use ctxguard::guard::resolve_model;
    use ctxguard::provider::models::CountKind;
    use ctxguard::tokens::Encoding;
    let none = resolve_model(None, None);
    assert_eq!((none.kind, none.encoding, none.estimate_factor), (CountKind::Exact, Encoding::O200kBase, 1.0));
    let cl = resolve_model(None, Some(Encoding::Cl100kBase));
    assert_eq!((cl.kind, cl.encoding), (CountKind::Exact, Encoding::Cl100kBase));
    let local = resolve_model(Some("my-llama"), Some(Encoding::Cl100kBase));
    assert_eq!((local.kind, local.estimate_factor), (CountKind::Estimate, 1.0));
    let gpt = resolve_model(Some("gpt-4o"), Some(Encoding::Cl100kBase));
    assert_eq!(gpt.kind, CountKind::Exact);
    let claude = resolve_model(Some("claude-3-5-haiku"), None);
    assert!(claude.estimate_factor > 1.0 && claude.kind == CountKind::Estimate);
}

/// Facts a call keeps on messages (so that its passes hash each message once) are not trusted
/// by a later call: a host may change a message between calls without ctxguard knowing, and
/// another guard (another profile) computes its own.
#[test]
fn facts_kept_on_messages_do_not_outlive_the_call() {
    let wire = conversation(3);
    let mut req = parse_request(Format::Openai, &wire, None, None).unwrap();
    let mut g = model_guard("gpt-4o");
    let before = g.scoped(|g| g.measure(&req)).used_tokens;
    req.messages[1].content =
        ctxguard::message::Content::Text("a much longer question than before, ".repeat(20).into());
    let fresh = model_guard("gpt-4o").measure(&req).used_tokens;
    assert!(fresh > before);
    assert_eq!(g.scoped(|g| g.measure(&req)).used_tokens, fresh);
    assert_eq!(g.guard_sources(&req, false, &|| 0.0).metrics.used_tokens, fresh);
    // Another guard, another profile: its own counts.
    let mut claude = model_guard("claude-sonnet-4-5");
    assert_eq!(
        claude.scoped(|c| c.measure(&req)).used_tokens,
        model_guard("claude-sonnet-4-5").measure(&req).used_tokens
    );
}
