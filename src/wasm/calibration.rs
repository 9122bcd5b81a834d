//! `guard.observeUsage(...)`, `guard.observeOverflow(...)` and `guard.calibration` (get and set):
//! calibration from reported usage and from overflow errors.

use serde::Deserialize;
use wasm_bindgen::prelude::*;

use super::convert::{encode, run};
use super::guard::{busy, ContextGuard};
use super::json_input::{decode, options};
use crate::base::error::{Error, ErrorCode, Result};
use crate::guard::Guard;
use crate::provider::calibration::{CalibrationState, ReportedUsage};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ObserveUsageArgs {
    messages: serde_json::Value,
    system: Option<serde_json::Value>,
    tools: Option<serde_json::Value>,
    usage: ReportedUsage,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ObserveOverflowOptions {
    system: Option<serde_json::Value>,
    tools: Option<serde_json::Value>,
}

impl Default for ObserveUsageArgs {
    fn default() -> Self {
        ObserveUsageArgs {
            messages: serde_json::Value::Null,
            system: None,
            tools: None,
            usage: ReportedUsage::default(),
        }
    }
}

#[wasm_bindgen(js_class = ContextGuard)]
impl ContextGuard {
    /// `guard.observeUsage({ messages, tools?, system?, usage })`: learn from the provider's
    /// reported input tokens for the request that was sent; returns this model's calibration.
    #[wasm_bindgen(js_name = observeUsage)]
    pub fn observe_usage(&self, args: JsValue) -> std::result::Result<JsValue, JsValue> {
        run(|| {
            if args.is_undefined() || args.is_null() {
                return Err(Error::options("observeUsage needs { messages, usage }"));
            }
            let a: ObserveUsageArgs = options(&args, "observeUsage")?;
            let messages = messages_array(&a.messages)?;
            let mut g = self.inner.try_borrow_mut().map_err(|_| busy())?;
            let request = crate::format::parse_request(g.format, &messages, a.system.as_ref(), a.tools.as_ref())?;
            g.observe_usage(&request, &a.usage)?;
            encode(&g.calibration_summary())
        })
    }

    /// `guard.observeOverflow(error, messages, { system?, tools? })`: learn from a provider's
    /// context-overflow error about the request built from `messages` (the figure it states);
    /// returns what was learned. Never throws on the error itself (anything is classified);
    /// `messages` and the options are checked as `measure`'s.
    #[wasm_bindgen(js_name = observeOverflow)]
    pub fn observe_overflow(
        &self,
        error: JsValue,
        messages: JsValue,
        opts: JsValue,
    ) -> std::result::Result<JsValue, JsValue> {
        run(|| {
            let o: ObserveOverflowOptions = options(&opts, "options")?;
            let classification = super::overflow::classify_js(&error);
            let format = self.inner.try_borrow().map_err(|_| busy())?.format;
            let request = super::guard::read_request(format, &messages, o.system.as_ref(), o.tools.as_ref())?;
            let mut g = self.inner.try_borrow_mut().map_err(|_| busy())?;
            encode(&g.observe_overflow(&request, &classification))
        })
    }

    /// `guard.calibration`: the whole calibration state, plain JSON to persist.
    #[wasm_bindgen(getter)]
    pub fn calibration(&self) -> std::result::Result<JsValue, JsValue> {
        run(|| {
            let g = self.inner.try_borrow().map_err(|_| busy())?;
            encode(&g.ledger.calibration)
        })
    }

    /// `guard.calibration = state`: restore a saved state (validated: `INVALID_OPTIONS`).
    #[wasm_bindgen(setter)]
    pub fn set_calibration(&self, state: JsValue) -> std::result::Result<(), JsValue> {
        run(|| {
            let s: CalibrationState = decode(&state, "calibration", ErrorCode::InvalidOptions)?;
            let mut g: std::cell::RefMut<'_, Guard> = self.inner.try_borrow_mut().map_err(|_| busy())?;
            g.ledger.set_calibration(s)
        })
    }
}

/// `messages` must be an array (the same check `read_request` makes).
fn messages_array(v: &serde_json::Value) -> Result<serde_json::Value> {
    if v.is_array() {
        Ok(v.clone())
    } else {
        Err(Error::new(ErrorCode::InvalidMessages, "messages must be an array"))
    }
}
