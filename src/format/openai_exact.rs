//! Parsing one OpenAI message for the guard's store (`store.rs`): its key order is remembered
//! (as [`parse_item`] does), and the store learns whether writing the message
//! back gives exactly the wire message (the same tree, key order included).
//!
//! Both questions used to be answered by writing the message back, twice: once to compare key
//! orders, once to compare trees — two copies of its text for every new message, on `measure`'s
//! cold path (docs/performance-notes.md). Here the message is written back once, and not at all when it is *flat*:
//! text content (or `null`), no markers or other fields, and tool calls (if any) that are *plain*:
//! `id`, `type` (`function` or `custom`) and the body (`name` and `arguments` / `input`), nothing
//! else. Such a message writes back as the known fields `id`, `role`, `name`, `tool_call_id`,
//! `content` (those it has, in that order, as `message_to_wire` writes them), then `tool_calls`,
//! each call as `id`, `type`, body with `name` then `arguments` (`tool_call_to_wire`'s order); it
//! is compared with the wire message field by field. When a key order differs anywhere it takes
//! the general path (the order is then remembered and written back in it). `tests` checks both
//! paths against each other.

use serde_json::Value;

use super::openai::{message_to_wire, parse_message};
use super::wire::{self, kind};
use crate::base::error::{Error, ErrorCode, Result};
use crate::message::{Content, Message, ToolCall};

/// Parse an OpenAI `messages` array. Errors name the offending index.
pub fn parse_messages(value: &Value) -> Result<Vec<Message>> {
    let items = value.as_array().ok_or_else(|| {
        Error::new(ErrorCode::InvalidMessages, format!("messages must be an array, got {}", kind(value)))
    })?;
    items.iter().enumerate().map(|(i, item)| parse_item(item, i)).collect()
}

/// Parse one OpenAI message (the `i`-th of its conversation, for errors), remembering its key
/// order for the round trip.
pub fn parse_item(item: &Value, i: usize) -> Result<Message> {
    parse(item, i, false).map(|(m, _)| m)
}

/// Parse the `i`-th message `item` and remember its key order; with `exact`, also whether writing
/// the message back gives exactly `item` (without, `false`).
pub(super) fn parse(item: &Value, i: usize, exact: bool) -> Result<(Message, bool)> {
    let mut m = parse_message(item, i)?;
    if let Some(same) = flat_fields(&m).and_then(|fields| compare_flat(&fields, &m.tool_calls, item)) {
        return Ok((m, exact && same));
    }
    let mut produced = message_to_wire(&m);
    wire::remember_order_in(&mut m.extra, "openai", &mut produced, item);
    Ok((m, exact && same_tree(&produced, item)))
}

/// A written-back field: its key and its value (`None`: `null`).
type Field<'a> = Option<(&'static str, Option<&'a str>)>;

/// The fields before `tool_calls` that a flat message writes back, in `message_to_wire`'s order;
/// `None` when it is not flat (anything in `extra`, bookkeeping included, markers, content parts,
/// a legacy `function_call`, a tool call that is not plain).
fn flat_fields(m: &Message) -> Option<[Field<'_>; 5]> {
    let Content::Text(text) = &m.content else { return None };
    if !m.extra.is_empty()
        || !m.markers.is_empty()
        || m.wire.legacy_function_call
        || !m.tool_calls.iter().all(|c| call_type(c).is_some())
    {
        return None;
    }
    // `message_to_wire`: `null` content when it was null and is empty (no `contentAbsent`
    // bookkeeping: `extra` is empty).
    let content = if m.wire.content_was_null && text.is_empty() { None } else { Some(text.as_str()) };
    Some([
        m.id.as_deref().map(|id| ("id", Some(id))),
        Some(("role", Some(m.wire.role.as_deref().unwrap_or(m.role.as_str())))),
        m.name.as_deref().map(|name| ("name", Some(name))),
        m.tool_call_id.as_deref().map(|id| ("tool_call_id", Some(id))),
        Some(("content", content)),
    ])
}

/// The `type` of a plain tool call (`function` or `custom`: its only other field, as parsed), or
/// `None`. `tool_call_to_wire` writes a plain call as `id`, `type`, then the body (`function` /
/// `custom`) with `name` and `arguments` / `input`.
fn call_type(c: &ToolCall) -> Option<&str> {
    match c.extra.iter().next() {
        Some((k, Value::String(t))) if c.extra.len() == 1 && k == "type" && (t == "function" || t == "custom") => {
            Some(t)
        }
        _ => None,
    }
}

