//! What edits cost at the provider, on the native core: whole conversations driven through
//! `prepare` before every model call, the whole history passed each time, with a scripted
//! summarizer. For each call it compares what the model receives with what it received on the
//! previous call (the prefix a prompt cache serves) and, for Claude's preserved thinking, every
//! kept thinking block with the request that produced it (what `prepare` returned on the call
//! before that block's assistant turn). Prints one line per scenario and setting.
//!
//! `cargo bench --bench edits` (a few seconds once built): the figures of BENCHMARKS.md, "Edits
//! and the prompt cache". The cost of a call's input is priced at each provider's cache prices
//! (multiples of the plain input price: read, write): Anthropic 0.1 / 1.25, OpenAI GPT-4o 0.5 /
//! 1.0, Gemini 0.1 / 1.0; the summarizer's input at 1.0. Nothing here is timed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use ctxguard::format::{parse_request, write_request, Format, Request};
use ctxguard::guard::{Guard, GuardConfig};
use ctxguard::pipeline::session_state::Answer;
use ctxguard::pipeline::{FailureReason, Outcome, PrepareOptions, Step};
use serde_json::{json, Value};

fn main() {
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let run = |name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()));
    println!(
        "{:<72} {:>6} {:>6} {:>8} {:>8} {:>8} {:>9} {:>5} {:>6} {:>7} {:>7}",
        "scenario / setting",
        "calls",
        "cached",
        "anthropic",
        "openai",
        "gemini",
        "sum-input",
        "sums",
        "edits",
        "badThk",
        "lastThk"
    );
    let settings = [
        ("defaults", json!({})),
        ("never clearing", json!({"clearToolOutputs": false})),
        (
            "clearing every turn",
            json!({"edits": "trigger", "clearToolOutputs": {"protectTokens": 3000, "clearAtLeast": 1}}),
        ),
        ("edits at the trigger", json!({"edits": "trigger"})),
        ("protect 9000", json!({"clearToolOutputs": {"protectTokens": 9000}})),
        ("protect 6000", json!({"clearToolOutputs": {"protectTokens": 6000}})),
    ];
    for calls in [2, 1] {
        let name = format!("gpt-4o coding 200 turns, {calls} call/turn");
        if !run(&name) {
            continue;
        }
        for (label, extra) in &settings {
            let mut cfg = json!({ "model": "gpt-4o", "contextWindow": 64_000 });
            for (k, v) in extra.as_object().into_iter().flatten() {
                cfg[k] = v.clone();
            }
            report(&format!("{name}, {label}"), &coding_session(cfg, 200, calls, false));
        }
    }
    // The summarizer down for the whole session (every answer an error): three failed
    // compactions open the breaker, then every compaction is the mechanical fallback.
    let name = "gpt-4o coding 200 turns, 2 call/turn, summarizer down";
    if run(name) {
        for (label, extra) in &settings[..2] {
            let mut cfg = json!({ "model": "gpt-4o", "contextWindow": 64_000 });
            for (k, v) in extra.as_object().into_iter().flatten() {
                cfg[k] = v.clone();
            }
            report(&format!("{name}, {label}"), &coding_session(cfg, 200, 2, true));
        }
    }
    // Tool results of 2,500 tokens as the model counts them (Claude's estimate), and of 2,500
    // o200k tokens (about 4,100 of Claude's).
    for (what, output) in [("2.5k-token outputs", 1_515), ("2.5k-o200k outputs", 2_500)] {
        let name = format!("claude-sonnet-5-5 loop 80 turns, {what}");
        if !run(&name) {
            continue;
        }
        for (label, extra) in &settings {
            let mut cfg = json!({ "model": "claude-sonnet-5-5", "contextWindow": 60_000, "format": "anthropic" });
            for (k, v) in extra.as_object().into_iter().flatten() {
                cfg[k] = v.clone();
            }
            report(&format!("{name}, {label}"), &thinking_loop(cfg, 80, output));
        }
    }
}

/// What one scenario measured.
#[derive(Default)]
struct Tally {
    calls: u32,
    input: u64,
    cached: u64,
    summarizer_input: u64,
    summaries: u32,
    /// Calls whose model input changed something the previous call had sent.
    edits: u32,
    /// Kept thinking blocks whose prefix differs from the request that produced them.
    bad_thinking: u32,
    /// The summarizer fails every time (`sums` then counts the failed compactions).
    down: bool,
    /// Calls whose latest assistant turn keeps its thinking block, valid; and calls with one.
    last_kept: u32,
    last_total: u32,
    newest_output_whole: u32,
    outputs_seen: u32,
}

