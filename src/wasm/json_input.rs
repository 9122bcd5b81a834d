//! JS values into core types through JSON, and the callbacks read beside them: the input side of
//! the pipeline's exports (the counting-only builds read their one options bag without JSON,
//! `convert::string_options`).

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use wasm_bindgen::prelude::*;

use super::convert::{check_json_data, check_option_value};
use crate::base::error::{Error, ErrorCode, Result};
use crate::base::json_text::repair_lone_surrogates;

/// JSON-stringify a JS value (throws on cycles and BigInt, drops functions and `undefined`
/// fields, exactly like `JSON.stringify`) after `check_json_data`, repairing lone-surrogate
/// escapes into U+FFFD so that invalid UTF-16 from JS never makes the input unreadable.
pub fn to_json_text(value: &JsValue, what: &str, code: ErrorCode) -> Result<String> {
    check_json_data(value, what, code, what == "messages")?;
    stringify(value, what, code)
}

/// `JSON.stringify` without the data check (options: their callback fields are not data).
fn stringify(value: &JsValue, what: &str, code: ErrorCode) -> Result<String> {
    let text = js_sys::JSON::stringify(value)
        .map_err(|e| {
            let reason = String::from(js_sys::Error::from(e).message());
            let reason = if reason.contains("call stack") || reason.contains("too much recursion") {
                format!("{reason} (nested too deeply: is an object inside itself, or a parsed tree?)")
            } else {
                reason
            };
            // In the messages: the first one that fails, named and indexed.
            // (Read through Reflect, which reports a revoked proxy instead of throwing.)
            let length = js_sys::Reflect::get(value, &JsValue::from_str("length")).ok().and_then(|l| l.as_f64());
            let at = length.filter(|_| what == "messages").and_then(|n| {
                (0..n as u32).position(|i| {
                    js_sys::Reflect::get_u32(value, i).map_or(true, |m| js_sys::JSON::stringify(&m).is_err())
                })
            });
            let mut err = match at {
                Some(i) => Error::new(code, format!("{what}[{i}] cannot be read as JSON: {reason}")),
                None => Error::new(code, format!("{what} cannot be read as JSON: {reason}")),
            };
            if what == "messages" {
                err.index = at;
            }
            err
        })?
        .as_string()
        .ok_or_else(|| Error::new(code, format!("{what} is not a JSON value")))?;
    Ok(match repair_lone_surrogates(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(fixed) => fixed,
    })
}

/// Decode a JS value into a core type through JSON. `undefined`/`null` are errors here.
pub fn decode<T: DeserializeOwned>(value: &JsValue, what: &str, code: ErrorCode) -> Result<T> {
    if value.is_undefined() || value.is_null() {
        return Err(Error::new(code, format!("{what} is required")));
    }
    parse(&to_json_text(value, what, code)?, what, code)
}

fn parse<T: DeserializeOwned>(text: &str, what: &str, code: ErrorCode) -> Result<T> {
    serde_json::from_str(text)
        .map_err(|e| Error::new(code, explain(text, what, &e, |t| serde_json::from_str::<T>(t).map(drop))))
}

/// A decoding error that names the field: serde reports "invalid type … at line 1 column 42";
/// the deepest member that fails on its own is named by its path (`config.economicBudget: …`,
/// `config.clearToolOutputs.protectTokens: …`, `turns[1]: …`), and the text position —
/// meaningless to a JS caller — is left out.
/// `try_t` decodes a text as `T` (the type being decoded); a function pointer so that this body is
/// compiled once, not once per option type.
fn explain(text: &str, what: &str, err: &serde_json::Error, try_t: fn(&str) -> serde_json::Result<()>) -> String {
    let clean = |m: String| {
        let m = match m.find(" at line ") {
            Some(i) => m.get(..i).unwrap_or(&m).to_string(),
            None => m,
        };
        crate::base::explain::js_terms(&m)
    };
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
        // When `T` has required fields, any one field alone fails with "missing field": only
        // other errors name a culprit then.
        let all_optional = try_t("{}").is_ok();
        if let Some((path, m)) = culprit(value, all_optional, try_t) {
            let m = clean(m);
            // The message names an unknown field itself: the path stops at its object.
            let named = matches!(path.last(), Some(Step::Key(k)) if m.starts_with(&format!("unknown field `{k}`")));
            let shown = if named { path.get(..path.len() - 1).unwrap_or_default() } else { &path[..] };
            return format!("{what}{}: {m}", render(shown));
        }
    }
    format!("{what}: {}", clean(err.to_string()))
}

/// One step of a path into a JSON value.
enum Step {
    Key(String),
    Index(usize),
}

/// `.key[3].other`
fn render(path: &[Step]) -> String {
    path.iter()
        .map(|s| match s {
            Step::Key(k) => format!(".{k}"),
            Step::Index(i) => format!("[{i}]"),
        })
        .collect()
}

