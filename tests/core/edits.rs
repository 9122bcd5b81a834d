//! When the guard edits what it sent before, and Claude's preserved thinking (docs/edits.md):
//! whole conversations through `prepare`, what the model receives compared call by call with
//! what it received before. Counts and prefixes are asserted, never time.

use ctxguard::format::{parse_request, write_request, Format, Request};
use ctxguard::guard::{Guard, GuardConfig};
use ctxguard::pipeline::session_state::Answer;
use ctxguard::pipeline::{Outcome, PrepareOptions, Step};
use ctxguard::report::trace::Operation;
use serde_json::{json, Value};

use crate::support::{clock, guard};

/// Filler of at least `tokens` o200k tokens, different for each seed.
fn text(seed: usize, tokens: usize) -> String {
    let words = ["parser", "reads", "each", "line", "and", "checks", "the", "schema", "field", "error", "buffer"];
    let mut out = format!("output {seed}:");
    let mut x = seed as u64 * 2_654_435_761 + 1;
    while ctxguard::tokens::count(ctxguard::Encoding::O200kBase, &out) < tokens {
        for _ in 0..32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.push(' ');
            out.push_str(words[(x % words.len() as u64) as usize]);
        }
    }
    out
}

/// `prepare` with a summarizer that answers at once; `now` is the call's time for the cache.
fn prepare(g: &mut Guard, req: &Request, now: Option<f64>) -> Outcome {
    let opts = PrepareOptions { now, ..Default::default() };
    match ctxguard::pipeline::prepare_start(g, req, &opts, &clock).unwrap() {
        Step::Done(o) => *o,
        Step::Summarize(p) => {
            let summary = Answer::Text("The session so far: files were read and checked.".into());
            ctxguard::pipeline::prepare_finish(g, *p, Ok(summary), 1, &clock).unwrap()
        }
        Step::AwaitAhead => unreachable!(),
    }
}

/// What the model receives, as the binding writes it.
fn sent(format: Format, o: &Outcome) -> (Option<Value>, Vec<Value>) {
    write_request(format, &ctxguard::pipeline::model_visible_for(o.request.clone(), o.notes_as_user))
}

fn is_extension(before: &[Value], now: &[Value]) -> bool {
    before.len() <= now.len() && before.iter().zip(now).all(|(a, b)| a == b)
}

/// An OpenAI coding session: each turn a request, a `read_file` call and a ~`out`-token output;
/// `prepare` after each tool output. Returns, per call, the outcome and what the model got.
fn coding(cfg: Value, turns: usize, out: usize, now: &dyn Fn(usize) -> Option<f64>) -> Vec<(Outcome, Vec<Value>)> {
    let mut g = guard(cfg);
    let mut history = vec![json!({"role": "system", "content": "You are a coding agent."})];
    let mut calls = Vec::new();
    for i in 0..turns {
        history.push(json!({"role": "user", "content": format!("Step {i}: read src/m{i}.rs.")}));
        let id = format!("call_{i}");
        history.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": "read_file", "arguments": format!("{{\"path\":\"src/m{i}.rs\"}}")}}]}));
        history.push(json!({"role": "tool", "tool_call_id": id, "content": text(i, out)}));
        let req = parse_request(Format::Openai, &Value::Array(history.clone()), None, None).unwrap();
        let o = prepare(&mut g, &req, now(i));
        let wire = sent(Format::Openai, &o).1;
        calls.push((o, wire));
        history.push(json!({"role": "assistant", "content": format!("Module {i} parses lines.")}));
    }
    calls
}

#[test]
fn a_warm_cache_is_edited_only_when_the_request_would_not_fit() {
    let calls = coding(json!({"model": "gpt-4o", "contextWindow": 40_000}), 60, 2_000, &|_| None);
    let mut edits = 0;
    for w in calls.windows(2) {
        let ((_, before), (o, now)) = (&w[0], &w[1]);
        assert_eq!(o.metrics.edits.threshold, o.metrics.usable_limit, "warm: the usable limit");
        assert!(o.metrics.used_tokens <= o.metrics.usable_limit);
        if !is_extension(before, now) {
            edits += 1;
            // The previous model input plus this turn's messages (~2,100 tokens) did not fit.
            let grown = w[0].0.metrics.used_tokens + 2_100;
            assert!(grown > o.metrics.usable_limit, "an edit at {} of {}", grown, o.metrics.usable_limit);
            assert!(o.traces.iter().any(|t| t.operation == Operation::ToolOutputClear));
        }
    }
    assert!((2..=12).contains(&edits), "{edits} edits in 60 turns");
    // Each edit is priced: the tokens it re-bills and what that costs over reading them.
    let step = calls.iter().flat_map(|(o, _)| &o.traces).find(|t| t.operation == Operation::ToolOutputClear).unwrap();
    let invalidated = step.prefix_invalidated_tokens.unwrap();
    assert!(invalidated > 0);
    assert_eq!(step.edit_cost, Some(f64::from(invalidated) * 0.5), "gpt-4o: cached input at half the price");
}