/// `None` when `item` does not have exactly `fields`' keys, then `tool_calls` when there are
/// `calls` (each with exactly a plain call's keys, at every level), in their order (a key order
/// differs, or the shape does); else whether every value is the same.
fn compare_flat(fields: &[Field<'_>], calls: &[ToolCall], item: &Value) -> Option<bool> {
    let Value::Object(map) = item else { return None };
    let mut entries = map.iter();
    let mut same = true;
    for (key, value) in fields.iter().flatten() {
        let (k, v) = entries.next()?;
        if k != key {
            return None;
        }
        same &= match (value, v) {
            (Some(s), Value::String(t)) => s == t,
            (None, Value::Null) => true,
            _ => false,
        };
    }
    if !calls.is_empty() {
        let (k, v) = entries.next()?;
        let Value::Array(items) = v else { return None };
        if k != "tool_calls" || items.len() != calls.len() {
            return None;
        }
        for (c, w) in calls.iter().zip(items) {
            same &= compare_call(c, w)?;
        }
    }
    entries.next().is_none().then_some(same)
}

/// [`compare_flat`] for one plain tool call `c` and its wire value `w`.
fn compare_call(c: &ToolCall, w: &Value) -> Option<bool> {
    let ty = call_type(c)?;
    let (body_key, args_key) = if ty == "custom" { ("custom", "input") } else { ("function", "arguments") };
    let Value::Object(o) = w else { return None };
    let mut entries = o.iter();
    let mut field = |key: &str| entries.next().filter(|(k, _)| *k == key).map(|(_, v)| v);
    let (id, t, body) = (field("id")?, field("type")?, field(body_key)?);
    if entries.next().is_some() {
        return None;
    }
    let Value::Object(body) = body else { return None };
    let mut inner = body.iter();
    let mut field = |key: &str| inner.next().filter(|(k, _)| *k == key).map(|(_, v)| v);
    let (name, args) = (field("name")?, field(args_key)?);
    if inner.next().is_some() {
        return None;
    }
    let is = |v: &Value, s: &str| v.as_str() == Some(s);
    Some(is(id, &c.id) && is(t, ty) && is(name, &c.name) && is(args, &c.arguments))
}

/// `a == b` with object keys in the same order.
pub(crate) fn same_tree(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((ka, va), (kb, vb))| ka == kb && same_tree(va, vb))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(va, vb)| same_tree(va, vb)),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    /// What parsing did before: write the message back to compare key orders, then again
    /// (in the remembered order) to compare trees.
    fn reference(item: &Value) -> Result<(Message, bool)> {
        let mut m = parse_message(item, 3)?;
        let produced = message_to_wire(&m);
        wire::remember_order(&mut m.extra, "openai", &produced, item);
        let exact = same_tree(&message_to_wire(&m), item);
        Ok((m, exact))
    }

    /// Every order of `o`'s keys.
    fn orders(o: &Map<String, Value>) -> Vec<Value> {
        fn go(rest: Vec<(String, Value)>, done: Map<String, Value>, out: &mut Vec<Value>) {
            if rest.is_empty() {
                out.push(Value::Object(done));
                return;
            }
            for k in 0..rest.len() {
                let mut rest = rest.clone();
                let (key, v) = rest.remove(k);
                let mut done = done.clone();
                done.insert(key, v);
                go(rest, done, out);
            }
        }
        let mut out = Vec::new();
        go(o.iter().map(|(k, v)| (k.clone(), v.clone())).collect(), Map::new(), &mut out);
        out
    }

    #[test]
    fn same_as_writing_back_twice() {
        let bases = [
            json!({"role": "user", "content": "hello"}),
            json!({"role": "user", "content": ""}),
            json!({"role": "assistant", "content": null}),
            json!({"role": "assistant", "content": ""}),
            json!({"role": "assistant"}),
            json!({"role": "function", "name": "f", "content": null}),
            json!({"role": "function", "name": "f", "content": "out"}),
            json!({"role": "developer", "content": "be brief"}),
            json!({"id": "m1", "role": "tool", "tool_call_id": "c1", "content": "result", "name": "t"}),
            json!({"id": 7, "role": "user", "content": "x"}),
            json!({"role": "user", "name": null, "content": "x"}),
            json!({"role": "user", "content": "x", "extra": {"b": 1, "a": 2}}),
            json!({"role": "user", "content": "x", "ctxguard": {"pinned": true}}),
            json!({"role": "user", "content": "x", "ctxguard": {}}),
            json!({"role": "user", "content": [{"text": "a", "type": "text"}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"function": {"arguments": "{}", "name": "f"}, "type": "function", "id": "c"}]}),
            json!({"role": "assistant", "content": "", "tool_calls": []}),
            json!({"role": "assistant", "content": null, "function_call": {"name": "f", "arguments": "{}"}}),
            json!({"role": "user", "content": "x", "n": 1.0}),
            // Tool calls: plain ones (each call's and body's keys in every order listed), and
            // ones with more or fewer fields, or other types.
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
            json!({"role": "assistant", "content": "calling", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}, {"id": "d", "type": "custom", "custom": {"name": "g", "input": "x"}}]}),
            json!({"id": "m", "role": "assistant", "content": "", "tool_calls": [{"type": "function", "id": "c", "function": {"name": "f", "arguments": "{}"}}]}),
            json!({"role": "assistant", "name": "bot", "content": null, "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}, "type": "function"}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"arguments": "{}", "name": "f"}}]}),
            json!({"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
            json!({"id": "m", "role": "assistant", "name": "bot", "content": "日本 🎉", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}, {"id": "d", "type": "function", "function": {"name": "f", "arguments": ""}}, {"id": "", "type": "custom", "custom": {"name": "", "input": "\u{0}"}}]}),
            json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}", "strict": true}}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}, "index": 0}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "custom", "custom": {"input": "x", "name": "g"}}, {"id": "d", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}], "ctxguard": {"pinned": true}}),
            json!({"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "a"}], "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
            // Errors: both ways alike.
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": 1, "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": "f"}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "other", "function": {"name": "f", "arguments": "{}"}}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {}}}]}),
            json!({"role": "assistant", "content": null, "tool_calls": {"id": "c"}}),
            json!({"role": "user"}),
            json!({"role": "tool", "content": "no call id"}),
            json!({"role": 1, "content": "x"}),
            json!("not an object"),
        ];
        let (mut checked, mut with_calls_in_place) = (0, 0);
        for base in &bases {
            let items = match base {
                Value::Object(o) => orders(o),
                other => vec![other.clone()],
            };
            for item in items {
                if let Ok(m) = parse_message(&item, 3) {
                    if !m.tool_calls.is_empty()
                        && flat_fields(&m).and_then(|f| compare_flat(&f, &m.tool_calls, &item)).is_some()
                    {
                        with_calls_in_place += 1;
                    }
                }
                let want = reference(&item);
                for exact in [true, false] {
                    match (&want, parse(&item, 3, exact)) {
                        (Ok((m, e)), Ok((m2, e2))) => {
                            assert_eq!(m, &m2, "{item}");
                            assert_eq!(m.extra, m2.extra, "{item}");
                            assert_eq!(*e && exact, e2, "{item} exact={exact}");
                        }
                        (Err(a), Err(b)) => assert_eq!((a.code, &a.message, a.index), (b.code, &b.message, b.index)),
                        (a, b) => panic!("{item}: {a:?} vs {b:?}"),
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 700, "{checked}");
        // Each plain base in its own key order (one of its orders).
        assert_eq!(with_calls_in_place, 4);
    }

    #[test]
    fn plain_tool_calls_are_compared_without_writing() {
        let item = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]});
        let Ok(m) = parse_message(&item, 0) else { panic!("parses") };
        let compare = |other: &Value| flat_fields(&m).and_then(|f| compare_flat(&f, &m.tool_calls, other));
        assert_eq!(compare(&item), Some(true));
        let other = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{ }"}}]});
        assert_eq!(compare(&other), Some(false));
        let reordered = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"arguments": "{}", "name": "f"}}]});
        assert_eq!(compare(&reordered), None);
        let two = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}, {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]});
        assert_eq!(compare(&two), None);
    }

    #[test]
    fn flat_messages_are_compared_without_writing() {
        let item = json!({"role": "user", "content": "hello"});
        let Ok(m) = parse_message(&item, 0) else { panic!("parses") };
        assert_eq!(flat_fields(&m).and_then(|f| compare_flat(&f, &m.tool_calls, &item)), Some(true));
        let other = json!({"role": "user", "content": "hellO"});
        assert_eq!(flat_fields(&m).and_then(|f| compare_flat(&f, &m.tool_calls, &other)), Some(false));
        let reordered = json!({"content": "hello", "role": "user"});
        assert_eq!(flat_fields(&m).and_then(|f| compare_flat(&f, &m.tool_calls, &reordered)), None);
    }
}
