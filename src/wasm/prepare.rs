//! `guard.prepare(messages, options) -> Promise<PrepareResult>`: the whole pipeline, awaiting the
//! host's `summarize` callback. The guard's state is borrowed only inside synchronous blocks,
//! never across an `await`, so the UI may call other methods while a summary is pending.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::convert::{encode, js_error, run};
use super::json_input::{callback, decode, now_ms, options};
use super::guard::{busy, call_number, fresh_messages, read_request, ContextGuard};
use crate::error::{Error, ErrorCode, Result};
use crate::format::{write_request, write_request_with, Format, Named, Request, Written};
use rustc_hash::FxHashSet;
use crate::store::Assembled;
use crate::guard::Guard;
use crate::message::Message;
use crate::guards::Trace;
use crate::metrics::{CompactionRecord, ContextMetrics};
use crate::pipeline::session_state::SessionState;
use crate::pipeline::{retry_pause_ms, FailureReason, Outcome, PrepareOptions, Step, DEFAULT_RETRY_DELAY_MS, MAX_ATTEMPTS};
use crate::pricing::CacheDecision;

#[wasm_bindgen(module = "/src/js/summarize.js")]
extern "C" {
    #[wasm_bindgen(js_name = callSummarizer)]
    #[allow(clippy::too_many_arguments)]
    fn call_summarizer(
        summarize: &js_sys::Function,
        request: &JsValue,
        timeout_ms: f64,
        heartbeat_ms: f64,
        on_progress: &JsValue,
        signal: &JsValue,
        attempt: u32,
        started_ms: f64,
    ) -> js_sys::Promise;

    fn notify(f: &JsValue, arg: &JsValue);

    /// Resolves `true` after `ms`, or `false` at once when `signal` aborts; heartbeats meanwhile.
    fn pause(ms: f64, signal: &JsValue, heartbeat_ms: f64, on_progress: &JsValue, attempt: u32, started_ms: f64) -> js_sys::Promise;
}

/// Default time the summarizer gets per attempt.
pub(super) const DEFAULT_TIMEOUT_MS: f64 = 60_000.0;
/// Default heartbeat period while waiting.
pub(super) const DEFAULT_HEARTBEAT_MS: f64 = 1_000.0;

/// How the summarizer is waited for: each attempt's timeout, the heartbeat period, and the base of
/// the pause before a retry (`timeoutMs`, `heartbeatMs`, `retryDelayMs`).
#[derive(Clone, Copy)]
pub(super) struct Timing {
    timeout: f64,
    heartbeat: f64,
    retry_delay: f64,
}