/// The deepest member of `value` that fails to decode on its own, narrowed level by level (an
/// object to that one field, an array to that one element), and its message: `T`'s
/// `config.clearToolOutputs.protectTokens`, `turns[1]`. An object field whose siblings'
/// absence is what fails ("missing field") is not a culprit (at the top level it is when every
/// field of `T` is optional). `None` when no single member fails.
fn culprit(
    value: serde_json::Value,
    all_optional: bool,
    try_t: fn(&str) -> serde_json::Result<()>,
) -> Option<(Vec<Step>, String)> {
    use serde_json::Value;
    let wrap = |path: &[Step], inner: Value| {
        path.iter().rev().fold(inner, |v, s| match s {
            Step::Key(k) => Value::Object(std::iter::once((k.clone(), v)).collect()),
            Step::Index(_) => Value::Array(vec![v]),
        })
    };
    let mut path: Vec<Step> = Vec::new();
    let mut message = None;
    let mut value = value;
    loop {
        let members: Vec<(Step, Value)> = match value {
            Value::Object(map) => map.into_iter().map(|(k, v)| (Step::Key(k), v)).collect(),
            Value::Array(items) => items.into_iter().enumerate().map(|(i, v)| (Step::Index(i), v)).collect(),
            _ => break,
        };
        let top = path.is_empty();
        let found = members.into_iter().find_map(|(step, v)| {
            let narrowed = match &step {
                Step::Key(k) => Value::Object(std::iter::once((k.clone(), v.clone())).collect()),
                Step::Index(_) => Value::Array(vec![v.clone()]),
            };
            // `from_str` (not `from_value`): the same deserializer `parse` already instantiates
            // for `T`, so this adds no code per option type to the .wasm.
            let m = try_t(&crate::base::json_text::text(&wrap(&path, narrowed))).err()?.to_string();
            let culprit = matches!(step, Step::Index(_)) || !m.starts_with("missing field") || (top && all_optional);
            culprit.then_some((step, v, m))
        });
        let Some((step, v, m)) = found else { break };
        path.push(step);
        message = Some(m);
        value = v;
    }
    message.map(|m| (path, m))
}

/// Decode an optional options bag: `undefined`/`null` give the defaults; anything but a plain
/// object is an error; unknown fields are errors (the option structs deny them).
pub fn options<T: DeserializeOwned + Default>(value: &JsValue, what: &str) -> Result<T> {
    if value.is_undefined() || value.is_null() {
        return Ok(T::default());
    }
    if !value.is_object() || js_sys::Array::is_array(value) {
        let takes_model = serde_json::from_str::<T>(r#"{"model":"m"}"#).is_ok();
        return Err(super::convert::not_an_object(value, what, takes_model));
    }
    check_option_values(value, what, |t| serde_json::from_str::<T>(t).map(drop))?;
    parse(&stringify(value, what, ErrorCode::InvalidOptions)?, what, ErrorCode::InvalidOptions)
}

/// Reject top-level option values that JSON would silently drop or change — a function, symbol
/// or BigInt outside the callback fields, a NaN or infinite number, a Date — so a wrong type is
/// an `INVALID_OPTIONS` error rather than a default; nested values get `check_json_data`. A
/// field `T` does not know is named as unknown (with the field meant), whatever its value: a
/// misspelled callback (`summarise: fn`) is a typo, not a wrong type. `try_t` decodes a text as
/// `T` (as in `explain`).
fn check_option_values(value: &JsValue, what: &str, try_t: fn(&str) -> serde_json::Result<()>) -> Result<()> {
    // Reflect.ownKeys catches a throwing Proxy trap (JSON.stringify then reports it).
    let Ok(keys) = js_sys::Reflect::own_keys(value) else {
        return Ok(());
    };
    for key in keys.iter() {
        let Some(name) = key.as_string() else { continue };
        let v = js_sys::Reflect::get(value, &key).unwrap_or(JsValue::UNDEFINED);
        let unknown = |name: &str| {
            let alone =
                serde_json::Value::Object(std::iter::once((name.to_string(), serde_json::Value::Null)).collect());
            match try_t(&crate::base::json_text::text(&alone)) {
                Err(e) if e.to_string().starts_with("unknown field") => Some(explain_unknown(name, &e.to_string())),
                _ => None,
            }
        };
        check_option_value(&name, &v, what, &unknown)?;
    }
    Ok(())
}

/// serde's "unknown field" message for the function-valued field `name`, without its text
/// position, in JS terms. A callback these options do not take, or a typo of one, is named
/// with the calls that take it (`summarize` on the guard's config belongs to `prepare`).
fn explain_unknown(name: &str, message: &str) -> String {
    let m = message.find(" at line ").and_then(|i| message.get(..i)).unwrap_or(message);
    let m = crate::base::explain::js_terms(m);
    if m.contains("did you mean") {
        return m;
    }
    let callbacks = super::convert::CALLBACK_FIELDS.iter().copied();
    let callback = callbacks.clone().find(|c| *c == name).or_else(|| crate::base::explain::closest(name, callbacks));
    match callback {
        Some(c) => format!(
            "unknown field `{name}`: `{c}` is an option of the calls that take it (prepare and settle; onTrace \
             guardSources too), not of this object"
        ),
        None => m,
    }
}

/// Milliseconds from `performance.now()` where there is one (browsers, workers, Node), else
/// `Date.now()`.
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
pub fn callback(opts: &JsValue, name: &str) -> Result<Option<js_sys::Function>> {
    if !opts.is_object() {
        return Ok(None);
    }
    let v = js_sys::Reflect::get(opts, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.dyn_into::<js_sys::Function>().map(Some).map_err(|_| Error::options(format!("{name} must be a function")))
}