/// Input cost per call in plain-input-token equivalents, at a cache's `read` and `write` prices:
/// the cached prefix read, the rest written, the summarizer's input at the plain price.
fn cost(t: &Tally, read: f64, write: f64) -> f64 {
    let uncached = t.input.saturating_sub(t.cached) as f64;
    (read * t.cached as f64 + write * uncached + t.summarizer_input as f64) / f64::from(t.calls.max(1))
}

fn report(name: &str, t: &Tally) {
    println!(
        "{:<72} {:>6} {:>5.1}% {:>8.0} {:>8.0} {:>8.0} {:>9} {:>5} {:>6} {:>7} {:>7}",
        name,
        t.calls,
        100.0 * t.cached as f64 / t.input.max(1) as f64,
        cost(t, 0.1, 1.25),
        cost(t, 0.5, 1.0),
        cost(t, 0.1, 1.0),
        t.summarizer_input,
        t.summaries,
        t.edits,
        t.bad_thinking,
        if t.last_total > 0 {
            format!("{:.1}%", 100.0 * f64::from(t.last_kept) / f64::from(t.last_total))
        } else {
            "-".into()
        },
    );
    if t.outputs_seen > 0 && t.newest_output_whole != t.outputs_seen {
        println!("    newest tool output whole on {} of {} calls", t.newest_output_whole, t.outputs_seen);
    }
}

fn clock() -> f64 {
    0.0
}

/// Deterministic filler text of about `tokens` o200k tokens (varied words, a code-like line now
/// and then), different for each `seed`.
fn text(seed: usize, tokens: usize) -> String {
    const WORDS: &[&str] = &[
        "config", "value", "return", "the", "parser", "reads", "each", "line", "and", "checks", "whether", "it",
        "matches", "schema", "field", "index", "error", "handler", "retries", "request", "buffer", "offset",
    ];
    let mut out = String::new();
    let mut x = seed as u64 * 2_654_435_761 + 1;
    loop {
        for _ in 0..64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let w = WORDS[(x % WORDS.len() as u64) as usize];
            if x % 11 == 0 {
                out.push_str(&format!("\n    let v{} = {}({});", x % 97, w, x % 1000));
            } else {
                out.push(' ');
                out.push_str(w);
            }
        }
        if ctxguard::tokens::count(ctxguard::Encoding::O200kBase, &out) >= tokens {
            return out;
        }
    }
}

/// The model-visible messages of an outcome, as the binding writes them.
fn sent(format: Format, o: &Outcome) -> (Option<Value>, Vec<Value>) {
    write_request(format, &ctxguard::pipeline::model_visible(o.request.clone()))
}

/// One `prepare` call with a summarizer that always answers (its input is tallied), or always
/// fails (`t.down`: a compaction that asks falls back after its attempts; a request that fails
/// is not billed).
fn prepare(g: &mut Guard, req: &Request, t: &mut Tally) -> Outcome {
    match ctxguard::pipeline::prepare_start(g, req, &PrepareOptions::default(), &clock).unwrap() {
        Step::Done(o) => *o,
        Step::Summarize(p) => {
            t.summaries += 1;
            if t.down {
                return ctxguard::pipeline::prepare_finish(g, *p, Err(FailureReason::CallbackError), 3, &clock)
                    .unwrap();
            }
            let input = g.count(&Request { messages: p.request.messages.clone(), ..Default::default() }).total;
            t.summarizer_input += u64::from(input);
            let summary = format!("The session so far: {}", text(t.summaries as usize + 7, 600));
            ctxguard::pipeline::prepare_finish(g, *p, Ok(Answer::Text(summary)), 1, &clock).unwrap()
        }
        Step::AwaitAhead => unreachable!("no summary is made ahead of time here"),
    }
}

