//! Content parts of Responses message items and tool outputs <-> [`Part`] (see
//! `format::responses` for the mapping table).
//!
//! Every part keeps its own fields in `extra` (its `type` included), so that a part is written
//! back with the fields it came with; only what ctxguard reads or rewrites lives in the part's
//! own fields: `text`, an image's URL, `detail` and pixel size, a file's name, media type and
//! decoded text.

use serde_json::{Map, Value};

use super::image_header::image_size_from_data_url;
use super::wire::{self, kind, rest};
use crate::message::{ImageSource, Part};

/// Parse one content part (of a message item, or of a tool output's list).
pub(super) fn parse_part(p: &Value) -> Result<Part, String> {
    let o = p.as_object().ok_or_else(|| format!("part must be an object, got {}", kind(p)))?;
    let ty = match o.get("type") {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(format!("part type must be a string, got {}", kind(other))),
        None => return Err("part without type".into()),
    };
    match ty {
        "input_text" | "output_text" => match o.get("text") {
            Some(Value::String(s)) => Ok(Part::Text { text: s.as_str().into(), extra: rest(o, &["text"]) }),
            Some(other) => Err(format!("text must be a string, got {}", kind(other))),
            None => Err(format!("{ty} part without text")),
        },
        "input_image" => parse_image(o),
        "input_file" => parse_file(o),
        "input_audio" => match o.get("input_audio") {
            Some(Value::Object(_)) => Ok(Part::Audio { extra: o.clone() }),
            Some(other) => Err(format!("input_audio must be an object, got {}", kind(other))),
            None => Err("input_audio part without input_audio".into()),
        },
        // `refusal` and kinds ctxguard does not know: carried whole, counted as their JSON.
        _ => Ok(Part::Unknown { value: p.clone() }),
    }
}

fn parse_image(o: &Map<String, Value>) -> Result<Part, String> {
    let source = match o.get("image_url") {
        Some(Value::String(u)) => ImageSource::Url(u.clone()),
        Some(Value::Null) | None if o.get("file_id").is_some_and(Value::is_string) => ImageSource::Other,
        Some(Value::Null) | None => return Err("input_image part without image_url or file_id".into()),
        Some(other) => return Err(format!("image_url must be a string, got {}", kind(other))),
    };
    let mut extra = if matches!(source, ImageSource::Url(_)) { rest(o, &["image_url"]) } else { o.clone() };
    let detail = match extra.get("detail") {
        Some(Value::String(d)) => Some(d.clone()),
        _ => None,
    };
    if detail.is_some() {
        extra.remove("detail");
    }
    let (width, height) =
        wire::image_dims(wire::u32_hint(&extra, "width"), wire::u32_hint(&extra, "height"), || match &source {
            ImageSource::Url(u) => image_size_from_data_url(u),
            _ => None,
        });
    Ok(Part::Image { source, detail, width, height, extra })
}

fn parse_file(o: &Map<String, Value>) -> Result<Part, String> {
    let name = match o.get("filename") {
        Some(Value::String(s)) => Some(s.clone()),
        None | Some(Value::Null) => None,
        Some(other) => return Err(format!("filename must be a string, got {}", kind(other))),
    };
    let data = match o.get("file_data") {
        Some(Value::String(s)) => Some(s.as_str()),
        None | Some(Value::Null) => None,
        Some(other) => return Err(format!("file_data must be a string, got {}", kind(other))),
    };
    let media_type = data.and_then(wire::data_url_media_type);
    let text = data.and_then(file_text);
    let extra = if name.is_some() { rest(o, &["filename"]) } else { o.clone() };
    Ok(Part::File { name, media_type, text: text.map(Into::into), extra })
}

/// The text of a `file_data` data URL with a textual media type (`data:text/plain;base64,...`).
fn file_text(data: &str) -> Option<String> {
    let textual = wire::data_url_media_type(data).as_deref().is_some_and(wire::is_text_media);
    if !textual {
        return None;
    }
    wire::data_url_base64(data).and_then(wire::decode_text)
}

/// A part as the wire has it; `assistant`: a text part ctxguard created is `output_text` (else
/// `input_text`).
pub(super) fn part_to_wire(p: &Part, assistant: bool) -> Option<Value> {
    let v = match p {
        Part::Text { text, extra } => {
            let default = if assistant { "output_text" } else { "input_text" };
            let mut o = wire::typed("type", extra.get("type").and_then(Value::as_str).unwrap_or(default));
            o.insert("text".into(), Value::String(text.to_string()));
            wire::append_fields(&mut o, extra);
            Value::Object(o)
        }
        Part::Image { source, detail, extra, .. } => {
            let mut o = wire::typed("type", "input_image");
            if let ImageSource::Url(u) = source {
                o.insert("image_url".into(), Value::String(u.clone()));
            }
            if let Some(d) = detail {
                o.insert("detail".into(), Value::String(d.clone()));
            }
            wire::append_fields(&mut o, extra);
            Value::Object(o)
        }
        Part::File { name, text, extra, .. } => Value::Object(file_to_wire(name.as_deref(), text.as_deref(), extra)),
        Part::Audio { extra } => {
            let mut o = wire::typed("type", "input_audio");
            wire::append_fields(&mut o, extra);
            Value::Object(o)
        }
        Part::ToolCallRef { .. } => return None,
        Part::Unknown { value } => value.clone(),
    };
    Some(v)
}

/// A file part: its own fields, with `file_data` re-encoded when the text was changed (an
/// attachment preview).
fn file_to_wire(name: Option<&str>, text: Option<&str>, extra: &Map<String, Value>) -> Map<String, Value> {
    let mut o = wire::typed("type", "input_file");
    if let Some(n) = name {
        o.insert("filename".into(), Value::String(n.to_string()));
    }
    wire::append_fields(&mut o, extra);
    let Some(text) = text else { return o };
    let data = o.get("file_data").and_then(Value::as_str);
    if data.and_then(file_text).as_deref() == Some(text) {
        return o;
    }
    let head = data
        .filter(|d| wire::data_url_base64(d).is_some())
        .and_then(|d| d.find(',').and_then(|c| d.get(..=c)))
        .unwrap_or("data:text/plain;base64,");
    let url = format!("{head}{}", wire::encode_text(text));
    o.insert("file_data".into(), Value::String(url));
    o
}
