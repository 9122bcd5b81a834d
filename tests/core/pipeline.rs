//! The pipeline end to end on the native core: layer 1, summary compaction (completed and every
//! fallback), anti-thrash, the emergency layer, guidance, tool-pair validity in both formats.

use std::collections::HashSet;

use crate::support::{self, clock};
use ctxguard::format::{parse_request, write_request, Format, Request};
use ctxguard::guard::{Guard, GuardConfig};
use ctxguard::message::{Message, Role};
use ctxguard::pipeline::{retry_pause_ms, FailureReason, Outcome, Pending, PrepareOptions, Step, MAX_ATTEMPTS};
use serde_json::{json, Value};

/// Compaction at the trigger (`edits: 'trigger'`): these tests are about what a compaction
/// builds; when a guard edits by default is tests/core/edits.rs's subject.
fn guard(window: u32) -> Guard {
    support::guard(
        json!({"edits": "trigger", "model": "gpt-4o", "contextWindow": window, "reservedOutputTokens": 1000}),
    )
}

/// `turns` turns of user question, assistant tool call, tool result, assistant answer.
fn conversation(turns: usize, filler: usize) -> Value {
    let mut v = vec![json!({"role": "system", "content": "You are a build assistant."})];
    for i in 0..turns {
        v.push(
            json!({"role": "user", "content": format!("Q{i}: why does module {i} fail? {}", "detail ".repeat(filler))}),
        );
        v.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{i}"), "type": "function", "function": {"name": "run_tests", "arguments": format!("{{\"module\":\"m{i}\"}}")}}]}));
        v.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": format!("{}result: module {i} FAILED at step {i}\n", "log line\n".repeat(filler))}));
        v.push(json!({"role": "assistant", "content": format!("Module {i} fails at step {i}. {}", "because ".repeat(filler))}));
    }
    v.push(json!({"role": "user", "content": "And what should I fix first? 先修哪个？"}));
    Value::Array(v)
}

fn parse(v: &Value) -> Request {
    parse_request(Format::Openai, v, None, None).unwrap()
}

fn pending(g: &mut Guard, req: &Request, opts: &PrepareOptions) -> Box<Pending> {
    match ctxguard::pipeline::prepare_start(g, req, opts, &clock).unwrap() {
        Step::Summarize(p) => p,
        Step::Done(_) | Step::AwaitAhead => panic!("expected a summary request"),
    }
}

fn assert_pairs_valid(msgs: &[Message]) {
    let mut issued = HashSet::new();
    let mut answered = HashSet::new();
    for m in msgs {
        for c in &m.tool_calls {
            issued.insert(c.id.clone());
        }
        if let (Role::Tool, Some(id)) = (m.role, &m.tool_call_id) {
            assert!(issued.contains(id), "result {id} without its call");
            answered.insert(id.clone());
        }
    }
    assert_eq!(issued, answered, "calls without results");
}

fn latest_user_is_last_user(out: &Outcome, original: &Value) {
    let last = original.as_array().unwrap().last().unwrap().clone();
    let (_, wire) = write_request(Format::Openai, &out.request);
    let last_user = wire.iter().rev().find(|m| m["role"] == "user").unwrap();
    assert_eq!(last_user, &last, "the latest user message survives unchanged");
}

#[test]
fn under_the_trigger_nothing_is_compacted() {
    let wire = conversation(3, 5);
    let mut g = guard(128_000);
    match ctxguard::pipeline::prepare_start(&mut g, &parse(&wire), &PrepareOptions::default(), &clock).unwrap() {
        Step::Done(out) => {
            assert!(out.compaction.is_none() && out.checkpoint.is_none() && !out.degraded);
            assert_eq!(write_request(Format::Openai, &out.request).1, wire.as_array().unwrap().clone());
        }
        Step::Summarize(_) | Step::AwaitAhead => panic!("no compaction under the trigger"),
    }
}

