//! `<attachment ...>...</attachment>` blocks embedded in message text (how hosts and ctxguard's
//! attachment guard inject file contents). Their tokens are reported under `attachments`.

const OPEN: &str = "<attachment";
const CLOSE: &str = "</attachment>";

/// Byte ranges `(start, end)` of the complete attachment blocks in `text`, tags included, in
/// order and non-overlapping. An opening tag must be `<attachment` followed by `>` or
/// whitespace; a block without its closing tag is not an attachment (it stays text). One linear
/// pass.
pub fn blocks(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(rel) = text.get(pos..).and_then(|rest| crate::base::scan::find(rest, OPEN)) {
        let start = pos + rel;
        let after = start + OPEN.len();
        let boundary_ok =
            text.get(after..).and_then(|rest| rest.chars().next()).is_some_and(|c| c == '>' || c.is_whitespace());
        if !boundary_ok {
            pos = after;
            continue;
        }
        match text.get(after..).and_then(|rest| crate::base::scan::find(rest, CLOSE)) {
            Some(close_rel) => {
                let end = after + close_rel + CLOSE.len();
                out.push((start, end));
                pos = end;
            }
            None => break,
        }
    }
    out
}
