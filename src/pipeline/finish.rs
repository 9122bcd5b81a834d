//! The end of a `prepare` call: the summary (or the mechanical fallback) turned into the chain
//! the model gets and the host persists, the emergency layer, tool pairs, guidance, metrics.

use crate::base::error::{Error, ErrorCode, Result};
use crate::format::Request;
use crate::guard::memory::{self, Summary};
use crate::guard::Guard;
use crate::message::{Message, Role};
use crate::report::metrics::{AheadState, CompactionRecord};
use crate::report::trace::{Operation, Status, Trace};
use crate::sources::pass::Cleared;

use super::session_state::{Answer, SessionState};
use super::summary::{is_summary, summary_message};
use super::types::{FailureReason, Outcome, Pending, PrepareOptions, EVIDENCE_TOKENS, MIN_SAVED_SHARE};
use super::{evidence, sanitize, Strategy};

/// The summary of `answer` (or the mechanical fallback for `Err`), after `attempts`
/// attempts: remembered, turned into the chain (persisted as `checkpoint` when a summary was
/// written; a fallback is not persisted, and is applied again only while the breaker is open),
/// then layer 1 on the chain
/// (what the next call will compute too, so the prompt's prefix stays the same), layer 3.
pub fn prepare_finish(
    g: &mut Guard,
    pending: Pending,
    result: std::result::Result<Answer, FailureReason>,
    attempts: u32,
    now: &dyn Fn() -> f64,
) -> Result<Outcome> {
    g.scoped(|g| prepare_finish_in(g, pending, result, attempts, true, now))
}

/// `count_failure`: a failure is the breaker's (false when the breaker already counted it:
/// the summary made ahead of time that failed).
pub(super) fn prepare_finish_in(
    g: &mut Guard,
    pending: Pending,
    result: std::result::Result<Answer, FailureReason>,
    attempts: u32,
    count_failure: bool,
    now: &dyn Fn() -> f64,
) -> Result<Outcome> {
    let Pending {
        started_ms,
        before_tokens,
        history,
        removed,
        covers,
        keys,
        retained,
        options,
        cache_decision,
        kept_tokens,
        traces,
        ..
    } = pending;
    let mut traces = traces;
    let key = g.checkpoint_key().map(str::to_string);
    let kept_system = |m: &Message| !is_summary(m, key.as_deref());
    let (note, status, failure, state) = match result {
        Ok(answer) => {
            let (answer, state) = state_of(g, answer);
            let note = summary_message(g, &answer, Some(&covers));
            g.memory.remember(Summary::new(covers.clone(), Some(keys), note.clone(), retained.clone(), false));
            g.breaker.success();
            (Some(note), Status::Completed, None, Some(state))
        }
        Err(reason) => {
            if count_failure && reason.is_summarizer_failure() {
                g.breaker.failure();
            }
            // The note gets at most EVIDENCE_TOKENS, and never more than the room the kept
            // messages leave under the usable limit (layer 3 does not drop system notes), as
            // layer 1 sends them without the summarized range: an attachment's preview grows
            // when older attachments leave the request (they share one budget).
            let kept = {
                let bare = memory::replace(&history.messages, &covers, None, &retained, &kept_system);
                let aged = g.aged_snapshot();
                let sent = bare.map(|a| {
                    g.guard_sources(&Request { messages: a.messages, ..history.clone() }, false, now)
                        .metrics
                        .used_tokens
                });
                g.restore_aged(aged);
                sent.map_or(kept_tokens, |t| (t as usize).max(kept_tokens))
            };
            let room = (g.budget.usable_limit as usize).saturating_sub(kept);
            let budget = EVIDENCE_TOKENS.min(g.raw_budget(room.saturating_sub(16)));
            let note = evidence::evidence_message(&removed, reason.as_str(), g.model.encoding, budget);
            // Applied again while the breaker is open (`start.rs`): the same cut and note from
            // call to call, so the provider's cache keeps the prefix.
            if let Some(n) = &note {
                g.memory.remember_fallback(Summary::new(
                    covers.clone(),
                    Some(keys),
                    n.clone(),
                    retained.clone(),
                    false,
                ));
            }
            let state = note.as_ref().map(|n| SessionState { summary: n.content.text(), ..Default::default() });
            (note, Status::Fallback, Some(reason), state)
        }
    };
    // The chain: the history with the summarized range replaced (a fallback without a note
    // drops the range and keeps the rest).
    let chain = memory::replace(&history.messages, &covers, note.as_ref(), &retained, &kept_system)
        .map(|a| a.messages)
        .ok_or_else(|| Error::new(ErrorCode::Internal, "the compaction's range is longer than its history"))?;
    let request = Request { messages: chain.clone(), ..history.clone() };
    // A fallback is this call's model input only: the next call runs layer 1 on the whole
    // history again, so the outputs it remembers as cleared stay the whole history's (else
    // every degraded call reports the same clearing steps again, as new).
    let aged = failure.is_some().then(|| g.aged_snapshot());
    let layer1 = g.guard_sources(&request, false, now);
    if let Some(aged) = aged {
        g.restore_aged(aged);
    }
    let after = layer1.metrics.used_tokens as usize;
    let record = CompactionRecord {
        before_tokens: crate::report::trace::u32_of(before_tokens),
        after_tokens: crate::report::trace::u32_of(after),
        tokens_saved: crate::report::trace::u32_of(before_tokens.saturating_sub(after)),
        removed_items: crate::report::trace::u32_of(removed.len()),
        duration_ms: now() - started_ms,
        status: if failure.is_none() { "completed".into() } else { "fallback".into() },
        failure_reason: failure.map(|r| r.as_str().to_string()),
        attempts,
    };
    // Refuse to thrash: an ineffective summary is not asked for again on the next call. A
    // fallback is not remembered, so skipping the next call's compaction would only make the
    // model input alternate between the emergency layer's cut and the evidence note.
    let saved = before_tokens.saturating_sub(after) as f64;
    g.memory.skip_next_compaction =
        failure.is_none() && (after > g.budget.target_limit as usize || saved < before_tokens as f64 * MIN_SAVED_SHARE);
    let mut t = Trace::new(Operation::SummaryCompact, status, record.duration_ms, before_tokens, after);
    t.removed_history_items = Some(record.removed_items);
    // A summary changes the request from right after the host's system: all of it is written
    // to the cache again.
    let rewritten = crate::report::trace::u32_of(after);
    t.prefix_invalidated_tokens = Some(rewritten);
    t.edit_cost = Some(g.edits.cache.rewrite_cost(rewritten));
    t.failure_reason = record.failure_reason.clone();
    t.cache_decision = cache_decision;
    traces.extend(layer1.traces.iter().filter(|t| t.operation == Operation::ToolOutputClear).cloned());
    traces.push(t);
    g.memory.last_compaction = Some(record.clone());
    let mut out = finish_plain(g, layer1.request, traces, &layer1.cleared, &options, now)?;
    out.compaction = Some(record);
    // Persisted only when a summary was written: a fallback is the model input of this
    // call, not a checkpoint (the stored history stays whole; the next call asks again).
    // Broken pairs of the input are not persisted either (the model input is sanitized on
    // every call, so it is the same with or without them).
    out.checkpoint = failure.is_none().then(|| {
        let mut persisted = chain;
        sanitize::sanitize(&mut persisted);
        persisted
    });
    out.degraded = failure.is_some();
    out.degraded_reason = failure;
    out.session_state = state;
    out.cache_decision = cache_decision;
    Ok(out)
}

