//! The start of a `prepare` call: what the guard remembers applied, layer 1, and the decision —
//! done, a summary to ask for (now, or ahead of time in the background), or a summary made
//! ahead of time to wait for.

use crate::base::error::{Error, ErrorCode, Result};
use crate::format::Request;
use crate::guard::memory::{self, Applied};
use crate::guard::{Guard, SourcesOutcome, Strategy};
use crate::message::{Message, Role};
use crate::report::metrics::{AheadState, CompactionRecord};
use crate::report::trace::{Operation, Status, Trace};

use super::attempts::MAX_ATTEMPTS;
use super::finish::{finish_plain, prepare_finish, prepare_finish_in};
use super::plan::plan_compaction;
use super::session_state::{Answer, SessionState};
use super::summary::{is_summary, summary_message};
use super::types::{FailureReason, Outcome, PrepareOptions, Step, Turn, MIN_SUMMARY_TOKENS};

/// The `failureReason` of the `summary_compact` `noop` trace of the first call after a restore
/// whose checkpoint does not match the history (another conversation's, or one edited inside
/// what the summary replaced): it is not applied.
pub const CHECKPOINT_MISMATCH: &str = "checkpoint_mismatch";

pub(crate) fn apply_memory(g: &mut Guard, history: &[Message], with_ahead: bool) -> Option<Applied> {
    let mut mem = std::mem::take(&mut g.memory);
    let key = g.checkpoint_key().map(str::to_string);
    let applied = mem.apply(history, with_ahead, &|m| !is_summary(m, key.as_deref()), &mut |m| g.facts(m).key);
    g.memory = mem;
    applied
}

/// Layer 1, then the decision: done (no summary needed), a summary to ask for, or a summary
/// made ahead of time to wait for.
pub fn prepare_start(
    g: &mut Guard,
    request: &Request,
    options: &PrepareOptions,
    now: &dyn Fn() -> f64,
) -> Result<Step> {
    g.scoped(|g| prepare_start_in(g, request, options, now))
}

