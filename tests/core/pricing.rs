//! Cost of the next request against hand-computed figures, `economicBudget` in USD, and the
//! cache-aware compaction decision on both sides of its threshold.

use crate::support;
use ctxguard::format::{parse_request, Format};
use ctxguard::guard::{Guard, GuardConfig};
use ctxguard::provider::calibration::ReportedUsage;
use ctxguard::provider::pricing::{
    self, decide, Choice, DecisionInput, DecisionReason, EconomicBudget, Pricing, UsdBudget,
};
use ctxguard::ErrorCode;
use serde_json::json;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn cost_of_the_next_request_by_hand() {
    // gpt-4o: $2.50 input, $1.25 cached, $10 output per million.
    let p = pricing::lookup("gpt-4o").unwrap();
    let c = pricing::estimate(&p, 10_000, 4_096, 1_000, true);
    assert_eq!(c.uncached_input_tokens, 5_904);
    assert!(close(c.uncached_input_usd, 5_904.0 * 2.5 / 1e6)); // 0.01476
    assert!(close(c.cached_input_usd, 4_096.0 * 1.25 / 1e6)); // 0.00512
    assert!(close(c.output_usd, 0.01));
    assert!(close(c.total_usd, 0.01476 + 0.00512 + 0.01));
    // Anthropic: the uncached part is a cache write (1.25 × $3), the cached part a hit ($0.30).
    let p = pricing::lookup("claude-sonnet-4-5").unwrap();
    let c = pricing::estimate(&p, 20_000, 15_000, 0, true);
    assert!(close(c.total_usd, 5_000.0 * 3.75 / 1e6 + 15_000.0 * 0.30 / 1e6)); // 0.01875 + 0.0045
}

fn conversation(turns: usize) -> serde_json::Value {
    let mut msgs = vec![json!({"role": "system", "content": "You are a careful build assistant. ".repeat(40)})];
    for i in 0..turns {
        msgs.push(
            json!({"role": "user", "content": format!("Question {i}: {}", "why does the build fail? ".repeat(30))}),
        );
        msgs.push(json!({"role": "assistant", "content": format!("Answer {i}: {}", "because the cache is stale. ".repeat(30))}));
    }
    serde_json::Value::Array(msgs)
}

#[test]
fn metrics_cost_uses_the_prefix_sent_last() {
    let mut g = Guard::new(&GuardConfig {
        model: Some("gpt-4o".into()),
        reserved_output_tokens: Some(1_000.0),
        ..Default::default()
    })
    .unwrap();
    let first = parse_request(Format::Openai, &conversation(6), None, None).unwrap();
    // Nothing sent yet: nothing cached.
    let m = g.measure(&first);
    let cost = m.cost.clone().unwrap();
    assert_eq!(cost.cached_input_tokens, 0);
    assert_eq!(cost.output_tokens, 1_000);
    assert_eq!(cost.prices_as_of.as_deref(), Some(pricing::PRICES_AS_OF));
    // measure alone does not move the reference point.
    assert_eq!(g.measure(&first).cost.unwrap().cached_input_tokens, 0);
    let usage: ReportedUsage = serde_json::from_value(json!({"prompt_tokens": m.used_tokens})).unwrap();
    g.observe_usage(&first, &usage).unwrap();
    // The next request: the same messages plus one turn. Cached: the first request's messages
    // (without its reply priming), rounded down to 128.
    let second = parse_request(Format::Openai, &conversation(7), None, None).unwrap();
    let counted = g.count(&second);
    let prefix: usize = counted.per_message[..first.messages.len()].iter().map(|c| c.total).sum();
    let m2 = g.measure(&second);
    let c2 = m2.cost.unwrap();
    assert_eq!(c2.cached_input_tokens as usize, prefix / 128 * 128);
    assert_eq!(c2.input_tokens, m2.used_tokens);
    let by_hand =
        f64::from(c2.cached_input_tokens) * 1.25e-6 + f64::from(c2.uncached_input_tokens) * 2.5e-6 + 1_000.0 * 10e-6;
    assert!(close(c2.total_usd, by_hand));
    // A changed first message breaks the whole prefix.
    let mut edited = conversation(7);
    edited[0]["content"] = json!("You are terse.");
    let third = parse_request(Format::Openai, &edited, None, None).unwrap();
    assert_eq!(g.measure(&third).cost.unwrap().cached_input_tokens, 0);
}

