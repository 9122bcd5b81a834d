//! `guard.prepare(messages, options) -> Promise<PrepareResult>`: the whole pipeline, awaiting the
//! host's `summarize` callback, and the summaries made ahead of time in the background. The
//! guard's state is borrowed only inside synchronous blocks, never across an `await`, so the UI
//! may call other methods while a summary is pending.

use std::cell::RefCell;
use std::rc::Rc;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::convert::{encode, js_error, run};
use super::guard::{busy, read_request, ContextGuard};
use super::json_input::{now_ms, options};
use super::output::{stripped, wire, Wire};
use super::stored::{call_number, fresh_messages, kept_names, wire_reusing, Refs, Reuse, Reused};
use super::summarizer::{ask, linked_controller, log, AheadRun, AheadSlot, Callbacks, SummarizeRequest, Timing};
use crate::base::error::{Error, ErrorCode, Result};
use crate::format::{Format, Request};
use crate::guard::Guard;
use crate::pipeline::sanitize;
use crate::pipeline::session_state::SessionState;
use crate::pipeline::{FailureReason, Outcome, Pending, PrepareOptions, Step};
use crate::provider::pricing::CacheDecision;
use crate::report::metrics::{CompactionRecord, ContextMetrics};
use crate::report::trace::Trace;

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
    recent_tail_tokens: Option<u32>,
    ahead: Option<bool>,
    session_state: Option<SessionState>,
    /// The call's time on the host's clock (`Date.now()`), for whether the cache is warm.
    now: Option<f64>,
    /// An AbortSignal serializes as `{}`; it is read separately.
    #[allow(dead_code)]
    signal: Option<Value>,
    /// The callbacks, read separately (`Callbacks::read`); named here so that a typo of one is
    /// an unknown field with the name meant.
    #[allow(dead_code)]
    summarize: Option<IgnoredAny>,
    #[allow(dead_code)]
    on_progress: Option<IgnoredAny>,
    #[allow(dead_code)]
    on_trace: Option<IgnoredAny>,
    #[allow(dead_code)]
    logger: Option<IgnoredAny>,
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

pub(super) fn borrow_mut(inner: &Rc<RefCell<Guard>>) -> Result<std::cell::RefMut<'_, Guard>> {
    inner.try_borrow_mut().map_err(|_| busy())
}

/// What the summarizer is sent for `pending`, in the guard's format.
fn summarize_request(format: Format, pending: &Pending) -> Result<JsValue> {
    let source = Request { messages: pending.request.messages.clone(), ..Default::default() };
    let sw = wire(format, &source);
    encode(&SummarizeRequest {
        messages: sw.messages,
        system: sw.system,
        format,
        instructions: &pending.request.instructions,
        schema: &pending.request.schema,
        max_tokens: pending.request.max_tokens,
    })
}

/// Start making `pending`'s summary in the background: the call returns at once; the summary is
/// remembered when it ends (`ahead_finish`), and its trace goes to this call's `onTrace`.
fn start_ahead(
    inner: &Rc<RefCell<Guard>>,
    slot: &AheadSlot,
    format: Format,
    pending: Pending,
    cb: &Callbacks,
    timing: Timing,
) -> Result<()> {
    let req = summarize_request(format, &pending)?;
    let controller = linked_controller(cb.signal());
    let acb = cb.for_ahead(&controller);
    let (inner, done_slot) = (inner.clone(), slot.clone());
    log(
        &acb,
        format!("[SummaryCompact] ahead of time: {} messages in the summary source", pending.request.messages.len()),
    );
    let done = future_to_promise(async move {
        let started = now_ms();
        let (result, attempts) = ask(&acb, &req, timing, started, pending.max_attempts, true, |v| {
            let g = inner.try_borrow().map_err(|_| FailureReason::CallbackError)?;
            pending.validate(&g, v)
        })
        .await;
        let trace = match inner.try_borrow_mut() {
            Ok(mut g) => Some(crate::pipeline::ahead_finish(&mut g, pending, result, attempts, &now_ms)),
            Err(_) => None,
        };
        done_slot.borrow_mut().take();
        if let Some(t) = trace {
            log(
                &acb,
                format!(
                    "[SummaryCompact] ahead of time: {}{}",
                    if t.failure_reason.is_none() { "ready" } else { "failed" },
                    t.failure_reason.as_deref().map(|r| format!(" reason={r}")).unwrap_or_default()
                ),
            );
            if let Ok(v) = encode(&t) {
                acb.trace(&v);
            }
        }
        Ok(JsValue::UNDEFINED)
    });
    slot.borrow_mut().replace(AheadRun { done, controller });
    Ok(())
}

