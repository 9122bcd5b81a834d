//! Mutating any field of a realistic request (OpenAI, Anthropic, AI SDK, Responses or Gemini) to
//! any odd value — or removing it — either gives a typed error or parses into messages that
//! `to_wire` writes back exactly: never a panic, never a silently changed request. Key orders are
//! shuffled too.

use ctxguard::format::{ai_sdk, anthropic, openai, parse_request, responses, write_request, Format};
use serde_json::{json, Map, Value};

use crate::support::fixtures::{ai_sdk_fixture, anthropic_fixture, gemini_fixture, openai_fixture, responses_fixture};

/// Every path (object keys / array indexes) in `v` down to `depth`.
fn paths(v: &Value, depth: usize, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    if depth == 0 {
        return;
    }
    let children: Vec<(Value, &Value)> = match v {
        Value::Object(m) => m.iter().map(|(k, x)| (json!(k), x)).collect(),
        Value::Array(a) => a.iter().enumerate().map(|(k, x)| (json!(k), x)).collect(),
        _ => return,
    };
    for (step, x) in children {
        prefix.push(step);
        out.push(prefix.clone());
        paths(x, depth - 1, prefix, out);
        prefix.pop();
    }
}

/// `v` with the value at `path` replaced (`Some`) or removed (`None`).
fn mutate(v: &Value, path: &[Value], new: Option<&Value>) -> Value {
    let mut out = v.clone();
    let (last, init) = path.split_last().unwrap();
    let mut cur = &mut out;
    for step in init {
        cur = match step {
            Value::String(k) => cur.get_mut(k.as_str()).unwrap(),
            _ => cur.get_mut(step.as_u64().unwrap() as usize).unwrap(),
        };
    }
    match (cur, last, new) {
        (Value::Object(m), Value::String(k), Some(n)) => {
            m.insert(k.clone(), n.clone());
        }
        (Value::Object(m), Value::String(k), None) => {
            m.shift_remove(k.as_str());
        }
        (Value::Array(a), idx, Some(n)) => a[idx.as_u64().unwrap() as usize] = n.clone(),
        (Value::Array(a), idx, None) => {
            a.remove(idx.as_u64().unwrap() as usize);
        }
        _ => unreachable!(),
    }
    out
}

fn oddities() -> Vec<Option<Value>> {
    vec![
        None,
        Some(Value::Null),
        Some(json!(0)),
        Some(json!(-1.5)),
        Some(json!(true)),
        Some(json!("")),
        Some(json!("text")),
        Some(json!([])),
        Some(json!([1])),
        Some(json!({})),
        Some(json!({"type": "text", "text": "x"})),
    ]
}

/// Reverse the key order of every object of `v` whose path hash picks it (deterministic).
fn shuffle_keys(v: &Value, seed: u64) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m
                .iter()
                .map(|(k, x)| (k.clone(), shuffle_keys(x, seed.wrapping_mul(31).wrapping_add(k.len() as u64))))
                .collect();
            if seed % 3 != 0 {
                entries.reverse();
            }
            if seed % 2 == 0 && entries.len() > 2 {
                entries.rotate_left(1);
            }
            Value::Object(entries.into_iter().collect::<Map<String, Value>>())
        }
        Value::Array(a) => {
            Value::Array(a.iter().enumerate().map(|(i, x)| shuffle_keys(x, seed.wrapping_add(i as u64 * 7))).collect())
        }
        other => other.clone(),
    }
}

/// `Ok(true)`: accepted and written back exactly; `Ok(false)`: rejected with an error.
type Check = fn(&Value) -> Result<bool, String>;

/// `Ok(true)` when `back` is `input` to the byte.
fn exact(back: &Value, input: &Value) -> Result<bool, String> {
    let (a, b) = (serde_json::to_string(back).unwrap(), serde_json::to_string(input).unwrap());
    if a == b {
        Ok(true)
    } else {
        Err(format!("wrote\n{a}\nfor\n{b}"))
    }
}

fn check_openai(input: &Value) -> Result<bool, String> {
    match ctxguard::format::parse_openai_messages(input) {
        Ok(m) => exact(&Value::Array(openai::to_wire(&m)), input),
        Err(e) if e.message.starts_with("messages") => Ok(false),
        Err(e) => Err(format!("error without message path: {e}")),
    }
}

