//! The attachments of a request: where each one sits (a file part, or an `<attachment ...>`
//! block inside a text), its id, name, media type and size. The previews (`attachment.rs`) and
//! `listAttachments` both read requests through this scan.

use crate::count::attachment::blocks;
use crate::message::{Content, Message, Part};
use crate::tokens::{self, Encoding};

/// The marker every preview carries; recognizing it makes previews idempotent.
pub const MARKER: &str = "[ctxguard:attachment-preview]";
/// Name of the reader tool mentioned in hints.
pub const READ_TOOL: &str = "read_attachment";

/// Where an attachment sits in the request.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Slot {
    /// `Part::File` at this index of the message's parts.
    Part(usize),
    /// An `<attachment ...>` block in the text: the part index (None for string content) and
    /// the byte range of the block's body inside that text.
    Block { part: Option<usize>, body: (usize, usize) },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub message: usize,
    pub(super) slot: Slot,
    pub id: String,
    pub name: Option<String>,
    pub media_type: Option<String>,
    pub tokens: usize,
    pub chars: usize,
    pub previewed: bool,
}

impl Found {
    /// An attachment outside any message (`previewAttachment`).
    pub fn standalone(
        id: String,
        name: Option<String>,
        media_type: Option<String>,
        tokens: usize,
        chars: usize,
    ) -> Found {
        Found { message: 0, slot: Slot::Part(0), id, name, media_type, tokens, chars, previewed: false }
    }
}

/// Attribute `key="value"` (or `'value'`) of an opening tag.
pub(super) fn attr(tag: &str, key: &str) -> Option<String> {
    let mut rest = tag;
    while let Some(i) = rest.find(key) {
        let before_ok = i == 0 || rest.get(..i).and_then(|b| b.chars().last()).is_some_and(char::is_whitespace);
        let after = rest.get(i + key.len()..)?;
        let after_trim = after.trim_start();
        if before_ok && after_trim.starts_with('=') {
            let v = after_trim.get(1..)?.trim_start();
            let quote = v.chars().next()?;
            if quote == '"' || quote == '\'' {
                let body = v.get(1..)?;
                let end = body.find(quote)?;
                return body.get(..end).map(str::to_string);
            }
        }
        rest = after;
    }
    None
}

/// A stable id for an attachment without one: FNV-1a of its text.
pub fn content_id(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("att_{:012x}", h & 0xffff_ffff_ffff)
}

pub(super) fn text_of_slot<'a>(m: &'a Message, slot: &Slot) -> Option<&'a str> {
    match (slot, &m.content) {
        (Slot::Part(i), Content::Parts(parts)) => match parts.get(*i) {
            Some(Part::File { text: Some(t), .. }) => Some(t.as_str()),
            _ => None,
        },
        (Slot::Block { part: None, body }, Content::Text(t)) => t.get(body.0..body.1),
        (Slot::Block { part: Some(i), body }, Content::Parts(parts)) => match parts.get(*i) {
            Some(Part::Text { text, .. }) => text.get(body.0..body.1),
            _ => None,
        },
        _ => None,
    }
}

fn found_blocks(message: usize, part: Option<usize>, text: &str, enc: Encoding, out: &mut Vec<Found>) {
    for (start, end) in blocks(text) {
        let Some(block) = text.get(start..end) else { continue };
        let tag_end = block.find('>').map_or(0, |i| i + 1);
        let tag = block.get(..tag_end).unwrap_or("");
        let body = (start + tag_end, end - "</attachment>".len());
        let Some(body_text) = text.get(body.0..body.1) else { continue };
        out.push(Found {
            message,
            slot: Slot::Block { part, body },
            id: attr(tag, "id").unwrap_or_else(|| content_id(body_text)),
            name: attr(tag, "name").or_else(|| attr(tag, "filename")),
            media_type: attr(tag, "type").or_else(|| attr(tag, "mime")),
            tokens: tokens::count(enc, body_text),
            chars: body_text.chars().count(),
            previewed: body_text.contains(MARKER),
        });
    }
}

/// The attachments of message `mi`.
pub(super) fn find_in(mi: usize, m: &Message, enc: Encoding, out: &mut Vec<Found>) {
    match &m.content {
        Content::Text(t) => found_blocks(mi, None, t, enc, out),
        Content::Parts(parts) => {
            for (pi, p) in parts.iter().enumerate() {
                match p {
                    Part::File { text: Some(t), name, media_type, extra } => out.push(Found {
                        message: mi,
                        slot: Slot::Part(pi),
                        id: file_id(extra).unwrap_or_else(|| content_id(t)),
                        name: name.clone(),
                        media_type: media_type.clone(),
                        tokens: tokens::count(enc, t),
                        chars: t.chars().count(),
                        previewed: t.contains(MARKER),
                    }),
                    Part::Text { text, .. } => found_blocks(mi, Some(pi), text, enc, out),
                    _ => {}
                }
            }
        }
    }
}

/// The host's id of a file part: OpenAI `file.file_id`, or an `id` it put on the part.
fn file_id(extra: &crate::message::Extra) -> Option<String> {
    extra
        .get("file")
        .and_then(|f| f.get("file_id"))
        .or_else(|| extra.get("id"))
        .and_then(|v| v.as_str())
        .map(str::to_string)
}