impl Timing {
    pub(super) fn read(timeout_ms: Option<f64>, heartbeat_ms: Option<f64>, retry_delay_ms: Option<f64>) -> Result<Timing> {
        let timeout = match timeout_ms {
            // 0 would time every attempt out at once.
            Some(0.0) => return Err(Error::options("timeoutMs must be > 0 (milliseconds per summarizer attempt)")),
            other => positive(other, DEFAULT_TIMEOUT_MS, "timeoutMs")?,
        };
        Ok(Timing {
            timeout,
            heartbeat: positive(heartbeat_ms, DEFAULT_HEARTBEAT_MS, "heartbeatMs")?,
            retry_delay: positive(retry_delay_ms, DEFAULT_RETRY_DELAY_MS, "retryDelayMs")?,
        })
    }
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsPrepareOptions {
    system: Option<Value>,
    tools: Option<Value>,
    #[serde(default)]
    force: bool,
    guidance: Option<String>,
    timeout_ms: Option<f64>,
    heartbeat_ms: Option<f64>,
    retry_delay_ms: Option<f64>,
    summary_max_tokens: Option<u32>,
    retain_user_tokens: Option<u32>,
    session_state: Option<SessionState>,
    /// An AbortSignal serializes as `{}`; it is read separately.
    #[allow(dead_code)]
    signal: Option<Value>,
}

pub(super) struct Callbacks {
    summarize: Option<js_sys::Function>,
    on_progress: JsValue,
    on_trace: JsValue,
    logger: JsValue,
    signal: JsValue,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Wire {
    pub messages: Vec<Value>,
    pub system: Option<Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PrepareResult {
    messages: Vec<Value>,
    system: Option<Value>,
    metrics: ContextMetrics,
    traces: Vec<Trace>,
    compaction: Option<CompactionRecord>,
    checkpoint: Option<Wire>,
    degraded: bool,
    degraded_reason: Option<FailureReason>,
    dropped_messages: u32,
    session_state: Option<SessionState>,
    cache_decision: Option<CacheDecision>,
    /// The stored path only (see `prepareStored`).
    #[serde(flatten)]
    refs: Option<Refs>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SummarizeRequest<'a> {
    pub messages: Vec<Value>,
    pub system: Option<Value>,
    pub format: Format,
    pub instructions: &'a str,
    pub schema: &'a Value,
    pub max_tokens: u32,
}

#[derive(Deserialize)]
struct CallResult {
    ok: bool,
    #[serde(default)]
    value: Value,
    reason: Option<String>,
    message: Option<String>,
}

/// Model-visible messages carry no ctxguard metadata (providers reject unknown fields): no
/// markers, and no ids on the messages ctxguard created.
fn stripped(mut request: Request) -> Request {
    request.messages.iter_mut().for_each(Message::strip_metadata);
    request
}

pub(super) fn wire(format: Format, request: &Request) -> Wire {
    let (system, messages) = write_request(format, request);
    Wire { messages, system }
}

/// What the binding already holds, for a request assembled from the store: the assembly (the
/// caller's unchanged messages) and the names of the layer-1 outputs it kept from earlier
/// results (see `src/js/memo.js`).
pub(super) struct Reuse {
    pub assembled: Assembled,
    pub kept: FxHashSet<String>,
}

/// The names of the outputs the binding kept: `tags` (a name that is one tag crosses as a
/// number: no string to make on either side) and `runs` (an array of the other names, strings;
/// anything else names none).
pub(super) fn kept_names(tags: &[f64], runs: &JsValue) -> FxHashSet<String> {
    let mut names: FxHashSet<String> = tags.iter().filter(|t| t.is_finite() && **t >= 0.0).map(|t| format!("{t}")).collect();
    if js_sys::Array::is_array(runs) {
        names.extend(js_sys::Array::from(runs).iter().filter_map(|v| v.as_string()));
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

fn log(cb: &Callbacks, line: String) {
    if cb.logger.is_function() {
        notify(&cb.logger, &JsValue::from_str(&line));
    }
}

pub(super) fn borrow_mut(inner: &Rc<RefCell<Guard>>) -> Result<std::cell::RefMut<'_, Guard>> {
    inner
        .try_borrow_mut()
        .map_err(|_| busy())
}

impl Callbacks {
    pub(super) fn read(opts: &JsValue) -> Result<Callbacks> {
        Ok(Callbacks {
            summarize: callback(opts, "summarize")?,
            on_progress: callback(opts, "onProgress")?.map_or(JsValue::UNDEFINED, Into::into),
            on_trace: callback(opts, "onTrace")?.map_or(JsValue::UNDEFINED, Into::into),
            logger: callback(opts, "logger")?.map_or(JsValue::UNDEFINED, Into::into),
            signal: signal(opts)?,
        })
    }
}

/// `opts.signal`: absent, or an AbortSignal (an object with a boolean `aborted` and
/// `addEventListener` / `removeEventListener` methods); anything else is `INVALID_OPTIONS` rather
/// than a summarizer that fails every attempt.
fn signal(opts: &JsValue) -> Result<JsValue> {
    if !opts.is_object() {
        return Ok(JsValue::UNDEFINED);
    }
    let v = js_sys::Reflect::get(opts, &JsValue::from_str("signal")).unwrap_or(JsValue::UNDEFINED);
    if v.is_undefined() || v.is_null() {
        return Ok(JsValue::UNDEFINED);
    }
    let get = |k: &str| js_sys::Reflect::get(&v, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED);
    if v.is_object() && get("aborted").as_bool().is_some() && get("addEventListener").is_function() && get("removeEventListener").is_function() {
        Ok(v)
    } else {
        Err(Error::options("signal must be an AbortSignal (e.g. new AbortController().signal)"))
    }
}

fn reason_of(r: &CallResult) -> FailureReason {
    match r.reason.as_deref() {
        Some("timeout") => FailureReason::Timeout,
        Some("aborted") => FailureReason::Aborted,
        _ => FailureReason::CallbackError,
    }
}

/// Ask the host's summarizer up to MAX_ATTEMPTS times, validating each answer. Never fails:
/// the outcome is the validated answer or the last failure reason, with the attempts made.
pub(super) async fn ask<T>(
    cb: &Callbacks,
    req: &JsValue,
    timing: Timing,
    started: f64,
    validate: impl Fn(&Value) -> std::result::Result<T, FailureReason>,
) -> (std::result::Result<T, FailureReason>, u32) {
    let Some(f) = &cb.summarize else {
        return (Err(FailureReason::NoCallback), 0);
    };
    let mut result = Err(FailureReason::NoCallback);
    let mut attempts = 0;
    for attempt in 1..=MAX_ATTEMPTS {
        attempts = attempt;
        let promise = call_summarizer(f, req, timing.timeout, timing.heartbeat, &cb.on_progress, &cb.signal, attempt, started);
        let settled = JsFuture::from(promise).await.unwrap_or(JsValue::NULL);
        let call: Option<CallResult> = decode(&settled, "summarize result", ErrorCode::Internal).ok();
        result = match &call {
            Some(c) if c.ok => validate(&c.value),
            Some(c) => Err(reason_of(c)),
            // The answer could not be read as JSON (a cycle, a BigInt...).
            None => Err(FailureReason::InvalidOutput),
        };
        match &result {
            Ok(_) => break,
            Err(r) => {
                let message = call.as_ref().and_then(|c| c.message.clone());
                let pause_ms = retry_pause_ms(*r, attempt, timing.retry_delay, js_sys::Math::random());
                log(cb, format!(
                    "[SummaryCompact] attempt {attempt} failed: {}{}{}",
                    r.as_str(),
                    message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default(),
                    pause_ms.map(|ms| format!("; next attempt in {ms:.0} ms")).unwrap_or_default()
                ));
                if *r == FailureReason::Aborted {
                    break;
                }
                if let Some(ms) = pause_ms {
                    // An abort during the pause ends the attempts as an abort during a call does.
                    let next = attempt + 1;
                    let waited = JsFuture::from(pause(ms, &cb.signal, timing.heartbeat, &cb.on_progress, next, started))
                        .await
                        .ok()
                        .and_then(|v| v.as_bool())
                        .unwrap_or(false);
                    if !waited {
                        log(cb, format!("[SummaryCompact] aborted during the pause before attempt {next}"));
                        result = Err(FailureReason::Aborted);
                        break;
                    }
                }
            }
        }
    }
    (result, attempts)
}

async fn run_pipeline(inner: Rc<RefCell<Guard>>, request: Request, popts: PrepareOptions, cb: Callbacks, timing: Timing, mut reuse: Option<Reuse>) -> Result<JsValue> {
    let started = now_ms();
    let (format, step) = {
        let mut g = borrow_mut(&inner)?;
        let step = g.prepare_start(&request, &popts, &now_ms);
        // The pipeline keeps what it needs of the request: the pieces lent by the store go back.
        if let Some(r) = reuse.as_mut() {
            g.give_back(request, &mut r.assembled);
        }
        (g.format, step?)
    };
    let outcome: Outcome = match step {
        Step::Done(o) => *o,
        Step::Summarize(pending) => {
            log(&cb, format!(
                "[SummaryCompact] start: {} messages in the summary source, answer limit {} tokens",
                pending.request.messages.len(),
                pending.request.max_tokens
            ));
            let source = Request { messages: pending.request.messages.clone(), ..Default::default() };
            let sw = wire(format, &source);
            let req = encode(&SummarizeRequest {
                messages: sw.messages,
                system: sw.system,
                format,
                instructions: &pending.request.instructions,
                schema: &pending.request.schema,
                max_tokens: pending.request.max_tokens,
            })?;
            let (result, attempts) = ask(&cb, &req, timing, started, |v| {
                let g = inner.try_borrow().map_err(|_| FailureReason::CallbackError)?;
                pending.validate(&g, v)
            })
            .await;
            let mut g = borrow_mut(&inner)?;
            g.prepare_finish(*pending, result, attempts, &now_ms)?
        }
    };
    if let Some(c) = &outcome.compaction {
        log(&cb, format!(
            "[SummaryCompact] {}: before={} after={} saved={} removed={} attempts={} duration={:.0}ms{}",
            c.status,
            c.before_tokens,
            c.after_tokens,
            c.tokens_saved,
            c.removed_items,
            c.attempts,
            c.duration_ms,
            c.failure_reason.as_deref().map(|r| format!(" reason={r}")).unwrap_or_default()
        ));
    }
    if cb.on_trace.is_function() {
        for t in &outcome.traces {
            if let Ok(v) = encode(t) {
                notify(&cb.on_trace, &v);
            }
        }
    }
    let mut outcome = outcome;
    let Reused { wire: visible, refs } = wire_reusing(format, &stripped(std::mem::take(&mut outcome.request)), reuse.as_ref());
    let checkpoint = outcome.checkpoint.as_ref().map(|chain| {
        let r = Request { messages: chain.clone(), ..Default::default() };
        wire(format, &r)
    });
    encode(&PrepareResult {
        messages: visible.messages,
        system: visible.system,
        metrics: outcome.metrics,
        traces: outcome.traces,
        compaction: outcome.compaction,
        checkpoint,
        degraded: outcome.degraded,
        degraded_reason: outcome.degraded_reason,
        dropped_messages: outcome.dropped_messages,
        session_state: outcome.session_state,
        cache_decision: outcome.cache_decision,
        refs,
    })
}

fn positive(v: Option<f64>, default: f64, what: &str) -> Result<f64> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
        Some(x) => Err(Error::options(format!("{what} must be a number >= 0, got {x}"))),
    }
}

#[wasm_bindgen(js_class = ContextGuard)]
impl ContextGuard {
    /// `guard.prepare(messages, options) -> Promise<PrepareResult>`. Rejects only on misuse
    /// (bad input: a `CtxguardError`); a failing, hanging or garbage-returning summarizer ends
    /// in a `degraded` result.
    pub fn prepare(&self, messages: JsValue, opts: JsValue) -> js_sys::Promise {
        let inner = self.inner.clone();
        let setup = run(|| {
            let (popts, cb, timing, o) = prepare_setup(&opts)?;
            let format = inner.try_borrow().map(|g| g.format).map_err(|_| busy())?;
            let request = read_request(format, &messages, o.system.as_ref(), o.tools.as_ref())?;
            Ok((request, popts, cb, timing))
        });
        future_to_promise(async move {
            let (request, popts, cb, timing) = setup?;
            run_pipeline(inner, request, popts, cb, timing, None).await.map_err(js_error)
        })
    }

