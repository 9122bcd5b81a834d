#![cfg(not(target_arch = "wasm32"))] // proptest is a native-only dev-dependency
//! Tool outputs by age, over random agent sessions: a newer tool output is never shorter in the
//! model input than an older one of the same length (outputs of excluded tools aside), every
//! call keeps its result, the newest output is whole under its limit, and the model input of a
//! session's consecutive calls differs only at clearing steps.

use crate::support;
use ctxguard::format::{parse_request, Format};
use ctxguard::guard::Guard;
use ctxguard::message::{Message, Role};
use ctxguard::report::trace::Operation;
use proptest::prelude::*;
use serde_json::{json, Value};

/// One step of a session: which tool, and how long its output is (in lines).
#[derive(Debug, Clone)]
struct Step {
    tool: usize,
    lines: usize,
}

const TOOLS: [&str; 3] = ["read_file", "run_tests", "grep"];
const SIZES: [usize; 4] = [5, 40, 150, 600];

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        (0..TOOLS.len(), prop::sample::select(SIZES.to_vec())).prop_map(|(tool, lines)| Step { tool, lines }),
        10..90,
    )
}

/// The same text for the same line count: outputs "of the same length".
fn output(lines: usize) -> String {
    (0..lines).map(|l| format!("line {l:04}: the value is {}\n", (l * 7) % 10)).collect()
}

fn session(steps: &[Step]) -> Vec<Value> {
    let mut v = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Fix the build."}),
    ];
    for (i, s) in steps.iter().enumerate() {
        let id = format!("c{i}");
        v.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": TOOLS[s.tool], "arguments": format!("{{\"n\":{i}}}")}}]}));
        v.push(json!({"role": "tool", "tool_call_id": id, "content": output(s.lines)}));
    }
    v
}

fn guard(window: u32, exclude: Option<usize>) -> Guard {
    let mut cfg = json!({"model": "gpt-4o", "contextWindow": window, "reservedOutputTokens": 2000});
    if let Some(t) = exclude {
        cfg["clearToolOutputs"] = json!({"excludeTools": [TOOLS[t]]});
    }
    support::guard(cfg)
}

fn tokens(m: &Message) -> usize {
    ctxguard::tokens::count(ctxguard::Encoding::O200kBase, &m.content.text())
}

proptest! {
    #![proptest_config(support::proptest_config(16))]

    #[test]
    fn newer_outputs_are_never_shorter_than_older_ones_of_the_same_length(steps in steps(), window in 20_000u32..120_000, exclude in prop::option::of(0..TOOLS.len())) {
        let mut g = guard(window, exclude);
        let wire = session(&steps);
        let req = parse_request(Format::Openai, &Value::Array(wire), None, None).unwrap();
        let out = g.guard_sources(&req, false, &|| 0.0);
        let outputs: Vec<(usize, &Message)> = out.request.messages.iter().filter(|m| m.role == Role::Tool).enumerate().collect();
        prop_assert_eq!(outputs.len(), steps.len(), "every call keeps its result");
        for (i, older) in &outputs {
            for (j, newer) in outputs.iter().filter(|(j, _)| j > i) {
                if steps[*i].lines != steps[*j].lines || Some(steps[*i].tool) == exclude {
                    continue;
                }
                // A stub names its tool and arguments: stubs are compared by form only (a newer
                // output is never cleared while an older one of the same length is not).
                let stub = |m: &Message| m.content.text().starts_with("[ctxguard:cleared-tool-output]");
                prop_assert!(!stub(newer) || stub(older), "output {} is cleared, the older output {} is not", j, i);
                if !stub(newer) && !stub(older) {
                    prop_assert!(tokens(newer) >= tokens(older), "output {} ({} tokens) is shorter than the older output {} ({} tokens)", j, tokens(newer), i, tokens(older));
                }
            }
        }
        // The newest output is whole under its limit (8000 tokens, and the tool outputs' total).
        let (last, m) = outputs.last().unwrap();
        let raw = output(steps[*last].lines);
        if ctxguard::tokens::count(ctxguard::Encoding::O200kBase, &raw) <= 8_000.min((g.budget.usable_limit / 2) as usize) {
            prop_assert_eq!(m.content.text(), raw);
        }
    }

    #[test]
    fn a_growing_session_changes_older_outputs_only_at_clearing_steps(steps in steps(), window in 20_000u32..80_000) {
        let mut g = guard(window, None);
        let wire = session(&steps);
        let mut before: Option<Vec<Message>> = None;
        for n in (4..=wire.len()).step_by(2) {
            let req = parse_request(Format::Openai, &Value::Array(wire[..n].to_vec()), None, None).unwrap();
            let out = g.guard_sources(&req, false, &|| 0.0);
            let step = out.traces.iter().any(|t| t.operation == Operation::ToolOutputClear);
            if let Some(b) = &before {
                let changed = b.iter().zip(&out.request.messages).any(|(x, y)| x.content != y.content);
                prop_assert!(!changed || step, "at {} messages the prefix changed without a clearing step", n);
            }
            before = Some(out.request.messages);
        }
    }
}
