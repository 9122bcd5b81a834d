//! The binding side of the stored calls of `src/js/memo.js` (docs/stored-calls.md): the fresh
//! messages read (as JSON or packed: `crate::binding::packed`), the call number, the names of the layer-1
//! outputs the binding kept, and the result's `sameAs` / `keptAs` / `keptRuns`. What the guard's
//! store keeps is `guard/store.rs`'s alone: a call naming an id it dropped answers `undefined`.

use rustc_hash::FxHashSet;
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::json_input::decode;
use super::output::{wire, Wire};
use crate::base::error::{ErrorCode, Result};
use crate::format::{write_request_with, Format, Named, Request, Written};
use crate::guard::store::{Assembled, Fresh};
use crate::message::Message;

/// The call number the binding sends (a whole number; anything else reads as 0).
pub(super) fn call_number(call: f64) -> u64 {
    if call.is_finite() && call >= 0.0 {
        call as u64
    } else {
        0
    }
}

/// A field of an object the binding made (`undefined` when absent).
fn field(v: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(v, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

/// The fresh messages of a stored call, `{ messages, ids: Uint32Array, at: Uint32Array }`:
/// `messages` an array of them, read through JSON (an error names the message by its place `at`
/// in the conversation, not in `messages`), or the binding's packed transfer of them,
/// `{ bytes: Uint8Array, lens: Uint32Array }` (see `crate::binding::packed`; the binding packs
/// only plain JSON data that reads back as itself, so nothing there is an error of the caller's).
pub(super) fn fresh_messages(fresh: &JsValue) -> Result<Vec<Fresh>> {
    let numbers = |name: &str| {
        field(fresh, name).dyn_into::<js_sys::Uint32Array>().map(|a| a.to_vec()).map_err(|_| {
            crate::base::error::Error::new(
                ErrorCode::Internal,
                format!("stored call: fresh.{name} is not a Uint32Array"),
            )
        })
    };
    let (fresh_ids, fresh_at) = (numbers("ids")?, numbers("at")?);
    let messages = field(fresh, "messages");
    let values: Vec<serde_json::Value> = if fresh_ids.is_empty() {
        Vec::new()
    } else if !js_sys::Array::is_array(&messages) {
        unpack(&messages)?
    } else {
        decode(&messages, "messages", ErrorCode::InvalidMessages).map_err(|mut e| {
            if let Some(at) = e.index.and_then(|i| fresh_at.get(i).map(|&at| (i, at as usize))) {
                e.message = e.message.replacen(&format!("messages[{}]", at.0), &format!("messages[{}]", at.1), 1);
                e.index = Some(at.1);
            }
            e
        })?
    };
    if values.len() != fresh_ids.len() || fresh_at.len() != fresh_ids.len() {
        return Err(crate::base::error::Error::new(
            ErrorCode::Internal,
            "stored call: fresh messages and their ids differ in length",
        ));
    }
    Ok(values
        .into_iter()
        .zip(fresh_ids.iter().zip(&fresh_at))
        .map(|(value, (&id, &at))| Fresh { id, index: at as usize, value })
        .collect())
}

/// The values of a packed transfer (see `fresh_messages`).
fn unpack(packed: &JsValue) -> Result<Vec<serde_json::Value>> {
    let field = |name: &str| field(packed, name);
    let bad = |why: String| {
        crate::base::error::Error::new(
            ErrorCode::Internal,
            format!("stored call: the packed messages cannot be read: {why}"),
        )
    };
    let bytes = field("bytes").dyn_into::<js_sys::Uint8Array>().map_err(|_| bad("no bytes".into()))?.to_vec();
    let lens = field("lens").dyn_into::<js_sys::Uint32Array>().map_err(|_| bad("no lengths".into()))?.to_vec();
    crate::binding::packed::unpack(&bytes, &lens).map_err(bad)
}

/// What the binding already holds, for a request assembled from the store: the assembly (the
/// caller's unchanged messages) and the names of the layer-1 outputs it kept from earlier
/// results (see `src/js/memo.js`).
pub(super) struct Reuse {
    pub assembled: Assembled,
    pub kept: FxHashSet<String>,
}

/// The names of the outputs the binding kept, `{ tags: Float64Array, runs: string[] }`: `tags`
/// (a name that is one tag crosses as a number: no string to make on either side) and `runs` (the
/// other names, strings; anything else names none).
pub(super) fn kept_names(kept: &JsValue) -> FxHashSet<String> {
    let tags = field(kept, "tags").dyn_into::<js_sys::Float64Array>().map(|a| a.to_vec()).unwrap_or_default();
    let mut names: FxHashSet<String> =
        tags.iter().filter(|t| t.is_finite() && **t >= 0.0).map(|t| format!("{t}")).collect();
    let runs = field(kept, "runs");
    if js_sys::Array::is_array(&runs) {
        names.extend(js_sys::Array::from(&runs).iter().filter_map(|v| v.as_string()));
    }
    names
}

/// How `keptAs[i]` says a name: the tag itself when the name is one tag JS reads exactly (a
/// number), else `-2` and the name is the next of `keptRuns`.
fn name_code(name: String, runs: &mut Vec<String>) -> f64 {
    const MAX_SAFE: u64 = (1 << 53) - 1;
    match name.parse::<u64>() {
        Ok(tag) if tag <= MAX_SAFE => tag as f64,
        _ => {
            runs.push(name);
            -2.0
        }
    }
}

/// The name of a run of internal messages that are all remembered layer-1 outputs, unchanged:
/// their tags, in order (tags are never reused, so the name stands for one wire value).
fn made_name(run: &[&Message]) -> Option<String> {
    let mut name = String::new();
    for m in run {
        let tag = m.made.0?;
        if !name.is_empty() {
            name.push(',');
        }
        name.push_str(&tag.to_string());
    }
    (!name.is_empty()).then_some(name)
}

/// The wire messages of a stored call's result (`messages[i]` is `null` where one of the
/// others names it) and, per message, `sameAs[i] = k` (the caller's `messages[k]` unchanged,
/// `-1` otherwise) and `keptAs[i]`: the name of a layer-1 output the binding kept (when
/// `messages[i]` is `null`) or is to keep (when it is written), `-1` for none (see `name_code`
/// for how a name is said; `keptRuns`: the names said as `-2`, in order).
pub(super) struct Reused {
    pub wire: Wire,
    /// `None` on the plain path.
    pub refs: Option<Refs>,
}

/// The names of a stored call's result (see `Reused`), flattened into the result object.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Refs {
    same_as: Vec<f64>,
    kept_as: Vec<f64>,
    kept_runs: Vec<String>,
}

/// The model-visible wire messages of `request`; with `reuse` (a request assembled from the
/// store), a message that is the caller's `messages[k]` unchanged, or a remembered output the
/// binding kept, is left `null` and named instead (see `Reused`).
pub(super) fn wire_reusing(format: Format, request: &Request, reuse: Option<&Reuse>) -> Reused {
    let Some(r) = reuse else {
        return Reused { wire: wire(format, request), refs: None };
    };
    let (system, written) = write_request_with(format, request, &|run| match r.assembled.same_as(run) {
        Some(k) => Some(Named::Same(k)),
        None => made_name(run).map(|name| if r.kept.contains(&name) { Named::Kept(name) } else { Named::Keep(name) }),
    });
    let mut same_as = Vec::with_capacity(written.len());
    let mut kept_as = Vec::with_capacity(written.len());
    let mut runs = Vec::new();
    let messages = written
        .into_iter()
        .map(|w| {
            let (same, kept, value) = match w {
                Written::Same(k) => (k as f64, -1.0, Value::Null),
                Written::Kept(name) => (-1.0, name_code(name, &mut runs), Value::Null),
                Written::Keep(v, name) => (-1.0, name_code(name, &mut runs), v),
                Written::Value(v) => (-1.0, -1.0, v),
            };
            same_as.push(same);
            kept_as.push(kept);
            value
        })
        .collect();
    Reused { wire: Wire { messages, system }, refs: Some(Refs { same_as, kept_as, kept_runs: runs }) }
}
