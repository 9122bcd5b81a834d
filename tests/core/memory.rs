//! Whole conversations on the native core: a host that passes its whole display history every
//! turn, one that stores checkpoint chains, a reload with `restore`, an edit inside a summary's
//! range, a summarizer that is down (the circuit breaker), and summaries made ahead of time.
//! Counts of summarizer calls and what the model receives are asserted; no wall-clock time.

use crate::support::{self, clock};
use ctxguard::format::{parse_request, write_request, Format, Request};
use ctxguard::guard::{Guard, GuardConfig};
use ctxguard::message::Message;
use ctxguard::pipeline::attempts::{Attempts, Next};
use ctxguard::pipeline::session_state::Answer;
use ctxguard::pipeline::{FailureReason, Outcome, Pending, PrepareOptions, Step};
use ctxguard::report::metrics::{AheadState, BreakerState};
use serde_json::{json, Value};

/// A guard that compacts whenever the request passes the trigger (`edits: 'trigger'`): these
/// tests are about what the guard remembers of its summaries, under as much compaction as a
/// conversation can get. When a guard edits by default (only when the request would not fit) is
/// tests/core/edits.rs's subject.
fn guard(extra: Value) -> Guard {
    let mut cfg = json!({ "model": "gpt-4o", "contextWindow": 16_000, "edits": "trigger" });
    for (k, v) in extra.as_object().unwrap() {
        cfg[k] = v.clone();
    }
    support::guard(cfg)
}

fn user(i: usize) -> Value {
    json!({"role": "user", "content": format!("Question {i}: how do I set up step {i} of the migration? {}", "Some detail about the setup. ".repeat(12))})
}

fn answer(i: usize) -> Value {
    json!({"role": "assistant", "content": format!("Answer {i}: for step {i}, run the script with --step {i}. {}", "It checks the schema and moves the rows. ".repeat(22))})
}

fn parse(v: &[Value]) -> Request {
    parse_request(Format::Openai, &Value::Array(v.to_vec()), None, None).unwrap()
}

fn wire(messages: &[Message]) -> Vec<Value> {
    write_request(Format::Openai, &Request { messages: messages.to_vec(), ..Default::default() }).1
}

/// What the model receives (as the binding writes it).
fn sent(o: &Outcome) -> Vec<Value> {
    wire(&ctxguard::pipeline::model_visible(o.request.clone()).messages)
}

/// A summarizer: its calls, and what it answers.
struct Summarizer {
    calls: u32,
    fails: bool,
}

impl Summarizer {
    fn ok() -> Summarizer {
        Summarizer { calls: 0, fails: false }
    }

    /// Every attempt the pending compaction allows (the core's `Attempts`), then the finish.
    fn answer(&mut self, g: &Guard, p: &Pending) -> (Result<Answer, FailureReason>, u32) {
        let mut a = Attempts::new(p.max_attempts, 0.0);
        let mut next = a.start();
        loop {
            match next {
                Next::Stop => return (Err(a.last_failure()), a.made()),
                Next::Pause { .. } => next = a.paused(true),
                Next::Ask(_) => {
                    self.calls += 1;
                    if self.fails {
                        next = a.failed(FailureReason::CallbackError, 0.5);
                    } else {
                        let text = format!(
                            "Summary of {} messages: the user migrates step by step.",
                            p.request.messages.len()
                        );
                        return (p.validate(g, &json!(text)), a.made());
                    }
                }
            }
        }
    }

    fn prepare(&mut self, g: &mut Guard, req: &Request, opts: &PrepareOptions) -> Outcome {
        match ctxguard::pipeline::prepare_start(g, req, opts, &clock).unwrap() {
            Step::Done(o) => *o,
            Step::Summarize(p) => {
                let (result, made) = self.answer(g, &p);
                ctxguard::pipeline::prepare_finish(g, *p, result, made, &clock).unwrap()
            }
            Step::AwaitAhead => panic!("no summary is made ahead of time here"),
        }
    }
}

