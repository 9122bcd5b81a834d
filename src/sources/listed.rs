//! `listAttachments`: every attachment the source guards recognize in a request, with the full
//! text the `read_attachment` reader serves and where it sits — read by the same scan as the
//! previews (`found.rs`), so that a page listing them cannot drift from what the guards do.

use serde::Serialize;
use serde_json::Value;

use crate::base::error::Result;
use crate::format::place::{wire_indices, wire_part};
use crate::format::{parse_request, Format};
use crate::message::Message;
use crate::tokens::Encoding;

use super::attachment::footer_call;
use super::found::{find_in, text_of_slot, Slot};

/// How an attachment is carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Form {
    /// An `<attachment ...>...</attachment>` block inside a text.
    #[serde(rename = "attachment block")]
    AttachmentBlock,
    /// A file part (OpenAI `file`, AI SDK `file`, Responses `input_file`, Gemini `inlineData`).
    #[serde(rename = "file part")]
    FilePart,
    /// An Anthropic `document` block.
    #[serde(rename = "document block")]
    DocumentBlock,
}

/// One attachment of a request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    /// The id the reader takes: the host's own, else the content id (`found::content_id`); for a
    /// preview ctxguard wrote, the id its footer names (the whole attachment's).
    pub id: String,
    pub name: Option<String>,
    pub media_type: Option<String>,
    /// The text as the request carries it (the whole text, or the preview).
    pub text: String,
    /// Tokens of `text` in the counting encoding.
    pub tokens: usize,
    pub chars: usize,
    /// Index in the caller's `messages`; `None` for the `system` option.
    pub message: Option<usize>,
    /// Index of the part (or of the tool result holding it) in that message's content; `None`
    /// when the content is a string.
    pub part: Option<usize>,
    pub form: Form,
    /// For a preview ctxguard wrote: the token offset its footer tells the model to read on from.
    pub offset: Option<usize>,
}

/// The attachments of `messages` (and of the `system` option) in `format`, in order: those of
/// the system first, then message by message, each message's in content order.
pub fn list_attachments(
    enc: Encoding,
    format: Format,
    messages: &Value,
    system: Option<&Value>,
) -> Result<Vec<Listed>> {
    let mut out = Vec::new();
    if let Some(sys) = system.filter(|v| !v.is_null()) {
        let request = parse_request(format, &Value::Array(Vec::new()), Some(sys), None)?;
        for m in &request.messages {
            list_in(enc, format, m, None, &mut out);
        }
    }
    let request = parse_request(format, messages, None, None)?;
    for (m, at) in request.messages.iter().zip(wire_indices(&request.messages)) {
        list_in(enc, format, m, Some(at), &mut out);
    }
    Ok(out)
}

fn list_in(enc: Encoding, format: Format, m: &Message, message: Option<usize>, out: &mut Vec<Listed>) {
    let mut found = Vec::new();
    find_in(0, m, enc, &mut found);
    for f in found {
        let Some(text) = text_of_slot(m, &f.slot) else { continue };
        let (form, part) = match f.slot {
            Slot::Part(i) if format == Format::Anthropic => (Form::DocumentBlock, Some(i)),
            Slot::Part(i) => (Form::FilePart, Some(i)),
            Slot::Block { part, .. } => (Form::AttachmentBlock, part),
        };
        let call = if f.previewed { footer_call(text) } else { None };
        let (id, offset) = match call {
            Some((id, offset)) => (id, Some(offset)),
            None => (f.id, None),
        };
        out.push(Listed {
            id,
            name: f.name,
            media_type: f.media_type,
            text: text.to_string(),
            tokens: f.tokens,
            chars: f.chars,
            message,
            part: wire_part(m, part),
            form,
            offset,
        });
    }
}