#[test]
fn pricing_override_and_unknown_models() {
    let cfg = GuardConfig {
        model: Some("my-local".into()),
        context_window: Some(32_000.0),
        max_output_tokens: Some(4_000.0),
        ..Default::default()
    };
    let mut g = Guard::new(&cfg).unwrap();
    let req = parse_request(Format::Openai, &conversation(1), None, None).unwrap();
    assert!(g.measure(&req).cost.is_none());
    let p = Pricing { input: 1.0, cached_input: 0.1, output: 2.0, cache_write: None };
    let mut g = Guard::new(&GuardConfig { pricing: Some(p), ..cfg.clone() }).unwrap();
    let c = g.measure(&req).cost.unwrap();
    assert!(c.prices_as_of.is_none());
    assert!(close(c.total_usd, f64::from(c.input_tokens) * 1e-6 + 4_000.0 * 2e-6));
    let bad = Pricing { input: -1.0, ..p };
    assert_eq!(Guard::new(&GuardConfig { pricing: Some(bad), ..cfg }).err().unwrap().code, ErrorCode::InvalidOptions);
}

#[test]
fn economic_budget_in_usd() {
    // $0.05 of gpt-4o input at $2.50 per million = 20,000 tokens.
    let e: EconomicBudget = serde_json::from_value(json!({"usd": 0.05})).unwrap();
    assert_eq!(e, EconomicBudget::Usd(UsdBudget { usd: 0.05 }));
    let g = Guard::new(&GuardConfig { model: Some("gpt-4o".into()), economic_budget: Some(e), ..Default::default() })
        .unwrap();
    assert_eq!(g.budget.economic_budget, Some(20_000));
    assert_eq!(g.budget.usable_limit, 20_000);
    let t: EconomicBudget = serde_json::from_value(json!(60000)).unwrap();
    let g = Guard::new(&GuardConfig { model: Some("gpt-4o".into()), economic_budget: Some(t), ..Default::default() })
        .unwrap();
    assert_eq!(g.budget.usable_limit, 60_000);
    assert!(serde_json::from_value::<EconomicBudget>(json!({"usd": 0.05, "eur": 1})).is_err());
    // No price: a USD budget is an error.
    let cfg = GuardConfig {
        model: Some("my-local".into()),
        context_window: Some(32_000.0),
        economic_budget: Some(e),
        ..Default::default()
    };
    assert_eq!(Guard::new(&cfg).err().unwrap().code, ErrorCode::InvalidBudget);
}

/// A session on claude-sonnet-4-5 with an economic budget of 100k tokens in a 200k window.
fn input(prefix: u32, cached: u32) -> DecisionInput {
    DecisionInput {
        prefix_tokens: prefix,
        cached_tokens: cached,
        compacted_tokens: 12_000,
        summary_input_tokens: prefix - 8_000,
        summary_output_tokens: 4_096,
        growth_per_turn: 2_000,
        hard_limit: 100_000,
        physical_trigger: 147_000,
        horizon_turns: pricing::DECISION_HORIZON_TURNS,
    }
}