fn check_anthropic(input: &Value) -> Result<bool, String> {
    let system = input.get("system");
    let Some(messages) = input.get("messages") else { return Ok(false) };
    match anthropic::parse_messages(messages, system) {
        Ok(m) => {
            let (sys_back, back) = anthropic::to_wire(&m);
            let want = (system.filter(|s| !s.is_null()).map(|s| s.to_string()), messages.to_string());
            let got = (sys_back.map(|s| s.to_string()), Value::Array(back).to_string());
            if want == got {
                Ok(true)
            } else {
                Err(format!("wrote\n{got:?}\nfor\n{want:?}"))
            }
        }
        Err(e) if e.message.starts_with("messages") || e.message.starts_with("system") => Ok(false),
        Err(e) => Err(format!("error without message path: {e}")),
    }
}

fn check_ai_sdk(input: &Value) -> Result<bool, String> {
    match ai_sdk::parse_messages(input) {
        Ok(m) => {
            // System messages are written into `system`; the fixture has its one first.
            let (system, messages) = ai_sdk::to_wire(&m);
            let mut all = system.and_then(|s| s.as_array().cloned()).unwrap_or_default();
            all.extend(messages);
            exact(&Value::Array(all), input)
        }
        Err(e) if e.message.starts_with("messages") => Ok(false),
        Err(e) => Err(format!("error without message path: {e}")),
    }
}

fn check_responses(input: &Value) -> Result<bool, String> {
    match responses::parse_messages(input) {
        Ok(m) => {
            let (system, items) = responses::to_wire(&m);
            if system.is_some() {
                return Err("instructions written from input items".into());
            }
            exact(&Value::Array(items), input)
        }
        Err(e) if e.message.starts_with("messages") => Ok(false),
        Err(e) => Err(format!("error without message path: {e}")),
    }
}

fn check_gemini(input: &Value) -> Result<bool, String> {
    let system = input.get("system");
    let Some(messages) = input.get("messages") else { return Ok(false) };
    match parse_request(Format::Gemini, messages, system, None) {
        Ok(r) => {
            let (sys_back, back) = write_request(Format::Gemini, &r);
            let want = (system.filter(|s| !s.is_null()).map(|s| s.to_string()), messages.to_string());
            let got = (sys_back.map(|s| s.to_string()), Value::Array(back).to_string());
            if want == got {
                Ok(true)
            } else {
                Err(format!("wrote\n{got:?}\nfor\n{want:?}"))
            }
        }
        Err(e) if e.message.starts_with("messages") || e.message.starts_with("system") => Ok(false),
        Err(e) => Err(format!("error without message path: {e}")),
    }
}

fn run(base: &Value, check: Check) {
    let mut accepted = 0;
    let mut rejected = 0;
    let mut failures = Vec::new();
    let mut all = Vec::new();
    paths(base, 7, &mut Vec::new(), &mut all);
    for path in &all {
        for odd in oddities() {
            let input = mutate(base, path, odd.as_ref());
            match check(&input) {
                Ok(true) => accepted += 1,
                Ok(false) => rejected += 1,
                Err(e) => failures.push(format!("{path:?} -> {odd:?}: {e}")),
            }
        }
    }
    assert_ne!(shuffle_keys(base, 1).to_string(), base.to_string(), "shuffling must reorder keys");
    for seed in 0..40 {
        match check(&shuffle_keys(base, seed)) {
            Ok(true) => accepted += 1,
            Ok(false) => panic!("shuffled keys rejected (seed {seed})"),
            Err(e) => failures.push(format!("shuffle seed {seed}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures, first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n\n")
    );
    assert!(accepted > 100 && rejected > 100, "{accepted} accepted, {rejected} rejected");
}

#[test]
fn openai_mutations_are_errors_or_exact_round_trips() {
    run(&openai_fixture(), check_openai);
}

#[test]
fn anthropic_mutations_are_errors_or_exact_round_trips() {
    run(&anthropic_fixture(), check_anthropic);
}

#[test]
fn ai_sdk_mutations_are_errors_or_exact_round_trips() {
    run(&ai_sdk_fixture(), check_ai_sdk);
}

#[test]
fn responses_mutations_are_errors_or_exact_round_trips() {
    run(&responses_fixture(), check_responses);
}

#[test]
fn gemini_mutations_are_errors_or_exact_round_trips() {
    run(&gemini_fixture(), check_gemini);
}
