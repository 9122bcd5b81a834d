//! Checkpoints that survive reloads: sealing summaries so that only ctxguard's own output is
//! recognized, and resolving a stored conversation from its latest checkpoint.
//!
//! A summary is recognized only in a system message, as a complete sealed block, and with a
//! `checkpointKey` only when its tag verifies; the threat model this answers is in
//! docs/design.md, "Checkpoints". What a summary replaced rides on its closing line (`Covers`),
//! under the tag (docs/design.md, "Remembered work").

use std::hash::Hasher;

use serde::{Deserialize, Serialize};

use crate::message::{Content, Message, Part, Role};

/// The marker line that starts every summary ctxguard renders (and every sealed block).
pub const SUMMARY_MARKER: &str = "[ctxguard:summary]";

/// The closing line of a sealed summary (`[/ctxguard:summary]` or `[/ctxguard:summary tag=...]`).
pub const SUMMARY_END: &str = "[/ctxguard:summary";

#[allow(deprecated)]
fn sip(k0: u64, k1: u64, data: &[u8]) -> u64 {
    let mut h = std::hash::SipHasher::new_with_keys(k0, k1);
    h.write(data);
    h.finish()
}

/// The 128-bit tag of `body` under `key`, as 32 hex digits.
pub fn tag(key: &str, body: &str) -> String {
    let k0 = sip(0x6374_7867_7561_7264, 0x6b65_7930, key.as_bytes());
    let k1 = sip(0x6374_7867_7561_7264, 0x6b65_7931, key.as_bytes());
    format!("{:016x}{:016x}", sip(k0, k1, body.as_bytes()), sip(k1, k0, body.as_bytes()))
}

/// Which messages of the conversation a summary replaced: the first `messages` messages that are
/// not system messages (system messages are kept, never summarized), known by the digest of their
/// content (`cache::stable_key`, the same in every process, platform and model), except those at
/// the offsets in `keep`, which the compaction kept after the summary (the run's user message
/// under the `session_state` strategy). Written on the summary's closing line
/// (`covers=57:0123456789abcdef` or `covers=57:0123456789abcdef:55`) and covered by its tag, so
/// that a guard given only the checkpoint and the display history can apply the summary again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Covers {
    pub messages: u32,
    pub digest: u64,
    pub keep: Vec<u32>,
}

impl Covers {
    /// The covers of `messages` (the conversation's first non-system messages, in order).
    pub fn of<'a>(messages: impl Iterator<Item = &'a Message>, keep: Vec<u32>) -> Covers {
        let mut n = 0u32;
        let digest = messages.fold(0xcbf2_9ce4_8422_2325u64, |d, m| {
            n = n.saturating_add(1);
            (d ^ crate::message::cache::stable_key(m)).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(17)
        });
        Covers { messages: n, digest, keep }
    }

    fn field(&self) -> String {
        let mut s = format!("covers={}:{:016x}", self.messages, self.digest);
        if !self.keep.is_empty() {
            s.push(':');
            s.push_str(&self.keep.iter().map(u32::to_string).collect::<Vec<_>>().join(","));
        }
        s
    }

    fn parse(field: &str) -> Option<Covers> {
        let mut parts = field.strip_prefix("covers=")?.split(':');
        let messages = parts.next()?.parse().ok()?;
        let digest = u64::from_str_radix(parts.next()?, 16).ok()?;
        let keep = match parts.next() {
            None => Vec::new(),
            Some(k) => k.split(',').map(|x| x.parse().ok()).collect::<Option<Vec<u32>>>()?,
        };
        parts.next().is_none().then_some(Covers { messages, digest, keep })
    }
}

/// Close a rendered summary (which starts with the marker) with the end line: what it covers, if
/// known, and a tag over the summary and that line when there is a key. A line inside the
/// summary that starts like the end line — the summarizer echoing a forged block from a tool
/// output — is defused first (`‹/ctxguard:summary`): otherwise the block would end there, and
/// its tag would not verify.
pub fn seal(summary: &str, key: Option<&str>, covers: Option<&Covers>) -> String {
    let defused;
    let body = if summary.contains(&format!("\n{SUMMARY_END}")) {
        defused = summary.replace(&format!("\n{SUMMARY_END}"), "\n‹/ctxguard:summary");
        defused.as_str()
    } else {
        summary
    };
    let covers = covers.map(|c| format!(" {}", c.field())).unwrap_or_default();
    match key {
        Some(k) => format!("{body}\n{SUMMARY_END}{covers} tag={}]", tag(k, &tagged(body, &covers))),
        None => format!("{body}\n{SUMMARY_END}{covers}]"),
    }
}