#[test]
fn cache_aware_decision_both_sides_of_the_threshold() {
    let p = pricing::lookup("claude-sonnet-4-5").unwrap();
    // Just over the economic trigger (80k), the whole prefix cached: continuing costs ~$0.3 in
    // cache hits and writes over ten turns, compacting ~$0.37 (summary call $0.27 + new prefix).
    let d = decide(&p, &input(81_000, 79_000));
    assert_eq!(d.choice, Choice::Continue, "{d:?}");
    assert_eq!(d.reason, DecisionReason::CheaperToContinue);
    assert!(d.continue_usd < d.compact_usd);
    // Hand check of the compact side: summary (73k in at $3, 4096 out at $15) + 12k written
    // at $3.75 + nine turns of (cached previous at $0.30 + 2k written at $3.75).
    let mut by_hand = 73_000.0 * 3.0e-6 + 4_096.0 * 15.0e-6 + 12_000.0 * 3.75e-6;
    for k in 1..10u32 {
        by_hand += f64::from(12_000 + (k - 1) * 2_000) * 0.30e-6 + 2_000.0 * 3.75e-6;
    }
    assert!((d.compact_usd - by_hand).abs() < 1e-9, "{} vs {by_hand}", d.compact_usd);
    // Same size, nothing cached (the prefix was just rewritten): compacting is cheaper.
    let d = decide(&p, &input(81_000, 0));
    assert_eq!(d.choice, Choice::Compact, "{d:?}");
    assert_eq!(d.reason, DecisionReason::CheaperToCompact);
    // Cached, but close to the hard limit: continuing buys few cheap turns before a forced
    // (larger) compaction, so compact now.
    let d = decide(&p, &input(97_000, 95_000));
    assert_eq!(d.choice, Choice::Compact, "{d:?}");
    assert_eq!(d.turns_until_forced, 2);
    // The physical window decides alone: never delayed.
    let mut physical = input(81_000, 79_000);
    physical.physical_trigger = 80_000;
    assert_eq!(decide(&p, &physical).reason, DecisionReason::PhysicalWindow);
    let json = serde_json::to_value(decide(&p, &input(81_000, 79_000))).unwrap();
    assert_eq!(json["operation"], "cache_decision");
    assert_eq!(json["choice"], "continue");
    assert_eq!(json["horizonTurns"], 10);
}

#[test]
fn prepare_moves_the_cache_reference_point() {
    use ctxguard::pipeline::{PrepareOptions, Step};
    let mut g = Guard::new(&GuardConfig { model: Some("gpt-4o".into()), ..Default::default() }).unwrap();
    let first = parse_request(Format::Openai, &conversation(6), None, None).unwrap();
    let Step::Done(_) = ctxguard::pipeline::prepare_start(&mut g, &first, &PrepareOptions::default(), &|| 0.0).unwrap()
    else {
        panic!("no compaction expected")
    };
    let second = parse_request(Format::Openai, &conversation(7), None, None).unwrap();
    assert!(g.measure(&second).cost.unwrap().cached_input_tokens >= 1_024);
}

/// Conversations on claude-sonnet-4-5 (OpenAI shape), growing turn by turn.
/// The economic budget's cache decision is made over the trigger: the guards edit there
/// (`edits: 'trigger'`), as before edits were priced; by default a guard edits only once the
/// request would not fit (tests/core/edits.rs).
fn claude_guard(window: f64, economic: f64) -> Guard {
    support::guard(json!({
        "model": "claude-sonnet-4-5", "format": "openai", "contextWindow": window,
        "reservedOutputTokens": 1000, "economicBudget": economic, "edits": "trigger"
    }))
}

/// The smallest conversation whose measured size passes `tokens`.
fn turns_over(g: &mut Guard, tokens: u32) -> usize {
    (1..)
        .find(|&n| {
            g.measure(&parse_request(Format::Openai, &conversation(n), None, None).unwrap()).used_tokens > tokens
        })
        .unwrap()
}

