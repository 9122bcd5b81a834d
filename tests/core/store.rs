//! The id-keyed message store behind the binding's fast `measure`: the same metrics as the plain
//! path in both formats, only new messages parsed, memory following the live conversation.

use crate::support;
use ctxguard::format::{parse_request, Format};
use ctxguard::guard::store::Fresh;
use ctxguard::guard::Guard;
use ctxguard::ErrorCode;
use serde_json::{json, Value};

fn guard(model: &str, format: &str) -> Guard {
    support::guard(json!({ "model": model, "format": format, "checkpointKey": "k" }))
}

fn openai_chat(turns: usize) -> Vec<Value> {
    let mut v = vec![json!({"role": "system", "content": "You are a build assistant."})];
    for i in 0..turns {
        v.push(json!({"role": "user", "content": format!("Q{i}: why does module {i} fail? 为什么失败？")}));
        v.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{i}"), "type": "function", "function": {"name": "run_tests", "arguments": format!("{{\"module\":\"m{i}\"}}")}}]}));
        v.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": format!("{}FAILED at step {i}\n", "log line\n".repeat(40))}));
        v.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("Module {i} fails at step {i}.")}]}));
    }
    v
}

fn anthropic_chat(turns: usize) -> Vec<Value> {
    let mut v = Vec::new();
    for i in 0..turns {
        v.push(json!({"role": "user", "content": format!("Q{i}: what is in file {i}?")}));
        v.push(json!({"role": "assistant", "content": [{"type": "text", "text": "Reading it."}, {"type": "tool_use", "id": format!("t{i}"), "name": "read", "input": {"path": format!("f{i}")}}]}));
        v.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": "line\n".repeat(30)}, {"type": "text", "text": "and?"}]}));
    }
    v
}

/// A client that keeps its message ids: ids 1..=n for the first n messages, fresh ones after.
fn all_fresh(msgs: &[Value], first_id: u32) -> (Vec<u32>, Vec<Fresh>) {
    let ids: Vec<u32> = (0..msgs.len() as u32).map(|i| first_id + i).collect();
    let fresh =
        msgs.iter().enumerate().map(|(i, v)| Fresh { id: first_id + i as u32, index: i, value: v.clone() }).collect();
    (ids, fresh)
}

fn plain(
    g: &mut Guard,
    format: Format,
    msgs: &[Value],
    system: Option<&Value>,
    tools: Option<&Value>,
) -> serde_json::Value {
    let req = parse_request(format, &Value::Array(msgs.to_vec()), system, tools).unwrap();
    serde_json::to_value(g.measure(&req)).unwrap()
}

#[test]
fn same_metrics_as_the_plain_path_in_both_formats() {
    let tools = json!([{"type": "function", "function": {"name": "run_tests", "description": "Run the tests", "parameters": {"type": "object", "properties": {"module": {"type": "string"}}}}}]);
    for (model, format, fmt, msgs, system) in [
        ("gpt-4o", "openai", Format::Openai, openai_chat(30), None),
        ("gpt-4o", "openai", Format::Openai, openai_chat(30), Some(json!("Be brief."))),
        ("claude-sonnet-4-5", "anthropic", Format::Anthropic, anthropic_chat(30), Some(json!("You read files."))),
    ] {
        let tools = if format == "openai" { Some(tools.clone()) } else { None };
        let mut fast = guard(model, format);
        let mut slow = guard(model, format);
        let (ids, fresh) = all_fresh(&msgs, 1);
        let a = fast.measure_ids(&ids, &fresh, 1, system.as_ref(), tools.as_ref()).unwrap().unwrap();
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            plain(&mut slow, fmt, &msgs, system.as_ref(), tools.as_ref()),
            "{model} {format}"
        );
        // One more message: only it is new; the ids of the others are reused.
        let mut grown = msgs.clone();
        grown.push(json!({"role": "user", "content": "And now? 现在呢？"}));
        let mut ids2 = ids.clone();
        ids2.push(1000);
        let fresh2 = [Fresh { id: 1000, index: grown.len() - 1, value: grown.last().unwrap().clone() }];
        let b = fast.measure_ids(&ids2, &fresh2, 2, system.as_ref(), tools.as_ref()).unwrap().unwrap();
        assert_eq!(
            serde_json::to_value(&b).unwrap(),
            plain(&mut slow, fmt, &grown, system.as_ref(), tools.as_ref()),
            "{model} {format} grown"
        );
        assert!(b.used_tokens > a.used_tokens);
    }
}

