//! The host's summarizer, from the binding's side: the callbacks of a call, how long each attempt
//! may take, and the attempts themselves — driven by the core's `pipeline::attempts` state
//! machine, which decides what comes next (call, pause, stop); here only the waiting happens.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::json_input::{callback, decode};
use crate::base::error::{Error, ErrorCode, Result};
use crate::format::Format;
use crate::pipeline::attempts::{Attempts, Next};
use crate::pipeline::{FailureReason, DEFAULT_RETRY_DELAY_MS};

#[wasm_bindgen(module = "/src/js/summarize.js")]
extern "C" {
    /// One attempt: `summarize(request)` within `timeout_ms`, heartbeats as `beat` says (`beat`).
    #[wasm_bindgen(js_name = callSummarizer)]
    fn call_summarizer(
        summarize: &js_sys::Function,
        request: &JsValue,
        timeout_ms: f64,
        signal: &JsValue,
        beat: &JsValue,
    ) -> js_sys::Promise;

    fn notify(f: &JsValue, arg: &JsValue);

    /// Resolves `true` after `ms`, or `false` at once when `signal` aborts; heartbeats meanwhile.
    fn pause(ms: f64, signal: &JsValue, beat: &JsValue) -> js_sys::Promise;

    /// An AbortController whose signal aborts when `signal` (if any) aborts.
    #[wasm_bindgen(js_name = linkedController)]
    pub(super) fn linked_controller(signal: &JsValue) -> JsValue;

    /// `controller.abort()`, ignoring what it throws.
    #[wasm_bindgen(js_name = abortController)]
    pub(super) fn abort_controller(controller: &JsValue);

    /// `controller.signal`.
    #[wasm_bindgen(js_name = signalOf)]
    fn signal_of(controller: &JsValue) -> JsValue;
}

/// Default time the summarizer gets per attempt.
pub(super) const DEFAULT_TIMEOUT_MS: f64 = 60_000.0;
/// Default heartbeat period while waiting.
pub(super) const DEFAULT_HEARTBEAT_MS: f64 = 1_000.0;

/// How the summarizer is waited for: each attempt's timeout, the heartbeat period, and the base of
/// the pause before a retry (`timeoutMs`, `heartbeatMs`, `retryDelayMs`).
#[derive(Clone, Copy)]
pub(super) struct Timing {
    pub timeout: f64,
    pub heartbeat: f64,
    pub retry_delay: f64,
}