#[test]
fn a_display_history_host_gets_the_chain_hosts_model_input_without_more_summaries() {
    let (mut gd, mut gc) = (guard(json!({})), guard(json!({})));
    let (mut sd, mut sc) = (Summarizer::ok(), Summarizer::ok());
    let mut history: Vec<Value> = vec![json!({"role": "system", "content": "You help with a database migration."})];
    let mut chain: Vec<Value> = history.clone();
    let mut compactions = 0;
    for i in 0..60 {
        history.push(user(i));
        chain.push(user(i));
        let d = sd.prepare(&mut gd, &parse(&history), &PrepareOptions::default());
        let c = sc.prepare(&mut gc, &parse(&chain), &PrepareOptions::default());
        assert_eq!(sent(&d), sent(&c), "turn {i}: the same model input");
        assert_eq!(d.checkpoint.is_some(), c.checkpoint.is_some(), "turn {i}");
        if let Some(cp) = &c.checkpoint {
            compactions += 1;
            chain = wire(cp);
        }
        // The latest question always reaches the model, last.
        assert_eq!(wire(&d.request.messages).last().unwrap(), &user(i));
        assert!(d.metrics.used_tokens <= gd.budget.usable_limit);
        history.push(answer(i));
        chain.push(answer(i));
    }
    assert!(compactions >= 2, "{compactions}");
    assert_eq!(sd.calls, sc.calls, "the display-history host asks no more than the chain host");
    assert_eq!(sd.calls, compactions);
    assert_eq!(gd.memory.metrics().summaries as usize, compactions.min(4) as usize);
}

#[test]
fn a_compaction_keeps_the_last_answer_and_summarizes_incrementally() {
    let mut g = guard(json!({}));
    let mut s = Summarizer::ok();
    let mut history: Vec<Value> = vec![json!({"role": "system", "content": "You help with a database migration."})];
    let mut sources = Vec::new();
    for i in 0..60 {
        history.push(user(i));
        let req = parse(&history);
        match ctxguard::pipeline::prepare_start(&mut g, &req, &PrepareOptions::default(), &clock).unwrap() {
            Step::Done(_) => {}
            Step::Summarize(p) => {
                sources.push(p.request.messages.iter().map(|m| m.content.text()).collect::<Vec<_>>());
                let (result, made) = s.answer(&g, &p);
                let out = ctxguard::pipeline::prepare_finish(&mut g, *p, result, made, &clock).unwrap();
                // After compaction: the last assistant answer is there, verbatim, and the input
                // fills at least half of the target.
                let input = wire(&out.request.messages);
                assert!(input.contains(&answer(i - 1)), "turn {i}: the last answer is kept");
                assert!(
                    out.metrics.used_tokens >= g.budget.target_limit / 2,
                    "turn {i}: {} of {}",
                    out.metrics.used_tokens,
                    g.budget.target_limit
                );
                assert!(out.metrics.used_tokens <= g.budget.target_limit);
            }
            Step::AwaitAhead => panic!(),
        }
        history.push(answer(i));
    }
    assert!(sources.len() >= 2);
    // The second summary's source starts from the first summary, not from the whole history.
    let second = &sources[1];
    assert!(
        second[0].starts_with("[ctxguard:summary] Summary of the earlier conversation"),
        "{:?}",
        &second[0][..80.min(second[0].len())]
    );
    assert!(
        !second.iter().any(|t| t.starts_with("Question 0:")),
        "the history before the first summary is not sent again"
    );
}

