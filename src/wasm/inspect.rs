//! `listAttachments` and `detectFormat`: what a page needs to show a conversation's attachments
//! and pick its format, from the core's own rules (docs/api.md).

use serde::Deserialize;
use wasm_bindgen::prelude::*;

use super::convert::{encode, run};
use super::json_input::{decode, options};
use crate::base::error::ErrorCode;
use crate::format::{detect::detect, Format};
use crate::guard::resolve_model;
use crate::sources::listed::list_attachments as list;
use crate::tokens::Encoding;

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ListOptions {
    format: Option<Format>,
    system: Option<serde_json::Value>,
    model: Option<String>,
    encoding: Option<Encoding>,
}

/// `listAttachments(messages, { format?, system?, model?, encoding? })`.
#[wasm_bindgen(js_name = listAttachments)]
pub fn list_attachments(messages: JsValue, opts: JsValue) -> Result<JsValue, JsValue> {
    run(|| {
        let o: ListOptions = options(&opts, "options")?;
        let model = resolve_model(o.model.as_deref(), o.encoding);
        let enc = model.encoding.require()?;
        let messages: serde_json::Value = decode(&messages, "messages", ErrorCode::InvalidMessages)?;
        encode(&list(enc, o.format.unwrap_or(model.format), &messages, o.system.as_ref())?)
    })
}

/// `detectFormat(messagesOrRequest)`: the format name, or `null` (also for `undefined`).
#[wasm_bindgen(js_name = detectFormat)]
pub fn detect_format(value: JsValue) -> Result<JsValue, JsValue> {
    run(|| {
        if value.is_undefined() || value.is_null() {
            return encode(&None::<Format>);
        }
        let v: serde_json::Value = decode(&value, "value", ErrorCode::InvalidMessages)?;
        encode(&detect(&v))
    })
}