/// A summary made ahead of time ended: remembered (to be applied once the trigger is
/// crossed) or failed. The trace says which.
pub fn ahead_finish(
    g: &mut Guard,
    pending: Pending,
    result: std::result::Result<Answer, FailureReason>,
    attempts: u32,
    now: &dyn Fn() -> f64,
) -> Trace {
    let Pending { started_ms, before_tokens, covers, keys, retained, .. } = pending;
    let duration = now() - started_ms;
    let mut t = match result {
        Ok(answer) => {
            let (answer, _) = state_of(g, answer);
            let note = summary_message(g, &answer, Some(&covers));
            let tokens = g.count_text(&note.content.text());
            g.memory.remember(Summary::new(covers, Some(keys), note, retained, true));
            g.memory.ahead = AheadState::Ready;
            g.memory.ahead_failure = None;
            g.breaker.success();
            Trace::new(Operation::SummaryCompact, Status::Completed, duration, before_tokens, tokens)
        }
        Err(reason) => {
            if reason.is_summarizer_failure() {
                g.breaker.failure();
            }
            g.memory.ahead = AheadState::Failed;
            g.memory.ahead_failure = reason.is_summarizer_failure().then(|| reason.as_str());
            let mut t = Trace::new(Operation::SummaryCompact, Status::Fallback, duration, before_tokens, before_tokens);
            t.failure_reason = Some(reason.as_str().to_string());
            t
        }
    };
    t.ahead = Some(true);
    t.attempts = Some(attempts);
    t
}

