//! Calibration from reported usage: convergence on recorded figures, exact models as a check,
//! persistence, validation.

use crate::support::{clock, model_guard};
use ctxguard::format::{parse_request, Format, Request};
use ctxguard::guard::{Guard, GuardConfig};
use ctxguard::provider::calibration::{CalibrationState, ReportedUsage};
use ctxguard::report::metrics::CountSource;
use ctxguard::{Encoding, ErrorCode};
use serde_json::json;

/// Eight requests of different kinds of content (prose, code, JSON tool output, German, a long
/// log), growing like a real session.
fn requests() -> Vec<Request> {
    let bodies = [
        "Why does my release build fail on CI but not locally? It started after the upgrade.".to_string(),
        "fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * 2).collect();\n    println!(\"{v:?}\");\n}\n".repeat(6),
        serde_json::to_string(&json!({"tests": (0..40).map(|i| json!({"name": format!("test_{i}"), "ok": i % 7 != 0, "ms": i * 13})).collect::<Vec<_>>()})).unwrap(),
        "Könnten Sie bitte die Änderungen an der Konfiguration erklären? Die Pipeline schlägt seit gestern fehl. ".repeat(8),
        "error[E0502]: cannot borrow `x` as mutable because it is also borrowed as immutable\n  --> src/lib.rs:42:9\n".repeat(12),
        "The migration moves the billing tables to the new schema; we keep the old views for a week. ".repeat(10),
        "SELECT id, name, created_at FROM users WHERE created_at > now() - interval '7 days' ORDER BY id;\n".repeat(9),
        "Thanks — that fixed it. Can you summarize what we changed and what is left to do?".to_string(),
    ];
    let mut msgs = Vec::new();
    let mut out = Vec::new();
    for (i, body) in bodies.iter().enumerate() {
        msgs.push(json!({"role": "user", "content": body}));
        out.push(
            parse_request(
                Format::Anthropic,
                &serde_json::Value::Array(msgs.clone()),
                Some(&json!("You are a careful build assistant.")),
                None,
            )
            .unwrap(),
        );
        msgs.push(json!({"role": "assistant", "content": format!("Answer {i}: {}", "let me look at that in detail. ".repeat(5 + i))}));
    }
    out
}

/// The plain o200k count of a request in the model's framing (factor 1).
fn o200k(model: &str, r: &Request) -> u32 {
    let mut g = Guard::new(&GuardConfig {
        model: Some(model.into()),
        encoding: Some(Encoding::O200kBase),
        ..Default::default()
    })
    .unwrap();
    g.count(r).total
}

fn usage_anthropic(input: u32, cached: u32) -> ReportedUsage {
    serde_json::from_value(json!({"input_tokens": input - cached, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0, "output_tokens": 120})).unwrap()
}

/// Recorded ratios of Claude's reported input to the o200k count: 1.15–1.25 with noise, and one
/// outlier (a request whose usage the host mixed up with a larger one: 2.6×).
const CLAUDE_RATIOS: [f64; 8] = [1.21, 1.17, 1.24, 2.6, 1.19, 1.23, 1.16, 1.22];