#[test]
fn edits_unknown_ids_errors_and_eviction() {
    let msgs = openai_chat(5);
    let mut g = guard("gpt-4o", "openai");
    let (ids, fresh) = all_fresh(&msgs, 1);
    g.measure_ids(&ids, &fresh, 1, None, None).unwrap().unwrap();
    assert_eq!(g.store.len(), msgs.len());
    // An id the store never saw: None (the binding sends the call again in full).
    assert!(g.measure_ids(&[1, 2, 999], &[], 2, None, None).unwrap().is_none());
    // A bad new message is an error naming its index, and the store is unchanged.
    let bad = [Fresh { id: 50, index: 3, value: json!({"role": "wizard", "content": "x"}) }];
    let err = g.measure_ids(&[1, 2, 3, 50], &bad, 3, None, None).unwrap_err();
    assert_eq!((err.code, err.index), (ErrorCode::InvalidRole, Some(3)));
    assert_eq!(g.store.len(), msgs.len());
    // With an unknown id too, the answer is None before any fresh message is parsed (the call
    // sent again in full then reports the bad one).
    assert!(g.measure_ids(&[1, 999, 50], &bad, 3, None, None).unwrap().is_none());
    assert_eq!(g.store.len(), msgs.len());
    // A message edited in place comes back under a new id: the old entry is dropped once unused.
    g.measure_ids(&ids, &[], 4, None, None).unwrap().unwrap();
    let mut edited = msgs.clone();
    edited[1] = json!({"role": "user", "content": "Q0, rephrased at length: ".repeat(20)});
    let mut ids2 = ids.clone();
    ids2[1] = 60;
    let m =
        g.measure_ids(&ids2, &[Fresh { id: 60, index: 1, value: edited[1].clone() }], 5, None, None).unwrap().unwrap();
    assert_eq!(
        serde_json::to_value(&m).unwrap(),
        plain(&mut guard("gpt-4o", "openai"), Format::Openai, &edited, None, None)
    );
    assert_eq!(g.store.len(), msgs.len() + 1, "the old entry survives one call");
    g.measure_ids(&ids2, &[], 6, None, None).unwrap().unwrap();
    assert_eq!(g.store.len(), msgs.len(), "and is dropped after two");
    // A different conversation on the same guard: the first one's entries go.
    let other = anthropic_like_openai();
    let (ids3, fresh3) = all_fresh(&other, 100);
    g.measure_ids(&ids3, &fresh3, 7, None, None).unwrap().unwrap();
    g.measure_ids(&ids3, &[], 8, None, None).unwrap().unwrap();
    assert_eq!(g.store.len(), other.len());
}

fn anthropic_like_openai() -> Vec<Value> {
    vec![json!({"role": "user", "content": "hi"}), json!({"role": "assistant", "content": "hello"})]
}

