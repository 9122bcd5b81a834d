//! Tool-pair sanitation: after anything is dropped, no tool result without its call and no call
//! without its result (providers reject both). Works on the internal model, so it covers OpenAI
//! `tool_calls` / `tool` messages and Anthropic `tool_use` / `tool_result` blocks alike; the
//! ties the adapters record (`format::Ties`: a Responses reasoning item with the items after it,
//! Gemini calls signed together) are kept or dropped whole. Each message removed or changed is
//! named with its index and the reason ([`Dropped`]); [`defects`] says it of a caller's input
//! without changing it, for the `message_dropped` traces of `prepare` ([`trace`]).

use rustc_hash::FxHashSet;
use serde::Serialize;

use crate::format::ties;
use crate::message::{Content, Message, Part, Role};
use crate::report::trace::{Operation, Status, Trace};

/// What sanitation removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sanitized {
    pub orphan_results: usize,
    pub orphan_calls: usize,
    /// Assistant messages left with neither content nor calls, and messages removed with the
    /// bundle they belong to (`format::Ties`).
    pub empty_messages: usize,
    /// Each message removed or changed, by its index in the list `sanitize` was given, in order.
    pub dropped: Vec<Dropped>,
}

impl Sanitized {
    pub fn changed(&self) -> bool {
        self.orphan_results + self.orphan_calls + self.empty_messages > 0
    }
}

/// Why sanitation removed or changed a message (`reason` of a `message_dropped` trace).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// A tool result whose call is not before it.
    OrphanToolResult,
    /// A tool call no result after it answers: the call is removed (the message too when
    /// nothing else is left of it).
    UnansweredToolCall,
    /// An assistant message with neither content nor calls (a half-streamed one).
    EmptyMessage,
    /// A member of a bundle that lost another member (a Responses reasoning item and the items
    /// of its output; Gemini calls signed together).
    BrokenBundle,
}

impl DropReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::OrphanToolResult => "orphan_tool_result",
            DropReason::UnansweredToolCall => "unanswered_tool_call",
            DropReason::EmptyMessage => "empty_message",
            DropReason::BrokenBundle => "broken_bundle",
        }
    }
}

/// One message sanitation removed (`removed`) or changed (its calls in `call_ids` removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// Its index in the list given to `sanitize`.
    pub index: usize,
    pub reason: DropReason,
    pub removed: bool,
    /// The ids of the calls removed from it, or of the call a removed result answers.
    pub call_ids: Vec<String>,
}

/// Remove results whose call is not before them, then calls that have no result after them,
/// then assistant messages left with neither content nor calls; then the ties that lost a
/// member, whole, and again what that orphaned. Legacy `function` results (no call id) are left
/// alone.
pub fn sanitize(messages: &mut Vec<Message>) -> Sanitized {
    // The index in the list as given of each message still there.
    let mut origin: Vec<usize> = (0..messages.len()).collect();
    let mut report = Sanitized::default();
    pairs(messages, &mut origin, &mut report);
    // Each round removes something or ends the loop.
    while untie(messages, &mut origin, &mut report) {
        pairs(messages, &mut origin, &mut report);
    }
    report.dropped.sort_by_key(|d| d.index);
    report
}

/// What [`sanitize`] would remove or change in `messages`, without changing them: one read-only
/// pass when nothing is broken (the usual case), a sanitized copy otherwise.
pub fn defects(messages: &[Message]) -> Vec<Dropped> {
    if !broken(messages) {
        return Vec::new();
    }
    let mut copy = messages.to_vec();
    sanitize(&mut copy).dropped
}

/// The `message_dropped` trace of `d`: `index` is the message's index in the caller's
/// `messages` (the binding maps it), `before` its tokens and `after` what is left of it (0 when
/// it was removed).
pub fn trace(d: &Dropped, index: Option<usize>, before: usize, after: usize) -> Trace {
    let mut t = Trace::new(Operation::MessageDropped, Status::Applied, 0.0, before, after);
    t.message_index = index.map(crate::report::trace::u32_of);
    t.reason = Some(d.reason.as_str().to_string());
    t.removed = Some(d.removed);
    t.call_ids = (!d.call_ids.is_empty()).then(|| d.call_ids.clone());
    t
}