#[test]
fn a_new_guard_restores_the_checkpoint_and_gives_the_same_model_input_without_a_summary() {
    let mut a = guard(json!({"checkpointKey": "app-secret"}));
    let mut sa = Summarizer::ok();
    let mut history: Vec<Value> = vec![json!({"role": "system", "content": "You help with a database migration."})];
    let mut checkpoint = None;
    for i in 0..45 {
        history.push(user(i));
        let out = sa.prepare(&mut a, &parse(&history), &PrepareOptions::default());
        if let Some(cp) = out.checkpoint {
            checkpoint = Some(cp);
        }
        history.push(answer(i));
    }
    let stored: Value = serde_json::from_str(&serde_json::to_string(&wire(&checkpoint.unwrap())).unwrap()).unwrap();
    history.push(user(45));
    let expected = sa.prepare(&mut a, &parse(&history), &PrepareOptions::default());
    assert!(expected.checkpoint.is_none());
    // A reload: a new guard, the stored checkpoint, the full display history.
    let mut b = guard(json!({"checkpointKey": "app-secret"}));
    let restored = ctxguard::pipeline::restore(&mut b, &parse(stored.as_array().unwrap()));
    assert!(restored.restored && restored.covered_messages > 0, "{restored:?}");
    let mut sb = Summarizer::ok();
    let out = sb.prepare(&mut b, &parse(&history), &PrepareOptions::default());
    assert_eq!(sb.calls, 0, "no summarizer call after the reload");
    assert!(out.compaction.is_none());
    assert_eq!(sent(&out), sent(&expected));
    assert_eq!(out.metrics.memory.covered_messages, restored.covered_messages);
    // Another conversation does not match it: the checkpoint is never applied to it.
    let other: Vec<Value> = (0..3).flat_map(|i| [user(100 + i), answer(100 + i)]).collect();
    let out = sb.prepare(&mut b, &parse(&other), &PrepareOptions::default());
    assert_eq!(out.metrics.memory.covered_messages, 0);
    assert_eq!(wire(&out.request.messages), other);
    // Restored, then given another conversation: ignored, with a trace on that first call.
    let mismatch = |o: &Outcome| {
        o.traces.iter().any(|t| t.failure_reason.as_deref() == Some(ctxguard::pipeline::CHECKPOINT_MISMATCH))
    };
    assert!(!out.traces.iter().any(|t| t.failure_reason.is_some()), "b applied it before: nothing to report");
    let mut e = guard(json!({"checkpointKey": "app-secret"}));
    assert!(ctxguard::pipeline::restore(&mut e, &parse(stored.as_array().unwrap())).restored);
    let first = sb.prepare(&mut e, &parse(&other), &PrepareOptions::default());
    assert!(mismatch(&first), "{:?}", first.traces);
    assert_eq!((first.metrics.memory.covered_messages, wire(&first.request.messages)), (0, other.clone()));
    assert!(!mismatch(&sb.prepare(&mut e, &parse(&other), &PrepareOptions::default())), "reported once");
    // A tampered checkpoint (it claims to cover more) does not verify under the key.
    let tampered = stored.to_string().replace(
        &format!("covers={}:", restored.covered_messages),
        &format!("covers={}:", restored.covered_messages + 2),
    );
    let mut c = guard(json!({"checkpointKey": "app-secret"}));
    let t = ctxguard::pipeline::restore(
        &mut c,
        &parse(serde_json::from_str::<Value>(&tampered).unwrap().as_array().unwrap()),
    );
    assert!(!t.restored);
    assert_eq!(t.reason, Some("no_summary"));
    // Without the key it is not a checkpoint of this app either.
    let mut d = guard(json!({"checkpointKey": "other-secret"}));
    assert!(!ctxguard::pipeline::restore(&mut d, &parse(stored.as_array().unwrap())).restored);
}

#[test]
fn an_edit_inside_the_summarized_range_makes_the_guard_compact_again() {
    let mut g = guard(json!({}));
    let mut s = Summarizer::ok();
    let mut history: Vec<Value> = vec![json!({"role": "system", "content": "You help with a database migration."})];
    for i in 0..45 {
        history.push(user(i));
        s.prepare(&mut g, &parse(&history), &PrepareOptions::default());
        history.push(answer(i));
    }
    let calls = s.calls;
    assert!(calls >= 1);
    history.push(user(45));
    let same = s.prepare(&mut g, &parse(&history), &PrepareOptions::default());
    assert_eq!(s.calls, calls, "unchanged history: the remembered summary applies");
    assert!(same.metrics.memory.covered_messages > 0);
    // The user edits their second question: the summary no longer matches.
    history[3] = json!({"role": "user", "content": "Question 1 (edited): something else entirely."});
    let edited = s.prepare(&mut g, &parse(&history), &PrepareOptions::default());
    assert_eq!(s.calls, calls + 1, "compacted again");
    assert!(edited.checkpoint.is_some());
    let text = wire(&edited.request.messages)
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!text.contains("Question 1: how do I"), "the old version is gone");
}