/// Tally one call: the prefix it shares with the previous call's model input (whole messages,
/// as a cache that stores at message boundaries serves it).
fn tally_call(
    g: &mut Guard,
    out: &Outcome,
    prev: &mut Option<(Option<Value>, Vec<Value>)>,
    format: Format,
    t: &mut Tally,
) {
    let now = sent(format, out);
    let counted = g.count(&ctxguard::pipeline::model_visible(out.request.clone()));
    let total = u64::from(counted.total);
    // Per wire message: the internal messages map to wire messages one to one for OpenAI; for
    // Anthropic several internal messages (tool results) merge into one user message, so the
    // prefix is measured in internal messages and compared on their wire text.
    let mut cached = 0u64;
    if let Some((psys, pmsgs)) = prev.as_ref() {
        if *psys == now.0 {
            cached += u64::from(counted.tool_definitions);
            let wire_tokens = wire_message_tokens(g, out, format);
            for (i, m) in now.1.iter().enumerate() {
                if pmsgs.get(i) != Some(m) {
                    break;
                }
                cached += wire_tokens.get(i).copied().unwrap_or(0);
            }
            if cached < total && !pmsgs.is_empty() && !is_prefix(pmsgs, &now.1) {
                t.edits += 1;
            }
        } else {
            t.edits += 1;
        }
    }
    if std::env::var_os("EDITS_TRACE").is_some() {
        let ops: Vec<String> = out.traces.iter().map(|t| format!("{:?}", t.operation)).collect();
        let (c, m) = (&out.metrics.clearing, &out.metrics);
        println!(
            "  call {:>3}: {:>6} tokens, {:>6} cached, {:?} cleared {} compacted {} used {} usable {} threshold {} warm {}",
            t.calls, total, cached, ops, c.cleared, c.compacted, m.used_tokens, m.usable_limit, m.edits.threshold, m.edits.warm
        );
    }
    t.calls += 1;
    t.input += total;
    t.cached += cached;
    *prev = Some(now);
}

fn is_prefix(prev: &[Value], now: &[Value]) -> bool {
    prev.len() <= now.len() && prev.iter().zip(now).all(|(a, b)| a == b)
}

/// Tokens of each wire message of an outcome's model input (internal messages grouped the way
/// the format writes them: for Anthropic, consecutive tool results and the user message after
/// them are one wire message).
fn wire_message_tokens(g: &mut Guard, out: &Outcome, format: Format) -> Vec<u64> {
    let visible = ctxguard::pipeline::model_visible(out.request.clone());
    let per = g.count(&visible).per_message;
    let mut tokens = Vec::new();
    let mut prev_role = None;
    for (m, c) in visible.messages.iter().zip(&per) {
        use ctxguard::message::Role;
        if m.role == Role::System && format == Format::Anthropic {
            continue;
        }
        let role = match m.role {
            Role::Tool if format == Format::Anthropic => Role::User,
            r => r,
        };
        let merge =
            format == Format::Anthropic && prev_role == Some(Role::User) && role == Role::User && m.role == Role::User;
        let merge = merge || (format == Format::Anthropic && prev_role == Some(Role::User) && m.role == Role::Tool);
        if merge {
            if let Some(last) = tokens.last_mut() {
                *last += c.total as u64;
            }
        } else {
            tokens.push(c.total as u64);
        }
        prev_role = Some(role);
    }
    tokens
}

/// A coding session: each turn a user request, an assistant `read_file` call, a ~3,000-token
/// output and a short answer; `prepare` before each of the two model calls of a turn.
fn coding_session(cfg: Value, turns: usize, calls_per_turn: usize, down: bool) -> Tally {
    let mut g = Guard::new(&serde_json::from_value::<GuardConfig>(cfg).unwrap()).unwrap();
    let mut t = Tally { down, ..Tally::default() };
    let mut history =
        vec![json!({"role": "system", "content": "You are a coding agent working in a Rust repository."})];
    let mut prev = None;
    for i in 0..turns {
        history.push(json!({"role": "user", "content": format!("Step {i}: look at src/module_{i}.rs and tell me what the parser does there.")}));
        if calls_per_turn > 1 {
            let out = call(&mut g, &history, Format::Openai, &mut t, &mut prev);
            newest_output(&out, &history, &mut t);
        }
        let id = format!("call_{i}");
        history.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": "read_file", "arguments": format!("{{\"path\":\"src/module_{i}.rs\"}}")}}]}));
        history.push(json!({"role": "tool", "tool_call_id": id, "content": text(i, 3_000)}));
        let out = call(&mut g, &history, Format::Openai, &mut t, &mut prev);
        newest_output(&out, &history, &mut t);
        history.push(json!({"role": "assistant", "content": format!("The parser in module {i} reads each line and checks it against the schema; errors go to the handler.")}));
    }
    t
}