#[test]
fn claude_estimates_converge_within_the_documented_error() {
    let model = "claude-sonnet-4-5";
    let reqs = requests();
    let mut g = model_guard(model);
    let mut errors = Vec::new();
    for (r, ratio) in reqs.iter().zip(CLAUDE_RATIOS) {
        let reported = (f64::from(o200k(model, r)) * ratio).round() as u32;
        let obs = g.observe_usage(r, &usage_anthropic(reported, 0)).unwrap();
        errors.push((obs.error, obs.outlier));
    }
    // The outlier is rejected, the others learned.
    let outliers: Vec<bool> = errors.iter().map(|e| e.1).collect();
    assert_eq!(outliers, [false, false, false, true, false, false, false, false]);
    let summary = g.calibration_summary().unwrap();
    assert_eq!((summary.observations, summary.outliers), (7, 1));
    assert!(summary.applied);
    assert!(summary.confidence > 0.6);
    // The table's estimate (o200k × 1.32, with its 10 % margin) was high before calibration...
    assert!(errors[..3].iter().all(|e| e.0 > 0.0 && e.0 < 0.16), "{errors:?}");
    // ...after three observations, every prediction is within -3 % / +13 % of the reported
    // count (the recorded ratios themselves spread over ±3.5 %), and closer on average than the
    // table's estimate.
    let table: Vec<f64> = CLAUDE_RATIOS.iter().map(|r| 1.32 / r - 1.0).collect();
    let mut sum_cal = 0.0;
    let mut sum_table = 0.0;
    for (i, (e, outlier)) in errors.iter().enumerate().skip(4) {
        assert!(!outlier);
        assert!(*e > -0.03 && *e < 0.13, "{errors:?}");
        sum_cal += e;
        sum_table += table[i];
    }
    assert!(sum_cal < sum_table * 0.85, "{sum_cal} vs {sum_table}");
    // And for fresh content of the same kind the calibrated count is within -3 % / +8 % too.
    let fresh = parse_request(Format::Anthropic, &json!([{"role": "user", "content": "Please check the deploy logs for the failing health check and tell me which pod restarts. ".repeat(20)}]), None, None).unwrap();
    let truth = f64::from(o200k(model, &fresh)) * 1.20;
    let m = g.measure(&fresh);
    assert_eq!(m.count_source, CountSource::Calibrated);
    let err = (f64::from(m.used_tokens) - truth) / truth;
    assert!(err > -0.03 && err < 0.08, "calibrated {} vs {truth}: {err}", m.used_tokens);
}

#[test]
fn an_underestimating_table_factor_is_corrected_upwards() {
    // A Qwen deployment on CJK-heavy content: the provider reports 1.45× o200k while the table
    // assumes 1.155×, a dangerous 20 % under-count.
    let model = "qwen3-32b";
    let reqs = requests();
    let mut g = model_guard(model);
    let mut last_err = 0.0;
    for (i, r) in reqs.iter().enumerate() {
        let ratio = 1.45 * (1.0 + [0.02, -0.03, 0.01, 0.0, -0.02, 0.03, -0.01, 0.02][i]);
        let reported = (f64::from(o200k(model, r)) * ratio).round() as u32;
        let usage: ReportedUsage =
            serde_json::from_value(json!({"prompt_tokens": reported, "completion_tokens": 10})).unwrap();
        let obs = g.observe_usage(r, &usage).unwrap();
        if i == 0 {
            assert!(obs.error < -0.15, "{obs:?}");
        }
        last_err = obs.error;
    }
    assert!(last_err > -0.03 && last_err < 0.08, "{last_err}");
    assert!(g.correction().unwrap() > 1.2);
}

#[test]
fn exact_models_are_checked_not_corrected() {
    let model = "gpt-4o";
    let reqs = requests();
    let mut g = model_guard(model);
    let exact = g.count(&reqs[2]).total;
    for r in &reqs[..5] {
        let truth = g.count(r).total + 7; // the provider bills 7 more than ctxguard counts
        let usage: ReportedUsage =
            serde_json::from_value(json!({"prompt_tokens": truth, "prompt_tokens_details": {"cached_tokens": 0}}))
                .unwrap();
        g.observe_usage(r, &usage).unwrap();
    }
    assert_eq!(g.count(&reqs[2]).total, exact, "never silently corrected");
    let m = g.measure(&reqs[4]);
    assert_eq!(m.count_source, CountSource::Exact);
    let cal = m.calibration.unwrap();
    assert!(!cal.applied);
    assert_eq!(cal.correction, 1.0);
    let last = cal.last.unwrap();
    assert_eq!(last.reported - last.predicted, 7);
    assert!(last.error < 0.0);
}