/// `m` without the calls whose ids are in `ids` (a message [`Dropped`] names as changed, as
/// it is sent).
pub fn without_calls(m: &Message, ids: &[String]) -> Message {
    let mut out = m.clone();
    let keep: Vec<bool> = m.tool_calls.iter().map(|c| !ids.iter().any(|i| i.as_str() == c.id.as_str())).collect();
    remove_calls(&mut out, &keep);
    out
}

/// Whether [`sanitize`] would change anything in `messages` (read-only).
fn broken(messages: &[Message]) -> bool {
    let (keep, unanswered) = analyze(messages);
    if keep.contains(&false) || !unanswered.is_empty() {
        return true;
    }
    if messages.iter().any(|m| m.role == Role::Assistant && m.tool_calls.is_empty() && content_is_empty(&m.content)) {
        return true;
    }
    let all: Vec<_> = messages.iter().map(ties).collect();
    if messages
        .iter()
        .zip(&all)
        .any(|(m, t)| t.calls_together > 1 && !m.tool_calls.is_empty() && m.tool_calls.len() < t.calls_together)
    {
        return true;
    }
    bundles_broken(&all).contains(&true)
}

/// Which messages belong to a bundle that is not whole: a `leads` message followed by exactly
/// its followers is whole; a run of followers anywhere else lost its lead.
fn bundles_broken(all: &[crate::format::Ties]) -> Vec<bool> {
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
    drop
}

/// Record that the message at `origin` lost the calls `ids` (or was removed, for `reason`): a
/// message that lost its calls and then went empty is one record, removed.
fn record(report: &mut Sanitized, origin: usize, reason: DropReason, removed: bool, ids: Vec<String>) {
    if let Some(d) = report.dropped.iter_mut().find(|d| d.index == origin) {
        d.removed |= removed;
        d.call_ids.extend(ids);
        return;
    }
    report.dropped.push(Dropped { index: origin, reason, removed, call_ids: ids });
}

/// Remove what broke a tie: all calls of a message whose calls stand together when one of them
/// is gone, every message of a bundle that lost one. Whether anything was removed.
fn untie(messages: &mut Vec<Message>, origin: &mut Vec<usize>, report: &mut Sanitized) -> bool {
    let mut changed = false;
    for (i, m) in messages.iter_mut().enumerate() {
        let together = ties(m).calls_together;
        if together > 1 && !m.tool_calls.is_empty() && m.tool_calls.len() < together {
            report.orphan_calls += m.tool_calls.len();
            let ids = m.tool_calls.iter().map(|c| c.id.to_string()).collect();
            record(report, origin.get(i).copied().unwrap_or(i), DropReason::BrokenBundle, false, ids);
            remove_calls(m, &vec![false; m.tool_calls.len()]);
            changed = true;
        }
    }
    let all: Vec<_> = messages.iter().map(ties).collect();
    let drop = bundles_broken(&all);
    if !drop.contains(&true) {
        return changed;
    }
    let mut at = 0;
    messages.retain(|m| {
        let gone = drop.get(at).copied().unwrap_or(false);
        if gone {
            report.orphan_calls += m.tool_calls.len();
            report.empty_messages += 1;
            let ids = m.tool_calls.iter().map(|c| c.id.to_string()).collect();
            record(report, origin.get(at).copied().unwrap_or(at), DropReason::BrokenBundle, true, ids);
        }
        at += 1;
        !gone
    });
    retain_origin(origin, &drop);
    true
}

/// Drop the entries of `origin` whose `gone` flag is set (as `retain` did to the messages).
fn retain_origin(origin: &mut Vec<usize>, gone: &[bool]) {
    let mut at = 0;
    origin.retain(|_| {
        let g = gone.get(at).copied().unwrap_or(false);
        at += 1;
        !g
    });
}

/// Which results have their call before them (`keep`), and which kept messages hold calls no
/// kept result answers (with a flag per call: answered). Read-only, on borrowed ids (this runs
/// on every `prepare`).
fn analyze(messages: &[Message]) -> (Vec<bool>, Vec<(usize, Vec<bool>)>) {
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
}

