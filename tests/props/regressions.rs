//! Deterministic reproducers of bugs the property tests found (docs/reliability.md, "Bugs found",
//! 1 and 2). Both are fixed; the reproducers stay and run with the others: `cargo test --test
//! props regressions::`.

use crate::support::clock;
use ctxguard::format::{parse_request, Format, Request};
use ctxguard::guard::{Guard, GuardConfig};
use ctxguard::message::Role;
use ctxguard::pipeline::{FailureReason, PrepareOptions, Step};
use serde_json::{json, Value};

/// 12 turns of tool-heavy history on a 1,500-token window (usable 1,125): the system prompt and
/// the latest question need about 620 tokens, so whatever the summarizer does, `prepare` should
/// end under the usable limit.
fn small_window_history() -> (Guard, Request) {
    let mut v = vec![json!({"role": "system", "content": "You are a build assistant."})];
    for i in 0..12 {
        v.push(json!({"role": "user", "content": format!("Q{i}: why does module {i} fail?")}));
        v.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{i}"), "type": "function", "function": {"name": "run_tests", "arguments": format!("{{\"module\":\"m{i}\",\"path\":\"src/{}.rs\"}}", "deep/".repeat(20))}}]}));
        v.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": format!("{}result: module {i} FAILED at step {i} {}\n", "log line\n".repeat(40), "with a long explanation ".repeat(10))}));
        v.push(json!({"role": "assistant", "content": format!("Module {i} fails at step {i}.")}));
    }
    // a 600-token question: fits with room to spare
    v.push(json!({"role": "user", "content": format!("What should I fix first? {}", (0..75).map(|i| format!("line {i}: status ok\n")).collect::<String>())}));
    let cfg: GuardConfig =
        serde_json::from_value(json!({"model": "gpt-4o", "contextWindow": 1500, "reservedOutputTokens": 375})).unwrap();
    let g = Guard::new(&cfg).unwrap();
    let req = parse_request(Format::Openai, &Value::Array(v), None, None).unwrap();
    (g, req)
}

#[test]
fn the_fallback_note_fits_the_room_left_by_the_question() {
    for reason in [FailureReason::NoCallback, FailureReason::Timeout, FailureReason::CallbackError] {
        let (mut g, req) = small_window_history();
        let protected: Vec<_> = req
            .messages
            .iter()
            .enumerate()
            .filter(|(i, m)| m.role == Role::System || *i == req.messages.len() - 1)
            .map(|(_, m)| m.clone())
            .collect();
        let need = g.count(&Request { messages: protected, ..Default::default() }).total;
        assert!(need < g.budget.usable_limit, "the question fits: {need} of {}", g.budget.usable_limit);
        let Step::Summarize(p) =
            ctxguard::pipeline::prepare_start(&mut g, &req, &PrepareOptions::default(), &clock).unwrap()
        else {
            panic!("expected a summary request")
        };
        match ctxguard::pipeline::prepare_finish(&mut g, *p, Err(reason), 3, &clock) {
            Ok(out) => assert!(out.metrics.used_tokens <= g.budget.usable_limit),
            Err(e) => panic!("{reason:?}: question needs {need}: {} {}", e.code.as_str(), e.message),
        }
    }
}

#[test]
fn the_evidence_note_is_stable_under_layer_1() {
    let mut v = vec![json!({"role": "system", "content": "You are a reviewer."})];
    // The first request's quote is clipped after the opening tag; the last one's quote holds a
    // whole small attachment, closing tag included.
    v.push(json!({"role": "user", "content": format!("Review <attachment id=\"a\" name=\"a.md\" type=\"text/markdown\">{}</attachment>", "lorem ipsum dolor ".repeat(40))}));
    v.push(json!({"role": "assistant", "content": "Reviewed."}));
    for i in 0..12 {
        v.push(json!({"role": "user", "content": format!("Point {i}: {}", "please check the wording of this paragraph again ".repeat(5))}));
        v.push(json!({"role": "assistant", "content": format!("Checked point {i}.")}));
    }
    v.push(json!({"role": "user", "content": "And <attachment id=\"b\" name=\"b.md\" type=\"text/markdown\">tiny</attachment>"}));
    v.push(json!({"role": "assistant", "content": "Reviewed b."}));
    v.push(json!({"role": "user", "content": "Which document is best?"}));
    let cfg: GuardConfig =
        serde_json::from_value(json!({"model": "gpt-4o", "contextWindow": 3000, "reservedOutputTokens": 500})).unwrap();
    let mut g = Guard::new(&cfg).unwrap();
    let req = parse_request(Format::Openai, &Value::Array(v), None, None).unwrap();
    let Step::Summarize(p) =
        ctxguard::pipeline::prepare_start(&mut g, &req, &PrepareOptions { force: true, ..Default::default() }, &clock)
            .unwrap()
    else {
        panic!("expected a summary request")
    };
    let out = ctxguard::pipeline::prepare_finish(&mut g, *p, Err(FailureReason::NoCallback), 0, &clock).unwrap();
    let note = out
        .request
        .messages
        .iter()
        .find(|m| m.content.text().starts_with("[ctxguard:evidence]"))
        .unwrap()
        .content
        .text();
    let again = g.guard_sources(&out.request, false, &clock);
    let note2 = again
        .request
        .messages
        .iter()
        .find(|m| m.content.text().starts_with("[ctxguard:evidence]"))
        .unwrap()
        .content
        .text();
    assert_eq!(note2, note, "layer 1 rewrote the evidence note");
}
