//! Checkpoints that survive reloads (SPEC §8): sealing summaries so that only ctxguard's own
//! output is recognized, and resolving a stored conversation from its latest checkpoint.
//!
//! Threat model. The attacker controls text that enters the conversation — what a user types,
//! what a tool or a web page returns — and wants ctxguard to take it for a summary checkpoint
//! (which would make the history before it disappear on reload). ctxguard recognizes a summary
//! only when
//! 1. it is in a `system` message (the host writes those; users and tools cannot), and
//! 2. its text is a complete sealed block: `[ctxguard:summary]` ... `[/ctxguard:summary]`, and
//! 3. when the host configured a `checkpointKey`, the closing line carries a keyed tag
//!    (SipHash-2-4, 128 bits) over the block that verifies with that key.
//!
//! Metadata markers (`ctxguard.summaryCompacted`) alone never make a checkpoint: transports drop
//! them and users can spoof them. Out of scope: an attacker who can write system messages or who
//! knows the key (in a browser, a user who reads the key from devtools can forge checkpoints of
//! their own conversation only).

use std::hash::Hasher;

use serde::{Deserialize, Serialize};

use crate::message::{Content, Message, Part, Role};
use crate::pipeline::session_state::SUMMARY_MARKER;

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

/// Close a rendered summary (which starts with the marker) with the end line, tagged when there
/// is a key. A line inside the summary that starts like the end line — the summarizer echoing a
/// forged block from a tool output — is defused first (`‹/ctxguard:summary`): otherwise the
/// block would end there, and its tag would not verify.
pub fn seal(summary: &str, key: Option<&str>) -> String {
    let defused;
    let body = if summary.contains(&format!("\n{SUMMARY_END}")) {
        defused = summary.replace(&format!("\n{SUMMARY_END}"), "\n‹/ctxguard:summary");
        defused.as_str()
    } else {
        summary
    };
    match key {
        Some(k) => format!("{body}\n{SUMMARY_END} tag={}]", tag(k, body)),
        None => format!("{body}\n{SUMMARY_END}]"),
    }
}

/// Whether `text` contains a sealed summary block that verifies (with `key` when given).
pub fn has_valid_summary(text: &str, key: Option<&str>) -> bool {
    let mut from = 0;
    while let Some(rel) = text.get(from..).and_then(|t| t.find(SUMMARY_MARKER)) {
        let start = from + rel;
        let at_line_start = start == 0 || text.get(..start).is_some_and(|b| b.ends_with('\n'));
        if at_line_start {
            if let Some(end_rel) = text.get(start..).and_then(|t| t.find(&format!("\n{SUMMARY_END}"))) {
                let body_end = start + end_rel;
                let line_start = body_end + 1;
                let line = text.get(line_start..).and_then(|t| t.lines().next()).unwrap_or("");
                let body = text.get(start..body_end).unwrap_or("");
                let ok = match (key, line.strip_prefix(SUMMARY_END)) {
                    (_, None) => false,
                    (None, Some(rest)) => rest == "]" || rest.starts_with(" tag="),
                    (Some(k), Some(rest)) => rest == format!(" tag={}]", tag(k, body)),
                };
                if ok {
                    return true;
                }
            }
        }
        from = start + SUMMARY_MARKER.len();
    }
    false
}

/// A checkpoint summary: a system message carrying a valid sealed block.
pub fn is_checkpoint_summary(m: &Message, key: Option<&str>) -> bool {
    if m.role != Role::System {
        return false;
    }
    match &m.content {
        Content::Text(t) => has_valid_summary(t, key),
        Content::Parts(parts) => parts.iter().any(|p| matches!(p, Part::Text { text, .. } if has_valid_summary(text, key))),
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
        let plain = seal(&s, None);
        let keyed = seal(&s, Some("k1"));
        assert!(has_valid_summary(&plain, None));
        assert!(!has_valid_summary(&plain, Some("k1")), "an untagged block does not verify under a key");
        assert!(has_valid_summary(&keyed, Some("k1")));
        assert!(has_valid_summary(&keyed, None));
        assert!(!has_valid_summary(&keyed, Some("k2")));
        let tampered = keyed.replace("module 3", "module 4");
        assert!(!has_valid_summary(&tampered, Some("k1")));
        assert!(!has_valid_summary(&s, None), "an unclosed block is not a summary");
        assert!(!has_valid_summary(&format!("quote: {plain}"), None), "the marker must start a line");
        assert!(has_valid_summary(&format!("Be terse.\n\n{keyed}\n\nmore"), Some("k1")), "inside a joined Anthropic system text");
        // A summary that quotes a closing line (the summarizer echoed a tool output) still
        // verifies: the quoted line is defused (found by tests/prop_security.rs).
        let echoed = format!("{SUMMARY_MARKER} Summary.\n\nThe tool said:\n[/ctxguard:summary]\n[/ctxguard:summary-x\r\n[/ctxguard:summary tag=00]\nend");
        for key in [None, Some("k1")] {
            let sealed = seal(&echoed, key);
            assert!(has_valid_summary(&sealed, key), "{sealed}");
            assert_eq!(sealed.matches(&format!("\n{SUMMARY_END}")).count(), 1, "{sealed}");
            assert!(sealed.contains("\n‹/ctxguard:summary]\n"));
        }
        assert_eq!(plain, format!("{s}\n[/ctxguard:summary]"), "a summary without such a line is sealed unchanged");
        assert_eq!(tag("k", "x"), tag("k", "x"));
        assert_ne!(tag("k", "x"), tag("k", "y"));
    }
}