pub(crate) fn prepare_start_in(
    g: &mut Guard,
    request: &Request,
    options: &PrepareOptions,
    now: &dyn Fn() -> f64,
) -> Result<Step> {
    let started = now();
    g.breaker.tick(started);
    g.edits.call_at = options.now.unwrap_or(started);
    // What a provider's compaction replaced is not sent again (`artifacts.rs`).
    let after_compaction = super::artifacts::from_latest_compaction(request);
    let request = after_compaction.as_ref().unwrap_or(request);
    let from_state;
    let history = match &options.session_state {
        Some(state) => {
            from_state = start_from_state(g, request, state)?;
            &from_state
        }
        None => request,
    };
    super::thinking::begin(g, history);
    let with_memory = options.session_state.is_none();
    let applied = if with_memory { apply_memory(g, &history.messages, false) } else { None };
    let unmatched = with_memory && g.memory.unmatched_restore(applied.is_some());
    let (mut current, ordinals, covered) = match applied {
        Some(a) => (Request { messages: a.messages, ..history.clone() }, a.ordinals, a.covered),
        None => (history.clone(), memory::ordinals(&history.messages), 0),
    };
    super::thinking::strip_dropped(g, &mut current);
    let aged = g.aged_snapshot();
    let layer1 = g.guard_sources(&current, false, now);
    let mut turn = Turn { history, current, ordinals, covered, layer1, options, started };
    if unmatched {
        // A restored checkpoint that is not this history's: ignored, and said so once.
        let used = turn.layer1.metrics.used_tokens as usize;
        let mut t = Trace::new(Operation::SummaryCompact, Status::Noop, 0.0, used, used);
        t.failure_reason = Some(CHECKPOINT_MISMATCH.to_string());
        turn.layer1.traces.push(t);
    }
    let mut over = turn.layer1.metrics.used_tokens > g.edit_threshold();
    let mut ahead_used = None;
    let mut ahead_failed = None;
    if with_memory && (over || options.force) {
        if g.memory.ahead == AheadState::Running {
            // Its layer-1 pass is done again after the wait: as if this one did not happen.
            g.restore_aged(aged);
            return Ok(Step::AwaitAhead);
        }
        if g.memory.has_ahead() {
            match apply_memory(g, &history.messages, true).filter(|a| a.ahead) {
                // Committed once this call ends without another compaction (one that fails
                // leaves it to be applied again by the next call).
                Some(a) => {
                    turn.current = Request { messages: a.messages, ..history.clone() };
                    super::thinking::strip_dropped(g, &mut turn.current);
                    turn.ordinals = a.ordinals;
                    turn.covered = a.covered;
                    turn.layer1 = g.guard_sources(&turn.current, false, now);
                    over = turn.layer1.metrics.used_tokens > g.edit_threshold();
                    ahead_used = Some(turn.current.messages.clone());
                }
                None => g.memory.drop_ahead(),
            }
        }
        if g.memory.ahead == AheadState::Failed {
            g.memory.ahead = AheadState::Idle;
            let failure = g.memory.ahead_failure.take().and_then(FailureReason::parse);
            ahead_failed = failure.filter(|_| options.ahead.unwrap_or(g.policy.ahead));
        }
    }
    // The breaker is open: the last fallback again while it fits, rather than a new cut.
    if with_memory && over && !options.force && g.breaker.attempts(MAX_ATTEMPTS) == 0 {
        if let Some(out) = reuse_fallback(g, &turn, now)? {
            return Ok(Step::Done(Box::new(out)));
        }
    }
    let skip = std::mem::take(&mut g.memory.skip_next_compaction);
    if !options.force && (!over || skip) {
        let layer1 = &turn.layer1;
        let mut out = finish_plain(g, layer1.request.clone(), layer1.traces.clone(), &layer1.cleared, options, now)?;
        if let Some(chain) = ahead_used {
            g.memory.commit_ahead();
            used_ahead(g, &mut out, chain, started, now);
        } else if with_memory {
            start_ahead(g, &mut out, &turn, now)?;
        }
        return Ok(Step::Done(Box::new(out)));
    }
    let Some(mut pending) = plan_compaction(g, &turn, false)? else {
        let layer1 = turn.layer1;
        return finish_plain(g, layer1.request, layer1.traces, &layer1.cleared, options, now)
            .map(|o| Step::Done(Box::new(o)));
    };
    if let Some(d) = pending.cache_decision.filter(|d| d.choice == crate::provider::pricing::Choice::Continue) {
        let layer1 = turn.layer1;
        let used = layer1.metrics.used_tokens as usize;
        let mut traces = layer1.traces;
        let mut t = Trace::new(Operation::SummaryCompact, Status::Noop, now() - started, used, used);
        t.cache_decision = Some(d);
        traces.push(t);
        let mut out = finish_plain(g, layer1.request, traces, &layer1.cleared, options, now)?;
        out.cache_decision = Some(d);
        return Ok(Step::Done(Box::new(out)));
    }
    pending.max_attempts = g.breaker.attempts(MAX_ATTEMPTS);
    // The breaker is open: the mechanical fallback without asking. No room for even a
    // short summary next to the kept messages: the same (its note is sized to the room).
    if pending.max_attempts == 0 {
        return prepare_finish(g, pending, Err(FailureReason::BreakerOpen), 0, now).map(|o| Step::Done(Box::new(o)));
    }
    if pending.request.max_tokens < MIN_SUMMARY_TOKENS {
        return prepare_finish(g, pending, Err(FailureReason::OverBudget), 0, now).map(|o| Step::Done(Box::new(o)));
    }
    // The summary made ahead of time failed: the summarizer is not asked on the send path.
    // This call falls back at once (the breaker counted that failure already) and starts
    // another one in the background while the breaker allows.
    if let Some(reason) = ahead_failed {
        let mut out = g.scoped(|g| prepare_finish_in(g, pending, Err(reason), 0, false, now))?;
        if let Some(t) = out.traces.iter_mut().rev().find(|t| t.operation == Operation::SummaryCompact) {
            t.ahead = Some(true);
        }
        start_ahead(g, &mut out, &turn, now)?;
        return Ok(Step::Done(Box::new(out)));
    }
    Ok(Step::Summarize(Box::new(pending)))
}

/// The last mechanical fallback applied again (the breaker is open: the summarizer would not be
/// asked). Its cut and note stay as they were while the request fits under the edit threshold,
/// so the provider's cache keeps the prefix instead of billing a new cut on every call; `None`
/// when it no longer matches the history or fits (a new fallback cuts further). The traces are
/// the ones a fallback reports (layer 1 on the history, clearing on the chain) but no new
/// compaction; the result is degraded like the fallback it repeats.
fn reuse_fallback(g: &mut Guard, turn: &Turn<'_>, now: &dyn Fn() -> f64) -> Result<Option<Outcome>> {
    let key = g.checkpoint_key().map(str::to_string);
    let mut mem = std::mem::take(&mut g.memory);
    let applied =
        mem.apply_fallback(&turn.history.messages, &|m| !is_summary(m, key.as_deref()), &mut |m| g.facts(m).key);
    g.memory = mem;
    let Some(applied) = applied else { return Ok(None) };
    let mut chain = Request { messages: applied.messages, ..turn.history.clone() };
    super::thinking::strip_dropped(g, &mut chain);
    let aged = g.aged_snapshot();
    let layer1 = g.guard_sources(&chain, false, now);
    g.restore_aged(aged);
    if layer1.metrics.used_tokens > g.edit_threshold() {
        return Ok(None);
    }
    let mut traces = turn.layer1.traces.clone();
    traces.extend(layer1.traces.iter().filter(|t| t.operation == Operation::ToolOutputClear).cloned());
    let mut out = finish_plain(g, layer1.request, traces, &layer1.cleared, turn.options, now)?;
    out.degraded = true;
    out.degraded_reason = Some(FailureReason::BreakerOpen);
    Ok(Some(out))
}

