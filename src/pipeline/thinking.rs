//! Claude's preserved thinking (docs/edits.md, "Preserved thinking"): on the models that bind
//! every `thinking` / `redacted_thinking` block to its prefix (the `system`, the `tools` and
//! every earlier message), a block is sent only while that prefix is the request that produced
//! it — what `prepare` returned on the call before its assistant turn.
//!
//! Each call records its model input by the history it was given (`Edits::produced`). A later
//! call checks every assistant turn that carries thinking: the turn was produced by the call
//! whose history ended just before it; its blocks stay when the model input before the turn is
//! still exactly that call's, and are dropped otherwise. A turn no call of this guard produced
//! (a new guard after a reload) keeps its blocks only while nothing before it was edited. When
//! an edit invalidates a block, every thinking block of the request is dropped (the ones before
//! the edit too: the provider accepts blocks removed from the start, and the room they free
//! delays the next edit), and a dropped block is never sent again (putting one back would
//! invalidate every block produced while it was gone). The latest turns keep theirs between
//! edits, which the planner makes rare.

use std::hash::Hasher;

use rustc_hash::FxHasher;

use crate::format::Request;
use crate::guard::Guard;
use crate::message::{Content, Message, Part, Role};
use crate::report::metrics::ThinkingReport;

/// Whether a content part is a thinking block (Anthropic's wire: `thinking`, `redacted_thinking`).
fn is_thinking(p: &Part) -> bool {
    match p {
        Part::Unknown { value } => {
            matches!(value.get("type").and_then(|t| t.as_str()), Some("thinking" | "redacted_thinking"))
        }
        _ => false,
    }
}

/// The thinking blocks of a message, hashed: the same blocks (signatures included) give the same
/// identity whatever else of the message changes. `None` without thinking.
fn thinking_identity(m: &Message) -> Option<u64> {
    if m.role != Role::Assistant {
        return None;
    }
    let Content::Parts(parts) = &m.content else { return None };
    let mut h = FxHasher::default();
    let mut any = false;
    for p in parts.iter().filter(|p| is_thinking(p)) {
        if let Part::Unknown { value } = p {
            h.write(value.to_string().as_bytes());
            any = true;
        }
    }
    any.then(|| h.finish())
}

/// `m` without its thinking blocks.
fn without_thinking(m: &Message) -> Message {
    let mut out = m.clone();
    out.retain_parts(|p| !is_thinking(p));
    out.touch();
    out
}

/// Rolling hashes of a request as the model sees it: `h[j]` covers the tools and messages
/// `..j`, each message in its model-visible form.
fn rolling(g: &mut Guard, tools: u64, messages: &[Message]) -> Vec<u64> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    let mut h = tools;
    out.push(h);
    for m in messages {
        let mut v = m.clone();
        v.strip_metadata();
        h = mix(h, g.facts(&v).key);
        out.push(h);
    }
    out
}

fn mix(h: u64, k: u64) -> u64 {
    let mut s = FxHasher::default();
    s.write_u64(h);
    s.write_u64(k);
    s.finish()
}

/// Keep what the check needs of the call's history on the guard (`Edits::call_history`): each
/// raw message's rolling hash, and where each assistant turn with thinking sits.
pub(crate) fn begin(g: &mut Guard, history: &Request) {
    if !g.model.preserved_thinking {
        g.edits.call_history = None;
        return;
    }
    let tools = g.counter.tools_key(history);
    let raw = rolling(g, tools, &history.messages);
    let turns =
        history.messages.iter().enumerate().filter_map(|(k, m)| thinking_identity(m).map(|id| (id, k))).collect();
    g.edits.call_history = Some((raw, turns));
}

/// Leave out of `request` (the history about to go through layer 1) every thinking block an
/// earlier call dropped, so that every count of this call is of what will be sent.
pub(crate) fn strip_dropped(g: &Guard, request: &mut Request) {
    if g.edits.dropped_thinking.is_empty() {
        return;
    }
    for m in request.messages.iter_mut() {
        if thinking_identity(m).is_some_and(|id| g.edits.dropped_thinking.contains(&id)) {
            *m = without_thinking(m);
        }
    }
}

/// Check the thinking blocks of `out` (the call's final model input, before the host's
/// guidance) against what earlier calls sent, drop the ones that are no longer valid, and
/// report. A no-op for models without preserved thinking.
pub(crate) fn bind(g: &mut Guard, out: &mut Request) -> ThinkingReport {
    let mut report = ThinkingReport::default();
    let Some((raw, turns)) = g.edits.call_history.take() else { return report };
    // Blocks dropped by earlier calls stay out: the request is checked as it will be sent.
    for m in out.messages.iter_mut() {
        if thinking_identity(m).is_some_and(|id| g.edits.dropped_thinking.contains(&id)) {
            let before = g.facts(m).raw.total;
            *m = without_thinking(m);
            report.dropped += 1;
            report.dropped_tokens = report
                .dropped_tokens
                .saturating_add(u32::try_from(before.saturating_sub(g.facts(m).raw.total)).unwrap_or(u32::MAX));
        }
    }
    let tools = g.counter.tools_key(out);
    let hashes = rolling(g, tools, &out.messages);
    // First pass: which turns are valid as they stand.
    let mut edited = false;
    for (j, m) in out.messages.iter().enumerate() {
        let Some(id) = thinking_identity(m) else { continue };
        let prefix = hashes.get(j).copied().unwrap_or(0);
        let valid = match turns.get(&id).and_then(|&k| raw.get(k).copied()) {
            Some(raw) => match g.edits.produced.get(&raw) {
                Some(&sent) => sent == prefix,
                // Produced by no call of this guard: valid only while nothing before it was
                // edited.
                None => raw == prefix,
            },
            None => false,
        };
        if !valid {
            edited = true;
        }
    }
    // Second pass: drop what is invalid — everything when this call edited something.
    for m in out.messages.iter_mut() {
        let Some(id) = thinking_identity(m) else { continue };
        if edited {
            let before = g.facts(m).raw.total;
            let stripped = without_thinking(m);
            let after = g.facts(&stripped).raw.total;
            report.dropped += 1;
            report.newly_dropped += 1;
            report.dropped_tokens =
                report.dropped_tokens.saturating_add(u32::try_from(before.saturating_sub(after)).unwrap_or(u32::MAX));
            g.edits.dropped_thinking.insert(id);
            *m = stripped;
        } else {
            report.kept += 1;
        }
    }
    g.edits.call_history = Some((raw, turns));
    // An assistant turn left with no content at all (it held only thinking) goes.
    out.messages.retain(|m| !(m.role == Role::Assistant && m.tool_calls.is_empty() && m.content.is_empty()));
    report.latest_kept =
        out.messages.iter().rev().find(|m| m.role == Role::Assistant).is_some_and(|m| thinking_identity(m).is_some());
    report
}

/// Record what this call returned (its final model input), under the history it was given.
pub(crate) fn record(g: &mut Guard, out: &Request) {
    let Some(key) = g.edits.call_history.as_ref().and_then(|(raw, _)| raw.last().copied()) else { return };
    let tools = g.counter.tools_key(out);
    let sent = rolling(g, tools, &out.messages).last().copied().unwrap_or(0);
    g.edits.remember_produced(key, sent);
}
