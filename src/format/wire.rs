//! Helpers shared by the wire adapters: exact round trips (key order, null vs absent), ctxguard
//! markers, and error wording.
//!
//! The internal model keeps unknown fields in `extra` maps, but a few facts needed to write a
//! message back *byte for byte* have no field in [`crate::message::Wire`]. Until they do, the
//! adapters keep them in `extra` under the reserved key [`WIRE_INFO_KEY`], an object that is
//! present only when needed and is never written to the wire:
//!
//! - `order.openai` / `order.anthropic`: a skeleton of the wire message's key order (objects
//!   keep their keys, nested objects/arrays their own skeleton, scalars become `null`), stored
//!   only when the canonical key order the adapter writes differs from the input's.
//! - `contentAbsent` (OpenAI): the message had no `content` key at all (`wire.content_was_null`
//!   covers `null` and absent alike).
//! - `ctxguard`: the original `ctxguard` object, when it was not exactly the canonical
//!   serialization of the markers it holds (unknown keys, `false` values, other order). Written
//!   back as is while the markers are unchanged.
//! - `message` (Anthropic): message-level fields of a user message that consisted only of
//!   `tool_result` blocks (and so became only `Tool` messages whose own `extra` holds the
//!   blocks' fields).
//! - `typeAbsent` (OpenAI, in a `ToolCall`'s `extra`): the tool call had no `type` on the wire.
//! - `partBlocks` (Anthropic): on the user part of a split message, the block positions of its
//!   blocks, stored only when tool results sat between them (they are otherwise consecutive
//!   from `wire.block`).

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::base::error::{Error, ErrorCode, Result};
use crate::message::{Extra, Markers, Message, Part, ToolCall};

/// The values of `placed` in the order of their `(position, tie)` keys, equal keys kept in
/// their order (what a stable sort gives). Through `sort::sort_pairs`, the one sort
/// instance the crate keeps for this: the key is `(position, tie << 32 | index)`, unique thanks
/// to the index; `tie` (0 or 1, or a place in the run) and the index are below the run's length,
/// which is below 2^32 (a wasm32 address space cannot hold more values).
pub(crate) fn in_place_order(placed: Vec<(usize, usize, Value)>) -> Vec<Value> {
    let mut keyed: Vec<(u64, u64)> =
        placed.iter().enumerate().map(|(i, &(pos, tie, _))| (pos as u64, ((tie as u64) << 32) | i as u64)).collect();
    crate::base::sort::sort_pairs(&mut keyed);
    let mut values: Vec<Option<Value>> = placed.into_iter().map(|(_, _, v)| Some(v)).collect();
    keyed.into_iter().filter_map(|(_, k)| values.get_mut((k & 0xFFFF_FFFF) as usize).and_then(Option::take)).collect()
}

pub use crate::message::{PART_BLOCKS_KEY, WIRE_INFO_KEY};

/// Wire key of ctxguard's markers object on a message.
pub const MARKERS_KEY: &str = "ctxguard";

/// Key-order skeletons go this deep; values below are copied verbatim (and so keep their order).
const ORDER_DEPTH: usize = 8;

/// A request's `tools`: `null` is none, an array is read item by item with `parse(tool, k)` (the
/// tools each item declares), anything else is an `INVALID_TOOL` error.
pub(crate) fn tool_list<T, I: IntoIterator<Item = T>>(
    value: &Value,
    parse: impl Fn(&Value, usize) -> Result<I>,
) -> Result<Vec<T>> {
    let items = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        other => {
            return Err(Error::new(ErrorCode::InvalidTool, format!("tools must be an array, got {}", kind(other))))
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (k, t) in items.iter().enumerate() {
        out.extend(parse(t, k)?);
    }
    Ok(out)
}

/// The `INVALID_TOOL` error of `tools[k]`.
pub(crate) fn tool_error(k: usize, text: impl std::fmt::Display) -> Error {
    Error { code: ErrorCode::InvalidTool, message: format!("tools[{k}]: {text}"), index: Some(k) }
}

/// "a string", "an array"... for error messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Skeleton of the key order of `v` (see module docs).
pub(crate) fn skeleton(v: &Value) -> Value {
    skeleton_at(v, 0)
}

fn skeleton_at(v: &Value, depth: usize) -> Value {
    if depth >= ORDER_DEPTH {
        return Value::Null;
    }
    match v {
        Value::Object(map) => Value::Object(map.iter().map(|(k, x)| (k.clone(), skeleton_at(x, depth + 1))).collect()),
        Value::Array(items) if items.iter().any(|x| x.is_object() || x.is_array()) => {
            Value::Array(items.iter().map(|x| skeleton_at(x, depth + 1)).collect())
        }
        _ => Value::Null,
    }
}

/// Whether every object in `a` has the same keys in the same order as its counterpart in `b`
/// (down to the skeleton depth). Values themselves are not compared.
pub(crate) fn same_order(a: &Value, b: &Value) -> bool {
    same_order_at(a, b, 0)
}

fn same_order_at(a: &Value, b: &Value, depth: usize) -> bool {
    if depth >= ORDER_DEPTH {
        return true;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().zip(y.iter()).all(|((ka, va), (kb, vb))| ka == kb && same_order_at(va, vb, depth + 1))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(va, vb)| same_order_at(va, vb, depth + 1))
        }
        _ => true,
    }
}