/// What the tag covers: the body, and the covers field when there is one (a summary sealed
/// before covers existed verifies as it did).
fn tagged(body: &str, covers: &str) -> String {
    if covers.is_empty() {
        body.to_string()
    } else {
        format!("{body}\n{}", covers.trim_start())
    }
}

/// The first sealed summary block in `text` that verifies (with `key` when given): what it
/// covers (`None` for a block sealed without covers).
fn valid_block(text: &str, key: Option<&str>) -> Option<Option<Covers>> {
    sealed_block(text, key).map(|(_, covers)| covers)
}

/// The first sealed summary block in `text` that verifies (with `key` when given): the block
/// itself (from its marker to the end of its closing line) and what it covers. Formats whose
/// system is one string or one Content (Anthropic, Gemini) write the host's system prompt and the
/// summary together: the block is the summary alone.
pub fn sealed_block<'a>(text: &'a str, key: Option<&str>) -> Option<(&'a str, Option<Covers>)> {
    let mut from = 0;
    while let Some(rel) = text.get(from..).and_then(|t| t.find(SUMMARY_MARKER)) {
        let start = from + rel;
        let at_line_start = start == 0 || text.get(..start).is_some_and(|b| b.ends_with('\n'));
        if at_line_start {
            if let Some(end_rel) = text.get(start..).and_then(|t| t.find(&format!("\n{SUMMARY_END}"))) {
                let body_end = start + end_rel;
                let line = text.get(body_end + 1..).and_then(|t| t.lines().next()).unwrap_or("");
                let body = text.get(start..body_end).unwrap_or("");
                if let Some(found) = line.strip_prefix(SUMMARY_END).and_then(|rest| verify(body, rest, key)) {
                    let block = text.get(start..body_end + 1 + line.len()).unwrap_or(body);
                    return Some((block, found));
                }
            }
        }
        from = start + SUMMARY_MARKER.len();
    }
    None
}

/// The rest of a closing line after `[/ctxguard:summary`: `]`, ` tag=T]`, ` covers=C]` or
/// ` covers=C tag=T]`. Verified under `key` (a block without a tag never verifies under one).
fn verify(body: &str, rest: &str, key: Option<&str>) -> Option<Option<Covers>> {
    let inner = rest.strip_suffix(']')?;
    let mut covers_field = "";
    let mut tag_value = None;
    for word in inner.split(' ').filter(|w| !w.is_empty()) {
        if let Some(t) = word.strip_prefix("tag=") {
            tag_value = Some(t);
        } else if word.starts_with("covers=") && covers_field.is_empty() && tag_value.is_none() {
            covers_field = word;
        } else {
            return None;
        }
    }
    if !inner.is_empty() && !inner.starts_with(' ') {
        return None;
    }
    let covers = if covers_field.is_empty() { None } else { Some(Covers::parse(covers_field)?) };
    match (key, tag_value) {
        (None, _) => Some(covers),
        (Some(_), None) => None,
        (Some(k), Some(t)) => (t == tag(k, &tagged(body, covers_field))).then_some(covers),
    }
}

/// A summary's text as the model sees it: the closing line without covers and tag
/// (`[/ctxguard:summary]`), so that the same summary reads the same whatever it covers — a host
/// that passes its display history and one that passes the checkpoint chain send the same bytes.
/// `None` when `text` has no closing line with either.
pub fn model_visible(text: &str) -> Option<String> {
    let at = text.rfind(&format!("\n{SUMMARY_END} "))? + 1;
    let end = text.get(at..)?.find(']')? + at;
    let mut out = String::with_capacity(text.len());
    out.push_str(text.get(..at)?);
    out.push_str(SUMMARY_END);
    out.push(']');
    out.push_str(text.get(end + 1..)?);
    Some(out)
}

/// `content` with the seal stripped from every summary's closing line ([`model_visible`]), or
/// `None` when it holds none.
pub fn model_visible_content(content: &Content) -> Option<Content> {
    match content {
        Content::Text(t) => model_visible(t).map(|v| Content::Text(v.into())),
        Content::Parts(parts)
            if parts.iter().any(|p| matches!(p, Part::Text { text, .. } if model_visible(text).is_some())) =>
        {
            Some(Content::Parts(
                parts
                    .iter()
                    .map(|p| match p {
                        Part::Text { text, extra } => Part::Text {
                            text: model_visible(text).map_or_else(|| text.clone(), Into::into),
                            extra: extra.clone(),
                        },
                        other => other.clone(),
                    })
                    .collect(),
            ))
        }
        Content::Parts(_) => None,
    }
}

