//! Provider artifacts through `prepare` (docs/edits.md, "Provider artifacts"): OpenAI's
//! `compaction` and encrypted `reasoning` items, Anthropic's `compaction` blocks and signed
//! thinking, Gemini's thought signatures. Each history is built from the provider's documented
//! shapes and goes through `prepare` without an edit and with one (clearing, the emergency
//! layer); what comes back is checked against what the provider accepts.

use ctxguard::format::{parse_request, write_request, Format};
use ctxguard::pipeline::{Outcome, PrepareOptions, Step};
use serde_json::{json, Value};

use crate::support::{clock, doc, guard};

/// `prepare` of `messages` (and `system`) in `format`; a summarizer is never asked here.
fn prepare(cfg: Value, format: Format, messages: &[Value], system: Option<&Value>) -> (Outcome, Vec<Value>) {
    let mut g = guard(cfg);
    let req = parse_request(format, &Value::Array(messages.to_vec()), system, None).unwrap();
    let o = match ctxguard::pipeline::prepare_start(&mut g, &req, &PrepareOptions::default(), &clock).unwrap() {
        Step::Done(o) => *o,
        Step::Summarize(_) => panic!("a history with a provider compaction is not summarized by ctxguard"),
        Step::AwaitAhead => unreachable!(),
    };
    let (_, sent) = write_request(format, &ctxguard::pipeline::model_visible_for(o.request.clone(), o.notes_as_user));
    (o, sent)
}

/// An OpenAI Responses history: an old exchange, the `compaction` item the API returned
/// (`{ id, type, encrypted_content }`), then `pairs` rounds of a reasoning item, its
/// function call and the call's output (`out_tokens` each), and a last user message.
fn responses(pairs: usize, out_tokens: usize) -> Vec<Value> {
    let mut items = vec![
        json!({"role": "user", "content": "Start the migration."}),
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": doc(400, "old")}]}),
        json!({"id": "cmp_01", "type": "compaction", "encrypted_content": "gAAAAB".repeat(300)}),
    ];
    for i in 0..pairs {
        items.push(json!({"id": format!("rs_{i}"), "type": "reasoning", "summary": [], "encrypted_content": format!("enc{i}").repeat(40)}));
        items.push(json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"), "name": "read_file", "arguments": format!("{{\"path\":\"src/m{i}.rs\"}}")}));
        items.push(json!({"type": "function_call_output", "call_id": format!("call_{i}"), "output": doc(out_tokens, &format!("file {i}"))}));
    }
    items.push(json!({"role": "user", "content": "What is left?"}));
    items
}

/// Every reasoning item is followed by the item it produced, as the Responses API requires.
fn reasoning_paired(items: &[Value]) {
    for (i, it) in items.iter().enumerate() {
        if it["type"] == "reasoning" {
            let next = items.get(i + 1).unwrap_or_else(|| panic!("reasoning item {i} ends the input"));
            assert_eq!(next["type"], "function_call", "reasoning item {i} without its call");
        }
        if it["type"] == "function_call_output" {
            let id = &it["call_id"];
            assert!(
                items.iter().take(i).any(|c| c["type"] == "function_call" && &c["call_id"] == id),
                "output {id} without its call"
            );
        }
    }
}

#[test]
fn a_responses_compaction_item_starts_the_input_and_reasoning_stays_with_its_call() {
    let items = responses(40, 60);
    // No edit: the input starts at the compaction item; the items before it are what the
    // compaction replaced, and everything after it comes back unchanged.
    let (o, sent) =
        prepare(json!({"model": "gpt-5", "format": "openai-responses"}), Format::OpenaiResponses, &items, None);
    assert_eq!(sent, items[2..].to_vec());
    assert_eq!(o.dropped_messages, 0);
    // With edits: a window the 40 outputs do not fit. Old outputs are cleared, the compaction
    // item stays first and whole, each reasoning item stays before its call.
    let cfg =
        json!({"model": "gpt-5", "format": "openai-responses", "contextWindow": 12000, "reservedOutputTokens": 2000});
    let (o, sent) = prepare(cfg, Format::OpenaiResponses, &responses(40, 400), None);
    assert!(o.metrics.used_tokens <= 10_000, "{} tokens", o.metrics.used_tokens);
    assert_eq!(sent.first(), Some(&items[2]), "the compaction item first, unchanged");
    reasoning_paired(&sent);
    assert!(sent
        .iter()
        .filter(|i| i["type"] == "reasoning")
        .all(|r| r["encrypted_content"].as_str().is_some_and(|e| e.starts_with("enc"))));
    assert_eq!(sent.last(), items.last(), "the latest question");
}