fn call(
    g: &mut Guard,
    history: &[Value],
    format: Format,
    t: &mut Tally,
    prev: &mut Option<(Option<Value>, Vec<Value>)>,
) -> Outcome {
    let req = parse_request(format, &Value::Array(history.to_vec()), None, None).unwrap();
    let out = prepare(g, &req, t);
    tally_call(g, &out, prev, format, t);
    out
}

/// Whether the newest tool output of the history reaches the model whole.
fn newest_output(out: &Outcome, history: &[Value], t: &mut Tally) {
    let Some(last) = history.iter().rev().find(|m| m["role"] == "tool") else { return };
    t.outputs_seen += 1;
    let whole = out.request.messages.iter().any(|m| m.content.text() == last["content"].as_str().unwrap_or(""));
    t.newest_output_whole += u32::from(whole);
}

/// An Anthropic tool loop: a user task, then turns of an assistant message with a thinking block
/// and a `tool_use`, answered by a `tool_result` of `output_tokens` o200k tokens; `prepare` before every model call.
fn thinking_loop(cfg: Value, turns: usize, output_tokens: usize) -> Tally {
    let mut g = Guard::new(&serde_json::from_value::<GuardConfig>(cfg).unwrap()).unwrap();
    let mut t = Tally::default();
    let system = json!("You are an agent that investigates a failing build with tools.");
    let mut history =
        vec![json!({"role": "user", "content": "The nightly build fails in the parser crate. Find out why."})];
    // What prepare returned before each assistant turn: (system, messages) sent.
    let mut produced: Vec<(Option<Value>, Vec<Value>)> = Vec::new();
    let mut prev = None;
    for i in 0..turns {
        let req = parse_request(Format::Anthropic, &Value::Array(history.clone()), Some(&system), None).unwrap();
        let out = prepare(&mut g, &req, &mut t);
        tally_call(&mut g, &out, &mut prev, Format::Anthropic, &mut t);
        let now = sent(Format::Anthropic, &out);
        check_thinking(&now, &produced, &mut t);
        produced.push(now);
        let id = format!("toolu_{i}");
        history.push(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": text(i + 1_000, 300), "signature": format!("sig-{i}-{}", "A".repeat(200))},
            {"type": "tool_use", "id": id, "name": "run", "input": {"cmd": format!("cargo test -p parser --test case_{i}")}}
        ]}));
        history.push(
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": text(i, output_tokens)}]}),
        );
    }
    t
}

/// Every thinking block the model receives must have been produced after exactly the prefix it
/// now has: the assistant turn `k` (counted among assistant messages) was produced by the call
/// whose model input is `produced[k]`.
fn check_thinking(now: &(Option<Value>, Vec<Value>), produced: &[(Option<Value>, Vec<Value>)], t: &mut Tally) {
    let mut seen_assistants = 0usize;
    let mut latest: Option<bool> = None;
    for (i, m) in now.1.iter().enumerate() {
        if m["role"] != "assistant" {
            continue;
        }
        // Which assistant turn of the conversation this is: its thinking signature says.
        let blocks = m["content"].as_array().cloned().unwrap_or_default();
        let thinking = blocks.iter().find(|b| b["type"] == "thinking");
        let turn = blocks
            .iter()
            .find(|b| b["type"] == "tool_use")
            .and_then(|b| b["id"].as_str())
            .and_then(|id| id.strip_prefix("toolu_"))
            .and_then(|n| n.parse::<usize>().ok());
        seen_assistants += 1;
        let Some(turn) = turn else { continue };
        let valid = match (thinking, produced.get(turn)) {
            (Some(_), Some((psys, pmsgs))) => *psys == now.0 && pmsgs.as_slice() == &now.1[..i],
            _ => false,
        };
        if thinking.is_some() && !valid {
            t.bad_thinking += 1;
        }
        latest = Some(thinking.is_some() && valid);
    }
    let _ = seen_assistants;
    if let Some(kept) = latest {
        t.last_total += 1;
        t.last_kept += u32::from(kept);
    }
}