#[test]
fn the_trigger_rule_edits_far_more_often() {
    let needed = coding(json!({"model": "gpt-4o", "contextWindow": 40_000}), 60, 2_000, &|_| None);
    let trigger = coding(json!({"model": "gpt-4o", "contextWindow": 40_000, "edits": "trigger"}), 60, 2_000, &|_| None);
    let count = |calls: &[(Outcome, Vec<Value>)]| calls.windows(2).filter(|w| !is_extension(&w[0].1, &w[1].1)).count();
    let (n, t) = (count(&needed), count(&trigger));
    assert!(t > n, "trigger {t} edits, needed {n}");
    assert_eq!(trigger[10].0.metrics.edits.threshold, trigger[10].0.metrics.trigger_limit);
    assert_eq!(trigger[10].0.metrics.edits.when, "trigger");
}

#[test]
fn a_cold_cache_is_edited_at_the_trigger() {
    // A call every minute, then a pause of ten minutes before call 30 (past the 5-minute cache).
    let at = |i: usize| Some(if i < 30 { i as f64 * 60_000.0 } else { (i + 10) as f64 * 60_000.0 });
    let calls = coding(json!({"model": "gpt-4o", "contextWindow": 40_000}), 40, 2_000, &at);
    let (cold, _) = &calls[30];
    assert!(!cold.metrics.edits.warm);
    assert_eq!(cold.metrics.edits.threshold, cold.metrics.trigger_limit);
    assert_eq!(cold.metrics.edits.expected_cached_tokens, 0);
    assert!(cold.metrics.used_tokens <= cold.metrics.trigger_limit, "over the trigger, a cold call edits");
    let (warm, _) = &calls[31];
    assert!(warm.metrics.edits.warm);
    assert!(warm.metrics.edits.expected_cached_tokens > 0);
    // What the cold call cleared stays cleared on the next (warm) call: frontiers never move back.
    assert!(
        is_extension(&calls[30].1, &calls[31].1)
            || warm.traces.iter().any(|t| t.operation == Operation::ToolOutputClear)
    );
    assert!(warm.metrics.clearing.cleared >= cold.metrics.clearing.cleared);
}

#[test]
fn the_price_model_is_the_providers_and_the_host_overrides_it() {
    let g = guard(json!({"model": "claude-sonnet-4-5"}));
    assert_eq!((g.edits.cache.read, g.edits.cache.write, g.edits.cache.ttl_ms), (0.1, 1.25, 300_000.0));
    let g = guard(json!({"model": "claude-sonnet-4-5", "cache": {"write": 2.0, "ttlMs": 3_600_000.0}}));
    assert_eq!((g.edits.cache.write, g.edits.cache.ttl_ms), (2.0, 3_600_000.0));
    let g = guard(json!({"model": "gpt-4o"}));
    assert_eq!((g.edits.cache.read, g.edits.cache.write, g.edits.cache.step), (0.5, 1.0, 128));
    let bad: GuardConfig = serde_json::from_value(json!({"model": "gpt-4o", "cache": {"read": -1}})).unwrap();
    assert_eq!(Guard::new(&bad).err().unwrap().code, ctxguard::ErrorCode::InvalidOptions);
    assert!(serde_json::from_value::<GuardConfig>(json!({"model": "gpt-4o", "cache": {"reed": 1}})).is_err());
    assert!(serde_json::from_value::<GuardConfig>(json!({"model": "gpt-4o", "edits": "sometimes"})).is_err());
}

/// An Anthropic tool loop: a task, then turns of an assistant message with a thinking block and a
/// `tool_use`, answered by a `tool_result` of `out` tokens. For each call: what the model got.
/// One call: its outcome and what the model received (`system`, messages).
type Call = (Outcome, (Option<Value>, Vec<Value>));

fn thinking_loop(cfg: Value, turns: usize, out: usize) -> (Vec<Call>, Value) {
    let mut g = guard(cfg);
    let system = json!("You investigate a failing build with tools.");
    let mut history = vec![json!({"role": "user", "content": "The nightly build fails. Find out why."})];
    let mut calls = Vec::new();
    for i in 0..turns {
        let req = parse_request(Format::Anthropic, &Value::Array(history.clone()), Some(&system), None).unwrap();
        let o = prepare(&mut g, &req, None);
        let wire = sent(Format::Anthropic, &o);
        calls.push((o, wire));
        let id = format!("toolu_{i}");
        history.push(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": format!("Step {i}: {}", text(i + 500, 150)), "signature": format!("sig{i}")},
            {"type": "tool_use", "id": id, "name": "run", "input": {"cmd": format!("test {i}")}}
        ]}));
        history.push(
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": text(i, out)}]}),
        );
    }
    (calls, system)
}