#[test]
fn a_completed_compaction_builds_a_self_contained_checkpoint() {
    let wire = conversation(40, 30);
    let req = parse(&wire);
    let mut g = guard(10_000);
    let used = g.measure(&req).used_tokens;
    assert!(used > g.budget.trigger_limit, "{used}");
    let p = pending(&mut g, &req, &PrepareOptions::default());
    // the source holds the older turns, not the system prompt and not the latest question
    assert!(p.request.messages.iter().all(|m| m.role != Role::System));
    assert!(!p.request.messages.iter().any(|m| m.content.text().contains("先修哪个")));
    assert!(p.request.instructions.contains("user's language"));
    assert!(p.request.schema["properties"]["key_facts"].is_object());
    let answer = json!({
        "summary": "The user is fixing failing modules 0-39; each fails at its own step.",
        "key_facts": ["module i fails at step i"], "decisions": [], "open_questions": ["which to fix first"],
        "plan": {"status": "active", "steps": [{"description": "fix module 0", "status": "pending"}]}
    });
    let a = p.validate(&g, &answer).unwrap();
    let out = ctxguard::pipeline::prepare_finish(&mut g, *p, Ok(a), 1, &clock).unwrap();
    assert!(!out.degraded);
    let rec = out.compaction.clone().unwrap();
    assert_eq!(rec.status, "completed");
    assert_eq!(rec.attempts, 1);
    assert_eq!(rec.before_tokens, used);
    assert!(rec.after_tokens < g.budget.target_limit);
    assert_eq!(rec.tokens_saved, rec.before_tokens - rec.after_tokens);
    let cp = out.checkpoint.clone().unwrap();
    assert_eq!(cp[0].content.text(), "You are a build assistant.");
    assert!(cp[1].markers.summary_compacted && cp[1].content.text().starts_with("[ctxguard:summary]"));
    assert!(cp[1].content.text().contains("## Plan (active)\n- [pending] fix module 0"));
    // What the summary covers is on its closing line: 160 - tail messages of the history.
    let tail: Vec<&Message> = cp.iter().skip(2).filter(|m| !m.markers.checkpoint_retained).collect();
    let tail_len = tail.len() - 1; // the latest question
    assert_eq!(rec.removed_items as usize, 160 - tail_len);
    assert!(cp[1].content.text().contains(&format!(" covers={}:", 160 - tail_len)), "{}", cp[1].content.text());
    // The recent tail: the newest whole exchanges, verbatim, starting with a user message and
    // holding the last assistant answer; at least half of the target is used after compaction.
    assert!(tail_len >= 4 && tail_len % 4 == 0, "whole exchanges: {tail_len}");
    assert_eq!(tail[0].role, Role::User);
    assert!(tail[tail_len - 1].content.text().starts_with("Module 39 fails at step 39."));
    let input: Vec<Value> = write_request(Format::Openai, &out.request).1;
    let originals = wire.as_array().unwrap();
    assert_eq!(
        &input[input.len() - 1 - tail_len..],
        &originals[originals.len() - 1 - tail_len..],
        "the tail reaches the model verbatim"
    );
    assert!(
        out.metrics.used_tokens >= g.budget.target_limit / 2,
        "{} of {}",
        out.metrics.used_tokens,
        g.budget.target_limit
    );
    let retained: Vec<_> = cp.iter().filter(|m| m.markers.checkpoint_retained).collect();
    assert!(!retained.is_empty() && retained.len() <= 4);
    assert!(retained.iter().all(|m| m.id.as_deref().unwrap().starts_with("ctxguard-retained-")));
    let newest_retained = 39 - tail_len / 4;
    assert!(retained.last().unwrap().content.text().starts_with(&format!("Q{newest_retained}:")));
    latest_user_is_last_user(&out, &wire);
    assert_pairs_valid(&out.request.messages);
    assert_eq!(out.traces.last().unwrap().removed_history_items, Some(rec.removed_items));
    assert_eq!(g.measure(&Request { messages: cp.clone(), ..Default::default() }).used_tokens, out.metrics.used_tokens);
    // the next call on the checkpoint does not compact again
    match ctxguard::pipeline::prepare_start(
        &mut g,
        &Request { messages: cp, ..Default::default() },
        &PrepareOptions::default(),
        &clock,
    )
    .unwrap()
    {
        Step::Done(o) => assert!(o.compaction.is_none()),
        Step::Summarize(_) | Step::AwaitAhead => panic!("compacted twice"),
    }
}

#[test]
fn bad_answers_are_rejected_with_reasons() {
    let wire = conversation(40, 30);
    let mut g = guard(10_000);
    let p = pending(&mut g, &parse(&wire), &PrepareOptions::default());
    assert_eq!(p.validate(&g, &json!("")), Err(FailureReason::EmptyOutput));
    assert_eq!(p.validate(&g, &json!(42)), Err(FailureReason::InvalidOutput));
    assert_eq!(p.validate(&g, &json!({"summary": ["x"]})), Err(FailureReason::InvalidOutput));
    let huge = "word ".repeat(p.request.max_tokens as usize * 2);
    assert_eq!(p.validate(&g, &json!(huge)), Err(FailureReason::OverBudget));
    assert!(p.validate(&g, &json!("A short plain-text summary.")).is_ok());
}