/// An Anthropic history: old turns, an assistant turn that starts with the `compaction` block
/// the API returned (threshold compaction: `{ type, content }`; on-demand: with a signature),
/// then tool rounds with signed thinking.
fn anthropic(rounds: usize, out_tokens: usize, signed: bool) -> Vec<Value> {
    let mut block =
        json!({"type": "compaction", "content": "Summary of the conversation: the user migrates the orders table."});
    if signed {
        block["signature"] = json!("EuYBCkQYAiJAsig");
    }
    let mut m = vec![
        json!({"role": "user", "content": doc(300, "before")}),
        json!({"role": "assistant", "content": [{"type": "text", "text": doc(300, "answer")}]}),
        json!({"role": "user", "content": "Go on."}),
        json!({"role": "assistant", "content": [block, {"type": "text", "text": "Continuing with step 2."}]}),
    ];
    for i in 0..rounds {
        m.push(json!({"role": "user", "content": format!("Check table {i}.")}));
        m.push(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "", "signature": format!("sig{i}")},
            {"type": "tool_use", "id": format!("toolu_{i}"), "name": "sql", "input": {"q": format!("select count(*) from t{i}")}}
        ]}));
        m.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": doc(out_tokens, &format!("rows {i}"))}]}));
    }
    m.push(json!({"role": "user", "content": "Done?"}));
    m
}

#[test]
fn an_anthropic_compaction_block_starts_the_messages_and_is_never_summarized() {
    let system = json!("You migrate databases.");
    for signed in [false, true] {
        let history = anthropic(12, 50, signed);
        // No edit: the messages start at the block's turn (a signed block refuses anything in
        // front of it); the system prompt is unchanged.
        let (o, sent) = prepare(
            json!({"model": "claude-sonnet-4-5", "format": "anthropic"}),
            Format::Anthropic,
            &history,
            Some(&system),
        );
        assert_eq!(sent, history[3..].to_vec(), "signed: {signed}");
        assert_eq!(o.request.messages.first().map(|m| m.role), Some(ctxguard::message::Role::System));
        // With edits: far over a small window. No summary is asked (the provider compacts this
        // conversation); old results are cleared, the block's turn stays first and whole.
        let cfg = json!({"model": "claude-sonnet-4-5", "format": "anthropic", "contextWindow": 8000, "reservedOutputTokens": 1000});
        let history = anthropic(12, 900, signed);
        let (o, sent) = prepare(cfg, Format::Anthropic, &history, Some(&system));
        assert!(o.metrics.used_tokens <= 7000, "{} tokens", o.metrics.used_tokens);
        assert_eq!(sent.first(), Some(&history[3]), "signed: {signed}");
        assert_eq!(sent.last(), history.last());
        for (i, m) in sent.iter().enumerate() {
            for b in m["content"].as_array().into_iter().flatten().filter(|b| b["type"] == "tool_result") {
                let id = &b["tool_use_id"];
                let prev = sent.get(i.wrapping_sub(1)).expect("a result after its call");
                assert!(
                    prev["content"]
                        .as_array()
                        .is_some_and(|c| c.iter().any(|u| u["type"] == "tool_use" && &u["id"] == id)),
                    "{id}"
                );
            }
        }
    }
}

#[test]
fn a_preserved_thinking_model_keeps_the_compaction_block_first() {
    // Claude 5.x binds thinking to its prefix; the checked prefix starts at the latest
    // compaction block, so what came before it may go without invalidating anything.
    let system = json!("You migrate databases.");
    let history = anthropic(6, 50, true);
    let (o, sent) = prepare(
        json!({"model": "claude-sonnet-5-5", "format": "anthropic"}),
        Format::Anthropic,
        &history,
        Some(&system),
    );
    assert_eq!(sent, history[3..].to_vec());
    assert_eq!(o.metrics.edits.thinking.as_ref().map_or(0, |t| t.dropped), 0);
}

/// A Gemini history whose model turns carry signed function calls (`thoughtSignature` on the
/// `functionCall` part, as Gemini 3 returns them).
fn gemini(rounds: usize, out_tokens: usize) -> Vec<Value> {
    let mut c = vec![json!({"role": "user", "parts": [{"text": "Audit the service."}]})];
    for i in 0..rounds {
        c.push(json!({"role": "model", "parts": [
            {"functionCall": {"name": "read_log", "args": {"file": format!("svc{i}.log"), "lines": doc(40, &format!("args {i}"))}}, "thoughtSignature": format!("c2ln{i}")}
        ]}));
        c.push(json!({"role": "user", "parts": [{"functionResponse": {"name": "read_log", "response": {"output": doc(out_tokens, &format!("log {i}"))}}}]}));
    }
    c.push(json!({"role": "user", "parts": [{"text": "Summarize the findings."}]}));
    c
}