/// `prepare_start` until it is not waiting for a summary made ahead of time (it waits at most
/// once: the wait ends with the summary remembered or failed).
async fn start(
    inner: &Rc<RefCell<Guard>>,
    slot: &AheadSlot,
    request: &Request,
    popts: &PrepareOptions,
) -> Result<Step> {
    for _ in 0..3 {
        let step = crate::pipeline::prepare_start(&mut *borrow_mut(inner)?, request, popts, &now_ms)?;
        if !matches!(step, Step::AwaitAhead) {
            return Ok(step);
        }
        let running = slot.borrow().as_ref().map(|r| r.done.clone());
        match running {
            Some(done) => {
                let _ = JsFuture::from(done).await;
            }
            // Nothing runs here (its future was dropped): the core stops waiting for it.
            None => borrow_mut(inner)?.memory.ahead = crate::report::metrics::AheadState::Failed,
        }
    }
    Err(Error::new(ErrorCode::Internal, "a summary made ahead of time was still running after the wait"))
}

/// The `message_dropped` traces of what sanitation leaves out of `request`, the caller's input
/// (`system`: the `system` option it was read with): each with the index in the caller's
/// `messages` (of the message holding it, for a tool result that is a block of one) and its
/// tokens as the guard counts them. Empty after one read-only pass when nothing is broken.
fn dropped_traces(g: &Guard, format: Format, request: &Request, system: Option<&Value>) -> Result<Vec<Trace>> {
    let defects = sanitize::defects(&request.messages);
    if defects.is_empty() {
        return Ok(Vec::new());
    }
    let places = crate::format::place::places(format, &request.messages, system)?;
    let profile = crate::provider::models::profile(&g.model);
    let count = |m: &crate::message::Message| crate::count::count_message(&profile, m).total;
    let origin = |k: usize| match places.get(k).map(|p| p.message) {
        Some(crate::format::place::Origin::Message(i)) => Some(i),
        _ => None,
    };
    // The caller's messages that something is still read from.
    let gone: std::collections::HashSet<usize> = defects.iter().filter(|d| d.removed).map(|d| d.index).collect();
    let staying: std::collections::HashSet<usize> =
        (0..request.messages.len()).filter(|k| !gone.contains(k)).filter_map(origin).collect();
    Ok(defects
        .iter()
        .filter_map(|d| {
            let m = request.messages.get(d.index)?;
            let index = origin(d.index);
            let after = if d.removed { 0 } else { count(&sanitize::without_calls(m, &d.call_ids)) };
            let mut t = sanitize::trace(d, index, count(m), after);
            // For calls, `removed` says whether the caller's message went: one that several are
            // read from (a UI message's steps) stays while any of them does, and then only the
            // calls went. (A dropped result is the unit itself: a block, removed.)
            if d.removed && d.reason == sanitize::DropReason::UnansweredToolCall && index.is_some() {
                t.removed = Some(!index.is_some_and(|i| staying.contains(&i)));
            }
            Some(t)
        })
        .collect())
}

/// One `prepare` call as the binding runs it: the parsed request and options, the host's
/// callbacks, what the store lent (the fast path) and the repairs made while reading the input.
struct Call {
    request: Request,
    popts: PrepareOptions,
    cb: Callbacks,
    timing: Timing,
    reuse: Option<Reuse>,
    dropped: Vec<Trace>,
}