#[test]
fn a_dead_summarizer_opens_the_breaker_after_three_compactions() {
    let mut g = guard(json!({}));
    let mut s = Summarizer { calls: 0, fails: true };
    let mut history: Vec<Value> = vec![json!({"role": "system", "content": "You help with a database migration."})];
    let (mut degraded, mut open_turns, mut cuts, mut repeated) = (0, 0, 0, 0);
    let mut previous: Option<Vec<Value>> = None;
    for i in 0..70 {
        history.push(user(i));
        let out = s.prepare(&mut g, &parse(&history), &PrepareOptions::default());
        degraded += usize::from(out.degraded);
        cuts += usize::from(out.compaction.is_some());
        // The evidence note stands where a summary would, and is counted as one.
        assert_eq!(out.metrics.breakdown.summary > 0, out.degraded, "turn {i}");
        if out.degraded_reason == Some(FailureReason::BreakerOpen) {
            open_turns += 1;
            assert_eq!(out.metrics.breaker.state, BreakerState::Open);
            assert!(out.metrics.breaker.closes_in_ms.is_some());
        }
        // A fallback is a valid result: the latest question is there, the input fits, nothing
        // is persisted.
        let now = sent(&out);
        assert_eq!(now.last().unwrap(), &user(i));
        assert!(out.metrics.used_tokens <= g.budget.usable_limit);
        assert!(out.checkpoint.is_none());
        // While the breaker is open the last fallback is applied again until the request no
        // longer fits: what the previous call sent is the start of this one (its cache holds).
        if out.degraded && out.compaction.is_none() {
            repeated += 1;
            let before = previous.as_ref().unwrap();
            assert_eq!(&now[..before.len()], &before[..], "turn {i} repeats the last fallback");
        }
        previous = Some(now);
        history.push(answer(i));
    }
    assert_eq!(s.calls, 9, "three compactions of three attempts, then none");
    assert!(open_turns >= 30 && degraded == open_turns + 3, "{degraded} degraded, {open_turns} with the breaker open");
    assert_eq!(degraded, cuts + repeated);
    assert!(cuts <= 3 + open_turns / 5, "{cuts} cuts in {open_turns} calls with the breaker open");
    // resetBreaker closes it: the next compaction asks again, on the whole history, and the
    // summary replaces the fallback.
    g.breaker.reset();
    history.push(user(70));
    s.fails = false;
    let out = s.prepare(&mut g, &parse(&history), &PrepareOptions::default());
    assert_eq!(s.calls, 10);
    assert!(!out.degraded && out.checkpoint.is_some());
    assert_eq!(out.metrics.breaker.state, BreakerState::Closed);
    assert!(!sent(&out).iter().any(|m| m["content"].as_str().is_some_and(|c| c.contains("[ctxguard:evidence]"))));
}

#[test]
fn the_breaker_half_opens_after_its_cooldown_with_one_attempt() {
    let mut g = guard(json!({"breaker": {"failures": 1, "cooldownCalls": 3}}));
    let mut s = Summarizer { calls: 0, fails: true };
    let mut history: Vec<Value> = vec![json!({"role": "system", "content": "S"})];
    let mut calls_per_turn = Vec::new();
    for i in 0..70 {
        history.push(user(i));
        let before = s.calls;
        s.prepare(&mut g, &parse(&history), &PrepareOptions::default());
        calls_per_turn.push(s.calls - before);
        history.push(answer(i));
    }
    let asked: Vec<u32> = calls_per_turn.into_iter().filter(|&c| c > 0).collect();
    assert_eq!(asked[0], 3, "closed: three attempts");
    assert!(asked.len() >= 3, "half open after each cool-down of 3 calls: {asked:?}");
    assert!(asked[1..].iter().all(|&c| c == 1), "half open: one attempt each: {asked:?}");
}

