//! The mechanical fallback (docs/design.md, "Compaction": the mechanical fallback): before old messages are dropped
//! without a summary, their tool evidence — tool name, key arguments, the result's conclusion —
//! and the user's requests go into one pinned system message. Deterministic, no LLM.

use std::collections::HashMap;

use crate::message::{Message, Role};
use crate::sources::stub::{clip, defuse, key_args};
use crate::tokens::{self, Encoding};

pub use crate::message::EVIDENCE_MARKER;
const CONCLUSION_CHARS: usize = 240;
const REQUEST_CHARS: usize = 200;

/// The conclusion of a tool result: its last non-empty lines (logs end with their verdict),
/// skipping ctxguard's own marker lines.
fn conclusion(text: &str) -> String {
    let lines: Vec<&str> =
        text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("[ctxguard:")).collect();
    let tail = lines.len().saturating_sub(3);
    clip(&lines.get(tail..).unwrap_or(&[]).join(" | "), CONCLUSION_CHARS)
}

/// The pinned evidence message for `removed` messages, within `budget` tokens (the most recent
/// entries are kept when there are too many). `None` when there is nothing to keep.
pub fn evidence_message(removed: &[Message], reason: &str, encoding: Encoding, budget: usize) -> Option<Message> {
    let mut calls: HashMap<&str, (&str, &str)> = HashMap::new();
    let mut entries: Vec<String> = Vec::new();
    for m in removed {
        for c in &m.tool_calls {
            calls.insert(c.id.as_str(), (c.name.as_str(), c.arguments.as_str()));
        }
        match m.role {
            Role::Tool => {
                let (name, args) = m
                    .tool_call_id
                    .as_deref()
                    .and_then(|id| calls.get(id).copied())
                    .unwrap_or((m.name.as_deref().unwrap_or("tool"), ""));
                entries.push(format!(
                    "- tool {name}({}) → {}",
                    defuse(&key_args(args)),
                    defuse(&conclusion(&m.content.text()))
                ));
            }
            Role::User => {
                let t = m.content.text();
                if !t.trim().is_empty() {
                    entries.push(format!("- user asked: {}", clip(&defuse(&t), REQUEST_CHARS)));
                }
            }
            _ => {}
        }
    }
    if entries.is_empty() || budget == 0 {
        return None;
    }
    let header = format!(
        "{EVIDENCE_MARKER} Earlier messages were removed without a summary ({reason}). Evidence kept from them, oldest first:"
    );
    // Keep the most recent entries that fit.
    let mut used = tokens::count(encoding, &header);
    if used > budget {
        return None;
    }
    let mut kept = Vec::new();
    for e in entries.iter().rev() {
        let n = tokens::count(encoding, e) + 1;
        if used + n > budget {
            break;
        }
        used += n;
        kept.push(e.as_str());
    }
    kept.reverse();
    let mut text = header;
    for e in kept {
        text.push('\n');
        text.push_str(e);
    }
    let mut msg = Message::text(Role::System, text);
    msg.markers.pinned = true;
    Some(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    #[test]
    fn tool_evidence_names_call_arguments_and_conclusion() {
        let removed = vec![
            Message::text(Role::User, "Why does   the login test fail?"),
            Message {
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "run_tests".into(),
                    arguments: r#"{"filter":"login","verbose":true}"#.into(),
                    extra: Default::default(),
                }],
                ..Message::text(Role::Assistant, "")
            },
            Message {
                tool_call_id: Some("c1".into()),
                ..Message::text(Role::Tool, "running 3 tests\n\ntest login ... FAILED\nresult: 2 passed, 1 failed\n")
            },
        ];
        let m = evidence_message(&removed, "timeout", Encoding::O200kBase, 1_000).unwrap();
        let t = m.content.text();
        assert!(m.markers.pinned && m.role == Role::System);
        assert!(t.starts_with(EVIDENCE_MARKER));
        assert!(t.contains("(timeout)"));
        assert!(t.contains("- user asked: Why does the login test fail?"));
        assert!(t.contains("- tool run_tests(filter=login, verbose=true) → running 3 tests | test login ... FAILED | result: 2 passed, 1 failed"), "{t}");
        assert!(evidence_message(&[], "x", Encoding::O200kBase, 100).is_none());
    }

    #[test]
    fn budget_keeps_the_latest_entries() {
        let removed: Vec<Message> =
            (0..200).map(|i| Message::text(Role::User, format!("request number {i}"))).collect();
        let m = evidence_message(&removed, "timeout", Encoding::O200kBase, 200).unwrap();
        let t = m.content.text();
        assert!(tokens::count(Encoding::O200kBase, &t) <= 200);
        assert!(t.contains("request number 199"));
        assert!(!t.contains("request number 0\n"));
    }
}