#[test]
fn prepare_defers_an_economic_compaction_while_the_cache_is_cheaper() {
    use ctxguard::pipeline::{PrepareOptions, Step};
    // Economic budget 100k in a 200k window: trigger at 80k; the physical trigger is ~159k.
    let mut g = claude_guard(200_000.0, 100_000.0);
    let n = turns_over(&mut g, 80_000);
    let under = parse_request(Format::Openai, &conversation(n - 1), None, None).unwrap();
    let over = parse_request(Format::Openai, &conversation(n), None, None).unwrap();
    // The previous request was sent (prepare moves the cache reference point).
    let Step::Done(first) =
        ctxguard::pipeline::prepare_start(&mut g, &under, &PrepareOptions::default(), &|| 0.0).unwrap()
    else {
        panic!()
    };
    assert!(first.cache_decision.is_none(), "under the trigger nothing is decided");
    let Step::Done(out) =
        ctxguard::pipeline::prepare_start(&mut g, &over, &PrepareOptions::default(), &|| 0.0).unwrap()
    else {
        panic!("continuing on the cached prefix is cheaper: no summary")
    };
    let d = out.cache_decision.unwrap();
    assert_eq!((d.choice, d.reason), (Choice::Continue, DecisionReason::CheaperToContinue), "{d:?}");
    assert!(d.continue_usd < d.compact_usd);
    assert!(d.input.cached_tokens > 70_000, "{d:?}");
    assert!(out.compaction.is_none());
    let t = out.traces.iter().find(|t| t.operation == ctxguard::report::trace::Operation::SummaryCompact).unwrap();
    assert_eq!(t.status, ctxguard::report::trace::Status::Noop);
    assert_eq!(t.cache_decision, Some(d));

    // The same request with nothing cached (a fresh guard): compacting is cheaper.
    let mut fresh = claude_guard(200_000.0, 100_000.0);
    let Step::Summarize(p) =
        ctxguard::pipeline::prepare_start(&mut fresh, &over, &PrepareOptions::default(), &|| 0.0).unwrap()
    else {
        panic!("compaction expected")
    };
    let a = p.validate(&fresh, &json!("Questions and answers about a stale build cache.")).unwrap();
    let done = ctxguard::pipeline::prepare_finish(&mut fresh, *p, Ok(a), 1, &|| 0.0).unwrap();
    let d = done.cache_decision.unwrap();
    assert_eq!((d.choice, d.reason), (Choice::Compact, DecisionReason::CheaperToCompact), "{d:?}");
    assert_eq!(done.traces.last().unwrap().cache_decision, Some(d));
    assert!(done.compaction.is_some());

    // Forced (the provider reported an overflow): no decision, compaction.
    let mut forced = claude_guard(200_000.0, 100_000.0);
    let Step::Done(_) =
        ctxguard::pipeline::prepare_start(&mut forced, &under, &PrepareOptions::default(), &|| 0.0).unwrap()
    else {
        panic!()
    };
    let force = PrepareOptions { force: true, ..Default::default() };
    let Step::Summarize(p) = ctxguard::pipeline::prepare_start(&mut forced, &over, &force, &|| 0.0).unwrap() else {
        panic!("force compacts")
    };
    let out = ctxguard::pipeline::prepare_finish(
        &mut forced,
        *p,
        Err(ctxguard::pipeline::FailureReason::NoCallback),
        0,
        &|| 0.0,
    )
    .unwrap();
    assert!(out.cache_decision.is_none());
}

#[test]
fn the_physical_window_is_never_deferred() {
    use ctxguard::pipeline::{PrepareOptions, Step};
    // Economic 95k in a 100k window: the economic trigger (76k) sits under the physical one
    // (79.2k); a request over both compacts even with its whole prefix cached.
    let mut g = claude_guard(100_000.0, 95_000.0);
    let n = turns_over(&mut g, 79_200);
    let under = parse_request(Format::Openai, &conversation(n - 1), None, None).unwrap();
    let over = parse_request(Format::Openai, &conversation(n), None, None).unwrap();
    let _ = ctxguard::pipeline::prepare_start(&mut g, &under, &PrepareOptions::default(), &|| 0.0).unwrap();
    let Step::Summarize(p) =
        ctxguard::pipeline::prepare_start(&mut g, &over, &PrepareOptions::default(), &|| 0.0).unwrap()
    else {
        panic!("never deferred")
    };
    let out =
        ctxguard::pipeline::prepare_finish(&mut g, *p, Err(ctxguard::pipeline::FailureReason::NoCallback), 0, &|| 0.0)
            .unwrap();
    assert_eq!(out.cache_decision.unwrap().reason, DecisionReason::PhysicalWindow);
}
