//! `guard.settle(messages, options) -> Promise<Settlement>`: end-of-run settlement through the
//! host's `summarize` callback, with the same attempts, timeout and fallback as compaction.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::convert::{encode, js_error, run};
use super::guard::{busy, read_request, ContextGuard};
use super::json_input::{now_ms, options};
use super::output::wire;
use super::prepare::borrow_mut;
use super::summarizer::{ask, Callbacks, SummarizeRequest, Timing};
use crate::format::Request;
use crate::pipeline::session_state::{render, Answer, SessionState};
use crate::pipeline::{settle, FailureReason};

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsSettleOptions {
    system: Option<Value>,
    tools: Option<Value>,
    timeout_ms: Option<f64>,
    heartbeat_ms: Option<f64>,
    retry_delay_ms: Option<f64>,
    #[allow(dead_code)]
    signal: Option<Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsSettlement {
    session_state: SessionState,
    memory_entries: Vec<String>,
    reflections: Vec<String>,
    learnings: Vec<String>,
    /// The SessionState rendered as the next run's history (one system message's text).
    rendered: String,
    degraded: bool,
    degraded_reason: Option<FailureReason>,
    attempts: u32,
}

#[wasm_bindgen(js_class = ContextGuard)]
impl ContextGuard {
    /// `guard.settle(messages, { summarize, signal?, timeoutMs?, heartbeatMs?, retryDelayMs?, onProgress?,
    /// logger?, system?, tools? })`. Rejects only on bad input.
    pub fn settle(&self, messages: JsValue, opts: JsValue) -> js_sys::Promise {
        let inner = self.inner.clone();
        let setup = run(|| {
            // Callbacks first: a callback of the wrong type is named as such, not as an unknown field.
            let cb = Callbacks::read(&opts)?;
            let o: JsSettleOptions = options(&opts, "options")?;
            let timing = Timing::read(o.timeout_ms, o.heartbeat_ms, o.retry_delay_ms)?;
            let format = inner.try_borrow().map(|g| g.format).map_err(|_| busy())?;
            let request = read_request(format, &messages, o.system.as_ref(), o.tools.as_ref())?;
            Ok((request, cb, timing, format))
        });
        future_to_promise(async move {
            let (request, cb, timing, format) = setup?;
            let started = now_ms();
            let sreq = {
                let mut g = borrow_mut(&inner).map_err(js_error)?;
                settle::request(&mut g, &request.messages)
            };
            let sw = wire(format, &Request { messages: sreq.messages.clone(), ..Default::default() });
            let req = encode(&SummarizeRequest {
                messages: sw.messages,
                system: sw.system,
                format,
                instructions: &sreq.instructions,
                schema: &sreq.schema,
                max_tokens: sreq.max_tokens,
            })
            .map_err(js_error)?;
            let (result, attempts) =
                ask(&cb, &req, timing, started, crate::pipeline::MAX_ATTEMPTS, false, settle::validate).await;
            let g = inner.try_borrow().map_err(|_| js_error(busy()))?;
            let (settlement, reason) = match result {
                Ok(s) => (s, None),
                Err(r) => (settle::fallback(&g, &request.messages, r), Some(r)),
            };
            // Sealed like a compaction summary, so the next run recognizes it as its history.
            let rendered = crate::message::checkpoint::seal(
                &render(&Answer::State(settlement.session_state.clone())),
                g.checkpoint_key(),
                None,
            );
            encode(&JsSettlement {
                session_state: settlement.session_state,
                memory_entries: settlement.memory_entries,
                reflections: settlement.reflections,
                learnings: settlement.learnings,
                rendered,
                degraded: reason.is_some(),
                degraded_reason: reason,
                attempts,
            })
            .map_err(js_error)
        })
    }
}
