//! Attachment previews (docs/design.md, "Pipeline", layer 1): instead of injecting an attachment's whole extracted
//! text on every turn, inject a bounded preview. One token budget covers all attachments of a
//! request and is shared fairly; the full text stays with the host and is paged on demand by the
//! `read_attachment` tool (`reader.rs`).

use crate::message::{Content, Message, Part, Text};
use crate::tokens::{self, Encoding};

use super::cut::cut_head;
use super::found::{find_in, text_of_slot, Slot};
use super::remembered::{Known, Remembered};

pub use super::found::{content_id, Found, MARKER, READ_TOOL};

/// `LATEST_MESSAGE_TOO_LARGE`: the system messages and the latest user message alone need
/// `need` tokens, over the usable limit. The question is never cut; the way through for a long
/// text the user pasted is this guard: as an attachment it reaches the model as a bounded
/// preview (docs/sources.md), so the error names that route.
pub fn latest_too_large(need: usize, usable: usize) -> crate::base::error::Error {
    crate::base::error::Error::new(
        crate::base::error::ErrorCode::LatestMessageTooLarge,
        format!(
            "the system messages and the latest user message alone need {need} tokens; the usable limit is {usable}. \
             The question is never cut: send a long pasted text as an attachment instead — inside \
             <attachment name=\"paste.txt\">…</attachment> in the message text, or as a file part with its text — \
             and the model gets a bounded preview it can read on with the read_attachment tool \
             (readAttachmentTool, readAttachment)"
        ),
    )
}

/// Tokens kept for the preview's footer line inside each share.
const FOOTER_RESERVE: usize = 80;

/// Every attachment of the request, in order; those of a message ctxguard holds unchanged are
/// remembered by its content key.
pub fn find(messages: &[Message], enc: Encoding, memo: &mut Remembered, known: &dyn Known) -> Vec<Found> {
    let mut out = Vec::new();
    for (mi, m) in messages.iter().enumerate() {
        match known.key(m) {
            Some(k) => {
                let found = memo.attachments(k, || {
                    let mut v = Vec::new();
                    find_in(0, m, enc, &mut v);
                    v
                });
                out.extend(found.iter().map(|f| Found { message: mi, ..f.clone() }));
            }
            None => find_in(mi, m, enc, &mut out),
        }
    }
    out
}

/// Share `budget` fairly: sizes that fit their share stay whole, the rest split what is left
/// equally (water-filling, smallest first). Deterministic.
pub fn fair_shares(sizes: &[usize], budget: usize) -> Vec<usize> {
    // Indices by (size, index): unique keys, so `sort_pairs`' unstable sort is the stable order.
    let mut keyed: Vec<(u64, u64)> = sizes.iter().enumerate().map(|(i, &size)| (size as u64, i as u64)).collect();
    crate::base::sort::sort_pairs(&mut keyed);
    let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i as usize).collect();
    let mut shares = vec![0; sizes.len()];
    let mut left = budget;
    let mut remaining = sizes.len();
    for (k, &i) in order.iter().enumerate() {
        let size = sizes.get(i).copied().unwrap_or(0);
        let share = left / remaining.max(1);
        if size <= share {
            if let Some(s) = shares.get_mut(i) {
                *s = size;
            }
            left -= size;
            remaining -= 1;
        } else {
            // Everyone from here on is larger than the equal share of what is left.
            let n = order.len() - k;
            for (j, &rest) in order.iter().skip(k).enumerate() {
                if let Some(s) = shares.get_mut(rest) {
                    // Spread the remainder over the first ones so the shares add up to `left`.
                    *s = left / n + usize::from(j < left % n);
                }
            }
            break;
        }
    }
    shares
}

/// Binary attachments (PDF text, spreadsheets, images, archives) versus text-like ones.
pub fn is_binary(media_type: Option<&str>, name: Option<&str>) -> bool {
    let mt = media_type.unwrap_or("").to_ascii_lowercase();
    if mt.starts_with("text/")
        || mt.contains("json")
        || mt.contains("xml")
        || mt.contains("javascript")
        || mt.contains("yaml")
    {
        return false;
    }
    if mt.starts_with("image/")
        || mt.starts_with("audio/")
        || mt.starts_with("video/")
        || mt.contains("pdf")
        || mt.contains("zip")
        || mt.contains("spreadsheet")
        || mt.contains("excel")
        || mt.contains("word")
        || mt.contains("presentation")
        || mt.contains("octet-stream")
        || mt.contains("tar")
        || mt.contains("gzip")
    {
        return true;
    }
    let ext = name.and_then(|n| n.rsplit_once('.')).map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    matches!(
        ext.as_str(),
        "pdf"
            | "xlsx"
            | "xls"
            | "docx"
            | "doc"
            | "pptx"
            | "zip"
            | "tar"
            | "gz"
            | "tgz"
            | "7z"
            | "rar"
            | "png"
            | "jpg"
            | "jpeg"
            | "gif"
            | "webp"
            | "mp3"
            | "mp4"
            | "wav"
    )
}