#[test]
fn a_summary_made_ahead_of_time_is_used_when_the_trigger_is_crossed() {
    let mut g = guard(json!({"ahead": true}));
    let mut s = Summarizer::ok();
    let mut history: Vec<Value> = vec![json!({"role": "system", "content": "You help with a database migration."})];
    let mut started = None;
    let mut used_at = None;
    for i in 0..40 {
        history.push(user(i));
        let req = parse(&history);
        match ctxguard::pipeline::prepare_start(&mut g, &req, &PrepareOptions::default(), &clock).unwrap() {
            Step::Done(mut o) => {
                if let Some(p) = o.ahead.take() {
                    assert!(started.is_none(), "one at a time");
                    assert!(
                        o.metrics.used_tokens <= g.budget.trigger_limit
                            && o.metrics.used_tokens > (g.budget.usable_limit as f64 * 0.65) as u32
                    );
                    assert_eq!(g.memory.ahead, AheadState::Running);
                    // It finishes while the user reads and types.
                    let (result, made) = s.answer(&g, &p);
                    let t = ctxguard::pipeline::ahead_finish(&mut g, *p, result, made, &clock);
                    assert_eq!(t.ahead, Some(true));
                    assert_eq!(g.memory.ahead, AheadState::Ready);
                    started = Some(i);
                } else if o.checkpoint.is_some() {
                    used_at = Some(i);
                    assert!(o
                        .traces
                        .iter()
                        .any(|t| t.ahead == Some(true) && t.status == ctxguard::report::trace::Status::Applied));
                    assert!(o.metrics.used_tokens < g.budget.trigger_limit);
                    assert_eq!(wire(&o.request.messages).last().unwrap(), &user(i));
                    break;
                }
            }
            Step::Summarize(_) => panic!("turn {i}: asked on the send path although a summary was ready"),
            Step::AwaitAhead => panic!(),
        }
        history.push(answer(i));
    }
    let (started, used_at) = (started.expect("started ahead"), used_at.expect("used"));
    assert!(used_at > started);
    assert_eq!(s.calls, 1, "one summary, made ahead of time");
}

#[test]
fn crossing_the_trigger_while_the_summary_is_running_waits_for_it() {
    let mut g = guard(json!({"ahead": true}));
    let mut history: Vec<Value> = vec![json!({"role": "system", "content": "S"})];
    let mut pending = None;
    for i in 0..40 {
        history.push(user(i));
        match ctxguard::pipeline::prepare_start(&mut g, &parse(&history), &PrepareOptions::default(), &clock).unwrap() {
            Step::Done(mut o) => {
                if let Some(p) = o.ahead.take() {
                    pending = Some(p);
                }
            }
            Step::AwaitAhead => {
                assert!(pending.is_some(), "only while one runs");
                let p = pending.take().unwrap();
                ctxguard::pipeline::ahead_finish(&mut g, *p, Err(FailureReason::Timeout), 3, &clock);
                assert_eq!(g.memory.ahead, AheadState::Failed);
                return;
            }
            Step::Summarize(_) => panic!("turn {i}: over the trigger while one runs: wait for it"),
        }
        history.push(answer(i));
    }
    panic!("the trigger was never crossed");
}

#[test]
fn a_failed_summary_made_ahead_of_time_falls_back_at_once_and_the_breaker_ends_the_retries() {
    let mut g = guard(json!({"ahead": true}));
    let mut history: Vec<Value> = vec![json!({"role": "system", "content": "S"})];
    let (mut background, mut fallbacks, mut reasons) = (0, 0, Vec::new());
    for i in 0..60 {
        history.push(user(i));
        let o = match ctxguard::pipeline::prepare_start(&mut g, &parse(&history), &PrepareOptions::default(), &clock)
            .unwrap()
        {
            Step::Done(o) => *o,
            // The summarizer is down: each summary started ahead of time fails (3 attempts)
            // before the user's next message.
            Step::AwaitAhead => panic!("turn {i}: every summary ends before the next call here"),
            Step::Summarize(_) => panic!("turn {i}: the summarizer is asked on the send path"),
        };
        assert_eq!(wire(&o.request.messages).last().unwrap(), &user(i), "turn {i}: the latest message last");
        assert!(o.metrics.used_tokens <= g.budget.usable_limit);
        if o.degraded {
            fallbacks += 1;
            reasons.push(o.degraded_reason.unwrap().as_str());
        }
        if let Some(p) = o.ahead {
            background += 1;
            ctxguard::pipeline::ahead_finish(&mut g, *p, Err(FailureReason::CallbackError), 3, &clock);
        }
        history.push(answer(i));
    }
    // Three failed compactions open the breaker (each one a background summary); every call
    // over the trigger falls back at once, first with the summarizer's failure, then the
    // breaker's, and no fourth summary is started during the cool-down.
    assert_eq!(background, 3, "{reasons:?}");
    assert!(fallbacks > 3, "{fallbacks}");
    assert_eq!(&reasons[..2], ["callback_error", "callback_error"]);
    assert!(reasons[2..].iter().all(|r| *r == "breaker_open" || *r == "callback_error"), "{reasons:?}");
    assert!(reasons.contains(&"breaker_open"));
    assert_eq!(g.breaker.metrics().state, ctxguard::report::metrics::BreakerState::Open);
}