/// Reorder the keys of `v` (recursively) as in `skeleton`; keys the skeleton does not know keep
/// their relative order after the known ones.
pub(crate) fn apply_order(v: &mut Value, skeleton: &Value) {
    match (v, skeleton) {
        (Value::Object(map), Value::Object(sk)) => {
            let mut entries: Vec<Option<(String, Value)>> = std::mem::take(map).into_iter().map(Some).collect();
            let mut out = Map::new();
            for (key, sub) in sk {
                let slot = entries.iter_mut().find(|e| matches!(e, Some((k, _)) if k == key));
                if let Some((k, mut value)) = slot.and_then(Option::take) {
                    apply_order(&mut value, sub);
                    out.insert(k, value);
                }
            }
            for (k, value) in entries.into_iter().flatten() {
                out.insert(k, value);
            }
            *map = out;
        }
        (Value::Array(items), Value::Array(sks)) => {
            for (item, sub) in items.iter_mut().zip(sks) {
                apply_order(item, sub);
            }
        }
        _ => {}
    }
}

/// `a == b` including key order.
pub(crate) fn identical(a: &Value, b: &Value) -> bool {
    a == b && same_order_at(a, b, 0)
}

/// Reserved bookkeeping entry `key` of a message's `extra`.
pub(crate) fn info<'a>(extra: &'a Extra, key: &str) -> Option<&'a Value> {
    extra.get(WIRE_INFO_KEY)?.as_object()?.get(key)
}

/// Set reserved bookkeeping entry `key` in a message's `extra`.
pub(crate) fn set_info(extra: &mut Extra, key: &str, value: Value) {
    if let Some(Value::Object(info)) = extra.get_mut(WIRE_INFO_KEY) {
        info.insert(key.to_string(), value);
        return;
    }
    let mut info = Map::new();
    info.insert(key.to_string(), value);
    extra.insert(WIRE_INFO_KEY.to_string(), Value::Object(info));
}

/// Record the key order of `wire` on a message whose canonical output `produced` differs in order.
/// `format` (`"openai"` / `"anthropic"`) keeps one format's order from being applied to the other.
pub(crate) fn remember_order(extra: &mut Extra, format: &str, produced: &Value, wire: &Value) {
    if !same_order(produced, wire) {
        set_info(extra, &format!("order.{format}"), skeleton(wire));
    }
}

/// [`remember_order`], and `produced` put in the recorded order: it is then what writing the
/// message back gives (`restore_order`).
pub(crate) fn remember_order_in(extra: &mut Extra, format: &str, produced: &mut Value, wire: &Value) {
    if !same_order(produced, wire) {
        let sk = skeleton(wire);
        apply_order(produced, &sk);
        set_info(extra, &format!("order.{format}"), sk);
    }
}

/// Apply a key order remembered for `format`, if any.
pub(crate) fn restore_order(extra: &Extra, format: &str, v: &mut Value) {
    // Most messages keep no bookkeeping: then no key is built (`format!` on every message written
    // made the formatting machinery hot, and V8 compiled it during a cold `measure`).
    let Some(Value::Object(all)) = extra.get(WIRE_INFO_KEY) else { return };
    if let Some(sk) = all.get(&format!("order.{format}")) {
        apply_order(v, sk);
    }
}

/// Markers from a wire `ctxguard` object (`true` flags under their camelCase names; anything
/// else is ignored). `None` when it is not an object.
pub(crate) fn markers_from(v: &Value) -> Option<Markers> {
    let map = v.as_object()?;
    let flag = |k: &str| map.get(k).and_then(Value::as_bool).unwrap_or(false);
    Some(Markers {
        summary_compacted: flag("summaryCompacted"),
        checkpoint_retained: flag("checkpointRetained"),
        pinned: flag("pinned"),
        compacted_tool_output: flag("compactedToolOutput"),
    })
}

