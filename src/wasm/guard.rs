//! `ContextGuard` and `countMessages`.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use super::convert::{encode, run};
use super::json_input::{callback, decode, now_ms, options};
use super::stored::{call_number, fresh_messages, kept_names, wire_reusing, Refs, Reuse};
use crate::base::error::{ErrorCode, Result};
use crate::format::place::{places, Place};
use crate::format::{parse_request, write_request, Format, Request};
use crate::guard::{resolve_model, Guard, GuardConfig};
use crate::provider::models::CountKind;
use crate::report::metrics::ContextMetrics;
use crate::report::trace::Trace;
use crate::tokens::Encoding;

/// Messages as JS hands them over, read once through JSON, with the options' system and tools.
pub(super) fn read_request(
    format: Format,
    messages: &JsValue,
    system: Option<&serde_json::Value>,
    tools: Option<&serde_json::Value>,
) -> Result<Request> {
    let messages: serde_json::Value = decode(messages, "messages", ErrorCode::InvalidMessages)?;
    parse_request(format, &messages, system, tools)
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CountMessagesOptions {
    model: Option<String>,
    encoding: Option<Encoding>,
    format: Option<Format>,
    system: Option<serde_json::Value>,
    tools: Option<serde_json::Value>,
    /// Also say where each counted message sits in the input (`places`).
    #[serde(default)]
    places: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CountMessagesResult {
    total: u32,
    per_message: Vec<u32>,
    tool_definitions: u32,
    priming: u32,
    exact: bool,
    kind: CountKind,
    encoding: Encoding,
    #[serde(skip_serializing_if = "Option::is_none")]
    places: Option<Vec<Place>>,
}

/// `countMessages(messages, { model?, encoding?, format?, system?, tools?, places? })`.
#[wasm_bindgen(js_name = countMessages)]
pub fn count_messages(messages: JsValue, opts: JsValue) -> std::result::Result<JsValue, JsValue> {
    run(|| {
        let o: CountMessagesOptions = options(&opts, "options")?;
        let model = resolve_model(o.model.as_deref(), o.encoding);
        model.encoding.require()?;
        let value: serde_json::Value = decode(&messages, "messages", ErrorCode::InvalidMessages)?;
        // Without a `format`, UI messages are read as such (a useChat app counts what it holds);
        // anything else in the model's default format.
        let format = o.format.unwrap_or_else(|| match crate::format::detect::evidence_format(&value) {
            Some(Format::AiSdkUi) => Format::AiSdkUi,
            _ => model.format,
        });
        let request = parse_request(format, &value, o.system.as_ref(), o.tools.as_ref())?;
        let profile = crate::provider::models::profile(&model);
        let rc = crate::count::count_request(&profile, &request.messages, &request.tools);
        let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        // The request can be an estimate for an exact model (Gemini with media: count::gemini).
        let kind = if rc.accuracy == crate::count::CountKind::Exact { model.kind } else { CountKind::Estimate };
        let places = if o.places { Some(places(format, &request.messages, o.system.as_ref())?) } else { None };
        encode(&CountMessagesResult {
            total: to_u32(rc.total),
            per_message: rc.per_message.iter().map(|c| to_u32(c.total)).collect(),
            tool_definitions: to_u32(rc.tool_definitions),
            priming: to_u32(rc.priming),
            exact: kind == CountKind::Exact,
            kind,
            encoding: model.encoding,
            places,
        })
    })
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MeasureOptions {
    system: Option<serde_json::Value>,
    tools: Option<serde_json::Value>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GuardSourcesOptions {
    system: Option<serde_json::Value>,
    tools: Option<serde_json::Value>,
    #[serde(default)]
    emergency: bool,
    /// Read separately (`callback`); named so that a typo of it is an unknown field.
    #[allow(dead_code)]
    on_trace: Option<serde::de::IgnoredAny>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SourcesResult {
    messages: Vec<serde_json::Value>,
    /// Anthropic only: the request's `system`.
    system: Option<serde_json::Value>,
    metrics: ContextMetrics,
    traces: Vec<Trace>,
    /// The stored path only (see `guardSourcesStored`).
    #[serde(flatten)]
    refs: Option<Refs>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CacheStats {
    entries: u32,
    hits: f64,
    misses: f64,
}

/// A guard bound to one model and budget. Holds the per-message count cache.
///
/// State lives behind an `Rc<RefCell<_>>` that every method borrows only for the duration of a
/// synchronous call, so async methods (later) can clone it instead of holding `&self` across an
/// `await`.
#[wasm_bindgen(js_name = ContextGuard)]
pub struct ContextGuard {
    pub(super) inner: Rc<RefCell<Guard>>,
    /// The summary being made ahead of time, if any (`prepare.rs`).
    pub(super) ahead: super::summarizer::AheadSlot,
}

impl Drop for ContextGuard {
    /// `guard.free()`: a summary being made ahead of time is aborted.
    fn drop(&mut self) {
        super::summarizer::cancel_ahead(&self.ahead);
    }
}

#[wasm_bindgen(js_class = ContextGuard)]
impl ContextGuard {
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue) -> std::result::Result<ContextGuard, JsValue> {
        run(|| {
            let cfg: GuardConfig = options(&config, "config")?;
            Ok(ContextGuard { inner: Rc::new(RefCell::new(Guard::new(&cfg)?)), ahead: Default::default() })
        })
    }

    /// `guard.budget`.
    #[wasm_bindgen(getter)]
    pub fn budget(&self) -> std::result::Result<JsValue, JsValue> {
        run(|| self.with(|g| encode(&g.budget)))
    }

    /// `guard.model`.
    #[wasm_bindgen(getter)]
    pub fn model(&self) -> std::result::Result<JsValue, JsValue> {
        run(|| self.with(|g| encode(&g.model)))
    }

    /// `guard.sourceLimits`.
    #[wasm_bindgen(getter, js_name = sourceLimits)]
    pub fn source_limits(&self) -> std::result::Result<JsValue, JsValue> {
        run(|| self.with(|g| encode(&g.source_limits())))
    }

    /// `guard.cacheStats`.
    #[wasm_bindgen(getter, js_name = cacheStats)]
    pub fn cache_stats(&self) -> std::result::Result<JsValue, JsValue> {
        run(|| {
            self.with(|g| {
                let (entries, hits, misses) = g.counter.cache_stats();
                encode(&CacheStats {
                    entries: u32::try_from(entries).unwrap_or(u32::MAX),
                    hits: hits as f64,
                    misses: misses as f64,
                })
            })
        })
    }

    /// `guard.guardSources(messages, { tools?, system?, emergency?, onTrace? })`: layer 1 only
    /// (tool-output compaction and attachment previews). Returns the model-visible messages,
    /// their metrics and the traces; `messages` is not modified.
    #[wasm_bindgen(js_name = guardSources)]
    pub fn guard_sources(&self, messages: JsValue, opts: JsValue) -> std::result::Result<JsValue, JsValue> {
        let out = run(|| {
            let on_trace = callback(&opts, "onTrace")?;
            let o: GuardSourcesOptions = options(&opts, "options")?;
            let format = self.with(|g| Ok(g.format))?;
            let request = read_request(format, &messages, o.system.as_ref(), o.tools.as_ref())?;
            self.with_mut(|g| {
                let r = g.guard_sources(&request, o.emergency, &now_ms);
                let (system, messages) = write_request(format, &r.request);
                Ok((
                    encode(&SourcesResult {
                        messages,
                        system,
                        metrics: r.metrics,
                        traces: r.traces.clone(),
                        refs: None,
                    })?,
                    r.traces,
                    on_trace,
                ))
            })
        })?;
        let (value, traces, on_trace) = out;
        report_traces(on_trace, &traces);
        Ok(value)
    }

    /// The fast path of `measure` behind `src/js/memo.js` (not public API): the conversation as
    /// ids, with the messages the guard has not seen in full (`fresh`: the messages, their ids
    /// and their positions; see `stored::fresh_messages`). `undefined` when an id is unknown (see `store.rs`).
    #[wasm_bindgen(js_name = measureStored)]
    pub fn measure_stored(
        &self,
        ids: Vec<u32>,
        fresh: JsValue,
        call: f64,
        opts: JsValue,
    ) -> std::result::Result<JsValue, JsValue> {
        run(|| {
            let o: MeasureOptions = options(&opts, "options")?;
            let fresh = fresh_messages(&fresh)?;
            self.with_mut(|g| {
                match g.measure_ids(&ids, &fresh, call_number(call), o.system.as_ref(), o.tools.as_ref())? {
                    Some(m) => encode(&m),
                    None => Ok(JsValue::UNDEFINED),
                }
            })
        })
    }

    /// The fast path of `guardSources` behind `src/js/memo.js` (not public API): as
    /// `measureStored`, and the result's `sameAs[i] = k` says that output message `i` is the
    /// caller's `messages[k]` unchanged (`messages[i]` is then `null`; the binding copies it);
    /// `keptAs` names the layer-1 outputs the binding kept or is to keep (`kept`:
    /// the names it holds, see `stored::kept_names`; and `prepare::Reused`).
    #[wasm_bindgen(js_name = guardSourcesStored)]
    pub fn guard_sources_stored(
        &self,
        ids: Vec<u32>,
        fresh: JsValue,
        call: f64,
        kept: JsValue,
        opts: JsValue,
    ) -> std::result::Result<JsValue, JsValue> {
        let out = run(|| {
            let on_trace = callback(&opts, "onTrace")?;
            let o: GuardSourcesOptions = options(&opts, "options")?;
            let fresh = fresh_messages(&fresh)?;
            self.with_mut(|g| {
                let Some(mut assembled) =
                    g.lend_ids(&ids, &fresh, call_number(call), o.system.as_ref(), o.tools.as_ref())?
                else {
                    return Ok(None);
                };
                let request = std::mem::take(&mut assembled.request);
                let r = g.guard_sources(&request, o.emergency, &now_ms);
                g.give_back(request, &mut assembled);
                let format = g.format;
                let reuse = Reuse { assembled, kept: kept_names(&kept) };
                let w = wire_reusing(format, &r.request, Some(&reuse));
                let result = SourcesResult {
                    messages: w.wire.messages,
                    system: w.wire.system,
                    metrics: r.metrics,
                    traces: r.traces.clone(),
                    refs: w.refs,
                };
                Ok(Some((encode(&result)?, r.traces, on_trace)))
            })
        })?;
        let Some((value, traces, on_trace)) = out else { return Ok(JsValue::UNDEFINED) };
        report_traces(on_trace, &traces);
        Ok(value)
    }

    /// `guard.measure(messages, { tools?, system? }) -> ContextMetrics`.
    pub fn measure(&self, messages: JsValue, opts: JsValue) -> std::result::Result<JsValue, JsValue> {
        run(|| {
            let o: MeasureOptions = options(&opts, "options")?;
            let format = self.with(|g| Ok(g.format))?;
            let request = read_request(format, &messages, o.system.as_ref(), o.tools.as_ref())?;
            self.with_mut(|g| encode(&g.measure(&request)))
        })
    }
}

/// Hand each trace to `onTrace`; a throwing `onTrace` must not break the call (its exception
/// is ignored).
fn report_traces(on_trace: Option<js_sys::Function>, traces: &[Trace]) {
    if let Some(f) = on_trace {
        for t in traces {
            if let Ok(v) = encode(t) {
                let _ = f.call1(&JsValue::UNDEFINED, &v);
            }
        }
    }
}

impl ContextGuard {
    fn with<T>(&self, f: impl FnOnce(&Guard) -> Result<T>) -> Result<T> {
        let g = self.inner.try_borrow().map_err(|_| busy())?;
        f(&g)
    }

    fn with_mut<T>(&self, f: impl FnOnce(&mut Guard) -> Result<T>) -> Result<T> {
        let mut g = self.inner.try_borrow_mut().map_err(|_| busy())?;
        f(&mut g)
    }
}

/// The error when the guard's state is already borrowed (a re-entrant call on this thread).
pub(super) fn busy() -> crate::base::error::Error {
    crate::base::error::Error::new(ErrorCode::Internal, "the guard is in use by another call on this thread")
}
