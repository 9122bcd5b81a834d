//! Layer 1 as a whole: guard_sources over real-looking requests in both formats, traces,
//! fair attachment shares and the paged reader.

use crate::support::{clock, doc, guard};
use ctxguard::format::{parse_request, write_request, Format};
use ctxguard::report::trace::{Operation, Status};
use ctxguard::sources::attachment::{self, fair_shares};
use ctxguard::sources::reader;
use ctxguard::tokens::{count, Encoding};
use serde_json::{json, Value};

fn log(lines: usize) -> String {
    (0..lines).map(|i| format!("{i:04} PASS tests::case_{i} ({} ms)\n", i % 97)).collect()
}

fn openai_request() -> Value {
    json!([
        {"role": "system", "content": "You are a build assistant."},
        {"role": "user", "content": format!("Here is the spec <attachment id=\"spec\" name=\"spec.md\" type=\"text/markdown\">{}</attachment> and notes <attachment name=\"notes.txt\" type=\"text/plain\">short notes</attachment>", doc(20_000, "spec"))},
        {"role": "user", "content": [
            {"type": "text", "text": "And the report:"},
            {"type": "file", "file": {"filename": "report.pdf", "file_id": "file-abc"}, "text": doc(30_000, "報告")}
        ]},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}},
            {"id": "call_2", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": log(5_000)},
        {"role": "tool", "tool_call_id": "call_2", "content": "Cargo.toml\nsrc\n"},
        {"role": "user", "content": "Why did it fail?"}
    ])
}

#[test]
fn tool_outputs_and_attachments_are_guarded_with_traces() {
    let wire = openai_request();
    let before = wire.clone();
    let req = parse_request(Format::Openai, &wire, None, None).unwrap();
    let mut g = guard(json!({"model": "gpt-4o", "retrievalTool": "get_output"}));
    let raw = g.measure(&req);
    let out = g.guard_sources(&req, false, &clock);
    assert_eq!(wire, before, "input untouched");
    assert!(out.metrics.used_tokens < raw.used_tokens);
    assert!(out.metrics.compacted);
    assert_eq!(out.traces.len(), 2);
    let t = &out.traces[0];
    assert_eq!((t.operation, t.status), (Operation::ToolOutput, Status::Applied));
    assert_eq!(t.messages_truncated, Some(1));
    assert_eq!(t.emergency, Some(false));
    assert_eq!(t.tokens_saved, t.before_tokens - t.after_tokens);
    let a = &out.traces[1];
    assert_eq!((a.operation, a.status), (Operation::AttachmentPreview, Status::Applied));
    assert_eq!(a.attachment_blocks, Some(3));
    assert_eq!(a.attachment_blocks_truncated, Some(2));
    assert!(a.after_tokens <= 16_000 + 3 * 10, "{}", a.after_tokens);
    // what the model sees
    let (_, msgs) = write_request(Format::Openai, &out.request);
    let tool = msgs[4]["content"].as_str().unwrap();
    assert!(
        tool.contains("[ctxguard:compacted-tool-output]") && tool.contains("get_output") && tool.contains("call_1")
    );
    assert!(count(Encoding::O200kBase, tool) <= 8_000);
    assert_eq!(msgs[5]["content"], "Cargo.toml\nsrc\n");
    let user = msgs[1]["content"].as_str().unwrap();
    assert!(user.contains("short notes"), "the small attachment stays whole");
    assert!(user.contains("[ctxguard:attachment-preview] spec.md (text/markdown)"));
    assert!(user.contains("read_attachment({\"id\": \"spec\""));
    assert!(user.ends_with("</attachment>"));
    let file_text = msgs[2]["content"][1]["text"].as_str().unwrap();
    assert!(file_text.contains("report.pdf (unknown type)") || file_text.contains("report.pdf"));
    assert!(
        file_text.contains("extracted from a binary file"),
        "PDF gets the binary hint: {}",
        &file_text[file_text.len() - 400..]
    );
    assert!(file_text.contains("\"file-abc\""));
    assert_eq!(msgs[6], before[6]);
}

