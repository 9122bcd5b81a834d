//! The whole pipeline on arbitrary JSON with a scripted summarizer: no panic, and when it
//! succeeds the result fits the usable limit.
#![no_main]
use ctxguard::format::{parse_request, Format};
use ctxguard::guard::{Guard, GuardConfig};
use ctxguard::pipeline::{FailureReason, PrepareOptions, Step};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

const REASONS: [FailureReason; 7] = [
    FailureReason::NoCallback,
    FailureReason::Timeout,
    FailureReason::CallbackError,
    FailureReason::InvalidOutput,
    FailureReason::EmptyOutput,
    FailureReason::OverBudget,
    FailureReason::Aborted,
];

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<4>() else { return };
    let Ok(messages) = serde_json::from_slice::<Value>(rest) else { return };
    // Bits 0 and 4-5 pick the format (the older inputs, bits 4-5 clear, keep theirs).
    let format = match (head[0] & 1, (head[0] >> 4) & 3) {
        (0, 0) => Format::Openai,
        (_, 0) => Format::Anthropic,
        (0, 1) => Format::OpenaiResponses,
        (_, 1) => Format::Gemini,
        _ => Format::AiSdk,
    };
    let Ok(req) = parse_request(format, &messages, None, None) else { return };
    let window = 600 + u32::from(u16::from_le_bytes([head[1], head[2]]));
    let model = if head[0] & 2 == 0 { "gpt-4o" } else { "claude-sonnet-4-5" };
    let cfg: GuardConfig = serde_json::from_value(
        json!({"model": model, "contextWindow": window, "reservedOutputTokens": 100, "toolOutputLimit": 200}),
    )
    .unwrap();
    let Ok(mut g) = Guard::new(&cfg) else { return };
    let opts = PrepareOptions {
        force: head[0] & 4 != 0,
        guidance: (head[0] & 8 != 0).then(|| "continue".into()),
        ..Default::default()
    };
    let clock = || 0.0;
    let out = match ctxguard::pipeline::prepare_start(&mut g, &req, &opts, &clock) {
        Err(_) | Ok(Step::AwaitAhead) => return,
        Ok(Step::Done(o)) => Ok(*o),
        Ok(Step::Summarize(p)) => {
            let answer = match head[3] % 4 {
                0 => Ok(json!("A short summary.")),
                1 => {
                    Ok(json!({"summary": "s", "key_facts": ["k"], "decisions": [], "plan": null, "open_questions": []}))
                }
                2 => Ok(messages.clone()),
                _ => Err(REASONS[usize::from(head[3] / 4) % REASONS.len()]),
            };
            let result = answer.and_then(|a| p.validate(&g, &a));
            ctxguard::pipeline::prepare_finish(&mut g, *p, result, 1, &clock)
        }
    };
    if let Ok(o) = out {
        let guidance = if opts.guidance.is_some() { 8 } else { 0 };
        assert!(
            o.metrics.used_tokens <= g.budget.usable_limit + guidance,
            "{} > {}",
            o.metrics.used_tokens,
            g.budget.usable_limit
        );
    }
});