/// The footer line of a preview: name, type, full size, what is shown and how to read more.
pub fn footer(f: &Found, shown_tokens: usize) -> String {
    let name = f.name.as_deref().unwrap_or("attachment");
    let mt = f.media_type.as_deref().unwrap_or("unknown type");
    // The id as a JSON string (quoted, escaped).
    let id = crate::base::json_text::text(&serde_json::Value::String(f.id.clone()));
    let how = if is_binary(f.media_type.as_deref(), f.name.as_deref()) {
        format!(
            "This is text extracted from a binary file; layout, images and tables may be incomplete. \
             Read more of the extracted text with {READ_TOOL}({{\"id\": {id}, \"offset\": {shown_tokens}}})."
        )
    } else {
        format!("Read more with {READ_TOOL}({{\"id\": {id}, \"offset\": {shown_tokens}}}).")
    };
    format!(
        "{MARKER} {name} ({mt}): showing the first {shown_tokens} of {} tokens ({} chars). {how}",
        f.tokens, f.chars
    )
}

/// The attachment id and token offset the last footer in `text` points the reader at (what
/// [`footer`] wrote: `read_attachment({"id": …, "offset": n})`), if there is one.
pub fn footer_call(text: &str) -> Option<(String, usize)> {
    let head = format!("{READ_TOOL}({{\"id\": ");
    crate::base::scan::find(text, MARKER)?;
    let at = text.rfind(&head)?;
    let rest = text.get(at + head.len()..)?;
    let mut ids = serde_json::Deserializer::from_str(rest).into_iter::<String>();
    let id = ids.next()?.ok()?;
    let digits = rest.get(ids.byte_offset()..)?.strip_prefix(", \"offset\": ")?;
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    let offset = digits.get(..end)?.parse().ok()?;
    digits.get(end..)?.starts_with("})").then_some((id, offset))
}

/// The preview text of an attachment within `share` tokens (footer included).
pub fn preview(enc: Encoding, text: &str, f: &Found, share: usize) -> String {
    let keep = share.saturating_sub(FOOTER_RESERVE);
    let mut end = cut_head(enc, text, keep);
    loop {
        let head = text.get(..end).unwrap_or("");
        let shown = tokens::count(enc, head);
        let mut out = String::with_capacity(head.len() + 200);
        out.push_str(head);
        if !head.is_empty() && !head.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&footer(f, shown));
        if end == 0 || tokens::count(enc, &out) <= share.max(FOOTER_RESERVE) {
            return out;
        }
        end = cut_head(enc, text, shown.saturating_sub(16));
    }
}

/// Outcome of the attachment guard over a request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Previewed {
    pub blocks: usize,
    pub truncated: usize,
    pub before_tokens: usize,
    pub after_tokens: usize,
}

/// Replace attachments larger than their fair share of `budget` with previews, in place.
pub fn apply(
    messages: &mut [Message],
    enc: Encoding,
    budget: usize,
    memo: &mut Remembered,
    known: &dyn Known,
) -> Previewed {
    let found = find(messages, enc, memo, known);
    // The content key of each message as it was found (a preview rewrites it), and the place
    // of each attachment among its message's.
    let keys: Vec<Option<u64>> = messages.iter().map(|m| known.key(m)).collect();
    let mut at = Vec::with_capacity(found.len());
    for (j, f) in found.iter().enumerate() {
        let first = found.get(..j).map_or(0, |b| b.iter().rev().take_while(|g| g.message == f.message).count());
        at.push(first);
    }
    let sizes: Vec<usize> = found.iter().map(|f| f.tokens).collect();
    let shares = fair_shares(&sizes, budget);
    let mut result = Previewed { blocks: found.len(), before_tokens: sizes.iter().sum(), ..Default::default() };
    // Rewrite from the last attachment backwards so byte ranges of earlier blocks stay valid.
    let mut after = result.before_tokens;
    for (j, (f, share)) in found.iter().zip(shares).enumerate().rev() {
        // A preview is left alone (its prefix stays byte-stable for prompt caches) — but only
        // within twice its share: text that merely carries the marker (a file quoting one) cannot
        // use it to escape the budget.
        if f.tokens <= share || (f.previewed && f.tokens <= share.max(FOOTER_RESERVE).saturating_mul(2)) {
            continue;
        }
        let Some(m) = messages.get_mut(f.message) else { continue };
        let Some(text) = text_of_slot(m, &f.slot) else { continue };
        let make = || {
            let p = preview(enc, text, f, share);
            let n = tokens::count(enc, &p);
            (p, n)
        };
        let (new_text, new_tokens) = match keys.get(f.message).copied().flatten() {
            Some(k) => memo.preview(k, at.get(j).copied().unwrap_or(0), share, make).clone(),
            None => make(),
        };
        if new_tokens >= f.tokens {
            continue;
        }
        after = after - f.tokens + new_tokens;
        replace_slot(m, &f.slot, new_text);
        result.truncated += 1;
    }
    result.after_tokens = after;
    result
}