#[test]
fn guarding_twice_changes_nothing_and_is_byte_stable() {
    let wire = openai_request();
    let req = parse_request(Format::Openai, &wire, None, None).unwrap();
    let mut g = guard(json!({"model": "gpt-4o"}));
    let once = g.guard_sources(&req, false, &clock);
    let again = g.guard_sources(&once.request, false, &clock);
    let w1 = serde_json::to_string(&write_request(Format::Openai, &once.request).1).unwrap();
    let w2 = serde_json::to_string(&write_request(Format::Openai, &again.request).1).unwrap();
    assert_eq!(w1, w2);
    // no tool-output event when nothing changed; the attachment event stays (blocks exist)
    assert_eq!(again.traces.len(), 1);
    assert_eq!((again.traces[0].operation, again.traces[0].status), (Operation::AttachmentPreview, Status::Noop));
    let fresh = guard(json!({"model": "gpt-4o"})).guard_sources(&req, false, &clock);
    assert_eq!(serde_json::to_string(&write_request(Format::Openai, &fresh.request).1).unwrap(), w1);
}

#[test]
fn no_events_without_work() {
    let wire = json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]);
    let req = parse_request(Format::Openai, &wire, None, None).unwrap();
    let out = guard(json!({"model": "gpt-4o"})).guard_sources(&req, false, &clock);
    assert!(out.traces.is_empty());
}

#[test]
fn anthropic_tool_results_are_compacted_in_place() {
    let wire = json!([
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tu_1", "name": "bash", "input": {"cmd": "make"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu_1", "content": log(6_000)},
            {"type": "text", "text": "what happened?"}
        ]}
    ]);
    let req = parse_request(Format::Anthropic, &wire, Some(&json!("Be terse.")), None).unwrap();
    let mut g = guard(json!({"model": "claude-sonnet-4-5", "toolOutputLimits": {"bash": 2000}}));
    let out = g.guard_sources(&req, false, &clock);
    let (system, msgs) = write_request(Format::Anthropic, &out.request);
    assert_eq!(system, Some(json!("Be terse.")));
    let block = &msgs[2]["content"][0];
    assert_eq!(block["type"], "tool_result");
    let text = block["content"].as_str().unwrap();
    assert!(text.contains("[ctxguard:compacted-tool-output]"));
    // the per-tool limit is in Claude tokens: the o200k count stays under 2000 / factor
    assert!(count(Encoding::O200kBase, text) as f64 <= 2_000.0 / g.model.estimate_factor + 1.0);
    assert_eq!(msgs[2]["content"][1]["text"], "what happened?");
}

#[test]
fn emergency_pass_is_tighter() {
    let wire = json!([
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "x", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": log(5_000)}
    ]);
    let req = parse_request(Format::Openai, &wire, None, None).unwrap();
    let mut g = guard(json!({"model": "gpt-4o"}));
    let normal = g.guard_sources(&req, false, &clock);
    let emergency = g.guard_sources(&normal.request, true, &clock);
    assert!(emergency.metrics.used_tokens < normal.metrics.used_tokens);
    assert_eq!(emergency.traces[0].emergency, Some(true));
    assert!(count(Encoding::O200kBase, emergency.request.messages[1].content.text().as_str()) <= 2_000);
}

#[test]
fn shares_are_fair_and_previews_fit_them() {
    assert_eq!(fair_shares(&[500, 40_000, 90_000], 10_000), vec![500, 4_750, 4_750]);
    let found = attachment::Found::standalone("a".into(), Some("a.csv".into()), Some("text/csv".into()), 0, 0);
    let text = doc(50_000, "row,");
    let p = attachment::preview(Encoding::O200kBase, &text, &found, 1_000);
    assert!(count(Encoding::O200kBase, &p) <= 1_000);
    assert!(p.contains("Read more with read_attachment"));
    assert!(!p.contains("binary"));
}