#[test]
fn gemini_signed_calls_keep_their_signature_and_arguments() {
    let contents = gemini(10, 40);
    let (_, sent) =
        prepare(json!({"model": "gemini-3-pro-preview", "format": "gemini"}), Format::Gemini, &contents, None);
    assert_eq!(sent, contents);
    // With edits: old responses are cleared; every signed call keeps its signature and its
    // arguments, and stays before its response.
    // (`clearArguments`: cleared calls lose their arguments, except the signed ones.)
    let cfg = json!({"model": "gemini-3-pro-preview", "format": "gemini", "contextWindow": 9000, "reservedOutputTokens": 1000,
        "clearToolOutputs": {"clearArguments": true}});
    let contents = gemini(10, 1200);
    let (o, sent) = prepare(cfg, Format::Gemini, &contents, None);
    assert!(o.metrics.used_tokens <= 8000, "{} tokens", o.metrics.used_tokens);
    assert!(
        o.traces.iter().any(|t| t.operation == ctxguard::report::trace::Operation::ToolOutput),
        "something was cleared"
    );
    for (i, m) in sent.iter().enumerate() {
        for p in m["parts"].as_array().into_iter().flatten() {
            if let Some(call) = p.get("functionCall") {
                let original = contents
                    .iter()
                    .flat_map(|c| c["parts"].as_array().into_iter().flatten())
                    .find(|q| q["thoughtSignature"] == p["thoughtSignature"]);
                assert_eq!(original.map(|q| &q["functionCall"]), Some(call), "a signed call is sent as it came");
                assert!(
                    sent.get(i + 1).is_some_and(|r| r["parts"][0].get("functionResponse").is_some()),
                    "its response follows"
                );
            }
        }
    }
}

#[test]
fn deferred_tools_count_once_a_tool_reference_loads_them() {
    // Anthropic's tool search: every tool is sent, the deferred ones enter the context when a
    // `tool_reference` block names them.
    let schema = |i: usize| json!({"type": "object", "properties": {"query": {"type": "string", "description": doc(120, &format!("tool {i}"))}}});
    let mut tools = vec![json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"})];
    for i in 0..5 {
        tools.push(json!({"name": format!("crm_{i}"), "description": format!("CRM tool {i}"), "input_schema": schema(i), "defer_loading": true}));
    }
    let eager = |t: &Value| {
        let mut t = t.clone();
        t.as_object_mut().unwrap().remove("defer_loading");
        t
    };
    let mut g = guard(json!({"model": "claude-sonnet-4-5", "format": "anthropic"}));
    let mut count = |messages: &Value, tools: &Value| {
        let req = parse_request(Format::Anthropic, messages, None, Some(tools)).unwrap();
        g.count(&req).total
    };
    let before = json!([{"role": "user", "content": "Find the customer Acme."}]);
    let none_loaded = count(&before, &Value::Array(tools.clone()));
    let only_search = count(&before, &Value::Array(tools[..1].to_vec()));
    assert_eq!(none_loaded, only_search, "deferred tools are not in the context");
    // Tool search found crm_2: its definition now counts, the others still do not.
    let after = json!([
        {"role": "user", "content": "Find the customer Acme."},
        {"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_regex", "input": {"query": "crm"}},
            {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {"type": "tool_search_tool_search_result", "tool_references": [{"type": "tool_reference", "tool_name": "crm_2"}]}}
        ]}
    ]);
    let loaded = count(&after, &Value::Array(tools.clone()));
    let expected = count(&after, &json!([tools[0].clone(), eager(&tools[3])]));
    assert_eq!(loaded, expected, "crm_2 counts as a tool definition once referenced");
    assert!(count(&after, &Value::Array(tools.iter().map(eager).collect())) > loaded + 400);
}

/// `measure` reads what the provider reads: from the latest compaction on, with the system
/// messages before it. A meter fed by `measure` on the full history shows the context `prepare`
/// sends, not the history the compaction replaced.
#[test]
fn measure_starts_at_the_latest_compaction_as_prepare_does() {
    let system = json!("You migrate databases.");
    let responses_cfg = json!({"model": "gpt-5", "format": "openai-responses"});
    measured_from_compaction(responses_cfg, Format::OpenaiResponses, &responses(6, 200), None, 2);
    let anthropic_cfg = json!({"model": "claude-sonnet-4-5", "format": "anthropic"});
    measured_from_compaction(anthropic_cfg, Format::Anthropic, &anthropic(6, 200, true), Some(&system), 3);
}

/// `measure` of `history` equals `measure` of `history[start..]` (what the provider reads) and
/// `prepare`'s metrics.
fn measured_from_compaction(cfg: Value, format: Format, history: &[Value], system: Option<&Value>, start: usize) {
    let full = parse_request(format, &Value::Array(history.to_vec()), system, None).unwrap();
    let read = parse_request(format, &Value::Array(history[start..].to_vec()), system, None).unwrap();
    let of_full = guard(cfg.clone()).measure(&full);
    let of_read = guard(cfg.clone()).measure(&read);
    assert_eq!(of_full.used_tokens, of_read.used_tokens, "{format:?}");
    assert_eq!(of_full.message_count, of_read.message_count, "{format:?}");
    assert_eq!(of_full.breakdown, of_read.breakdown, "{format:?}");
    let (o, sent) = prepare(cfg, format, history, system);
    assert_eq!(sent, history[start..].to_vec());
    assert_eq!(o.metrics.used_tokens, of_full.used_tokens, "{format:?}: prepare and measure agree");
    // The history before the compaction is large: counted, it would be most of the total.
    let without = parse_request(format, &Value::Array(history[..start].to_vec()), system, None).unwrap();
    assert!(guard(json!({"model": "gpt-5"})).measure(&without).used_tokens > 300);
}