/// Canonical wire form of markers: only the set flags, in declaration order.
pub(crate) fn markers_value(m: &Markers) -> Value {
    let mut map = Map::new();
    for (set, key) in [
        (m.summary_compacted, "summaryCompacted"),
        (m.checkpoint_retained, "checkpointRetained"),
        (m.pinned, "pinned"),
        (m.compacted_tool_output, "compactedToolOutput"),
    ] {
        if set {
            map.insert(key.to_string(), Value::Bool(true));
        }
    }
    Value::Object(map)
}

/// Parse a wire `ctxguard` value into markers, remembering the original object in `extra` when
/// the canonical form would not reproduce it (or would be omitted, for empty markers). `Err(kind)` when it is not an object.
pub(crate) fn parse_markers(v: &Value, extra: &mut Extra) -> std::result::Result<Markers, &'static str> {
    let markers = markers_from(v).ok_or_else(|| kind(v))?;
    // Empty markers write nothing, so an empty (or all-false) object must be remembered too.
    if markers.is_empty() || !identical(&markers_value(&markers), v) {
        set_info(extra, MARKERS_KEY, v.clone());
    }
    Ok(markers)
}

/// The `ctxguard` value to write for `markers`: the remembered original while it still says
/// the same, else the canonical form, else nothing when no marker is set.
pub(crate) fn markers_out(markers: &Markers, extra: &Extra) -> Option<Value> {
    if let Some(original) = info(extra, MARKERS_KEY) {
        if markers_from(original).as_ref() == Some(markers) {
            return Some(original.clone());
        }
    }
    if markers.is_empty() {
        None
    } else {
        Some(markers_value(markers))
    }
}