#[test]
fn reader_pages_cover_the_text_exactly_with_non_ascii() {
    let text = format!("{}🙂 emoji and Zürich — {}", doc(3_000, "中文"), "end");
    let total = count(Encoding::O200kBase, &text);
    let mut offset = 0;
    let mut joined = String::new();
    let mut pages = 0;
    loop {
        let p = reader::read(Encoding::O200kBase, "x", &text, offset, Some(700)).unwrap();
        assert_eq!(p.total_tokens as usize, total);
        assert!(count(Encoding::O200kBase, &p.text) <= 700 + 2);
        joined.push_str(&p.text);
        pages += 1;
        match p.next_offset {
            Some(n) => offset = n as usize,
            None => break,
        }
    }
    assert_eq!(joined, text);
    assert_eq!(pages, total.div_ceil(700));
    assert_eq!(
        reader::read(Encoding::O200kBase, "x", &text, total + 5, None).unwrap_err().code.as_str(),
        "INVALID_OPTIONS"
    );
    assert!(reader::read(Encoding::O200kBase, "x", &text, 0, Some(0)).is_err());
    assert!(reader::read(Encoding::O200kBase, "x", &text, 0, Some(9_000)).is_err());
    let empty = reader::read(Encoding::O200kBase, "e", "", 0, None).unwrap();
    assert_eq!((empty.text.as_str(), empty.next_offset), ("", None));
    let def = reader::tool_definition(Format::Anthropic);
    assert_eq!(def["name"], "read_attachment");
    assert_eq!(def["input_schema"]["required"][0], "id");
    assert_eq!(reader::tool_definition(Format::Openai)["function"]["name"], "read_attachment");
}

#[test]
fn older_outputs_change_only_at_clearing_steps_and_newer_ones_are_never_shorter() {
    // 160 turns of one long output each, far over the tool outputs' total: clearing by age
    // keeps the newest whole, compacts the next ones and clears the oldest — in steps, so that
    // between two steps the older outputs stay byte-identical (the provider's prompt cache and
    // the guard's memo stay valid).
    let turn = |i: usize| {
        vec![
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{i}"), "type": "function", "function": {"name": "sh", "arguments": format!("{{\"cmd\":\"run {i}\"}}")}}]}),
            json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": format!("run {i}\n{}", log(200))}),
        ]
    };
    // The tool outputs' total makes a step due under `edits: 'trigger'` (by default only the
    // request's size does: tests/core/edits.rs).
    let mut g =
        guard(json!({"model": "gpt-4o", "toolOutputTotal": 60_000, "retrievalTool": "get_output", "edits": "trigger"}));
    let mut wire: Vec<Value> = vec![json!({"role": "user", "content": "go"})];
    let mut before: Option<ctxguard::guard::SourcesOutcome> = None;
    let (mut changed_turns, mut step_turns) = (0, 0);
    for i in 0..160 {
        wire.extend(turn(i));
        let after = g.guard_sources(
            &parse_request(Format::Openai, &Value::Array(wire.clone()), None, None).unwrap(),
            false,
            &clock,
        );
        let step = after.traces.iter().any(|t| t.operation == Operation::ToolOutputClear);
        for t in after.traces.iter().filter(|t| t.operation == Operation::ToolOutputClear) {
            // Before and after: the aged outputs' tokens.
            assert!(t.after_tokens > 0 && t.before_tokens == t.after_tokens + t.tokens_saved, "turn {i}: {t:?}");
        }
        if let Some(b) = &before {
            let same = b
                .request
                .messages
                .iter()
                .zip(&after.request.messages)
                .filter(|(x, y)| x.content == y.content && x.tool_calls == y.tool_calls)
                .count();
            if same < b.request.messages.len() {
                changed_turns += 1;
                assert!(step, "turn {i}: older outputs changed without a clearing step");
            }
        }
        step_turns += usize::from(step);
        // Over the total a step is due; it is taken once it saves at least `clearAtLeast`
        // (min(20000, protected / 2) = 16742 here), so the outputs not cleared pass the total
        // by less than that (the stubs are notes, outside the total).
        let live: usize = after
            .request
            .messages
            .iter()
            .filter(|m| m.role == ctxguard::Role::Tool && !m.content.text().starts_with("[ctxguard:cleared"))
            .map(|m| count(Encoding::O200kBase, &m.content.text()))
            .sum();
        assert!(live <= 60_000 + 16_742 + 3_000, "turn {i}: {live}");
        before = Some(after);
    }
    let last = before.unwrap();
    assert!((3..=40).contains(&changed_turns), "older outputs changed on {changed_turns} of 160 turns");
    assert_eq!(changed_turns, step_turns);
    // The newest output whole; each output at least as long as any older one (all are the same
    // size raw); the oldest cleared to a stub that names the call and the way back.
    let outputs: Vec<String> =
        last.request.messages.iter().filter(|m| m.role == ctxguard::Role::Tool).map(|m| m.content.text()).collect();
    assert_eq!(outputs.last().unwrap(), &format!("run 159\n{}", log(200)));
    let sizes: Vec<usize> = outputs.iter().map(|t| count(Encoding::O200kBase, t)).collect();
    assert!(sizes.windows(2).all(|w| w[0] <= w[1]), "newer outputs are never shorter: {sizes:?}");
    assert!(outputs[0].starts_with("[ctxguard:cleared-tool-output] sh(cmd=run 0) returned"), "{}", outputs[0]);
    assert!(outputs[0].ends_with("Full output: call `get_output` with {\"id\": \"c0\"}."), "{}", outputs[0]);
    assert!(last.metrics.clearing.cleared > 50 && last.metrics.clearing.compacted > 10, "{:?}", last.metrics.clearing);
    assert!(last.metrics.clearing.saved_tokens > 0);
}

