//! The two shared helpers every export goes through: JS value -> core type, and core result ->
//! JS value or a real JS `Error` with a stable `code`.

#[cfg(feature = "pipeline")]
use std::borrow::Cow;

#[cfg(feature = "pipeline")]
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::error::{Error, ErrorCode, Result};
#[cfg(feature = "pipeline")]
use crate::json_text::repair_lone_surrogates;

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

/// Reject values that `JSON.stringify` would silently change inside data (SPEC §11, README API
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
            (Some(i), _) => at.push_str(&format!("[{i}]")),
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

/// JSON-stringify a JS value (throws on cycles and BigInt, drops functions and `undefined`
/// fields, exactly like `JSON.stringify`) after `check_json_data`, repairing lone-surrogate
/// escapes into U+FFFD so that invalid UTF-16 from JS never makes the input unreadable.
#[cfg(feature = "pipeline")]
pub fn to_json_text(value: &JsValue, what: &str, code: ErrorCode) -> Result<String> {
    check_json_data(value, what, code, what == "messages")?;
    stringify(value, what, code)
}

/// `JSON.stringify` without the data check (options: their callback fields are not data).
#[cfg(feature = "pipeline")]
fn stringify(value: &JsValue, what: &str, code: ErrorCode) -> Result<String> {
    let text = js_sys::JSON::stringify(value)
        .map_err(|e| {
            let reason = js_sys::Error::from(e).message();
            Error::new(code, format!("{what} cannot be read as JSON: {}", String::from(reason)))
        })?
        .as_string()
        .ok_or_else(|| Error::new(code, format!("{what} is not a JSON value")))?;
    Ok(match repair_lone_surrogates(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(fixed) => fixed,
    })
}

/// Decode a JS value into a core type through JSON. `undefined`/`null` are errors here.
#[cfg(feature = "pipeline")]
pub fn decode<T: DeserializeOwned>(value: &JsValue, what: &str, code: ErrorCode) -> Result<T> {
    if value.is_undefined() || value.is_null() {
        return Err(Error::new(code, format!("{what} is required")));
    }
    parse(&to_json_text(value, what, code)?, what, code)
}

#[cfg(feature = "pipeline")]
fn parse<T: DeserializeOwned>(text: &str, what: &str, code: ErrorCode) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::new(code, explain(text, what, &e, |t| serde_json::from_str::<T>(t).map(drop))))
}

/// A decoding error that names the field: serde reports "invalid type … at line 1 column 42";
/// for an object, the first field that fails on its own is named (`config.economicBudget: …`),
/// and the text position — meaningless to a JS caller — is left out.
/// `try_t` decodes a text as `T` (the type being decoded); a function pointer so that this body is
/// compiled once, not once per option type.
#[cfg(feature = "pipeline")]
fn explain(text: &str, what: &str, err: &serde_json::Error, try_t: fn(&str) -> serde_json::Result<()>) -> String {
    let clean = |m: String| match m.find(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m,
    };
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) {
        // When `T` has required fields, any one field alone fails with "missing field": only
        // other errors name a culprit then.
        let all_optional = try_t("{}").is_ok();
        for (k, v) in map {
            let alone = serde_json::Value::Object(std::iter::once((k.clone(), v)).collect());
            // `from_str` (not `from_value`): the same deserializer `parse` already instantiates
            // for `T`, so this adds no code per option type to the .wasm.
            if let Err(e) = try_t(&crate::json_text::text(&alone)) {
                let m = e.to_string();
                if all_optional || !m.starts_with("missing field") {
                    return format!("{what}.{k}: {}", clean(m));
                }
            }
        }
    }
    format!("{what}: {}", clean(err.to_string()))
}

/// Decode an optional options bag: `undefined`/`null` give the defaults; anything but a plain
/// object is an error; unknown fields are errors (the option structs deny them).
#[cfg(feature = "pipeline")]
pub fn options<T: DeserializeOwned + Default>(value: &JsValue, what: &str) -> Result<T> {
    if value.is_undefined() || value.is_null() {
        return Ok(T::default());
    }
    if !value.is_object() || js_sys::Array::is_array(value) {
        return Err(Error::options(format!("{what} must be an object")));
    }
    check_option_values(value, what)?;
    parse(&stringify(value, what, ErrorCode::InvalidOptions)?, what, ErrorCode::InvalidOptions)
}