#[test]
fn every_failure_ends_in_the_mechanical_fallback_which_is_no_checkpoint() {
    for reason in [
        FailureReason::Timeout,
        FailureReason::CallbackError,
        FailureReason::InvalidOutput,
        FailureReason::NoCallback,
        FailureReason::Aborted,
    ] {
        let wire = conversation(40, 30);
        let mut g = guard(10_000);
        let p = pending(&mut g, &parse(&wire), &PrepareOptions::default());
        let out = ctxguard::pipeline::prepare_finish(&mut g, *p, Err(reason), 3, &clock).unwrap();
        assert!(out.degraded);
        assert_eq!(out.degraded_reason, Some(reason));
        let rec = out.compaction.clone().unwrap();
        assert_eq!((rec.status.as_str(), rec.failure_reason.as_deref()), ("fallback", Some(reason.as_str())));
        // A fallback is this call's model input, not a checkpoint: the stored history stays whole.
        assert!(out.checkpoint.is_none());
        let note = out.request.messages.iter().find(|m| m.markers.pinned).expect("evidence note");
        let t = note.content.text();
        assert!(t.starts_with("[ctxguard:evidence]") && t.contains(reason.as_str()));
        // The evidence of the newest summarized turn; the turns of the recent tail stay whole.
        let newest =
            (0..40).rev().find(|i| t.contains(&format!("tool run_tests(module=m{i}) → "))).expect("tool evidence");
        assert!(t.contains(&format!("module {newest} FAILED at step {newest}")), "{t}");
        assert!(
            out.request.messages.iter().any(|m| m.content.text().starts_with(&format!("Module {} fails", newest + 1))),
            "the turn after it is in the tail"
        );
        assert!(out.metrics.used_tokens <= g.budget.usable_limit);
        latest_user_is_last_user(&out, &wire);
        assert_pairs_valid(&out.request.messages);
    }
}

#[test]
fn force_compacts_under_the_trigger_and_guidance_is_never_persisted() {
    let wire = conversation(10, 5);
    let mut g = guard(128_000);
    let opts = PrepareOptions {
        force: true,
        guidance: Some("Your last answer was cut off; continue concisely.".into()),
        ..Default::default()
    };
    let p = pending(&mut g, &parse(&wire), &opts);
    assert!(!p.request.messages.iter().any(|m| m.content.text().contains("cut off")));
    let a = p.validate(&g, &json!("Ten modules fail.")).unwrap();
    let out = ctxguard::pipeline::prepare_finish(&mut g, *p, Ok(a), 1, &clock).unwrap();
    let last = out.request.messages.last().unwrap();
    assert_eq!(last.content.text(), "Your last answer was cut off; continue concisely.");
    assert!(!out.checkpoint.unwrap().iter().any(|m| m.content.text().contains("cut off")));
}

#[test]
fn an_ineffective_compaction_is_not_repeated() {
    // one huge latest question: the summary cannot get under the target
    let mut v = conversation(6, 3).as_array().unwrap().clone();
    v.pop();
    v.push(json!({"role": "user", "content": format!("Please review: {}", "token ".repeat(23_500))}));
    let wire = Value::Array(v);
    let mut g = guard(30_000);
    let p = pending(&mut g, &parse(&wire), &PrepareOptions::default());
    let a = p.validate(&g, &json!("Six modules fail.")).unwrap();
    let out = ctxguard::pipeline::prepare_finish(&mut g, *p, Ok(a), 1, &clock).unwrap();
    assert!(out.compaction.unwrap().after_tokens > g.budget.target_limit);
    match ctxguard::pipeline::prepare_start(
        &mut g,
        &Request { messages: out.checkpoint.unwrap(), ..Default::default() },
        &PrepareOptions::default(),
        &clock,
    )
    .unwrap()
    {
        Step::Done(o) => assert!(o.compaction.is_none(), "no second compaction right away"),
        Step::Summarize(_) | Step::AwaitAhead => panic!("thrash"),
    }
}