#[test]
fn a_guard_given_another_conversation_plans_it_from_scratch() {
    // Clearing's frontiers belong to the conversation they were found in: a guard that guarded
    // one conversation guards the next (a page that loads another file) as a new guard would.
    let conversation = |prefix: &str, turns: usize| {
        let mut wire = vec![json!({"role": "user", "content": "go"})];
        for i in 0..turns {
            wire.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("{prefix}{i}"), "type": "function", "function": {"name": "sh", "arguments": "{}"}}]}));
            let lines = 20 + (i * 37) % 300;
            wire.push(json!({"role": "tool", "tool_call_id": format!("{prefix}{i}"), "content": format!("run {i}\n{}", log(lines))}));
        }
        parse_request(Format::Openai, &Value::Array(wire), None, None).unwrap()
    };
    let (small, large) = (conversation("s", 3), conversation("l", 400));
    for cfg in [json!({"model": "gpt-4o"}), json!({"model": "gpt-4o", "edits": "trigger"})] {
        let fresh = guard(cfg.clone()).guard_sources(&large, false, &clock);
        assert!(fresh.traces.iter().any(|t| t.operation == Operation::ToolOutputClear), "{cfg}: clearing happens");
        let mut g = guard(cfg.clone());
        g.guard_sources(&small, false, &clock);
        let after = g.guard_sources(&large, false, &clock);
        assert_eq!(after.request.messages, fresh.request.messages, "{cfg}");
        assert_eq!(after.metrics.used_tokens, fresh.metrics.used_tokens, "{cfg}");
    }
}

#[test]
fn a_short_output_is_never_replaced_by_a_longer_stub() {
    // A cleared output becomes a stub naming the call and the way back (~40 tokens): an output
    // shorter than that ("ok", a denial) stays as it is, in every band.
    let mut wire = vec![json!({"role": "user", "content": "go"})];
    for i in 0..200 {
        wire.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{i}"), "type": "function", "function": {"name": "sh", "arguments": format!("{{\"cmd\":\"run {i}\"}}")}}]}));
        let out = if i % 2 == 0 { format!("run {i}\n{}", log(200)) } else { "ok".to_string() };
        wire.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": out}));
    }
    let mut g = guard(json!({"model": "gpt-4o", "retrievalTool": "get_output"}));
    let out = g.guard_sources(&parse_request(Format::Openai, &Value::Array(wire), None, None).unwrap(), false, &clock);
    let outputs: Vec<String> =
        out.request.messages.iter().filter(|m| m.role == ctxguard::Role::Tool).map(|m| m.content.text()).collect();
    assert!(outputs[0].starts_with("[ctxguard:cleared-tool-output]"), "the oldest long output is cleared");
    for (i, o) in outputs.iter().enumerate().filter(|(i, _)| i % 2 == 1) {
        assert_eq!(o, "ok", "output {i}");
    }
    // What clearing reports as cleared is what it replaced.
    let stubs = outputs.iter().filter(|o| o.starts_with("[ctxguard:cleared")).count();
    assert_eq!(out.metrics.clearing.cleared as usize, stubs);
}