/// The pair rules of [`sanitize`], once.
fn pairs(messages: &mut Vec<Message>, origin: &mut Vec<usize>, report: &mut Sanitized) {
    let (keep, unanswered) = analyze(messages);
    let at_origin = |i: usize| origin.get(i).copied().unwrap_or(i);
    for (i, (m, kept)) in messages.iter().zip(&keep).enumerate() {
        if !kept {
            report.orphan_results += 1;
            let ids = m.tool_call_id.iter().map(|t| t.to_string()).collect();
            record(report, at_origin(i), DropReason::OrphanToolResult, true, ids);
        }
    }
    for (i, k) in &unanswered {
        if let Some(m) = messages.get_mut(*i) {
            report.orphan_calls += k.iter().filter(|x| !**x).count();
            let ids = m.tool_calls.iter().zip(k).filter(|(_, a)| !**a).map(|(c, _)| c.id.to_string()).collect();
            record(report, at_origin(*i), DropReason::UnansweredToolCall, false, ids);
            remove_calls(m, k);
        }
    }
    let mut gone = vec![false; messages.len()];
    for (i, m) in messages.iter().enumerate() {
        let kept = keep.get(i).copied().unwrap_or(true);
        let empty = kept && m.role == Role::Assistant && m.tool_calls.is_empty() && content_is_empty(&m.content);
        if empty {
            report.empty_messages += 1;
            record(report, at_origin(i), DropReason::EmptyMessage, true, Vec::new());
        }
        if let Some(g) = gone.get_mut(i) {
            *g = !kept || empty;
        }
    }
    let mut at = 0;
    messages.retain(|_| {
        let g = gone.get(at).copied().unwrap_or(false);
        at += 1;
        !g
    });
    retain_origin(origin, &gone);
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
    m.retain_parts(|p| match p {
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
        assert_eq!((r.orphan_results, r.orphan_calls, r.empty_messages), (1, 2, 1));
        let named: Vec<_> = r.dropped.iter().map(|d| (d.index, d.reason, d.removed, d.call_ids.clone())).collect();
        assert_eq!(
            named,
            vec![
                (0, DropReason::OrphanToolResult, true, vec!["a".to_string()]),
                (1, DropReason::UnansweredToolCall, false, vec!["c".to_string()]),
                (3, DropReason::UnansweredToolCall, true, vec!["d".to_string()]),
            ]
        );
        assert_eq!(msgs.len(), 3);
        assert_eq!(msgs[0].tool_calls.len(), 1);
        assert_eq!(msgs[0].tool_calls[0].id, "b");
        assert_eq!(msgs[1].tool_call_id.as_deref(), Some("b"));
    }

    #[test]
    fn defects_name_what_sanitize_removes_without_changing_the_input() {
        let msgs = vec![
            Message::text(Role::User, "hi"),
            Message { content: Content::Text(Default::default()), ..Message::text(Role::Assistant, "") },
            result("gone"),
            Message::text(Role::User, "again"),
        ];
        let before = msgs.clone();
        let d = defects(&msgs);
        assert_eq!(msgs, before);
        let named: Vec<_> = d.iter().map(|d| (d.index, d.reason, d.removed)).collect();
        assert_eq!(named, vec![(1, DropReason::EmptyMessage, true), (2, DropReason::OrphanToolResult, true)]);
        assert!(defects(&[Message::text(Role::User, "fine")]).is_empty());
        let t = trace(&d[1], Some(5), 7, 0);
        assert_eq!(
            (t.message_index, t.reason.as_deref(), t.removed),
            (Some(5), Some("orphan_tool_result"), Some(true))
        );
        assert_eq!(t.call_ids, Some(vec!["gone".to_string()]));
    }

    #[test]
    fn without_calls_keeps_the_rest() {
        let m = Message { tool_calls: vec![call("x"), call("y")], ..Message::text(Role::Assistant, "text") };
        let w = without_calls(&m, &["x".to_string()]);
        assert_eq!(w.tool_calls.len(), 1);
        assert_eq!(w.content.text(), "text");
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