#[test]
fn emergency_layer_drops_oldest_and_refuses_an_oversized_question() {
    // window so small that even the fallback's chain must be cut by layer 3
    let wire = conversation(30, 40);
    let mut g = guard(4_000);
    let p = pending(&mut g, &parse(&wire), &PrepareOptions::default());
    let out = ctxguard::pipeline::prepare_finish(&mut g, *p, Err(FailureReason::Timeout), 3, &clock).unwrap();
    assert!(
        out.metrics.used_tokens <= g.budget.usable_limit,
        "{} > {}",
        out.metrics.used_tokens,
        g.budget.usable_limit
    );
    assert_eq!(out.request.messages[0].content.text(), "You are a build assistant.");
    latest_user_is_last_user(&out, &wire);
    assert_pairs_valid(&out.request.messages);

    let big = json!([{"role": "system", "content": "S"}, {"role": "user", "content": "word ".repeat(5_000)}]);
    let mut g = guard(4_000);
    let err = match ctxguard::pipeline::prepare_start(&mut g, &parse(&big), &PrepareOptions::default(), &clock) {
        Err(e) => e,
        Ok(_) => panic!("an oversized question must be an error"),
    };
    assert_eq!(err.code.as_str(), "LATEST_MESSAGE_TOO_LARGE");
}

#[test]
fn anthropic_pairs_stay_valid() {
    let mut msgs = Vec::new();
    for i in 0..40 {
        msgs.push(json!({"role": "user", "content": format!("step {i} {}", "word ".repeat(300))}));
        msgs.push(json!({"role": "assistant", "content": [{"type": "text", "text": "running"}, {"type": "tool_use", "id": format!("tu{i}"), "name": "bash", "input": {"cmd": format!("make {i}")}}]}));
        msgs.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("tu{i}"), "content": "ok ".repeat(200)}]}));
        msgs.push(json!({"role": "assistant", "content": "done"}));
    }
    msgs.push(json!({"role": "user", "content": "next?"}));
    let req = parse_request(Format::Anthropic, &Value::Array(msgs), Some(&json!("Be terse.")), None).unwrap();
    let cfg: GuardConfig = serde_json::from_value(
        json!({"edits": "trigger", "model": "claude-sonnet-4-5", "contextWindow": 12_000, "reservedOutputTokens": 1000}),
    )
    .unwrap();
    let mut g = Guard::new(&cfg).unwrap();
    let m = g.measure(&req);
    assert!(m.used_tokens > g.budget.trigger_limit, "{} {}", m.used_tokens, g.budget.trigger_limit);
    let p = pending(&mut g, &req, &PrepareOptions::default());
    let out = ctxguard::pipeline::prepare_finish(
        &mut g,
        *p,
        Ok(ctxguard::pipeline::session_state::Answer::Text("Forty steps ran.".into())),
        1,
        &clock,
    )
    .unwrap();
    assert_pairs_valid(&out.request.messages);
    let (system, wire) = write_request(Format::Anthropic, &out.request);
    let sys = serde_json::to_string(&system).unwrap();
    assert!(sys.contains("Be terse.") && sys.contains("[ctxguard:summary]"));
    assert_eq!(wire.last().unwrap()["content"], "next?");
}

#[test]
fn trimming_a_long_conversation_is_one_pass() {
    // 2,000 messages: the plan must come back (trim is linear; no recount per removal)
    let wire = conversation(500, 150);
    let mut g = guard(128_000);
    let p = pending(&mut g, &parse(&wire), &PrepareOptions::default());
    let src: usize = g.count(&Request { messages: p.request.messages.clone(), ..Default::default() }).total as usize;
    assert!(src <= g.budget.usable_limit as usize);
    assert!(p.request.messages.len() < 2_000);
}

fn session_guard(extra: Value) -> Guard {
    let mut cfg = json!({ "edits": "trigger", "model": "gpt-4o", "contextWindow": 128_000, "reservedOutputTokens": 1000, "strategy": "session_state" });
    for (k, v) in extra.as_object().unwrap() {
        cfg[k] = v.clone();
    }
    support::guard(cfg)
}

/// A run: the latest user message followed by `steps` tool steps (call + result); the last
/// step's result is the newest message.
fn long_run(steps: usize) -> Value {
    let mut v = conversation(40, 60).as_array().unwrap().clone();
    for s in 0..steps {
        v.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("r{s}"), "type": "function", "function": {"name": "grep", "arguments": format!("{{\"step\":{s}}}")}}]}));
        v.push(json!({"role": "tool", "tool_call_id": format!("r{s}"), "content": format!("step {s} output\n{}", "match line\n".repeat(120))}));
    }
    Value::Array(v)
}