/// Kept thinking blocks whose prefix is not the model input that produced them (assistant turn
/// `k` was produced by call `k`), and calls whose latest assistant turn keeps its thinking.
fn check_thinking(calls: &[Call]) -> (usize, usize, usize) {
    let (mut bad, mut latest_kept, mut latest) = (0, 0, 0);
    for (_, (system, msgs)) in calls {
        let mut last = None;
        for (j, m) in msgs.iter().enumerate().filter(|(_, m)| m["role"] == "assistant") {
            let blocks = m["content"].as_array().unwrap();
            let k: usize =
                blocks.iter().find(|b| b["type"] == "tool_use").unwrap()["id"].as_str().unwrap()[6..].parse().unwrap();
            let thinking = blocks.iter().any(|b| b["type"] == "thinking");
            let (psys, pmsgs) = &calls[k].1;
            let valid = psys == system && pmsgs.as_slice() == &msgs[..j];
            if thinking && !valid {
                bad += 1;
            }
            last = Some(thinking && valid);
        }
        if let Some(kept) = last {
            latest += 1;
            latest_kept += usize::from(kept);
        }
    }
    (bad, latest_kept, latest)
}

#[test]
fn no_thinking_block_is_sent_after_its_prefix_changed_and_the_latest_keeps_theirs() {
    let (calls, system) = thinking_loop(json!({"model": "claude-sonnet-5-5", "contextWindow": 30_000}), 60, 1_000);
    let (bad, kept, latest) = check_thinking(&calls);
    assert_eq!(bad, 0, "thinking blocks sent with a changed prefix");
    assert!(kept * 10 >= latest * 8, "the latest turn keeps its thinking on {kept} of {latest} calls");
    // The host's system is never rewritten; every call's report adds up.
    let mut drops = 0;
    for (o, (sys, _)) in &calls {
        assert_eq!(sys.as_ref(), Some(&system));
        let t = o.metrics.edits.thinking.unwrap();
        drops += t.newly_dropped;
        let traced = o
            .traces
            .iter()
            .filter(|t| t.operation == Operation::ThinkingDrop)
            .map(|t| t.thinking_dropped.unwrap())
            .sum::<u32>();
        assert_eq!(traced, t.newly_dropped);
    }
    assert!(drops > 0, "the window is small enough that edits drop thinking");
    // A block once dropped is never sent again.
    let mut dropped: std::collections::BTreeSet<usize> = Default::default();
    for (_, (_, msgs)) in &calls {
        for m in msgs.iter().filter(|m| m["role"] == "assistant") {
            let blocks = m["content"].as_array().unwrap();
            let k: usize =
                blocks.iter().find(|b| b["type"] == "tool_use").unwrap()["id"].as_str().unwrap()[6..].parse().unwrap();
            let has = blocks.iter().any(|b| b["type"] == "thinking");
            assert!(!(has && dropped.contains(&k)), "turn {k}'s thinking came back");
            if !has {
                dropped.insert(k);
            }
        }
    }
}

#[test]
fn claude_4_keeps_todays_rules() {
    let (calls, _) = thinking_loop(json!({"model": "claude-sonnet-4-5", "contextWindow": 30_000}), 30, 1_000);
    for (o, (_, msgs)) in &calls {
        assert!(o.metrics.edits.thinking.is_none());
        assert!(!o.traces.iter().any(|t| t.operation == Operation::ThinkingDrop));
        // Every thinking block the history has is sent as it is.
        let sent_thinking =
            msgs.iter().filter(|m| m["role"] == "assistant").filter(|m| m["content"][0]["type"] == "thinking").count();
        let assistants = msgs.iter().filter(|m| m["role"] == "assistant").count();
        assert_eq!(sent_thinking, assistants);
    }
}

#[test]
fn a_summary_on_claude_5_leaves_the_hosts_system_as_written() {
    // A chat (user turns) long enough to be summarized: the summary reaches the model as a user
    // message, and the `system` is the host's, byte for byte.
    let mut g = guard(json!({"model": "claude-sonnet-5-5", "contextWindow": 12_000}));
    let system = json!("You are a patient tutor.");
    let mut history: Vec<Value> = Vec::new();
    let mut summarized = false;
    for i in 0..40 {
        history.push(json!({"role": "user", "content": format!("Question {i}: {}", text(i, 300))}));
        let req = parse_request(Format::Anthropic, &Value::Array(history.clone()), Some(&system), None).unwrap();
        let o = prepare(&mut g, &req, None);
        let (sys, msgs) = sent(Format::Anthropic, &o);
        assert_eq!(sys, Some(system.clone()), "call {i}");
        if o.compaction.is_some() || msgs.iter().any(|m| m.to_string().contains("[ctxguard:summary]")) {
            summarized = true;
            let first = &msgs[0];
            assert_eq!(first["role"], "user");
        }
        history.push(json!({"role": "assistant", "content": format!("Answer {i}: {}", text(i + 100, 300))}));
    }
    assert!(summarized);
}