/// Start a summary ahead of time from this call when `wants_ahead`: the binding runs it in
/// the background (`out.ahead`), the trace says so.
fn start_ahead(g: &mut Guard, out: &mut Outcome, turn: &Turn<'_>, now: &dyn Fn() -> f64) -> Result<()> {
    if !wants_ahead(g, turn.options, &turn.layer1) {
        return Ok(());
    }
    out.ahead = plan_compaction(g, turn, true)?.map(Box::new);
    if out.ahead.is_some() {
        g.memory.ahead = AheadState::Running;
        g.memory.ahead_runs += 1;
        let used = turn.layer1.metrics.used_tokens as usize;
        let mut t = Trace::new(Operation::SummaryCompact, Status::InProgress, now() - turn.started, used, used);
        t.ahead = Some(true);
        out.traces.push(t);
        out.metrics.memory = g.memory.metrics();
    }
    Ok(())
}

/// Whether this call starts a summary ahead of time: asked for, over the ahead threshold,
/// none running or waiting, and the breaker closed.
pub(crate) fn wants_ahead(g: &Guard, options: &PrepareOptions, layer1: &SourcesOutcome) -> bool {
    let limit = (f64::from(g.budget.usable_limit) * g.policy.ahead_ratio).floor() as u32;
    options.ahead.unwrap_or(g.policy.ahead)
        && layer1.metrics.used_tokens > limit
        && g.memory.ahead == AheadState::Idle
        && !g.memory.has_ahead()
        && g.breaker.attempts(MAX_ATTEMPTS) == MAX_ATTEMPTS
}

/// A summary made ahead of time was used by this call: its chain is the checkpoint to
/// persist, and a compaction record says so.
pub(crate) fn used_ahead(g: &mut Guard, out: &mut Outcome, chain: Vec<Message>, started: f64, now: &dyn Fn() -> f64) {
    let after = out.metrics.used_tokens;
    let record = CompactionRecord {
        before_tokens: after,
        after_tokens: after,
        tokens_saved: 0,
        removed_items: 0,
        duration_ms: now() - started,
        status: "completed".into(),
        failure_reason: None,
        attempts: 0,
    };
    let mut t =
        Trace::new(Operation::SummaryCompact, Status::Applied, record.duration_ms, after as usize, after as usize);
    t.ahead = Some(true);
    out.traces.push(t);
    g.memory.last_compaction = Some(record.clone());
    out.metrics.last_compaction = Some(record.clone());
    out.compaction = Some(record);
    out.checkpoint = Some(chain);
}

/// The summary message of an answer: rendered, sealed under the guard's key, marked.
/// `prepare(messages, { sessionState })` under the `session_state` strategy: the history
/// before the latest user message is replaced by the rendered SessionState (system messages
/// other than earlier summaries and evidence notes stay).
pub(crate) fn start_from_state(g: &Guard, request: &Request, state: &SessionState) -> Result<Request> {
    if g.policy.strategy != Strategy::SessionState {
        return Err(Error::options("sessionState is only read by a guard with strategy: 'session_state'"));
    }
    let state = state.clone().validated().map_err(|_| Error::options("sessionState.summary must not be empty"))?;
    let latest = request.messages.iter().rposition(|m| m.role == Role::User).ok_or_else(|| {
        Error::new(ErrorCode::InvalidMessages, "with sessionState, messages must contain the new user message")
    })?;
    let key = g.checkpoint_key();
    let (before, from_latest) = request.messages.split_at(latest);
    let mut messages: Vec<Message> = before
        .iter()
        .filter(|m| m.role == Role::System && !is_summary(m, key) && !m.is_evidence_note())
        .cloned()
        .collect();
    messages.push(summary_message(g, &Answer::State(state), None));
    messages.extend_from_slice(from_latest);
    Ok(Request { messages, ..request.clone() })
}