#[test]
fn session_state_strategy_folds_the_run_into_the_state() {
    // The economic budget (8000) rather than the 128k window triggers the compression.
    let wire = long_run(8);
    let req = parse(&wire);
    let mut g = session_guard(json!({ "economicBudget": 8000 }));
    assert_eq!(g.budget.trigger_limit, 6400);
    let p = pending(&mut g, &req, &PrepareOptions::default());
    // The source: the older history, the latest user message and the run's earlier steps.
    let texts: Vec<String> = p.request.messages.iter().map(|m| m.content.text()).collect();
    assert!(texts.iter().any(|t| t.contains("先修哪个")), "the run's user message gives the steps their meaning");
    let calls: Vec<&str> = p.request.messages.iter().flat_map(|m| m.tool_calls.iter().map(|c| c.id.as_str())).collect();
    assert!(calls.contains(&"r0") && calls.contains(&"r6"), "the run's earlier steps are folded: {calls:?}");
    assert!(!calls.contains(&"r7"), "the last step stays verbatim");
    let a = p.validate(&g, &json!("Fixing modules; steps 0-6 grepped, matches everywhere.")).unwrap();
    let out = ctxguard::pipeline::prepare_finish(&mut g, *p, Ok(a), 1, &clock).unwrap();
    let cp = out.checkpoint.clone().unwrap();
    // system, the SessionState (a text answer becomes its summary), the user message, last step.
    assert_eq!(cp.len(), 5, "{cp:#?}");
    assert_eq!(cp[0].content.text(), "You are a build assistant.");
    assert!(cp[1].markers.summary_compacted);
    assert!(cp[1].content.text().contains("## Summary\nFixing modules"));
    assert!(cp[2].content.text().contains("先修哪个"));
    assert_eq!(cp[3].tool_calls[0].id, "r7");
    assert_eq!(cp[4].tool_call_id.as_deref(), Some("r7"));
    assert!(cp.iter().all(|m| !m.markers.checkpoint_retained), "no retained user clones");
    assert_pairs_valid(&out.request.messages);
    let state = out.session_state.clone().unwrap();
    assert_eq!(state.summary, "Fixing modules; steps 0-6 grepped, matches everywhere.");
    assert!(out.metrics.used_tokens <= g.budget.target_limit);
}

#[test]
fn a_run_starts_from_the_settled_session_state() {
    use ctxguard::pipeline::session_state::SessionState;
    let wire = conversation(30, 20);
    let req = parse(&wire);
    let state = SessionState {
        summary: "Modules 0-29 fail at their own step.".into(),
        key_facts: vec!["module i fails at step i".into()],
        ..Default::default()
    };
    let opts = PrepareOptions { session_state: Some(state.clone()), ..Default::default() };
    let mut g = session_guard(json!({ "checkpointKey": "k" }));
    let Step::Done(out) = ctxguard::pipeline::prepare_start(&mut g, &req, &opts, &clock).unwrap() else {
        panic!("no compaction expected")
    };
    let m = &out.request.messages;
    assert_eq!(m.len(), 3, "system, the state, the new user message");
    assert_eq!(m[0].content.text(), "You are a build assistant.");
    assert!(ctxguard::message::checkpoint::is_checkpoint_summary(&m[1], Some("k")), "sealed under the guard's key");
    assert!(m[1].content.text().contains("- module i fails at step i"));
    latest_user_is_last_user(&out, &wire);
    assert!(out.compaction.is_none());
    // The same call again, and a call on its own output, give the same model input.
    let Step::Done(again) = ctxguard::pipeline::prepare_start(&mut g, &out.request, &opts, &clock).unwrap() else {
        panic!()
    };
    assert_eq!(again.request.messages.len(), 3);
    assert_eq!(again.request.messages[1].content, m[1].content);
    // Misuse: a summary-strategy guard, an empty summary, no user message.
    let mut plain = guard(128_000);
    assert_eq!(
        ctxguard::pipeline::prepare_start(&mut plain, &req, &opts, &clock).err().unwrap().code,
        ctxguard::ErrorCode::InvalidOptions
    );
    let empty = PrepareOptions {
        session_state: Some(SessionState { summary: " ".into(), ..Default::default() }),
        ..Default::default()
    };
    assert_eq!(
        ctxguard::pipeline::prepare_start(&mut g, &req, &empty, &clock).err().unwrap().code,
        ctxguard::ErrorCode::InvalidOptions
    );
    let no_user = parse(&json!([{"role": "system", "content": "s"}]));
    assert_eq!(
        ctxguard::pipeline::prepare_start(&mut g, &no_user, &opts, &clock).err().unwrap().code,
        ctxguard::ErrorCode::InvalidMessages
    );
}