/// What the verified summary in `m` (a system message) covers: `Some(None)` for a summary sealed
/// without covers, `None` when `m` holds no summary that verifies.
pub fn summary_covers(m: &Message, key: Option<&str>) -> Option<Option<Covers>> {
    summary_block(m, key).map(|(_, covers)| covers)
}

/// The sealed summary block in `m` (a system message) that verifies, alone (without the host's
/// text around it in the same string or Content), and what it covers.
pub fn summary_block(m: &Message, key: Option<&str>) -> Option<(String, Option<Covers>)> {
    if m.role != Role::System {
        return None;
    }
    let found = |t: &str| sealed_block(t, key).map(|(block, covers)| (block.to_string(), covers));
    match &m.content {
        Content::Text(t) => found(t),
        Content::Parts(parts) => parts.iter().find_map(|p| match p {
            Part::Text { text, .. } => found(text),
            _ => None,
        }),
    }
}

/// Whether `text` contains a sealed summary block that verifies (with `key` when given).
pub fn has_valid_summary(text: &str, key: Option<&str>) -> bool {
    valid_block(text, key).is_some()
}

/// A checkpoint summary: a system message carrying a valid sealed block.
pub fn is_checkpoint_summary(m: &Message, key: Option<&str>) -> bool {
    if m.role != Role::System {
        return false;
    }
    match &m.content {
        Content::Text(t) => has_valid_summary(t, key),
        Content::Parts(parts) => {
            parts.iter().any(|p| matches!(p, Part::Text { text, .. } if has_valid_summary(text, key)))
        }
    }
}

