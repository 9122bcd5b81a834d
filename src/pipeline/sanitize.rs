//! Tool-pair sanitation: after anything is dropped, no tool result without its call and no call
//! without its result (providers reject both). Works on the internal model, so it covers OpenAI
//! `tool_calls` / `tool` messages and Anthropic `tool_use` / `tool_result` blocks alike; the
//! ties the adapters record (`format::Ties`: a Responses reasoning item with the items after it,
//! Gemini calls signed together) are kept or dropped whole.

use rustc_hash::FxHashSet;

use crate::format::ties;
use crate::message::{Content, Message, Part, Role};

/// What sanitation removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sanitized {
    pub orphan_results: usize,
    pub orphan_calls: usize,
    /// Assistant messages left with neither content nor calls, and messages removed with the
    /// bundle they belong to (`format::Ties`).
    pub empty_messages: usize,
}

impl Sanitized {
    pub fn changed(&self) -> bool {
        self.orphan_results + self.orphan_calls + self.empty_messages > 0
    }
}

/// Remove results whose call is not before them, then calls that have no result after them,
/// then assistant messages left with neither content nor calls; then the ties that lost a
/// member, whole, and again what that orphaned. Legacy `function` results (no call id) are left
/// alone.
pub fn sanitize(messages: &mut Vec<Message>) -> Sanitized {
    let mut report = pairs(messages);
    // Each round removes something or ends the loop.
    while untie(messages, &mut report) {
        let more = pairs(messages);
        report.orphan_results += more.orphan_results;
        report.orphan_calls += more.orphan_calls;
        report.empty_messages += more.empty_messages;
    }
    report
}

/// Remove what broke a tie: all calls of a message whose calls stand together when one of them
/// is gone, every message of a bundle that lost one. Whether anything was removed.
fn untie(messages: &mut Vec<Message>, report: &mut Sanitized) -> bool {
    let mut changed = false;
    for m in messages.iter_mut() {
        let together = ties(m).calls_together;
        if together > 1 && !m.tool_calls.is_empty() && m.tool_calls.len() < together {
            report.orphan_calls += m.tool_calls.len();
            remove_calls(m, &vec![false; m.tool_calls.len()]);
            changed = true;
        }
    }
    // Bundles: a `leads` message followed by exactly its followers; a run of followers anywhere
    // else lost its lead.
    let all: Vec<_> = messages.iter().map(ties).collect();
    let mut drop = vec![false; all.len()];
    let mut k = 0;
    while let Some(t) = all.get(k) {
        if t.leads == 0 && !t.follows {
            k += 1;
            continue;
        }
        let mut end = k + 1;
        while all.get(end).is_some_and(|f| f.follows && f.leads == 0) {
            end += 1;
        }
        if t.leads == 0 || end - k - 1 != t.leads {
            drop.iter_mut().take(end).skip(k).for_each(|d| *d = true);
        }
        k = end;
    }
    if !drop.contains(&true) {
        return changed;
    }
    let mut at = 0;
    messages.retain(|m| {
        let gone = drop.get(at).copied().unwrap_or(false);
        at += 1;
        if gone {
            report.orphan_calls += m.tool_calls.len();
            report.empty_messages += 1;
        }
        !gone
    });
    true
}