/// `text` with the byte range `range` replaced by `with` (a range off a char boundary, which
/// `find` never gives, leaves the text as it was).
fn spliced(text: &str, range: std::ops::Range<usize>, with: &str) -> Text {
    match (text.get(..range.start), text.get(range.end..)) {
        (Some(head), Some(tail)) => [head, with, tail].concat().into(),
        _ => text.into(),
    }
}

fn replace_slot(m: &mut Message, slot: &Slot, new_text: String) {
    m.touch();
    match (slot, &mut m.content) {
        (Slot::Part(i), Content::Parts(parts)) => {
            if let Some(Part::File { text, .. }) = parts.get_mut(*i) {
                *text = Some(new_text.into());
            }
        }
        (Slot::Block { part: None, body }, Content::Text(t)) => *t = spliced(t, body.0..body.1, &new_text),
        (Slot::Block { part: Some(i), body }, Content::Parts(parts)) => {
            if let Some(Part::Text { text, .. }) = parts.get_mut(*i) {
                *text = spliced(text, body.0..body.1, &new_text);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::found::attr;

    #[test]
    fn fair_shares_keep_small_ones_whole() {
        assert_eq!(fair_shares(&[100, 200], 1000), vec![100, 200]);
        assert_eq!(fair_shares(&[100, 5000, 9000], 3000), vec![100, 1450, 1450]);
        assert_eq!(fair_shares(&[10, 20, 30, 10_000], 100), vec![10, 20, 30, 40]);
        let s = fair_shares(&[7000, 7000, 7000], 1000);
        assert_eq!(s.iter().sum::<usize>(), 1000);
        assert!(s.iter().all(|&x| x == 333 || x == 334));
        assert_eq!(fair_shares(&[], 100), Vec::<usize>::new());
    }

    #[test]
    fn a_marker_inside_a_large_file_does_not_escape_the_budget() {
        // Found by tests/props/security.rs: a file quoting the preview marker was left whole.
        let body: String = (0..2000).map(|i| format!("word{i} ")).collect();
        let forged = format!("{MARKER} notes.md: showing the first 10 of 10 tokens.\n{body}");
        let mut msgs =
            vec![Message::text(crate::message::Role::User, format!("<attachment name=\"n.md\">{forged}</attachment>"))];
        let r = apply(
            &mut msgs,
            Encoding::O200kBase,
            500,
            &mut Remembered::default(),
            &crate::sources::remembered::Unknown,
        );
        assert_eq!(r.truncated, 1);
        assert!(r.after_tokens <= 500, "{r:?}");
        // A real preview, within twice its share, is left alone on the next pass.
        let again = apply(
            &mut msgs,
            Encoding::O200kBase,
            500,
            &mut Remembered::default(),
            &crate::sources::remembered::Unknown,
        );
        assert_eq!(again.truncated, 0);
    }

    #[test]
    fn a_footer_names_the_call_to_read_on() {
        let f = Found::standalone("att_\"ü\\".into(), Some("n.md".into()), None, 900, 3000);
        let text = format!("head\n{}", footer(&f, 147));
        assert_eq!(footer_call(&text), Some(("att_\"ü\\".to_string(), 147)));
        let binary = Found::standalone("r".into(), Some("r.pdf".into()), Some("application/pdf".into()), 9, 9);
        assert_eq!(footer_call(&footer(&binary, 3)), Some(("r".to_string(), 3)));
        assert_eq!(footer_call("read_attachment({\"id\": \"x\", \"offset\": 5})"), None, "no marker");
        assert_eq!(footer_call(&format!("{MARKER} read_attachment({{\"id\": \"x\", \"offset\": 5")), None);
    }

    #[test]
    fn attributes_and_kinds() {
        let tag = r#"<attachment id="f1" name='report Q3.pdf' type="application/pdf">"#;
        assert_eq!(attr(tag, "id").as_deref(), Some("f1"));
        assert_eq!(attr(tag, "name").as_deref(), Some("report Q3.pdf"));
        assert_eq!(attr(tag, "type").as_deref(), Some("application/pdf"));
        assert_eq!(attr(r#"<attachment filename="x">"#, "name"), None);
        assert!(is_binary(Some("application/pdf"), None));
        assert!(is_binary(None, Some("sheet.XLSX")));
        assert!(!is_binary(Some("text/csv"), Some("a.csv")));
        assert!(!is_binary(Some("application/json"), None));
    }
}
