//! What every export goes through: core result -> JS value or a real JS `Error` with a stable
//! `code`, string arguments, and the checks on JS values that JSON would silently change. The
//! pipeline's exports read their JSON input through `json_input` (not in the counting builds).

use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::base::error::{Error, ErrorCode, Result};

/// Turn a core error into a JS `Error` with `name = "CtxguardError"`, `code` and `index`.
pub fn js_error(err: Error) -> JsValue {
    let e = js_sys::Error::new(&err.message);
    e.set_name("CtxguardError");
    let obj: &JsValue = e.as_ref();
    // Setting a property on a fresh Error object cannot fail; ignore the impossible case.
    let _ = js_sys::Reflect::set(obj, &"code".into(), &err.code.as_str().into());
    if let Some(i) = err.index {
        let _ = js_sys::Reflect::set(obj, &"index".into(), &JsValue::from_f64(i as f64));
    }
    e.into()
}

#[wasm_bindgen(module = "/src/js/json.js")]
extern "C" {
    /// `{ path, kind }` of the first value JSON would silently change, or `null` (src/js/json.js).
    #[wasm_bindgen(js_name = findNonJson)]
    fn find_non_json(value: &JsValue) -> JsValue;
}

/// Reject values that `JSON.stringify` would silently change inside data (docs/design.md, "Bad input"; docs/api.md
/// intro): a Date, Map, Set, typed array or other non-plain built-in, an object with `toJSON`,
/// NaN or ±Infinity, `undefined` / a function / a symbol inside an array. The error is `code`,
/// its message names the path (`what[3].content[1]`); with `indexed`, `index` is the top-level
/// array index (the message). Reusable for one message at a time: pass the message itself.
pub fn check_json_data(value: &JsValue, what: &str, code: ErrorCode, indexed: bool) -> Result<()> {
    let found = find_non_json(value);
    if found.is_null() || found.is_undefined() {
        return Ok(());
    }
    let get = |k: &str| js_sys::Reflect::get(&found, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED);
    let kind = get("kind").as_string().unwrap_or_default();
    let path: Vec<JsValue> = js_sys::Array::from(&get("path")).iter().collect();
    let mut at = what.to_string();
    for p in &path {
        match (p.as_f64(), p.as_string()) {
            // Array indices (integers below 2^32): formatted as integers, so the counting-only
            // builds do not link float formatting for this one message.
            (Some(i), _) => at.push_str(&format!("[{}]", i as u64)),
            (_, Some(k)) => at.push_str(&format!(".{k}")),
            _ => {}
        }
    }
    let mut err = Error::new(code, format!("{at} is {kind}; pass plain JSON data"));
    if indexed {
        err.index = path.first().and_then(JsValue::as_f64).map(|i| i as usize);
    }
    Err(err)
}

/// An options bag whose fields are all optional strings (`countTokens`'s), read without JSON so
/// that the counting-only build carries no JSON parser: the same checks and errors as
/// `json_input::options` — defaults for `undefined`/`null`, an object required, `undefined` fields
/// ignored, a wrong type or an unknown field (a function in one too) an `INVALID_OPTIONS` error.
pub fn string_options<const N: usize>(value: &JsValue, what: &str, names: [&str; N]) -> Result<[Option<String>; N]> {
    let mut out: [Option<String>; N] = std::array::from_fn(|_| None);
    if value.is_undefined() || value.is_null() {
        return Ok(out);
    }
    if !value.is_object() || js_sys::Array::is_array(value) {
        return Err(not_an_object(value, what, names.contains(&"model")));
    }
    // What JSON would read as something else (a Date is its ISO string) is not an options bag.
    let to_json = js_sys::Reflect::get(value, &JsValue::from_str("toJSON")).unwrap_or(JsValue::UNDEFINED);
    if to_json.is_function() {
        return Err(Error::options(format!("{what} must be a plain object, not one with a toJSON method (a Date?)")));
    }
    // Own string keys (JSON.stringify reads the enumerable ones; options bags have no others),
    // each read once (this runs on every countTokens call): first every value gets the checks
    // of `options`, then the fields are read, in that order as there.
    let unreadable = |e: JsValue| {
        Error::options(format!("{what} cannot be read: {}", String::from(js_sys::Error::from(e).message())))
    };
    let keys = js_sys::Reflect::own_keys(value).map_err(unreadable)?;
    let entries: Vec<(String, std::result::Result<JsValue, JsValue>)> =
        keys.iter().filter_map(|key| key.as_string().map(|name| (name, js_sys::Reflect::get(value, &key)))).collect();
    let unknown = |name: &str| {
        if names.contains(&name) {
            return None;
        }
        Some(match crate::base::explain::closest(name, names) {
            Some(c) => format!("unknown field `{name}`; did you mean `{c}`?"),
            None => {
                let expected = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" or ");
                format!("unknown field `{name}` (known: {expected})")
            }
        })
    };
    for (name, v) in &entries {
        check_option_value(name, v.as_ref().unwrap_or(&JsValue::UNDEFINED), what, &unknown)?;
    }
    for (name, v) in entries {
        let v = v.map_err(unreadable)?;
        if v.is_undefined() || v.is_function() {
            continue;
        }
        let Some(slot) = names.iter().position(|n| *n == name).and_then(|i| out.get_mut(i)) else {
            return Err(Error::options(format!("{what}: {}", unknown(&name).unwrap_or_default())));
        };
        if v.is_null() {
            continue;
        }
        match v.as_string() {
            Some(s) => *slot = Some(s),
            None => {
                let kind = if v.as_bool().is_some() {
                    "a boolean"
                } else if v.as_f64().is_some() {
                    "a number"
                } else if js_sys::Array::is_array(&v) {
                    "an array"
                } else {
                    "an object"
                };
                return Err(Error::options(format!("{what}.{name}: expected a string, got {kind}")));
            }
        }
    }
    Ok(out)
}

