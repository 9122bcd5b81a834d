//! Source guards: `guard.guardSources`, `compactToolOutput`, `previewAttachment`,
//! `readAttachmentTool`, `readAttachment`.

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use super::convert::{encode, run, text_arg};
use super::json_input::options;
use crate::base::error::{Error, ErrorCode};
use crate::format::Format;
use crate::guard::resolve_model;
use crate::sources::attachment::{self, Found};
use crate::sources::reader;
use crate::sources::tool_output::{self, CompactOptions};
use crate::tokens::{self, Encoding};

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CompactToolOutputOptions {
    limit: Option<u32>,
    encoding: Option<Encoding>,
    model: Option<String>,
    #[serde(default)]
    emergency: bool,
    retrieval_tool: Option<String>,
    call_id: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Compacted {
    text: String,
    compacted: bool,
    original_tokens: u32,
    tokens: u32,
}

fn u32_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `compactToolOutput(text, { limit?, encoding?, model?, emergency?, retrievalTool?, callId? })`.
#[wasm_bindgen(js_name = compactToolOutput)]
pub fn compact_tool_output(text: JsValue, opts: JsValue) -> Result<JsValue, JsValue> {
    run(|| {
        let text = text_arg(&text, "text")?;
        let o: CompactToolOutputOptions = options(&opts, "options")?;
        let enc = resolve_model(o.model.as_deref(), o.encoding).encoding.require()?;
        let limit = o.limit.unwrap_or(crate::sources::pass::DEFAULT_TOOL_OUTPUT_LIMIT) as usize;
        let co = CompactOptions { limit, emergency: o.emergency, retrieval_tool: o.retrieval_tool, call_id: o.call_id };
        match tool_output::compact(enc, &text, &co) {
            Some(c) => encode(&Compacted {
                text: c.text,
                compacted: true,
                original_tokens: u32_of(c.original_tokens),
                tokens: u32_of(c.tokens),
            }),
            None => {
                let n = u32_of(tokens::count(enc, &text));
                encode(&Compacted { text, compacted: false, original_tokens: n, tokens: n })
            }
        }
    })
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PreviewOptions {
    limit: Option<u32>,
    id: Option<String>,
    name: Option<String>,
    #[serde(rename = "type")]
    media_type: Option<String>,
    encoding: Option<Encoding>,
    model: Option<String>,
}

/// `previewAttachment(text, { limit?, id?, name?, type?, encoding?, model? })`.
#[wasm_bindgen(js_name = previewAttachment)]
pub fn preview_attachment(text: JsValue, opts: JsValue) -> Result<JsValue, JsValue> {
    run(|| {
        let text = text_arg(&text, "text")?;
        let o: PreviewOptions = options(&opts, "options")?;
        let enc = resolve_model(o.model.as_deref(), o.encoding).encoding.require()?;
        let limit = o.limit.unwrap_or(crate::sources::pass::DEFAULT_ATTACHMENT_BUDGET) as usize;
        let n = tokens::count(enc, &text);
        let found = Found::standalone(
            o.id.unwrap_or_else(|| attachment::content_id(&text)),
            o.name,
            o.media_type,
            n,
            text.chars().count(),
        );
        if n <= limit || text.contains(attachment::MARKER) {
            return encode(&Compacted { original_tokens: u32_of(n), tokens: u32_of(n), compacted: false, text });
        }
        let preview = attachment::preview(enc, &text, &found, limit);
        let t = u32_of(tokens::count(enc, &preview));
        encode(&Compacted { text: preview, compacted: true, original_tokens: u32_of(n), tokens: t })
    })
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ToolOptions {
    format: Option<Format>,
}

/// `readAttachmentTool({ format? })`: the tool definition for the model.
#[wasm_bindgen(js_name = readAttachmentTool)]
pub fn read_attachment_tool(opts: JsValue) -> Result<JsValue, JsValue> {
    run(|| {
        let o: ToolOptions = options(&opts, "options")?;
        encode(&reader::tool_definition(o.format.unwrap_or_default()))
    })
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ReadOptions {
    id: Option<String>,
    offset: Option<f64>,
    limit: Option<f64>,
    encoding: Option<Encoding>,
    model: Option<String>,
}

fn whole(v: Option<f64>, what: &str) -> crate::base::error::Result<Option<usize>> {
    match v {
        None => Ok(None),
        Some(x) if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= f64::from(u32::MAX) => Ok(Some(x as usize)),
        Some(x) => Err(Error::options(format!("{what} must be a whole number >= 0, got {x}"))),
    }
}

/// `readAttachment(source, { id, offset?, limit? })`: `source` maps attachment ids to their full
/// text (a plain object or a `Map`), or is the text itself.
#[wasm_bindgen(js_name = readAttachment)]
pub fn read_attachment(source: JsValue, opts: JsValue) -> Result<JsValue, JsValue> {
    run(|| {
        let o: ReadOptions = options(&opts, "options")?;
        let id = o.id.clone().ok_or_else(|| Error::options("id is required"))?;
        let key = JsValue::from_str(&id);
        // The source's own entries only (an id such as `toString` is not an attachment).
        let value = if let Some(s) = source.as_string() {
            Some(JsValue::from_str(&s))
        } else if let Some(map) = source.dyn_ref::<js_sys::Map>() {
            map.has(&key).then(|| map.get(&key))
        } else if let Some(obj) = source.dyn_ref::<js_sys::Object>() {
            js_sys::Object::has_own(obj, &key).then(|| js_sys::Reflect::get(&source, &key).ok()).flatten()
        } else {
            return Err(Error::options("source must be an object or Map of attachment texts, or a string"));
        };
        let text = value.filter(|v| !v.is_undefined()).ok_or_else(|| unknown(&id))?.as_string().ok_or_else(|| {
            Error::new(ErrorCode::InvalidText, format!("the text of attachment {id:?} is not a string"))
        })?;
        let enc = resolve_model(o.model.as_deref(), o.encoding).encoding.require()?;
        let page = reader::read(enc, &id, &text, whole(o.offset, "offset")?.unwrap_or(0), whole(o.limit, "limit")?)?;
        encode(&page)
    })
}

fn unknown(id: &str) -> Error {
    Error::new(ErrorCode::UnknownAttachment, format!("no attachment with id {id:?} in the source"))
}