/// The pair rules of [`sanitize`], once.
fn pairs(messages: &mut Vec<Message>) -> Sanitized {
    let mut report = Sanitized::default();
    // A read-only pass first, on borrowed ids (this runs on every `prepare`): which results have
    // their call before them, and which kept messages hold calls no kept result answers.
    let (keep, unanswered) = {
        let mut issued: FxHashSet<&str> = FxHashSet::default();
        let mut answered: FxHashSet<&str> = FxHashSet::default();
        let keep: Vec<bool> = messages
            .iter()
            .map(|m| {
                for c in &m.tool_calls {
                    if !c.id.is_empty() {
                        issued.insert(c.id.as_str());
                    }
                }
                match (m.role, &m.tool_call_id) {
                    (Role::Tool, Some(id)) if issued.contains(id.as_str()) => {
                        answered.insert(id.as_str());
                        true
                    }
                    (Role::Tool, Some(_)) => false,
                    _ => true,
                }
            })
            .collect();
        let unanswered: Vec<(usize, Vec<bool>)> = messages
            .iter()
            .zip(&keep)
            .enumerate()
            .filter(|(_, (m, kept))| **kept && !m.tool_calls.is_empty())
            .filter_map(|(i, (m, _))| {
                let k: Vec<bool> =
                    m.tool_calls.iter().map(|c| c.id.is_empty() || answered.contains(c.id.as_str())).collect();
                (!k.iter().all(|x| *x)).then_some((i, k))
            })
            .collect();
        (keep, unanswered)
    };
    report.orphan_results = keep.iter().filter(|k| !**k).count();
    for (i, k) in &unanswered {
        if let Some(m) = messages.get_mut(*i) {
            report.orphan_calls += k.iter().filter(|x| !**x).count();
            remove_calls(m, k);
        }
    }
    let mut at = 0;
    messages.retain(|m| {
        let kept = keep.get(at).copied().unwrap_or(true);
        at += 1;
        if !kept {
            return false;
        }
        let empty = m.role == Role::Assistant && m.tool_calls.is_empty() && content_is_empty(&m.content);
        if empty {
            report.empty_messages += 1;
        }
        !empty
    });
    report
}

fn content_is_empty(c: &Content) -> bool {
    match c {
        Content::Text(t) => t.trim().is_empty(),
        Content::Parts(parts) => parts.iter().all(|p| match p {
            Part::Text { text, .. } => text.trim().is_empty(),
            Part::ToolCallRef { .. } => true,
            _ => false,
        }),
    }
}

/// Drop the calls whose `keep` flag is false, renumbering `ToolCallRef` parts.
fn remove_calls(m: &mut Message, keep: &[bool]) {
    m.touch();
    let mut new_index = Vec::with_capacity(keep.len());
    let mut next = 0;
    for k in keep {
        new_index.push(k.then(|| {
            next += 1;
            next - 1
        }));
    }
    let mut i = 0;
    m.tool_calls.retain(|_| {
        let k = keep.get(i).copied().unwrap_or(true);
        i += 1;
        k
    });
    if let Content::Parts(parts) = &mut m.content {
        parts.retain_mut(|p| match p {
            Part::ToolCallRef { index } => match new_index.get(*index).copied().flatten() {
                Some(n) => {
                    *index = n;
                    true
                }
                None => false,
            },
            _ => true,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "f".into(), arguments: "{}".into(), extra: Default::default() }
    }

    fn result(id: &str) -> Message {
        Message { role: Role::Tool, tool_call_id: Some(id.into()), ..Message::text(Role::Tool, "ok") }
    }

    #[test]
    fn orphans_on_both_sides_are_removed() {
        let mut msgs = vec![
            result("a"), // its call was dropped
            Message { tool_calls: vec![call("b"), call("c")], ..Message::text(Role::Assistant, "") },
            result("b"),
            Message { tool_calls: vec![call("d")], ..Message::text(Role::Assistant, "") },
            Message::text(Role::User, "next"),
        ];
        let r = sanitize(&mut msgs);
        assert_eq!(r, Sanitized { orphan_results: 1, orphan_calls: 2, empty_messages: 1 });
        assert_eq!(msgs.len(), 3);
        assert_eq!(msgs[0].tool_calls.len(), 1);
        assert_eq!(msgs[0].tool_calls[0].id, "b");
        assert_eq!(msgs[1].tool_call_id.as_deref(), Some("b"));
    }

    #[test]
    fn refs_are_renumbered() {
        let mut m = Message {
            role: Role::Assistant,
            content: Content::Parts(vec![
                Part::Text { text: "t".into(), extra: Default::default() },
                Part::ToolCallRef { index: 0 },
                Part::ToolCallRef { index: 1 },
            ]),
            tool_calls: vec![call("x"), call("y")],
            ..Default::default()
        };
        remove_calls(&mut m, &[false, true]);
        assert_eq!(m.tool_calls.len(), 1);
        match &m.content {
            Content::Parts(p) => assert_eq!(p[1], Part::ToolCallRef { index: 0 }),
            _ => unreachable!(),
        }
        assert!(matches!(&m.content, Content::Parts(p) if p.len() == 2));
    }
}