impl Timing {
    pub(super) fn read(
        timeout_ms: Option<f64>,
        heartbeat_ms: Option<f64>,
        retry_delay_ms: Option<f64>,
    ) -> Result<Timing> {
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

#[derive(Clone)]
pub(super) struct Callbacks {
    summarize: Option<js_sys::Function>,
    on_progress: JsValue,
    on_trace: JsValue,
    logger: JsValue,
    signal: JsValue,
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

pub(super) fn log(cb: &Callbacks, line: String) {
    if cb.logger.is_function() {
        notify(&cb.logger, &JsValue::from_str(&line));
    }
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

    /// The callbacks of a summary made ahead of time: this call's, with the signal of
    /// `controller` (which aborts when this call's signal does, or when the guard is freed).
    pub(super) fn for_ahead(&self, controller: &JsValue) -> Callbacks {
        Callbacks { signal: signal_of(controller), ..self.clone() }
    }

    pub(super) fn trace(&self, v: &JsValue) {
        if self.on_trace.is_function() {
            notify(&self.on_trace, v);
        }
    }

    pub(super) fn signal(&self) -> &JsValue {
        &self.signal
    }

    pub(super) fn has_summarize(&self) -> bool {
        self.summarize.is_some()
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
    if v.is_object()
        && get("aborted").as_bool().is_some()
        && get("addEventListener").is_function()
        && get("removeEventListener").is_function()
    {
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

/// Ask the host's summarizer as many times as `max_attempts` allows (the core's `Attempts`),
/// validating each answer. Never fails: the outcome is the validated answer or the last failure
/// reason, with the attempts made. `ahead`: a summary made ahead of time (heartbeats say so).
pub(super) async fn ask<T>(
    cb: &Callbacks,
    req: &JsValue,
    timing: Timing,
    started: f64,
    max_attempts: u32,
    ahead: bool,
    validate: impl Fn(&Value) -> std::result::Result<T, FailureReason>,
) -> (std::result::Result<T, FailureReason>, u32) {
    let Some(f) = &cb.summarize else {
        return (Err(FailureReason::NoCallback), 0);
    };
    let mut attempts = Attempts::new(max_attempts, timing.retry_delay);
    let mut next = attempts.start();
    loop {
        match next {
            Next::Stop => return (Err(attempts.last_failure()), attempts.made()),
            Next::Ask(attempt) => {
                let promise =
                    call_summarizer(f, req, timing.timeout, &cb.signal, &beat(cb, timing, attempt, started, ahead));
                let settled = JsFuture::from(promise).await.unwrap_or(JsValue::NULL);
                let call: Option<CallResult> = decode(&settled, "summarize result", ErrorCode::Internal).ok();
                let result = match &call {
                    Some(c) if c.ok => validate(&c.value),
                    Some(c) => Err(reason_of(c)),
                    // The answer could not be read as JSON (a cycle, a BigInt...).
                    None => Err(FailureReason::InvalidOutput),
                };
                let reason = match result {
                    Ok(answer) => {
                        attempts.succeeded();
                        return (Ok(answer), attempts.made());
                    }
                    Err(r) => r,
                };
                next = attempts.failed(reason, js_sys::Math::random());
                // A thrown error's message; for an answer that did not validate, what came back
                // (the host's summarizer returned the wrong shape: the log line shows it).
                let message = call.as_ref().and_then(|c| {
                    c.message.clone().or_else(|| {
                        (c.ok && matches!(reason, FailureReason::InvalidOutput | FailureReason::EmptyOutput)).then(
                            || {
                                let text = crate::base::json_text::text(&c.value);
                                let shown: String = text.chars().take(120).collect();
                                let more = if shown.len() < text.len() { "…" } else { "" };
                                format!("it returned {shown}{more}")
                            },
                        )
                    })
                });
                let pause_ms = match next {
                    Next::Pause { ms, .. } => Some(ms),
                    _ => None,
                };
                log(
                    cb,
                    format!(
                        "[SummaryCompact] attempt {attempt} failed: {}{}{}",
                        reason.as_str(),
                        message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default(),
                        pause_ms.map(|ms| format!("; next attempt in {ms:.0} ms")).unwrap_or_default()
                    ),
                );
            }
            Next::Pause { ms, before } => {
                // An abort during the pause ends the attempts as an abort during a call does.
                let waited = JsFuture::from(pause(ms, &cb.signal, &beat(cb, timing, before, started, ahead)))
                    .await
                    .ok()
                    .and_then(|v| v.as_bool())
                    .unwrap_or(false);
                if !waited {
                    log(cb, format!("[SummaryCompact] aborted during the pause before attempt {before}"));
                }
                next = attempts.paused(waited);
            }
        }
    }
}

/// The heartbeats of a wait, as `src/js/summarize.js` reads them: `{ heartbeatMs, onProgress,
/// attempt, startedMs, ahead }` (the attempt made or waited for; `ahead`: a summary made ahead).
fn beat(cb: &Callbacks, timing: Timing, attempt: u32, started_ms: f64, ahead: bool) -> JsValue {
    let o = js_sys::Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = js_sys::Reflect::set(&o, &JsValue::from_str(k), &v);
    };
    set("heartbeatMs", JsValue::from_f64(timing.heartbeat));
    set("onProgress", cb.on_progress.clone());
    set("attempt", JsValue::from(attempt));
    set("startedMs", JsValue::from_f64(started_ms));
    set("ahead", JsValue::from_bool(ahead));
    o.into()
}

fn positive(v: Option<f64>, default: f64, what: &str) -> Result<f64> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
        Some(x) => Err(Error::options(format!("{what} must be a number >= 0, got {x}"))),
    }
}

/// A summary being made ahead of time: settles once it ended (and `ahead_finish` ran); its
/// controller aborts the summarizer's signal (`guard.free()`, or the starting call's signal).
pub(super) struct AheadRun {
    pub done: js_sys::Promise,
    pub controller: JsValue,
}

/// The guard's running summary made ahead of time, if any (shared with its future).
pub(super) type AheadSlot = Rc<RefCell<Option<AheadRun>>>;

/// Abort the summary being made ahead of time, if any (`guard.free()`).
pub(super) fn cancel_ahead(slot: &AheadSlot) {
    if let Some(run) = slot.borrow_mut().take() {
        abort_controller(&run.controller);
    }
}