    /// The fast path of `prepare` behind `src/js/memo.js` (not public API): the conversation as
    /// ids, as in `measureStored`. `undefined` when an id is unknown (the binding then takes the
    /// plain path); otherwise the promise of `prepare`'s result plus `sameAs` and `keptAs` (see
    /// `Reused`), which the binding turns into copies of the caller's messages and of the
    /// outputs it kept (`kept_tags`, `kept_runs`: their names, see `kept_names`).
    #[wasm_bindgen(js_name = prepareStored)]
    #[allow(clippy::too_many_arguments)]
    pub fn prepare_stored(&self, ids: Vec<u32>, fresh: JsValue, fresh_ids: Vec<u32>, fresh_at: Vec<u32>, call: f64, kept_tags: Vec<f64>, kept_runs: JsValue, opts: JsValue) -> JsValue {
        let inner = self.inner.clone();
        let setup = run(|| {
            let (popts, cb, timing, o) = prepare_setup(&opts)?;
            let fresh = fresh_messages(&fresh, &fresh_ids, &fresh_at)?;
            let mut g = borrow_mut(&inner)?;
            let assembled = g.lend_ids(&ids, &fresh, call_number(call), o.system.as_ref(), o.tools.as_ref())?;
            Ok(assembled.map(|a| (a, popts, cb, timing)))
        });
        let setup = match setup {
            Ok(None) => return JsValue::UNDEFINED,
            Ok(Some(s)) => Ok(s),
            Err(e) => Err(e),
        };
        future_to_promise(async move {
            let (mut assembled, popts, cb, timing) = setup?;
            let request = std::mem::take(&mut assembled.request);
            let reuse = Reuse { assembled, kept: kept_names(&kept_tags, &kept_runs) };
            run_pipeline(inner, request, popts, cb, timing, Some(reuse)).await.map_err(js_error)
        })
        .into()
    }
}

/// `prepare`'s options, read in the order every path reads them: the callbacks first (a
/// callback of the wrong type is named as such, not as an unknown field), then the data.
fn prepare_setup(opts: &JsValue) -> Result<(PrepareOptions, Callbacks, Timing, JsPrepareOptions)> {
    let cb = Callbacks::read(opts)?;
    let mut o: JsPrepareOptions = options(opts, "options")?;
    let timing = Timing::read(o.timeout_ms, o.heartbeat_ms, o.retry_delay_ms)?;
    let popts = PrepareOptions {
        force: o.force,
        guidance: o.guidance.take(),
        summary_max_tokens: o.summary_max_tokens,
        retain_user_tokens: o.retain_user_tokens,
        session_state: o.session_state.take(),
    };
    Ok((popts, cb, timing, o))
}