/// `user(i)` / `answer(i)` in a format whose system is apart from the messages.
fn in_format(format: Format, v: &Value) -> Value {
    let text = v["content"].clone();
    match (format, v["role"].as_str()) {
        (Format::Gemini, Some("assistant")) => json!({"role": "model", "parts": [{"text": text}]}),
        (Format::Gemini, _) => json!({"role": "user", "parts": [{"text": text}]}),
        _ => v.clone(),
    }
}

#[test]
fn a_restored_checkpoint_does_not_repeat_the_hosts_system_in_anthropic_and_gemini() {
    // There the checkpoint's system is the host's system prompt and the summary in one string
    // (Anthropic) or one Content (Gemini): restoring it must remember the summary alone.
    for (format, name, model) in
        [(Format::Anthropic, "anthropic", "claude-sonnet-4"), (Format::Gemini, "gemini", "gemini-2.5")]
    {
        let config = json!({"model": model, "format": name, "checkpointKey": "app-secret"});
        let system = json!("You help with a database migration.");
        let request = |h: &[Value]| parse_request(format, &Value::Array(h.to_vec()), Some(&system), None).unwrap();
        let (mut a, mut sa) = (guard(config.clone()), Summarizer::ok());
        let mut history: Vec<Value> = Vec::new();
        let mut checkpoint = None;
        for i in 0..45 {
            history.push(in_format(format, &user(i)));
            if let Some(cp) = sa.prepare(&mut a, &request(&history), &PrepareOptions::default()).checkpoint {
                checkpoint = Some(cp);
            }
            history.push(in_format(format, &answer(i)));
        }
        // Stored as `result.checkpoint` ({ messages, system }), through JSON.
        let (cp_system, cp_messages) =
            write_request(format, &Request { messages: checkpoint.expect("compacted"), ..Default::default() });
        let stored: Value =
            serde_json::from_str(&json!({"messages": cp_messages, "system": cp_system}).to_string()).unwrap();
        history.push(in_format(format, &user(45)));
        let expected = sa.prepare(&mut a, &request(&history), &PrepareOptions::default());
        let mut b = guard(config);
        let restored = ctxguard::pipeline::restore(
            &mut b,
            &parse_request(format, &stored["messages"], Some(&stored["system"]), None).unwrap(),
        );
        assert!(restored.restored, "{name}: {restored:?}");
        let mut sb = Summarizer::ok();
        let out = sb.prepare(&mut b, &request(&history), &PrepareOptions::default());
        assert_eq!(sb.calls, 0, "{name}");
        let visible = |o: &Outcome| write_request(format, &ctxguard::pipeline::model_visible(o.request.clone()));
        let (got, want) = (visible(&out), visible(&expected));
        assert_eq!(got.0, want.0, "{name}: the same system, the host's prompt once");
        assert_eq!(got.1, want.1, "{name}: the same messages");
    }
}