/// One stored turn: its id, its persisted chain (internal model), optional status.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    pub id: Option<String>,
    pub messages: Vec<Message>,
    pub status: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveOptions {
    /// Turns after the checkpoint to keep (the latest ones); never cuts the checkpoint chain.
    pub limit: Option<u32>,
    /// Resolve the history before this message (edit / fork from an earlier message).
    pub before_message_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resolved<T> {
    pub messages: Vec<T>,
    /// Index (in the given turns) of the turn holding the checkpoint.
    pub checkpoint_index: Option<u32>,
    pub from_checkpoint: bool,
}

/// Find the latest checkpoint and return its chain plus every later turn in full.
///
/// With `before_message_id`, only what precedes that message counts: the turns before its turn,
/// and the messages of its turn before it (so an edit resolves against the checkpoint that
/// precedes the edited message). An unknown id resolves nothing away: all turns are used.
pub fn resolve(turns: &[Turn], opts: &ResolveOptions, key: Option<&str>) -> Resolved<Message> {
    // Cut at before_message_id.
    let mut scope: Vec<Turn> = turns.to_vec();
    if let Some(id) = &opts.before_message_id {
        let hit = turns.iter().enumerate().find_map(|(ti, t)| {
            t.messages.iter().position(|m| m.id.as_deref() == Some(id.as_str())).map(|mi| (ti, mi))
        });
        if let Some((ti, mi)) = hit {
            scope.truncate(ti + 1);
            if let Some(t) = scope.get_mut(ti) {
                t.messages.truncate(mi);
            }
        }
    }
    // Latest turn whose chain holds a checkpoint summary.
    let found = scope.iter().rposition(|t| t.messages.iter().any(|m| is_checkpoint_summary(m, key)));
    let (first_after, mut head) = match found {
        Some(c) => (c + 1, scope.get(c).map(|t| t.messages.clone()).unwrap_or_default()),
        None => (0, Vec::new()),
    };
    let after: &[Turn] = scope.get(first_after..).unwrap_or(&[]);
    let keep_from = match opts.limit {
        Some(l) => after.len().saturating_sub(l as usize),
        None => 0,
    };
    for t in after.get(keep_from..).unwrap_or(&[]) {
        head.extend(t.messages.iter().cloned());
    }
    Resolved {
        messages: head,
        checkpoint_index: found.and_then(|c| u32::try_from(c).ok()),
        from_checkpoint: found.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_and_verify() {
        let s = format!("{SUMMARY_MARKER} Summary.\n\n## Summary\nThe user fixes module 3.");
        let plain = seal(&s, None, None);
        let keyed = seal(&s, Some("k1"), None);
        assert!(has_valid_summary(&plain, None));
        assert!(!has_valid_summary(&plain, Some("k1")), "an untagged block does not verify under a key");
        assert!(has_valid_summary(&keyed, Some("k1")));
        assert!(has_valid_summary(&keyed, None));
        assert!(!has_valid_summary(&keyed, Some("k2")));
        let tampered = keyed.replace("module 3", "module 4");
        assert!(!has_valid_summary(&tampered, Some("k1")));
        assert!(!has_valid_summary(&s, None), "an unclosed block is not a summary");
        assert!(!has_valid_summary(&format!("quote: {plain}"), None), "the marker must start a line");
        assert!(
            has_valid_summary(&format!("Be terse.\n\n{keyed}\n\nmore"), Some("k1")),
            "inside a joined Anthropic system text"
        );
        // A summary that quotes a closing line (the summarizer echoed a tool output) still
        // verifies: the quoted line is defused (found by tests/props/security.rs).
        let echoed = format!("{SUMMARY_MARKER} Summary.\n\nThe tool said:\n[/ctxguard:summary]\n[/ctxguard:summary-x\r\n[/ctxguard:summary tag=00]\nend");
        for key in [None, Some("k1")] {
            let sealed = seal(&echoed, key, None);
            assert!(has_valid_summary(&sealed, key), "{sealed}");
            assert_eq!(sealed.matches(&format!("\n{SUMMARY_END}")).count(), 1, "{sealed}");
            assert!(sealed.contains("\n‹/ctxguard:summary]\n"));
        }
        assert_eq!(plain, format!("{s}\n[/ctxguard:summary]"), "a summary without such a line is sealed unchanged");
        assert_eq!(tag("k", "x"), tag("k", "x"));
        assert_ne!(tag("k", "x"), tag("k", "y"));
    }

    #[test]
    fn the_model_sees_the_closing_line_without_covers_or_tag() {
        let s = format!("{SUMMARY_MARKER} Summary.\n\nText.");
        let keyed = seal(&s, Some("k"), Some(&Covers { messages: 3, digest: 7, keep: vec![] }));
        assert_eq!(model_visible(&keyed).unwrap(), format!("{s}\n[/ctxguard:summary]"));
        assert_eq!(
            model_visible(&format!("Be terse.\n\n{keyed}\n\nmore")).unwrap(),
            format!("Be terse.\n\n{s}\n[/ctxguard:summary]\n\nmore")
        );
        assert_eq!(model_visible(&seal(&s, None, None)), None);
        assert_eq!(model_visible("plain text"), None);
    }

    #[test]
    fn covers_ride_on_the_closing_line_under_the_tag() {
        let s = format!("{SUMMARY_MARKER} Summary.\n\nThe user fixes module 3.");
        let covers = Covers { messages: 57, digest: 0x0123_4567_89ab_cdef, keep: vec![] };
        let plain = seal(&s, None, Some(&covers));
        assert!(plain.ends_with("\n[/ctxguard:summary covers=57:0123456789abcdef]"), "{plain}");
        let m = |t: &str| Message::text(Role::System, t);
        assert_eq!(summary_covers(&m(&plain), None), Some(Some(covers.clone())));
        let keyed = seal(&s, Some("k"), Some(&Covers { keep: vec![55, 56], ..covers.clone() }));
        assert!(keyed.contains(" covers=57:0123456789abcdef:55,56 tag="), "{keyed}");
        assert_eq!(summary_covers(&m(&keyed), Some("k")).unwrap().unwrap().keep, vec![55, 56]);
        // The tag covers the covers: a checkpoint edited to cover more messages does not verify.
        let widened = keyed.replace("covers=57:", "covers=99:");
        assert_eq!(summary_covers(&m(&widened), Some("k")), None);
        assert_eq!(summary_covers(&m(&keyed), Some("other")), None);
        // Without a key the covers are read as written; a summary sealed without them has none.
        assert_eq!(summary_covers(&m(&seal(&s, None, None)), None), Some(None));
        assert_eq!(summary_covers(&m(&seal(&s, Some("k"), None)), Some("k")), Some(None));
        // Malformed closing lines are not summaries.
        for bad in ["covers=x:1]", "covers=5:zz]", "covers=5:1:a]", "tag=1 covers=5:1]", "extra]"] {
            assert_eq!(summary_covers(&m(&format!("{s}\n[/ctxguard:summary {bad}")), None), None, "{bad}");
        }
        assert_eq!(summary_covers(&Message::text(Role::User, plain.as_str()), None), None, "only system messages");
        // The host's system prompt written in the same string (Anthropic): the block alone.
        let joined = format!("You are terse.\n\n{keyed}\n\nMore of the host's text.");
        let keep = Covers { keep: vec![55, 56], ..covers.clone() };
        assert_eq!(summary_block(&m(&joined), Some("k")), Some((keyed.clone(), Some(keep))));
    }
}