/// Copy a message's `extra` into `out` after the fields already written, skipping reserved
/// bookkeeping and keys `out` already has.
pub(crate) fn append_extra(out: &mut Map<String, Value>, extra: &Extra) {
    for (k, v) in extra {
        if k != WIRE_INFO_KEY && !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
}

/// Copy the fields of a part, tool call or nested object into `out` after the fields already
/// written, skipping keys `out` already has (those hold nested containers' own fields).
pub(crate) fn append_fields(out: &mut Map<String, Value>, fields: &Extra) {
    for (k, v) in fields {
        if !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
}

/// The entries of `o` except `skip`, in order.
pub(crate) fn rest(o: &Map<String, Value>, skip: &[&str]) -> Extra {
    o.iter().filter(|(k, _)| !skip.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// A one-entry object `{ key: value }`.
pub(crate) fn typed(key: &str, value: &str) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert(key.to_string(), Value::String(value.to_string()));
    o
}

/// A `u32` size hint (`width` / `height`) from a map.
pub(crate) fn u32_hint(map: &Map<String, Value>, key: &str) -> Option<u32> {
    map.get(key)?.as_u64().and_then(|n| u32::try_from(n).ok())
}

/// Combine host hints with the size read from the image header: a hint wins for its dimension.
pub(crate) fn image_dims(
    hint_w: Option<u32>,
    hint_h: Option<u32>,
    header: impl FnOnce() -> Option<(u32, u32)>,
) -> (Option<u32>, Option<u32>) {
    if let (Some(w), Some(h)) = (hint_w, hint_h) {
        return (Some(w), Some(h));
    }
    match header() {
        Some((w, h)) => (hint_w.or(Some(w)), hint_h.or(Some(h))),
        None => (hint_w, hint_h),
    }
}

/// Media type of a `data:` URL (`data:application/pdf;base64,...` → `application/pdf`).
pub(crate) fn data_url_media_type(url: &str) -> Option<String> {
    let head = url.get(..5)?;
    if !head.eq_ignore_ascii_case("data:") {
        return None;
    }
    let rest = url.get(5..)?;
    let end = rest.find([';', ','])?;
    let mt = rest.get(..end)?.trim();
    if mt.is_empty() {
        None
    } else {
        Some(mt.to_ascii_lowercase())
    }
}

/// Media types whose files are text the model reads as such.
pub(crate) fn is_text_media(media_type: &str) -> bool {
    let mt = media_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    mt == "text"
        || mt.starts_with("text/")
        || mt.ends_with("+json")
        || mt.ends_with("+xml")
        || matches!(
            mt.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/x-ndjson"
                | "application/ndjson"
                | "application/csv"
                | "application/sql"
                | "application/x-sh"
        )
}

/// The base64 body of a `data:...;base64,` URL.
pub(crate) fn data_url_base64(url: &str) -> Option<&str> {
    let head = url.get(..5)?;
    if !head.eq_ignore_ascii_case("data:") {
        return None;
    }
    let comma = url.find(',')?;
    let header = url.get(5..comma)?;
    if !header.split(';').any(|p| p.trim().eq_ignore_ascii_case("base64")) {
        return None;
    }
    url.get(comma + 1..)
}

/// The UTF-8 text base64 `b64` encodes (padded or not), if it is text.
pub(crate) fn decode_text(b64: &str) -> Option<String> {
    let engine = &base64::engine::general_purpose::STANDARD;
    let bytes = engine
        .decode(b64.trim())
        .ok()
        .or_else(|| base64::engine::general_purpose::STANDARD_NO_PAD.decode(b64.trim().trim_end_matches('=')).ok())?;
    String::from_utf8(bytes).ok()
}

/// `text` as padded base64.
pub(crate) fn encode_text(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text.as_bytes())
}

/// Content parts written with `part`, each tool call (written with `call`) at the position of its
/// `Part::ToolCallRef` (once), then the calls no ref points at (Anthropic `tool_use` blocks, AI
/// SDK `tool-call` parts).
pub(crate) fn interleave_calls(
    parts: &[Part],
    calls: &[ToolCall],
    part: impl Fn(&Part) -> Option<Value>,
    call: impl Fn(&ToolCall) -> Value,
) -> Vec<Value> {
    let mut used = vec![false; calls.len()];
    let mut out = Vec::with_capacity(parts.len() + calls.len());
    for p in parts {
        if let Part::ToolCallRef { index } = p {
            if let (Some(c), Some(flag)) = (calls.get(*index), used.get_mut(*index)) {
                if !*flag {
                    *flag = true;
                    out.push(call(c));
                }
            }
        } else if let Some(v) = part(p) {
            out.push(v);
        }
    }
    out.extend(calls.iter().zip(&used).filter(|(_, used)| !**used).map(|(c, _)| call(c)));
    out
}

/// One wire message per run of consecutive messages that `same_run(first, next)` puts together
/// (tool results merged into one wire message), written with `write`.
pub(crate) fn write_runs<T>(
    messages: &[&Message],
    same_run: impl Fn(&Message, &Message) -> bool,
    write: impl Fn(&[&Message]) -> T,
) -> Vec<T> {
    let mut out = Vec::with_capacity(messages.len());
    let mut start = 0;
    while let Some(first) = messages.get(start) {
        let mut end = start + 1;
        while messages.get(end).is_some_and(|next| same_run(first, next)) {
            end += 1;
        }
        if let Some(run) = messages.get(start..end) {
            out.push(write(run));
        }
        start = end;
    }
    out
}

/// How a message is tied to its neighbours beyond tool-call pairs, so that pair sanitation
/// (`pipeline::sanitize`) keeps or drops them together. Recorded by the adapters under the
/// bookkeeping keys `leads`, `follows` and `callsTogether`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ties {
    /// This message must reach the model followed by exactly this many messages marked
    /// `follows` (a Responses `reasoning` item and the items of the same output after it).
    pub leads: usize,
    /// This message belongs to the bundle of the nearest `leads` message before it.
    pub follows: bool,
    /// The calls of this message stand or fall together: this many of them were there when it
    /// was read (Gemini: a thought signature on the first call signs the parallel calls after it).
    pub calls_together: usize,
}

/// The ties of a message (none for most messages).
pub fn ties(m: &Message) -> Ties {
    let Some(Value::Object(all)) = m.extra.get(WIRE_INFO_KEY) else { return Ties::default() };
    let count = |k: &str| all.get(k).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
    Ties {
        leads: count("leads"),
        follows: all.get("follows").and_then(Value::as_bool).unwrap_or(false),
        calls_together: count("callsTogether"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_place_order_is_the_stable_sort() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for round in 0..300_u64 {
            let placed: Vec<(usize, usize, Value)> = (0..round % 25)
                .map(|i| {
                    let pos = if next(6) == 0 { usize::MAX } else { next(8) as usize };
                    (pos, next(3) as usize, Value::from(i))
                })
                .collect();
            let mut expected = placed.clone();
            expected.sort_by_key(|&(pos, tie, _)| (pos, tie));
            let expected: Vec<Value> = expected.into_iter().map(|(_, _, v)| v).collect();
            assert_eq!(in_place_order(placed), expected);
        }
    }
}