async fn run_pipeline(inner: Rc<RefCell<Guard>>, slot: AheadSlot, call: Call) -> Result<JsValue> {
    let Call { request, popts, cb, timing, mut reuse, dropped } = call;
    let started = now_ms();
    let step = start(&inner, &slot, &request, &popts).await;
    let format = {
        let mut g = borrow_mut(&inner)?;
        // The pipeline keeps what it needs of the request: the pieces lent by the store go back.
        if let Some(r) = reuse.as_mut() {
            g.give_back(request, &mut r.assembled);
        }
        g.format
    };
    let outcome: Outcome = match step? {
        Step::Done(mut o) => {
            if let Some(p) = o.ahead.take() {
                if cb.has_summarize() {
                    start_ahead(&inner, &slot, format, *p, &cb, timing)?;
                } else {
                    borrow_mut(&inner)?.memory.ahead = crate::report::metrics::AheadState::Idle;
                }
            }
            *o
        }
        Step::AwaitAhead => {
            return Err(Error::new(ErrorCode::Internal, "still waiting for a summary made ahead of time"))
        }
        Step::Summarize(pending) => {
            log(
                &cb,
                format!(
                    "[SummaryCompact] start: {} messages in the summary source, answer limit {} tokens",
                    pending.request.messages.len(),
                    pending.request.max_tokens
                ),
            );
            let req = summarize_request(format, &pending)?;
            let (result, attempts) = ask(&cb, &req, timing, started, pending.max_attempts, false, |v| {
                let g = inner.try_borrow().map_err(|_| FailureReason::CallbackError)?;
                pending.validate(&g, v)
            })
            .await;
            let mut g = borrow_mut(&inner)?;
            crate::pipeline::prepare_finish(&mut g, *pending, result, attempts, &now_ms)?
        }
    };
    let mut outcome = outcome;
    outcome.traces.splice(0..0, dropped);
    if let Some(c) = &outcome.compaction {
        log(
            &cb,
            format!(
                "[SummaryCompact] {}: before={} after={} saved={} removed={} attempts={} duration={:.0}ms{}",
                c.status,
                c.before_tokens,
                c.after_tokens,
                c.tokens_saved,
                c.removed_items,
                c.attempts,
                c.duration_ms,
                c.failure_reason.as_deref().map(|r| format!(" reason={r}")).unwrap_or_default()
            ),
        );
    }
    for t in &outcome.traces {
        if let Ok(v) = encode(t) {
            cb.trace(&v);
        }
    }
    let Reused { wire: visible, refs } =
        wire_reusing(format, &stripped(std::mem::take(&mut outcome.request), outcome.notes_as_user), reuse.as_ref());
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

/// `restore`'s argument: a checkpoint (`{ messages, system }`, what `prepare` returned as
/// `result.checkpoint`, after a JSON round trip) or its message array.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CheckpointArg {
    messages: Value,
    #[serde(default)]
    system: Option<Value>,
}

#[wasm_bindgen(js_class = ContextGuard)]
impl ContextGuard {
    /// `guard.prepare(messages, options) -> Promise<PrepareResult>`. Rejects only on misuse
    /// (bad input: a `CtxguardError`); a failing, hanging or garbage-returning summarizer ends
    /// in a `degraded` result.
    pub fn prepare(&self, messages: JsValue, opts: JsValue) -> js_sys::Promise {
        let (inner, slot) = (self.inner.clone(), self.ahead.clone());
        let setup = run(|| {
            let (popts, cb, timing, o) = prepare_setup(&opts)?;
            let g = inner.try_borrow().map_err(|_| busy())?;
            let request = read_request(g.format, &messages, o.system.as_ref(), o.tools.as_ref())?;
            let dropped = dropped_traces(&g, g.format, &request, o.system.as_ref())?;
            Ok((request, popts, cb, timing, dropped))
        });
        future_to_promise(async move {
            let (request, popts, cb, timing, dropped) = setup?;
            run_pipeline(inner, slot, Call { request, popts, cb, timing, reuse: None, dropped }).await.map_err(js_error)
        })
    }