#[cfg(not(target_arch = "wasm32"))] // proptest is a native-only dev-dependency
mod edits {
    //! Property: whatever a host does to its conversation between calls — append, edit in place,
    //! delete, reorder, resend an old message — `measure_ids` (given the ids a host-side memo
    //! would give: a new id for every new or changed message) equals `measure` on the whole.
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Push(u8, String),
        Edit(usize, String),
        Remove(usize),
        Swap(usize, usize),
    }

    fn message(kind: u8, text: &str, n: usize) -> Value {
        match kind % 5 {
            0 => json!({"role": "user", "content": text}),
            1 => json!({"role": "assistant", "content": text}),
            2 => json!({"role": "system", "content": text}),
            3 => {
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{n}"), "type": "function", "function": {"name": "grep", "arguments": format!("{{\"q\":{:?}}}", text)}}]})
            }
            _ => {
                json!({"role": "tool", "tool_call_id": format!("c{n}"), "content": format!("{text}\n[ctxguard:compacted-tool-output] maybe\n{text}")})
            }
        }
    }

    fn op() -> impl Strategy<Value = Op> {
        let text = "[a-z 中文🙂<>\\[\\]]{0,40}";
        prop_oneof![
            4 => (any::<u8>(), text).prop_map(|(k, t)| Op::Push(k, t)),
            2 => (any::<usize>(), text).prop_map(|(i, t)| Op::Edit(i, t)),
            1 => any::<usize>().prop_map(Op::Remove),
            1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Swap(a, b)),
        ]
    }

    proptest! {
        #![proptest_config(crate::support::proptest_config(64))]

        #[test]
        fn measure_ids_equals_measure_after_any_edits(ops in prop::collection::vec(op(), 1..40), tools in any::<bool>()) {
            let tools = tools.then(|| json!([{"type": "function", "function": {"name": "grep", "parameters": {"type": "object"}}}]));
            let mut fast = guard("gpt-4o", "openai");
            let mut slow = guard("gpt-4o", "openai");
            // The conversation as the host holds it: (id, message); a changed message gets a new id.
            let mut conv: Vec<(u32, Value)> = Vec::new();
            let mut next = 1u32;
            let mut known: std::collections::HashSet<u32> = std::collections::HashSet::new();
            for (call, op) in ops.into_iter().enumerate() {
                let n = conv.len();
                match op {
                    Op::Push(k, t) => { conv.push((next, message(k, &t, next as usize))); next += 1; }
                    Op::Edit(i, t) if n > 0 => { let i = i % n; let k = (i % 2) as u8; conv[i] = (next, message(k, &t, next as usize)); next += 1; }
                    Op::Remove(i) if n > 0 => { conv.remove(i % n); }
                    Op::Swap(a, b) if n > 0 => conv.swap(a % n, b % n),
                    _ => {}
                }
                let ids: Vec<u32> = conv.iter().map(|(id, _)| *id).collect();
                // What the memo sends: messages whose id the store has not seen in the last calls.
                let fresh: Vec<Fresh> = conv.iter().enumerate().filter(|(_, (id, _))| !known.contains(id))
                    .map(|(i, (id, v))| Fresh { id: *id, index: i, value: v.clone() }).collect();
                let wire: Vec<Value> = conv.iter().map(|(_, v)| v.clone()).collect();
                let call = call as u64 + 1;
                let got = fast.measure_ids(&ids, &fresh, call, None, tools.as_ref()).unwrap();
                let got = match got {
                    Some(m) => m,
                    // An id the store dropped (unused for two calls): the binding resends all.
                    None => {
                        let all: Vec<Fresh> = conv.iter().enumerate().map(|(i, (id, v))| Fresh { id: *id, index: i, value: v.clone() }).collect();
                        fast.measure_ids(&ids, &all, call, None, tools.as_ref()).unwrap().unwrap()
                    }
                };
                prop_assert_eq!(serde_json::to_value(&got).unwrap(), plain(&mut slow, Format::Openai, &wire, None, tools.as_ref()));
                known = ids.into_iter().collect();
            }
        }
    }
}

/// `lend_ids` moves the stored pieces into the request instead of copying them: the request is
/// the one `assemble_ids` gives (the same message twice, an Anthropic message at a new position
/// included), calls needing lent pieces are refused until `give_back`, `measure_ids` still
/// answers, and afterwards the store is whole again.
#[test]
fn lent_pieces_are_the_assembled_ones_and_come_back() {
    for (model, format, msgs) in
        [("gpt-4o", "openai", openai_chat(6)), ("claude-sonnet-4-5", "anthropic", anthropic_chat(6))]
    {
        let mut g = guard(model, format);
        let (ids, fresh) = all_fresh(&msgs, 1);
        let whole = g.assemble_ids(&ids, &fresh, 1, None, None).unwrap().unwrap();
        // the first message dropped (every Anthropic piece moves), and the last message twice
        let mut moved: Vec<u32> = ids[1..].to_vec();
        moved.push(*ids.last().unwrap());
        for (call, ids) in [(2, ids.clone()), (3, moved.clone()), (4, ids.clone())] {
            let copied = g.assemble_ids(&ids, &[], call, None, None).unwrap().unwrap();
            let metrics = serde_json::to_value(g.measure_ids(&ids, &[], call, None, None).unwrap().unwrap()).unwrap();
            let mut lent = g.lend_ids(&ids, &[], call, None, None).unwrap().unwrap();
            assert_eq!(lent.request.messages, copied.request.messages);
            let origins = |r: &ctxguard::format::Request| r.messages.iter().map(|m| m.origin.0).collect::<Vec<_>>();
            assert_eq!(origins(&lent.request), origins(&copied.request));
            assert_eq!((&lent.spans, &lent.owner), (&copied.spans, &copied.owner));
            assert!(!lent.lent.is_empty());
            // while lent: refused for a request, answered for measure
            assert!(g.assemble_ids(&ids, &[], call, None, None).unwrap().is_none());
            assert!(g.lend_ids(&ids, &[], call, None, None).unwrap().is_none());
            assert_eq!(
                serde_json::to_value(g.measure_ids(&ids, &[], call, None, None).unwrap().unwrap()).unwrap(),
                metrics
            );
            let request = std::mem::take(&mut lent.request);
            g.give_back(request, &mut lent);
            assert!(lent.lent.is_empty());
            let again = g.assemble_ids(&ids, &[], call, None, None).unwrap().unwrap();
            assert_eq!(again.request.messages, copied.request.messages);
        }
        assert_eq!(g.assemble_ids(&ids, &[], 5, None, None).unwrap().unwrap().request.messages, whole.request.messages);
    }
}