#[test]
fn the_checkpoint_keeps_raw_messages_and_the_next_call_gives_the_current_output_the_freed_room() {
    // Twelve old turns with tool logs and a large current output: before compaction the 13
    // outputs share the per-request total. The model input of the compacting call keeps layer 1's
    // versions (what fit next to the summary); the checkpoint keeps the raw output, so the next
    // call — on the checkpoint chain — gives the current output the room the summary freed.
    let mut v = conversation(12, 60).as_array().unwrap().clone();
    v.pop(); // the closing question: the current turn is a tool call with a long output
    v.push(json!({"role": "user", "content": "Run the full suite and tell me what fails."}));
    v.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": "now", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}]}));
    let log: String = (0..1500).map(|i| format!("{i:05} test suite::case_{i} ... ok ({} ms)\n", i % 89)).collect();
    v.push(json!({"role": "tool", "tool_call_id": "now", "content": log.clone()}));
    let wire = Value::Array(v);
    let req = parse(&wire);
    let cfg: GuardConfig = serde_json::from_value(
        json!({ "edits": "trigger", "model": "gpt-4o", "contextWindow": 40_000, "reservedOutputTokens": 1000, "toolOutputTotal": 8_000 }),
    )
    .unwrap();
    let mut g = Guard::new(&cfg).unwrap();
    let shared = g.guard_sources(&req, false, &clock).request.messages.last().unwrap().content.text();
    let p = pending(&mut g, &req, &PrepareOptions { force: true, ..Default::default() });
    let a = p.validate(&g, &json!("Twelve modules fail; each at its own step.")).unwrap();
    let out = ctxguard::pipeline::prepare_finish(&mut g, *p, Ok(a), 1, &clock).unwrap();
    // This call's model input: layer 1's version, as it was before the summary.
    assert_eq!(out.request.messages.last().unwrap().content.text(), shared);
    // The checkpoint stores the current output raw, byte for byte.
    let cp = out.checkpoint.clone().unwrap();
    assert_eq!(cp.last().unwrap().content.text(), log, "the checkpoint keeps the raw output");
    assert_pairs_valid(&out.request.messages);
    assert!(out.metrics.used_tokens <= g.budget.usable_limit);
    // The next call on the checkpoint chain: the output is alone under the total and grows.
    let next = g.guard_sources(&Request { messages: cp, ..Default::default() }, false, &clock);
    let grown = next.request.messages.last().unwrap().content.text();
    let count = |t: &str| ctxguard::tokens::count(ctxguard::Encoding::O200kBase, t);
    assert!(count(&grown) >= count(&shared), "{} >= {}", count(&grown), count(&shared));
    assert!(count(&grown) <= 8_000);
}

#[test]
fn errors_and_timeouts_pause_before_the_next_attempt_with_jittered_doubling() {
    let d = 500.0;
    for reason in [FailureReason::CallbackError, FailureReason::Timeout] {
        // Attempt 1 -> 2: between half and all of the delay; attempt 2 -> 3: of twice the delay.
        assert_eq!(retry_pause_ms(reason, 1, d, 0.0), Some(250.0));
        assert_eq!(retry_pause_ms(reason, 1, d, 0.999_999).map(f64::round), Some(500.0));
        assert_eq!(retry_pause_ms(reason, 2, d, 0.0), Some(500.0));
        assert_eq!(retry_pause_ms(reason, 2, d, 0.5), Some(750.0));
        // No pause after the last attempt, nor with the delay switched off.
        assert_eq!(retry_pause_ms(reason, MAX_ATTEMPTS, d, 0.5), None);
        assert_eq!(retry_pause_ms(reason, 1, 0.0, 0.5), None);
    }
    // An answer that failed validation is asked again at once; an abort ends the attempts anyway.
    for reason in [
        FailureReason::InvalidOutput,
        FailureReason::EmptyOutput,
        FailureReason::OverBudget,
        FailureReason::Aborted,
        FailureReason::NoCallback,
    ] {
        assert_eq!(retry_pause_ms(reason, 1, d, 0.5), None, "{reason:?}");
    }
    // A random number outside [0, 1) cannot stretch the pause.
    assert_eq!(retry_pause_ms(FailureReason::Timeout, 1, d, 7.0), Some(500.0));
    assert_eq!(retry_pause_ms(FailureReason::Timeout, 1, d, f64::NAN).map(|x| x.is_finite()), Some(true));
}