    /// The fast path of `prepare` behind `src/js/memo.js` (not public API): the conversation as
    /// ids, as in `measureStored`. `undefined` when an id is unknown (the binding then takes the
    /// plain path); otherwise the promise of `prepare`'s result plus `sameAs` and `keptAs` (see
    /// `Reused`), which the binding turns into copies of the caller's messages and of the
    /// outputs it kept (`kept`: their names, see `kept_names`).
    #[wasm_bindgen(js_name = prepareStored)]
    pub fn prepare_stored(&self, ids: Vec<u32>, fresh: JsValue, call: f64, kept: JsValue, opts: JsValue) -> JsValue {
        let (inner, slot) = (self.inner.clone(), self.ahead.clone());
        let setup = run(|| {
            let (popts, cb, timing, o) = prepare_setup(&opts)?;
            let fresh = fresh_messages(&fresh)?;
            let mut g = borrow_mut(&inner)?;
            let assembled = g.lend_ids(&ids, &fresh, call_number(call), o.system.as_ref(), o.tools.as_ref())?;
            let Some(a) = assembled else { return Ok(None) };
            let dropped = dropped_traces(&g, g.format, &a.request, o.system.as_ref())?;
            Ok(Some((a, popts, cb, timing, dropped)))
        });
        let setup = match setup {
            Ok(None) => return JsValue::UNDEFINED,
            Ok(Some(s)) => Ok(s),
            Err(e) => Err(e),
        };
        future_to_promise(async move {
            let (mut assembled, popts, cb, timing, dropped) = setup?;
            let request = std::mem::take(&mut assembled.request);
            let reuse = Reuse { assembled, kept: kept_names(&kept) };
            run_pipeline(inner, slot, Call { request, popts, cb, timing, reuse: Some(reuse), dropped })
                .await
                .map_err(js_error)
        })
        .into()
    }

    /// `guard.restore(checkpoint) -> { restored, coveredMessages, reason }`: remember the
    /// summary of a stored checkpoint (after a reload), so that `prepare` on the full display
    /// history applies it instead of asking the summarizer again. A checkpoint that does not
    /// verify under the guard's `checkpointKey` is not restored (`reason`); one that does not
    /// match the history is never applied (see `guard::memory`), and the first `prepare` after
    /// it says so (a `summary_compact` `noop` trace, `failureReason: 'checkpoint_mismatch'`).
    pub fn restore(&self, checkpoint: JsValue) -> std::result::Result<JsValue, JsValue> {
        run(|| {
            let format = self.inner.try_borrow().map(|g| g.format).map_err(|_| busy())?;
            let request = if js_sys::Array::is_array(&checkpoint) {
                read_request(format, &checkpoint, None, None)?
            } else {
                let c: CheckpointArg = options(&checkpoint, "checkpoint")?;
                crate::format::parse_request(format, &c.messages, c.system.as_ref(), None)?
            };
            let restored = crate::pipeline::restore(&mut *borrow_mut(&self.inner)?, &request);
            encode(&restored)
        })
    }

    /// `guard.resetBreaker()`: close the summarizer's circuit breaker now.
    #[wasm_bindgen(js_name = resetBreaker)]
    pub fn reset_breaker(&self) -> std::result::Result<(), JsValue> {
        run(|| {
            borrow_mut(&self.inner)?.breaker.reset();
            Ok(())
        })
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
        recent_tail_tokens: o.recent_tail_tokens,
        ahead: o.ahead,
        session_state: o.session_state.take(),
        now: match o.now {
            Some(t) if !t.is_finite() => {
                return Err(Error::options(format!(
                    "now must be a finite number of milliseconds (Date.now()), got {t}"
                )))
            }
            other => other,
        },
    };
    Ok((popts, cb, timing, o))
}
