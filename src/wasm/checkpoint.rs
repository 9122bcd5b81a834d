//! `resolveHistory(turns, { limit?, beforeMessageId?, format?, checkpointKey? })`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::convert::{encode, run};
use super::json_input::{decode, options};
use crate::base::error::{Error, ErrorCode};
use crate::format::{parse_request, write_request, Format, Request};
use crate::message::checkpoint::{resolve, ResolveOptions, Turn};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsTurn {
    id: Option<Value>,
    messages: Value,
    system: Option<Value>,
    status: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsResolveOptions {
    limit: Option<u32>,
    before_message_id: Option<String>,
    format: Option<Format>,
    checkpoint_key: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsResolved {
    messages: Vec<Value>,
    system: Option<Value>,
    checkpoint_index: Option<u32>,
    from_checkpoint: bool,
}

/// Resolve a stored conversation from its latest checkpoint.
#[wasm_bindgen(js_name = resolveHistory)]
pub fn resolve_history(turns: JsValue, opts: JsValue) -> Result<JsValue, JsValue> {
    run(|| {
        let o: JsResolveOptions = options(&opts, "options")?;
        let format = o.format.unwrap_or_default();
        let raw: Vec<JsTurn> = decode(&turns, "turns", ErrorCode::InvalidMessages)?;
        let mut parsed = Vec::with_capacity(raw.len());
        for (i, t) in raw.into_iter().enumerate() {
            let r = parse_request(format, &t.messages, t.system.as_ref(), None)
                .map_err(|e| Error { message: format!("turns[{i}].{}", e.message), ..e })?;
            let id = match t.id {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s),
                Some(Value::Number(n)) => Some(n.to_string()),
                Some(other) => {
                    let kind = if other.is_boolean() {
                        "a boolean"
                    } else if other.is_array() {
                        "an array"
                    } else {
                        "an object"
                    };
                    return Err(Error::new(
                        ErrorCode::InvalidMessages,
                        format!("turns[{i}].id must be a string or a number, not {kind}"),
                    ));
                }
            };
            parsed.push(Turn { id, messages: r.messages, status: t.status });
        }
        // An edit or fork names a message that must exist: resolving the whole history instead
        // would hand the model the very messages the user meant to replace.
        if let Some(id) = &o.before_message_id {
            if !parsed.iter().any(|t| t.messages.iter().any(|m| m.id.as_deref() == Some(id.as_str()))) {
                return Err(Error::options(format!("beforeMessageId {id:?} is not the id of any stored message")));
            }
        }
        let resolved = resolve(
            &parsed,
            &ResolveOptions { limit: o.limit, before_message_id: o.before_message_id },
            o.checkpoint_key.as_deref().filter(|k| !k.is_empty()),
        );
        let (system, messages) = write_request(format, &Request { messages: resolved.messages, ..Default::default() });
        encode(&JsResolved {
            messages,
            system,
            checkpoint_index: resolved.checkpoint_index,
            from_checkpoint: resolved.from_checkpoint,
        })
    })
}
