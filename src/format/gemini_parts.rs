//! Gemini parts other than function calls and responses <-> [`Part`] (see `format::gemini` for
//! the mapping table).
//!
//! A part keeps its own fields in `extra` (`thought`, `thoughtSignature`, `videoMetadata`,
//! `mediaResolution`... and the blob's `mimeType` / `displayName`); an image's bytes or URI live
//! in its `source` only, a file's bytes stay in `extra` (its decoded text, when textual, is
//! compared with them when it is written back).

use serde_json::{Map, Value};

use super::image_header::image_size_from_base64;
use super::wire::{self, kind, rest};
use crate::message::{ImageSource, Part};

/// A part of a user or model content that is neither a `functionCall` nor a
/// `functionResponse`: `text`, `inlineData`, `fileData`; anything else is carried whole.
pub(super) fn parse_part(o: &Map<String, Value>, p: &Value) -> Result<Part, String> {
    if let Some(t) = o.get("text") {
        return match t {
            Value::String(s) => Ok(Part::Text { text: s.as_str().into(), extra: rest(o, &["text"]) }),
            other => Err(format!("text must be a string, got {}", kind(other))),
        };
    }
    for (key, payload) in [("inlineData", "data"), ("fileData", "fileUri")] {
        if o.contains_key(key) {
            return parse_blob(o, key, payload);
        }
    }
    // executableCode, codeExecutionResult, toolCall, toolResponse, a bare thoughtSignature...
    Ok(Part::Unknown { value: p.clone() })
}

fn parse_blob(o: &Map<String, Value>, key: &str, payload: &str) -> Result<Part, String> {
    let blob = match o.get(key) {
        Some(Value::Object(b)) => b,
        Some(other) => return Err(format!("{key} must be an object, got {}", kind(other))),
        None => return Err(format!("part without {key}")),
    };
    let mime = match blob.get("mimeType") {
        Some(Value::String(s)) => Some(s.to_ascii_lowercase()),
        None | Some(Value::Null) => None,
        Some(other) => return Err(format!("{key}.mimeType must be a string, got {}", kind(other))),
    };
    let bytes = match blob.get(payload) {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(format!("{key}.{payload} must be a string, got {}", kind(other))),
        None => return Err(format!("{key} without {payload}")),
    };
    let inline = key == "inlineData";
    let top = mime.as_deref().and_then(|m| m.split('/').next()).unwrap_or("");
    match top {
        "image" => {
            let source = if inline {
                ImageSource::Base64 { media_type: mime.clone().unwrap_or_default(), data: bytes.into() }
            } else {
                ImageSource::Url(bytes.to_string())
            };
            // The bytes live in `source` only; the blob's other fields stay where they were.
            let mut extra = o.clone();
            extra.insert(key.to_string(), Value::Object(rest(blob, &[payload])));
            let (width, height) =
                wire::image_dims(None, None, || if inline { image_size_from_base64(bytes) } else { None });
            Ok(Part::Image { source, detail: None, width, height, extra })
        }
        "audio" => Ok(Part::Audio { extra: o.clone() }),
        _ => {
            let text = if inline && mime.as_deref().is_some_and(wire::is_text_media) {
                wire::decode_text(bytes)
            } else {
                None
            };
            let name = blob.get("displayName").and_then(Value::as_str).map(str::to_string);
            Ok(Part::File { name, media_type: mime, text: text.map(Into::into), extra: o.clone() })
        }
    }
}

/// A part as the wire has it (`ToolCallRef`: none; calls are written by the caller).
pub(super) fn part_to_wire(p: &Part) -> Option<Value> {
    let v = match p {
        Part::Text { text, extra } => {
            let mut o = Map::new();
            o.insert("text".into(), Value::String(text.to_string()));
            wire::append_fields(&mut o, extra);
            Value::Object(o)
        }
        Part::Image { source, extra, .. } => {
            let mut o = extra.clone();
            let (key, payload, bytes) = match source {
                ImageSource::Base64 { data, .. } => ("inlineData", "data", data.to_string()),
                ImageSource::Url(u) => ("fileData", "fileUri", u.clone()),
                ImageSource::Other => return Some(Value::Object(o)),
            };
            let mut blob = match o.get(key) {
                Some(Value::Object(b)) => b.clone(),
                _ => Map::new(),
            };
            blob.insert(payload.into(), Value::String(bytes));
            o.insert(key.into(), Value::Object(blob));
            Value::Object(o)
        }
        Part::File { text, extra, .. } => Value::Object(file_to_wire(text.as_deref(), extra)),
        Part::Audio { extra } => Value::Object(extra.clone()),
        Part::ToolCallRef { .. } => return None,
        Part::Unknown { value } => value.clone(),
    };
    Some(v)
}

/// A file part: its own fields, with `inlineData.data` re-encoded when the text was changed (an
/// attachment preview); a file ctxguard did not read is `{ text }`.
fn file_to_wire(text: Option<&str>, extra: &Map<String, Value>) -> Map<String, Value> {
    let mut o = extra.clone();
    let Some(text) = text else { return o };
    let Some(Value::Object(blob)) = o.get_mut("inlineData") else {
        o.insert("text".into(), Value::String(text.to_string()));
        return o;
    };
    if blob.get("data").and_then(Value::as_str).and_then(wire::decode_text).as_deref() != Some(text) {
        blob.insert("data".into(), Value::String(wire::encode_text(text)));
    }
    o
}