/// An options bag whose fields are all optional strings (`countTokens`'s), read without JSON so
/// that the counting-only build carries no JSON parser: the same checks and errors as
/// [`options`] — defaults for `undefined`/`null`, an object required, JSON-dropped values
/// (`undefined`, callbacks) ignored, a wrong type or an unknown field an `INVALID_OPTIONS` error.
pub fn string_options<const N: usize>(value: &JsValue, what: &str, names: [&str; N]) -> Result<[Option<String>; N]> {
    let mut out: [Option<String>; N] = std::array::from_fn(|_| None);
    if value.is_undefined() || value.is_null() {
        return Ok(out);
    }
    if !value.is_object() || js_sys::Array::is_array(value) {
        return Err(Error::options(format!("{what} must be an object")));
    }
    // What JSON would read as something else (a Date is its ISO string) is not an options bag.
    let to_json = js_sys::Reflect::get(value, &JsValue::from_str("toJSON")).unwrap_or(JsValue::UNDEFINED);
    if to_json.is_function() {
        return Err(Error::options(format!("{what} must be a plain object, not one with a toJSON method (a Date?)")));
    }
    // Own string keys (JSON.stringify reads the enumerable ones; options bags have no others),
    // each read once (this runs on every countTokens call): first every value gets the checks
    // of `options`, then the fields are read, in that order as there.
    let unreadable = |e: JsValue| Error::options(format!("{what} cannot be read: {}", String::from(js_sys::Error::from(e).message())));
    let keys = js_sys::Reflect::own_keys(value).map_err(unreadable)?;
    let entries: Vec<(String, std::result::Result<JsValue, JsValue>)> =
        keys.iter().filter_map(|key| key.as_string().map(|name| (name, js_sys::Reflect::get(value, &key)))).collect();
    for (name, v) in &entries {
        check_option_value(name, v.as_ref().unwrap_or(&JsValue::UNDEFINED), what)?;
    }
    for (name, v) in entries {
        let v = v.map_err(unreadable)?;
        if v.is_undefined() || v.is_function() {
            continue;
        }
        let Some(slot) = names.iter().position(|n| *n == name).and_then(|i| out.get_mut(i)) else {
            let expected = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" or ");
            return Err(Error::options(format!("{what}: unknown field `{name}`, expected {expected}")));
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
                return Err(Error::options(format!("{what}.{name}: invalid type: {kind}, expected a string")));
            }
        }
    }
    Ok(out)
}

/// Option fields that are callbacks (read separately; JSON drops them).
const CALLBACK_FIELDS: &[&str] = &["summarize", "onProgress", "onTrace", "logger", "signal"];

/// Reject top-level option values that JSON would silently drop or change — a function, symbol
/// or BigInt outside the callback fields, a NaN or infinite number, a Date — so a wrong type is
/// an `INVALID_OPTIONS` error rather than a default; nested values get `check_json_data`.
#[cfg(feature = "pipeline")]
fn check_option_values(value: &JsValue, what: &str) -> Result<()> {
    // Reflect.ownKeys catches a throwing Proxy trap (JSON.stringify then reports it).
    let Ok(keys) = js_sys::Reflect::own_keys(value) else {
        return Ok(());
    };
    for key in keys.iter() {
        let Some(name) = key.as_string() else { continue };
        let v = js_sys::Reflect::get(value, &key).unwrap_or(JsValue::UNDEFINED);
        check_option_value(&name, &v, what)?;
    }
    Ok(())
}

/// [`check_option_values`] for one field `name` holding `v`.
fn check_option_value(name: &str, v: &JsValue, what: &str) -> Result<()> {
    if CALLBACK_FIELDS.contains(&name) {
        return Ok(());
    }
    let bad = if v.is_function() || v.is_symbol() || v.is_bigint() {
        Some("a function, symbol or BigInt")
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
    value
        .as_string()
        .ok_or_else(|| Error::new(ErrorCode::InvalidText, format!("{what} must be a string")))
}


/// Milliseconds from `performance.now()` where there is one (browsers, workers, Node), else
/// `Date.now()`.
#[cfg(feature = "pipeline")]
pub fn now_ms() -> f64 {
    let perf = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("performance")).unwrap_or(JsValue::UNDEFINED);
    if let Ok(now) = js_sys::Reflect::get(&perf, &JsValue::from_str("now")) {
        if let Some(f) = now.dyn_ref::<js_sys::Function>() {
            if let Some(t) = f.call0(&perf).ok().and_then(|v| v.as_f64()) {
                return t;
            }
        }
    }
    js_sys::Date::now()
}

/// `opts[name]` when it is a function (callbacks are read before the options are JSON-decoded;
/// JSON drops functions). Anything else there is an `INVALID_OPTIONS` error.
#[cfg(feature = "pipeline")]
pub fn callback(opts: &JsValue, name: &str) -> Result<Option<js_sys::Function>> {
    if !opts.is_object() {
        return Ok(None);
    }
    let v = js_sys::Reflect::get(opts, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.dyn_into::<js_sys::Function>()
        .map(Some)
        .map_err(|_| Error::options(format!("{name} must be a function")))
}