#[test]
fn a_compaction_keeps_the_last_exchange_when_the_current_turn_alone_fills_the_target() {
    // A tool output of ~4,500 tokens arrives and crosses the trigger: the current turn alone is
    // about the target (6,000), so no retained user message fits under it. The last exchange
    // still fits under the usable limit: it stays, whole (user message and answer).
    let mut g = guard(json!({}));
    let mut s = Summarizer::ok();
    let output: String = (0..170)
        .map(|l| {
            format!("{l:4} | line {l} of the log: request served in {} ms status=200 path=/api/v1/items\n", l * 3 % 97)
        })
        .collect();
    let mut history: Vec<Value> = vec![json!({"role": "system", "content": "You help with a database migration."})];
    for i in 0..40 {
        history.push(user(i));
        let before = s.prepare(&mut g, &parse(&history), &PrepareOptions::default());
        if before.checkpoint.is_none() && before.metrics.used_tokens > 6_000 {
            history.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_log", "arguments": "{}"}}]}));
            history.push(json!({"role": "tool", "tool_call_id": "call_1", "content": output}));
            let out = s.prepare(&mut g, &parse(&history), &PrepareOptions::default());
            assert!(out.checkpoint.is_some() && !out.degraded, "turn {i}: the tool output crossed the trigger");
            let input = wire(&out.request.messages);
            assert_eq!(input.last().unwrap()["content"], json!(output), "the newest output, whole");
            let at = input.iter().position(|m| m == &answer(i - 1)).expect("the last answer is kept");
            assert_eq!(input[at - 1], user(i - 1), "with its question");
            assert!(out.metrics.used_tokens <= g.budget.usable_limit);
            return;
        }
        history.push(answer(i));
    }
    panic!("never over 6,000 tokens");
}

#[test]
fn a_summarizer_that_is_down_gives_the_same_kind_of_model_input_every_turn() {
    // A tool-using session in a 16k window whose summarizer always fails: once over the
    // trigger, every call falls back (never alternating with the emergency layer's cut of the
    // whole history), and a clearing step is reported only when an output is newly cleared.
    let mut g = guard(json!({}));
    let mut s = Summarizer { calls: 0, fails: true };
    let file =
        |i: usize| (0..60).map(|l| format!("{l} | const v_{i}_{l} = f({l}, {i});")).collect::<Vec<_>>().join("\n");
    let mut history: Vec<Value> = vec![json!({"role": "system", "content": "You are a coding agent."})];
    let (mut degraded, mut over, mut step_traces, mut cleared_total) = (0, 0, 0, 0);
    for i in 0..50 {
        history.push(
            json!({"role": "user", "content": format!("Task {i}: {}", "please look carefully at this. ".repeat(60))}),
        );
        history.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{i}"), "type": "function", "function": {"name": "read_file", "arguments": format!("{{\"path\":\"m{i}.ts\"}}")}}]}));
        history.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": file(i)}));
        let out = s.prepare(&mut g, &parse(&history), &PrepareOptions::default());
        let was_over = out.compaction.is_some() || out.degraded;
        if degraded > 0 {
            assert!(was_over && out.degraded, "turn {i}: after the first fallback every call falls back");
        }
        over += usize::from(was_over);
        degraded += usize::from(out.degraded);
        for t in out.traces.iter().filter(|t| t.operation == ctxguard::report::trace::Operation::ToolOutputClear) {
            step_traces += 1;
            cleared_total += t.messages_cleared.unwrap_or(0) as usize;
        }
        assert_eq!(wire(&out.request.messages).last().unwrap()["tool_call_id"], json!(format!("c{i}")));
        history.push(json!({"role": "assistant", "content": format!("Done {i}.")}));
    }
    assert!(degraded >= 20, "{degraded} degraded of {over} over the trigger");
    // Each output is cleared once in the whole session: the steps never repeat.
    assert!(cleared_total <= 50, "{cleared_total} outputs reported cleared in {step_traces} steps");
}