#[test]
fn state_round_trips_through_json_and_restores_counts() {
    let model = "claude-sonnet-4-5";
    let reqs = requests();
    let mut g = model_guard(model);
    for (r, ratio) in reqs.iter().zip(CLAUDE_RATIOS).take(5) {
        let reported = (f64::from(o200k(model, r)) * ratio).round() as u32;
        g.observe_usage(r, &usage_anthropic(reported, 0)).unwrap();
    }
    let text = serde_json::to_string(&g.ledger.calibration).unwrap();
    let state: CalibrationState = serde_json::from_str(&text).unwrap();
    // serde_json's default float parser may differ in the last bit; JSON.parse does not.
    let (a, b) = (&state.models[model].ratios, &g.ledger.calibration.models[model].ratios);
    assert!(a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12) && a.len() == b.len());
    let mut restored =
        Guard::new(&GuardConfig { model: Some(model.into()), calibration: Some(state), ..Default::default() }).unwrap();
    let (a, b) = (restored.measure(&reqs[7]), g.measure(&reqs[7]));
    assert_eq!((a.used_tokens, a.count_source), (b.used_tokens, b.count_source));
    assert!((a.calibration.unwrap().correction - b.calibration.unwrap().correction).abs() < 1e-12);
    // Another model's guard keeps the entry untouched and uncorrected.
    let mut other = Guard::new(&GuardConfig {
        model: Some("gemini-2.5-pro".into()),
        calibration: Some(g.ledger.calibration.clone()),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(other.measure(&reqs[0]).count_source, CountSource::Estimate);
    assert!(other.ledger.calibration.models.contains_key(model));
}

#[test]
fn garbage_state_is_invalid_options() {
    let bad = [
        json!({"version": 2, "models": {}}),
        json!({"version": 1, "models": {"claude": {"observations": 1, "outliers": 0, "ratios": [7.0], "pending": [], "last": null}}}),
        json!({"version": 1, "models": {"claude": {"observations": 1, "outliers": 0, "ratios": [1.0], "pending": [], "last": null, "extra": 1}}}),
        json!({"version": 1, "modles": {}}),
    ];
    for b in bad {
        let parsed: Result<CalibrationState, _> = serde_json::from_value(b.clone());
        match parsed {
            Err(_) => {}
            Ok(state) => {
                let e = Guard::new(&GuardConfig {
                    model: Some("claude-sonnet-4-5".into()),
                    calibration: Some(state),
                    ..Default::default()
                })
                .err()
                .unwrap();
                assert_eq!(e.code, ErrorCode::InvalidOptions, "{b}");
            }
        }
    }
}

#[test]
fn the_ai_sdk_usage_shape_is_read() {
    use ctxguard::provider::calibration::ReportedUsage;
    let v5: ReportedUsage = serde_json::from_value(
        serde_json::json!({"inputTokens": 1200, "outputTokens": 80, "totalTokens": 1280, "cachedInputTokens": 1024}),
    )
    .unwrap();
    assert_eq!(v5.input().unwrap(), (1200, 1024));
    let v6: ReportedUsage = serde_json::from_value(serde_json::json!({"inputTokens": 900, "outputTokens": 5, "inputTokenDetails": {"noCacheTokens": 900, "cacheReadTokens": 0}})).unwrap();
    assert_eq!(v6.input().unwrap(), (900, 0));
    let none: ReportedUsage = serde_json::from_value(serde_json::json!({"outputTokens": 5})).unwrap();
    assert!(none.input().unwrap_err().message.contains("inputTokens (AI SDK)"));
}

// ---------------------------------------------------------------- overflow errors

use ctxguard::pipeline::{PrepareOptions, Step};
use ctxguard::provider::calibration::WINDOW;
use ctxguard::provider::calibration_overflow::OverflowOutcome;
use ctxguard::provider::overflow::classify_value;
use serde_json::Value;

/// A long Claude conversation: `turns` exchanges of about `words` words each, then a short question.
fn long_chat(turns: usize, words: usize) -> Request {
    let mut msgs = Vec::new();
    for i in 0..turns {
        msgs.push(json!({"role": "user", "content": format!("Step {i}: please review the migration log. {}", "The billing tables moved to the new schema overnight. ".repeat(words / 8))}));
        msgs.push(json!({"role": "assistant", "content": format!("Review {i}: {}", "Row counts match and the views still resolve to the old names. ".repeat(words / 10))}));
    }
    msgs.push(json!({"role": "user", "content": "So is it safe to drop the old views now?"}));
    parse_request(Format::Anthropic, &Value::Array(msgs), Some(&json!("You are a careful database assistant.")), None)
        .unwrap()
}

fn anthropic_overflow(reported: u32) -> Value {
    json!({"status": 400, "body": {"type": "error", "error": {"type": "invalid_request_error",
        "message": format!("prompt is too long: {reported} tokens > 200000 maximum")}}})
}

#[test]
fn an_overflow_count_makes_the_next_prepare_fit() {
    let model = "claude-sonnet-4-5";
    let mut g = model_guard(model);
    // ~150k tokens by the table's estimate: under the trigger (146,893 of 183,616 usable) after
    // a few turns fewer, so nothing is compacted; the provider counts 1.5x the estimate.
    let mut turns = 10;
    let req = loop {
        let r = long_chat(turns, 1_000);
        if g.count(&r).total > 135_000 {
            break r;
        }
        turns += 2;
    };
    let estimate = g.count(&req).total;
    assert!(estimate < g.budget.trigger_limit, "{estimate}");
    match ctxguard::pipeline::prepare_start(&mut g, &req, &PrepareOptions::default(), &clock).unwrap() {
        Step::Done(out) => assert!(out.compaction.is_none()),
        Step::Summarize(_) | Step::AwaitAhead => panic!("under the trigger: nothing to compact"),
    }
    let truth = |raw: u32| (f64::from(raw) * 1.5).round() as u32;
    let reported = truth(g.count_raw(&req).total);
    assert!(reported > 200_000, "{reported}");

    let learned = g.observe_overflow(&req, &classify_value(&anthropic_overflow(reported)));
    assert_eq!(learned.outcome, OverflowOutcome::Learned);
    assert_eq!((learned.error.counts.prompt_tokens, learned.error.counts.limit), (Some(reported), Some(200_000)));
    assert_eq!((learned.predicted, learned.estimated), (estimate, estimate));
    assert!(learned.count_error.unwrap() < -0.3, "{learned:?}");
    assert!(!learned.limit_below_window);
    // The same messages now count what the provider counted (within the per-bucket rounding).
    let after = learned.predicted_after.unwrap();
    assert!(after.abs_diff(reported) <= 80, "{after} vs {reported}");
    assert!((learned.correction - 1.5).abs() < 1e-4, "{}", learned.correction);
    let cal = learned.calibration.unwrap();
    assert!(cal.applied && cal.floor.is_some() && cal.observations == 1);

    // The next prepare compacts, and what it sends fits by the provider's count.
    let m = g.measure(&req);
    assert_eq!(m.count_source, CountSource::Calibrated);
    assert!(m.used_tokens > m.usable_limit);
    let out = match ctxguard::pipeline::prepare_start(&mut g, &req, &PrepareOptions::default(), &clock).unwrap() {
        Step::Summarize(p) => {
            let a = p
                .validate(
                    &g,
                    &json!("The user migrated the billing tables; row counts match; the old views still resolve."),
                )
                .unwrap();
            ctxguard::pipeline::prepare_finish(&mut g, *p, Ok(a), 1, &clock).unwrap()
        }
        Step::Done(_) | Step::AwaitAhead => panic!("over the limit now: a summary is due"),
    };
    assert!(out.compaction.is_some() && !out.degraded);
    assert!(out.metrics.used_tokens <= out.metrics.target_limit, "{:?}", out.metrics);
    let provider_count = truth(g.count_raw(&out.request).total);
    assert!(provider_count + out.metrics.reserved_output_tokens <= 200_000, "{provider_count}");
}

#[test]
fn an_undercounting_overflow_is_learned_even_far_from_the_window() {
    let model = "claude-sonnet-4-5";
    let reqs = requests();
    let mut g = model_guard(model);
    // A settled window at 1.0x the table's estimate...
    for r in &reqs[..6] {
        let raw = g.count_raw(r).total;
        g.observe_usage(r, &usage_anthropic(raw, 0)).unwrap();
    }
    let before = g.correction().unwrap();
    // ...then an overflow at 1.6x: as a usage report it would be an outlier; as an overflow it is
    // the provider's count of the request that failed, and it is learned.
    let r = &reqs[7];
    let reported = (f64::from(g.count_raw(r).total) * 1.6).round() as u32;
    let error = classify_value(&json!({"message": format!("prompt is too long: {reported} tokens > 200000 maximum")}));
    let learned = g.observe_overflow(r, &error);
    assert_eq!(learned.outcome, OverflowOutcome::Learned);
    assert!(before < 1.1 && (g.correction().unwrap() - 1.6).abs() < 1e-3, "{before} -> {:?}", g.correction());
    // An overflow that shows no undercount is an ordinary observation (here an outlier: 0.5x).
    let low = (f64::from(g.count_raw(r).total) * 0.5).round() as u32;
    let learned = g.observe_overflow(
        r,
        &classify_value(&json!({"message": format!("prompt is too long: {low} tokens > 1000 maximum")})),
    );
    assert_eq!(learned.outcome, OverflowOutcome::Outlier);
    assert!(learned.limit_below_window);
    // A ratio no tokenizer explains (the messages are not the request that failed) is rejected.
    let garbage = g.observe_overflow(&reqs[0], &classify_value(&anthropic_overflow(250_000)));
    assert_eq!(garbage.outcome, OverflowOutcome::Outlier);
    assert!((g.correction().unwrap() - 1.6).abs() < 1e-3);
}

#[test]
fn the_floor_lapses_after_a_window_of_observations_and_on_a_regime_change() {
    let model = "claude-sonnet-4-5";
    let reqs = requests();
    let mut g = model_guard(model);
    let r = &reqs[3];
    let raw = g.count_raw(r).total;
    g.observe_overflow(r, &classify_value(&anthropic_overflow(raw * 3 / 2)));
    assert!((g.correction().unwrap() - 1.5).abs() < 0.01);
    for i in 0..WINDOW {
        let reported = raw + (i as u32 % 3);
        g.observe_usage(r, &usage_anthropic(reported, 0)).unwrap();
        let floor = g.calibration_summary().unwrap().floor;
        assert_eq!(floor.is_some(), i + 1 < WINDOW, "after {} observations", i + 1);
    }
    assert!(g.correction().unwrap() < 1.1, "{:?}", g.correction());
    // A regime change (three agreeing outliers) restarts the window and drops the floor.
    g.observe_overflow(r, &classify_value(&anthropic_overflow(raw * 3 / 2)));
    assert!(g.calibration_summary().unwrap().floor.is_some());
    for _ in 0..3 {
        g.observe_usage(r, &usage_anthropic(raw * 6 / 10, 0)).unwrap();
    }
    let s = g.calibration_summary().unwrap();
    assert!(s.floor.is_none() && s.correction < 0.7, "{s:?}");
}

#[test]
fn overflows_without_a_usable_count_teach_nothing() {
    let model = "claude-sonnet-4-5";
    let r = &requests()[2];
    let cases = [
        (json!({"status": 400, "message": "Unsupported parameter: 'max_tokens'"}), OverflowOutcome::NotOverflow),
        (
            json!({"status": 429, "message": "Rate limit reached: Limit 30000, Requested 31538"}),
            OverflowOutcome::NotOverflow,
        ),
        (
            json!({"body": {"errorType": "ValidationException", "errorMessage": "Input is too long for requested model."}}),
            OverflowOutcome::NoCount,
        ),
        (
            json!({"message": "This model's maximum context length is 4097 tokens, however you requested 4226 tokens"}),
            OverflowOutcome::NoCount,
        ),
        (
            json!({"message": "This endpoint's maximum context length is 16384 tokens. However, you requested about 94307 tokens (94307 of text input)."}),
            OverflowOutcome::Approximate,
        ),
        (json!(null), OverflowOutcome::NotOverflow),
    ];
    for (error, outcome) in cases {
        let mut g = model_guard(model);
        let before = g.count(r).total;
        let learned = g.observe_overflow(r, &classify_value(&error));
        assert_eq!(learned.outcome, outcome, "{error}");
        assert!(
            learned.predicted_after.is_none() && learned.calibration.is_none() && learned.correction == 1.0,
            "{error}"
        );
        assert_eq!(g.count(r).total, before);
        assert!(g.ledger.calibration.models.is_empty());
    }
    // The approximate figure is still reported, and the limit below the window flagged.
    let mut g = model_guard(model);
    let learned = g.observe_overflow(r, &classify_value(&cases_openrouter()));
    assert_eq!(
        (learned.error.counts.prompt_tokens, learned.limit_below_window, learned.context_window),
        (Some(94_307), true, 200_000)
    );
}

fn cases_openrouter() -> Value {
    json!({"message": "This endpoint's maximum context length is 16384 tokens. However, you requested about 94307 tokens (94307 of text input)."})
}

#[test]
fn exact_models_report_an_overflow_count_and_keep_their_counts() {
    let mut g = model_guard("gpt-4o");
    let r = &requests()[4];
    let exact = g.count(r).total;
    let error = json!({"status": 400, "body": {"error": {"message": format!("This model's maximum context length is 128000 tokens. However, your messages resulted in {} tokens. Please reduce the length of the messages.", exact + 40), "code": "context_length_exceeded"}}});
    let learned = g.observe_overflow(r, &classify_value(&error));
    assert_eq!(learned.outcome, OverflowOutcome::ExactModel);
    assert_eq!(learned.predicted, exact);
    assert!(learned.count_error.unwrap() < 0.0 && learned.correction == 1.0 && learned.predicted_after.is_none());
    let cal = learned.calibration.unwrap();
    assert!(!cal.applied && cal.floor.is_none());
    assert_eq!(cal.last.unwrap().reported, exact + 40);
    assert_eq!(g.count(r).total, exact, "exact counts never change");
    assert_eq!(g.measure(r).count_source, CountSource::Exact);
}

#[test]
fn a_floor_persists_and_bad_floors_are_rejected() {
    let model = "claude-sonnet-4-5";
    let r = &requests()[5];
    let mut g = model_guard(model);
    let raw = g.count_raw(r).total;
    g.observe_overflow(r, &classify_value(&anthropic_overflow(raw * 7 / 5)));
    let saved: CalibrationState = serde_json::from_str(&serde_json::to_string(&g.ledger.calibration).unwrap()).unwrap();
    assert!(saved.models[model].floor.is_some());
    let mut restored =
        Guard::new(&GuardConfig { model: Some(model.into()), calibration: Some(saved), ..Default::default() }).unwrap();
    assert_eq!(restored.count(r).total, g.count(r).total);
    // A state written before floors existed has none and still reads.
    let old: CalibrationState = serde_json::from_value(json!({"version": 1, "models": {"claude": {"observations": 1, "outliers": 0, "ratios": [1.0], "pending": [], "last": null}}})).unwrap();
    assert!(old.models["claude"].floor.is_none());
    for floor in [json!({"ratio": 9.0, "at": 1}), json!({"ratio": 1.2, "at": 5}), json!({"ratio": 1.2})] {
        let v = json!({"version": 1, "models": {"claude": {"observations": 1, "outliers": 0, "ratios": [1.0], "pending": [], "last": null, "floor": floor}}});
        if let Ok(state) = serde_json::from_value::<CalibrationState>(v) {
            let e =
                Guard::new(&GuardConfig { model: Some(model.into()), calibration: Some(state), ..Default::default() })
                    .err()
                    .unwrap();
            assert_eq!(e.code, ErrorCode::InvalidOptions);
        }
    }
}

#[test]
fn available_output_follows_the_estimate_and_the_calibration() {
    let model = "claude-sonnet-4-5";
    let mut g = model_guard(model);
    let req = long_chat(46, 1_000);
    let m = g.measure(&req);
    assert_eq!(m.available_output_tokens, 64_000.min(200_000 - m.used_tokens));
    // The estimate is above the plain o200k count, so the room errs low.
    assert!(o200k(model, &req) < m.used_tokens && m.available_output_tokens < 64_000, "{m:?}");
    // An overflow that shows an undercount shrinks the room with the count.
    let reported = g.count_raw(&req).total * 5 / 4;
    g.observe_overflow(&req, &classify_value(&anthropic_overflow(reported)));
    let after = g.measure(&req);
    assert!(after.used_tokens > m.used_tokens);
    assert_eq!(after.available_output_tokens, 64_000.min(200_000u32.saturating_sub(after.used_tokens)));
    assert!(after.available_output_tokens < m.available_output_tokens);
    // An exact model: the window's rest, to the token.
    let mut exact = model_guard("gpt-4o");
    let r = &requests()[6];
    let used = exact.count(r).total;
    assert_eq!(exact.measure(r).available_output_tokens, 16_384.min(128_000 - used));
}
