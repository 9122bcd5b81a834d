//! `classifyProviderError(error)`: what a failed provider call means (see `crate::provider::overflow`).
//!
//! The argument is whatever the host caught: an OpenAI or Anthropic SDK error, a `fetch` wrapper's
//! `{ status, message, code, body }`, a raw body string, or garbage. It is read field by field with
//! `Reflect` (never `JSON.stringify`, never an import that can throw), within fixed bounds, so a
//! cyclic body, a BigInt, a getter that throws or a revoked Proxy is skipped rather than thrown.
//! The call never throws: anything unreadable is classified `other`.

use js_sys::{JsString, Reflect};
use serde_json::{Map, Number, Value};
use wasm_bindgen::prelude::*;

use super::convert::{encode, run};
use crate::provider::overflow::{self, MAX_DEPTH, MAX_NODES, MAX_SCAN_BYTES, STATUS_FIELDS, TEXT_FIELDS};
/// Keys or items read from one object or array.
const MAX_KEYS: u32 = 256;
/// UTF-16 units read from one string.
const MAX_STRING_UNITS: u32 = MAX_SCAN_BYTES as u32;
/// UTF-16 units read over all strings.
const MAX_TOTAL_UNITS: u32 = 4 * MAX_STRING_UNITS;

/// `classifyProviderError(error) -> { kind, compactAndRetry, reason, promptTokens, ... }`.
#[wasm_bindgen(js_name = classifyProviderError)]
pub fn classify_provider_error(error: JsValue) -> Result<JsValue, JsValue> {
    run(|| encode(&classify_js(&error)))
}

/// Classify whatever JS caught (never throws; see the module docs).
pub(super) fn classify_js(error: &JsValue) -> overflow::Classification {
    overflow::classify_value(&Reader::default().top(error))
}

#[derive(Default)]
struct Reader {
    nodes: usize,
    units: u32,
}

impl Reader {
    /// An object is read through its known fields (prototype getters included, so SDK error
    /// classes work); anything else, or an object without any of them, is read as a value.
    fn top(&mut self, value: &JsValue) -> Value {
        if value.is_object() {
            let mut map = Map::new();
            for name in STATUS_FIELDS.into_iter().chain(TEXT_FIELDS) {
                let Ok(item) = Reflect::get(value, &JsValue::from_str(name)) else { continue };
                if item.is_undefined() || item.is_null() {
                    continue;
                }
                let item = self.read(&item, 1);
                map.insert(name.to_string(), item);
            }
            if !map.is_empty() {
                return Value::Object(map);
            }
        }
        self.read(value, 0)
    }

    fn read(&mut self, value: &JsValue, depth: usize) -> Value {
        if self.nodes >= MAX_NODES {
            return Value::Null;
        }
        self.nodes += 1;
        if value.is_string() {
            return Value::String(self.string(value));
        }
        if let Some(n) = value.as_f64() {
            return Number::from_f64(n).map_or(Value::Null, Value::Number);
        }
        if let Some(b) = value.as_bool() {
            return Value::Bool(b);
        }
        // Functions, symbols and BigInts carry no error text; deep values are out of bounds.
        if !value.is_object() || depth >= MAX_DEPTH {
            return Value::Null;
        }
        match array_length(value) {
            Some(len) => self.array_like(value, len, depth),
            None => self.object(value, depth),
        }
    }

    fn string(&mut self, value: &JsValue) -> String {
        let left = MAX_TOTAL_UNITS.saturating_sub(self.units);
        let s: &JsString = value.unchecked_ref();
        let take = s.length().min(MAX_STRING_UNITS).min(left);
        self.units += take;
        if take == s.length() {
            value.as_string().unwrap_or_default()
        } else {
            s.slice(0, take).as_string().unwrap_or_default()
        }
    }

    /// Arrays (and array-likes) by index, the first `MAX_KEYS` items only.
    fn array_like(&mut self, value: &JsValue, len: u32, depth: usize) -> Value {
        let mut items = Vec::new();
        for i in 0..len.min(MAX_KEYS) {
            if self.nodes >= MAX_NODES {
                break;
            }
            let item = Reflect::get_u32(value, i).unwrap_or(JsValue::UNDEFINED);
            items.push(self.read(&item, depth + 1));
        }
        Value::Array(items)
    }

    /// Own string keys, skipping those that echo the request (as the core does).
    fn object(&mut self, value: &JsValue, depth: usize) -> Value {
        let Ok(keys) = Reflect::own_keys(value) else { return Value::Null };
        let mut map = Map::new();
        for i in 0..keys.length().min(MAX_KEYS) {
            if self.nodes >= MAX_NODES {
                break;
            }
            let key = keys.get(i);
            let Some(name) = key.as_string() else { continue };
            if overflow::is_echo_key(&name) {
                continue;
            }
            let Ok(item) = Reflect::get(value, &key) else { continue };
            let item = self.read(&item, depth + 1);
            map.insert(name, item);
        }
        Value::Object(map)
    }
}

/// `length` when it is a non-negative integer (arrays, array-likes); read without `Array.isArray`,
/// which throws on a revoked Proxy.
fn array_length(value: &JsValue) -> Option<u32> {
    let n = Reflect::get(value, &JsValue::from_str("length")).ok()?.as_f64()?;
    if n >= 0.0 && n.fract() == 0.0 {
        Some(if n > f64::from(u32::MAX) { u32::MAX } else { n as u32 })
    } else {
        None
    }
}