#[test]
fn the_settings_in_force_are_reported_and_an_ahead_ratio_must_be_under_the_trigger() {
    // metrics.clearing gives the resolved protected budget and step: 30 % of a 12,000 usable.
    let mut g = guard(json!({}));
    let m = g.measure(&parse(&[user(0)]));
    assert_eq!(g.budget.usable_limit, 12_000);
    assert_eq!((m.clearing.protect_tokens, m.clearing.clear_at_least), (3_600, 1_800));
    let mut off = guard(json!({ "clearToolOutputs": false }));
    assert_eq!(off.measure(&parse(&[user(0)])).clearing.protect_tokens, 0);
    // An ahead threshold at or over the trigger would never be ahead of it.
    let config = |v: Value| {
        serde_json::from_value::<GuardConfig>(
            json!({ "model": "gpt-4o", "contextWindow": 16_000 })
                .as_object()
                .unwrap()
                .clone()
                .into_iter()
                .chain(v.as_object().unwrap().clone())
                .collect::<serde_json::Map<_, _>>()
                .into(),
        )
    };
    for bad in
        [json!({ "aheadRatio": 0.8 }), json!({ "aheadRatio": 0.9 }), json!({ "triggerRatio": 0.6, "aheadRatio": 0.65 })]
    {
        let e = Guard::new(&config(bad.clone()).unwrap()).err().unwrap();
        assert!(e.message.contains("below triggerRatio"), "{bad}: {}", e.message);
    }
    // The default follows a low trigger instead of failing.
    assert!(Guard::new(&config(json!({ "triggerRatio": 0.6 })).unwrap()).is_ok());
}

#[test]
fn after_a_summary_the_metrics_count_what_the_model_receives() {
    // The stored summary's closing line carries its seal (`covers=…`); the model receives it
    // without. metrics.usedTokens is the count of what is sent, on the compacting call and on
    // every call that applies the remembered summary.
    let mut g = guard(json!({}));
    let mut s = Summarizer::ok();
    let mut history: Vec<Value> = vec![json!({"role": "system", "content": "You help with a database migration."})];
    let mut after_summary = 0;
    for i in 0..40 {
        history.push(user(i));
        let out = s.prepare(&mut g, &parse(&history), &PrepareOptions::default());
        if s.calls > 0 {
            let visible = ctxguard::pipeline::model_visible(out.request.clone());
            let sealed = out.request.messages.iter().any(|m| m.content.text().contains("[/ctxguard:summary covers="));
            assert!(sealed, "turn {i}: the chain carries the seal");
            let counted = guard(json!({})).measure(&visible).used_tokens;
            assert_eq!(out.metrics.used_tokens, counted, "turn {i}");
            after_summary += 1;
        }
        history.push(answer(i));
    }
    assert!(after_summary >= 5, "{after_summary} calls after the first summary");
}

#[test]
fn claude_metrics_count_the_system_as_the_provider_reads_it() {
    // Before Claude's preserved thinking, every system message (the host's, the summary, the
    // evidence note) is joined into the one `system` parameter, whose framing counts once; on
    // the 5.x models ctxguard's notes go as user messages. Either way metrics.usedTokens is the
    // count of the request as written, read back by a fresh guard.
    for (model, fails) in [("claude-sonnet-4-5", false), ("claude-sonnet-4-5", true), ("claude-sonnet-5-5", false)] {
        let cfg = json!({ "model": model, "contextWindow": 16_000, "edits": "trigger", "format": "anthropic" });
        let mut g = support::guard(cfg.clone());
        let mut s = Summarizer { calls: 0, fails };
        let system = json!("You help with a database migration.");
        let mut history: Vec<Value> = Vec::new();
        let mut compacted = 0;
        for i in 0..40 {
            history.push(user(i));
            let req = parse_request(Format::Anthropic, &Value::Array(history.clone()), Some(&system), None).unwrap();
            let out = s.prepare(&mut g, &req, &PrepareOptions::default());
            let visible = ctxguard::pipeline::model_visible_for(out.request.clone(), out.notes_as_user);
            let (sys, messages) = write_request(Format::Anthropic, &visible);
            let read = parse_request(Format::Anthropic, &Value::Array(messages), sys.as_ref(), None).unwrap();
            let counted = support::guard(cfg.clone()).measure(&read).used_tokens;
            compacted += usize::from(out.metrics.breakdown.summary > 0);
            let diff = out.metrics.used_tokens.abs_diff(counted);
            // With the evidence note at most one over: each message's estimate is rounded up on
            // its own, the joined text once.
            assert!(
                diff <= u32::from(fails),
                "{model} turn {i}: metrics {} vs the request {counted}",
                out.metrics.used_tokens
            );
            assert!(out.metrics.used_tokens >= counted, "{model} turn {i}: never under what is sent");
            history.push(answer(i));
        }
        assert!(compacted >= 10, "{model}: {compacted} calls with a summary or evidence note");
    }
}