/// The error for an options bag that is not an object: what it got, and the likely mistake
/// (a model id where `{ model }` goes, when the options take one; the arguments swapped).
pub fn not_an_object(value: &JsValue, what: &str, takes_model: bool) -> Error {
    let got = if let Some(s) = value.as_string() {
        // Quoted by hand: `{:?}` would link the Unicode escape tables into the counting builds.
        let shown: String = s.chars().take(60).collect();
        if takes_model {
            format!("got the string \"{shown}\"; to name a model, pass {{ model: \"{shown}\" }}")
        } else {
            format!("got the string \"{shown}\"")
        }
    } else if js_sys::Array::is_array(value) {
        "got an array; the messages come first and the options after them".to_string()
    } else if value.as_f64().is_some() {
        "got a number".to_string()
    } else if value.as_bool().is_some() {
        "got a boolean".to_string()
    } else if value.is_function() {
        "got a function (callbacks go inside the options: { summarize })".to_string()
    } else if value.is_bigint() {
        "got a BigInt".to_string()
    } else {
        format!("got a {}", value.js_typeof().as_string().unwrap_or_default())
    };
    Error::options(format!("{what} must be an object, {got}"))
}

/// Option fields that are callbacks (read separately; JSON drops them). The options structs
/// that take one declare it (`Option<IgnoredAny>`), so that it is a known field there and an
/// unknown one elsewhere.
pub(super) const CALLBACK_FIELDS: &[&str] = &["summarize", "onProgress", "onTrace", "logger", "signal"];

/// `json_input::check_option_values` for one field `name` holding `v` (also `string_options`').
/// `unknown(name)` is the error message when the options do not have a field `name`: a value
/// JSON would drop (a function) in a field they lack is a typo, named as one.
pub(super) fn check_option_value(
    name: &str,
    v: &JsValue,
    what: &str,
    unknown: &dyn Fn(&str) -> Option<String>,
) -> Result<()> {
    let dropped = v.is_function() || v.is_symbol() || v.is_bigint();
    if dropped {
        if let Some(m) = unknown(name) {
            return Err(Error::options(format!("{what}: {m}")));
        }
    }
    if CALLBACK_FIELDS.contains(&name) {
        return Ok(());
    }
    let bad = if v.is_function() {
        Some("a function")
    } else if v.is_symbol() || v.is_bigint() {
        Some("a symbol or BigInt")
    } else if v.as_f64().is_some_and(|n| !n.is_finite()) {
        Some("not a finite number")
    } else if v.is_instance_of::<js_sys::Date>() {
        Some("a Date")
    } else {
        None
    };
    if let Some(kind) = bad {
        return Err(Error::options(format!("{what}.{name} has the wrong type ({kind})")));
    }
    // Nested data (system, tools, messages, usage...) gets the message-data check.
    if v.is_object() {
        check_json_data(v, &format!("{what}.{name}"), ErrorCode::InvalidOptions, false)?;
    }
    Ok(())
}

/// Encode a core value for JS: plain objects (not Maps), `null` for `None`.
pub fn encode<T: Serialize>(value: &T) -> Result<JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| Error::new(ErrorCode::Internal, format!("could not encode the result: {e}")))
}

/// Run a core call and map its error to a JS `Error`.
pub fn run<T>(f: impl FnOnce() -> Result<T>) -> std::result::Result<T, JsValue> {
    f().map_err(js_error)
}

/// The text of a JS string argument; anything else is an `INVALID_TEXT` error.
/// Lone surrogates become U+FFFD (wasm-bindgen's string conversion).
pub fn text_arg(value: &JsValue, what: &str) -> Result<String> {
    value.as_string().ok_or_else(|| Error::new(ErrorCode::InvalidText, format!("{what} must be a string")))
}