/// The summary of an answer under the guard's strategy, and its SessionState (a text answer
/// becomes the SessionState's summary).
pub(crate) fn state_of(g: &Guard, answer: Answer) -> (Answer, SessionState) {
    let state = match &answer {
        Answer::State(s) => s.clone(),
        Answer::Text(t) => SessionState { summary: t.clone(), ..Default::default() },
    };
    let answer = match g.policy.strategy {
        Strategy::SessionState => Answer::State(state.clone()),
        Strategy::Summary => answer,
    };
    (answer, state)
}

/// Layer 3 when needed, sanitation, guidance, metrics.
pub(super) fn finish_plain(
    g: &mut Guard,
    request: Request,
    mut traces: Vec<Trace>,
    cleared: &Cleared,
    options: &PrepareOptions,
    now: &dyn Fn() -> f64,
) -> Result<Outcome> {
    let (mut request, mut dropped) = emergency(g, request, &mut traces, now)?;
    // Broken pairs in the input itself (a result without its call, a call without its
    // result) are rejected by every provider: what is sent is always valid.
    let s = sanitize::sanitize(&mut request.messages);
    dropped += s.orphan_results + s.empty_messages;
    // Claude's preserved thinking: no block whose prefix changed since it was produced is sent.
    let thinking = super::thinking::bind(g, &mut request);
    if thinking.newly_dropped > 0 {
        let dropped_tokens = thinking.dropped_tokens as usize;
        let mut t = Trace::new(Operation::ThinkingDrop, Status::Applied, 0.0, dropped_tokens, 0);
        t.thinking_dropped = Some(thinking.newly_dropped);
        traces.push(t);
    }
    if let Some(text) = options.guidance.as_deref().filter(|g| !g.trim().is_empty()) {
        let mut note = Message::text(Role::System, text);
        note.id = Some("ctxguard-guidance".into());
        request.messages.push(note);
    }
    let mut metrics = g.measure(&request);
    metrics.clearing = g.clearing_summary(cleared);
    metrics.edits.thinking = g.model.preserved_thinking.then_some(thinking);
    super::thinking::record(g, &request);
    // What prepare returns is what the host sends: the cache reference point for the next cost.
    g.note_sent(&request, metrics.used_tokens);
    g.edits.sent_at = Some(g.edits.call_at);
    Ok(Outcome {
        request,
        metrics,
        traces,
        compaction: None,
        checkpoint: None,
        degraded: false,
        degraded_reason: None,
        dropped_messages: crate::report::trace::u32_of(dropped),
        session_state: None,
        cache_decision: None,
        ahead: None,
        notes_as_user: g.model.preserved_thinking
            && matches!(
                g.format,
                crate::format::Format::Anthropic | crate::format::Format::AiSdk | crate::format::Format::AiSdkUi
            ),
    })
}

/// Layer 3: if still over the usable limit, re-compact tool outputs with tighter limits,
/// then drop the oldest unprotected messages. System messages (the summary and pinned notes
/// among them) and the latest user message are never dropped.
fn emergency(
    g: &mut Guard,
    request: Request,
    traces: &mut Vec<Trace>,
    now: &dyn Fn() -> f64,
) -> Result<(Request, usize)> {
    let usable = g.budget.usable_limit as usize;
    let mut request = request;
    if g.count(&request).total as usize <= usable {
        return Ok((request, 0));
    }
    let tighter = g.guard_sources(&request, true, now);
    traces.extend(tighter.traces.into_iter().filter(|t| t.operation == Operation::ToolOutput));
    request = tighter.request;
    let mut dropped = 0;
    for _round in 0..3 {
        let counted = g.count(&request);
        let mut total = counted.total as usize;
        if total <= usable {
            break;
        }
        let latest = request.messages.iter().rposition(|m| m.role == Role::User);
        let mut drop = vec![false; request.messages.len()];
        for (i, m) in request.messages.iter().enumerate() {
            if total <= usable {
                break;
            }
            if m.role == Role::System || Some(i) == latest || m.holds_compaction() {
                continue;
            }
            if let (Some(d), Some(c)) = (drop.get_mut(i), counted.per_message.get(i)) {
                *d = true;
                total = total.saturating_sub(c.total);
            }
        }
        let mut i = 0;
        request.messages.retain(|_| {
            let d = drop.get(i).copied().unwrap_or(false);
            i += 1;
            !d
        });
        dropped += drop.iter().filter(|d| **d).count();
        let s = sanitize::sanitize(&mut request.messages);
        dropped += s.orphan_results + s.empty_messages;
    }
    let remaining = g.count(&request).total as usize;
    if remaining > usable {
        return Err(crate::sources::attachment::latest_too_large(remaining, usable));
    }
    Ok((request, dropped))
}
