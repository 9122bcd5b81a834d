//! The guard pipeline (docs/design.md, "Pipeline"), sans-IO. `prepare_start` applies what the
//! guard remembers (a summary it made or restored, one made ahead of time once the trigger is
//! crossed), runs layer 1 (tool outputs by age and by size, attachment previews) and decides
//! whether a summary is needed. When it is, the caller (the binding, or a host driving the call
//! itself) asks the summarizer with `Pending::request` — as many attempts as `Attempts` says —,
//! checks each answer with `Pending::validate`, and hands the result to `prepare_finish`, which
//! remembers the summary and builds the checkpoint (or the mechanical fallback), then runs the
//! emergency layer and sanitizes tool pairs. Summaries made ahead of time go through
//! `ahead_finish`.

pub mod attempts;
pub mod evidence;
mod finish;
mod plan;
pub mod sanitize;
pub mod session_state;
pub mod settle;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::base::error::{Error, ErrorCode, Result};
use crate::format::Request;
use crate::guard::memory::{self, Applied, Summary};
use crate::guard::{Guard, SourcesOutcome};
use crate::message::cache::content_key;
use crate::message::checkpoint::Covers;
use crate::message::{Message, Role};
use crate::report::metrics::{AheadState, CompactionRecord, ContextMetrics};
use crate::report::trace::{Operation, Status, Trace};

use session_state::{parse_answer, render, Answer, Invalid, SessionState};

pub use crate::guard::Strategy;
pub use plan::DEFAULT_TAIL_SHARE;

/// Summary answers are capped at this many tokens by default (and at a quarter of the target).
pub const DEFAULT_SUMMARY_MAX_TOKENS: u32 = 4_096;
/// Recent user messages kept verbatim next to the summary, by default up to this many tokens...
pub const DEFAULT_RETAIN_USER_TOKENS: u32 = 8_000;
/// ...and at most this many messages.
pub const RETAIN_USER_MESSAGES: usize = 4;
/// The evidence note of the mechanical fallback takes at most this many tokens.
pub const EVIDENCE_TOKENS: usize = 2_000;
/// A compaction that saves less than this share of the tokens it started from is ineffective.
pub const MIN_SAVED_SHARE: f64 = 0.1;
/// Below this answer limit a summary is not asked for (the mechanical fallback is used).
pub const MIN_SUMMARY_TOKENS: u32 = 32;
/// Attempts at the summarizer before the mechanical fallback.
pub const MAX_ATTEMPTS: u32 = 3;
/// Pause before the second attempt after an error or a timeout, in milliseconds (doubled for each
/// later one, with jitter: see [`retry_pause_ms`]).
pub const DEFAULT_RETRY_DELAY_MS: f64 = 500.0;

/// The pause after failed attempt `attempt` (1-based) before the next one, or `None` when the
/// next one starts at once: only errors and timeouts wait (a rate-limited or overloaded endpoint
/// asked again at once fails again, and many clients retrying in step make it worse), an answer
/// that failed validation is asked again at once, and there is no pause after the last attempt.
/// `delay_ms` doubles per attempt; `unit` (a uniform random number in [0, 1)) spreads it over
/// [half, all] of that, so clients that failed together do not retry together.
pub fn retry_pause_ms(reason: FailureReason, attempt: u32, delay_ms: f64, unit: f64) -> Option<f64> {
    let waits = matches!(reason, FailureReason::CallbackError | FailureReason::Timeout);
    if !waits || attempt >= MAX_ATTEMPTS || !delay_ms.is_finite() || delay_ms <= 0.0 {
        return None;
    }
    let doubled = delay_ms * f64::from(1_u32 << attempt.saturating_sub(1).min(16));
    let unit = if unit.is_finite() { unit.clamp(0.0, 1.0) } else { 0.5 };
    Some(doubled * (0.5 + unit / 2.0))
}

pub use crate::guard::DEFAULT_AHEAD_RATIO;

/// The `failureReason` of the `summary_compact` `noop` trace of the first call after a restore
/// whose checkpoint does not match the history (another conversation's, or one edited inside
/// what the summary replaced): it is not applied.
pub const CHECKPOINT_MISMATCH: &str = "checkpoint_mismatch";

/// Options of one `prepare` call (the callbacks live in the binding).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrepareOptions {
    /// Compact even under the trigger (after the provider reported an overflow).
    #[serde(default)]
    pub force: bool,
    /// Transient instructions appended to the model input after compaction; never persisted.
    pub guidance: Option<String>,
    pub summary_max_tokens: Option<u32>,
    pub retain_user_tokens: Option<u32>,
    /// The recent tail a compaction keeps verbatim (default: the guard's, else half the target
    /// limit).
    pub recent_tail_tokens: Option<u32>,
    /// Make the summary ahead of time, in the background, once usage passes the ahead
    /// threshold (default: the guard's `ahead`).
    pub ahead: Option<bool>,
    /// `session_state` strategy: start the run from this SessionState (the last settlement's):
    /// it replaces every message before the latest user message except the system messages.
    pub session_state: Option<SessionState>,
}

/// Why a summary attempt failed (`degradedReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureReason {
    NoCallback,
    Timeout,
    CallbackError,
    InvalidOutput,
    EmptyOutput,
    OverBudget,
    Aborted,
    /// The circuit breaker is open: the summarizer was not asked.
    BreakerOpen,
}

impl FailureReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureReason::NoCallback => "no_callback",
            FailureReason::Timeout => "timeout",
            FailureReason::CallbackError => "callback_error",
            FailureReason::InvalidOutput => "invalid_output",
            FailureReason::EmptyOutput => "empty_output",
            FailureReason::OverBudget => "over_budget",
            FailureReason::Aborted => "aborted",
            FailureReason::BreakerOpen => "breaker_open",
        }
    }

    /// The reason named `s` (`as_str`'s inverse).
    pub fn parse(s: &str) -> Option<FailureReason> {
        use FailureReason::*;
        [NoCallback, Timeout, CallbackError, InvalidOutput, EmptyOutput, OverBudget, Aborted, BreakerOpen]
            .into_iter()
            .find(|r| r.as_str() == s)
    }

    /// Whether the summarizer itself failed (what the circuit breaker counts): not a missing
    /// callback, an abort, an open breaker, or no room for a summary.
    pub fn is_summarizer_failure(self) -> bool {
        matches!(
            self,
            FailureReason::Timeout
                | FailureReason::CallbackError
                | FailureReason::InvalidOutput
                | FailureReason::EmptyOutput
                | FailureReason::OverBudget
        )
    }
}

/// What the summarizer is asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRequest {
    pub messages: Vec<Message>,
    pub instructions: String,
    pub schema: Value,
    pub max_tokens: u32,
}

/// A compaction waiting for its summary.
#[derive(Debug, Clone)]
pub struct Pending {
    pub request: SummaryRequest,
    started_ms: f64,
    before_tokens: usize,
    /// The history as passed (raw): the summary's chain is built on it.
    history: Request,
    /// The summarized messages, layer 1's versions (the fallback's evidence comes from them).
    removed: Vec<Message>,
    /// What the summary covers in `history`, and this guard's keys of those messages.
    covers: Covers,
    keys: Vec<u64>,
    retained: Vec<Message>,
    options: PrepareOptions,
    /// Tokens left under the usable limit by what is kept besides the summary.
    room: usize,
    /// Tokens of what is kept besides the summary (system messages, retained user messages,
    /// recent tail, current turn).
    kept_tokens: usize,
    /// Layer 1's traces of the request.
    traces: Vec<Trace>,
    cache_decision: Option<crate::provider::pricing::CacheDecision>,
    /// Attempts the summarizer gets (3; 1 while the circuit breaker is half open).
    pub max_attempts: u32,
    /// Made ahead of time, in the background (`ahead_finish`).
    pub ahead: bool,
}

/// The result of a `prepare` pass.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The model-visible request (guidance included).
    pub request: Request,
    pub metrics: ContextMetrics,
    pub traces: Vec<Trace>,
    pub compaction: Option<CompactionRecord>,
    /// The chain to persist when a compaction happened (guidance excluded).
    pub checkpoint: Option<Vec<Message>>,
    pub degraded: bool,
    pub degraded_reason: Option<FailureReason>,
    /// Messages the emergency layer dropped.
    pub dropped_messages: u32,
    /// The SessionState of this compaction (a text answer becomes its `summary`; the mechanical
    /// fallback's evidence note likewise); `None` when nothing was compacted.
    pub session_state: Option<SessionState>,
    /// The cache-aware decision, when the economic budget (not the window) triggered compaction.
    pub cache_decision: Option<crate::provider::pricing::CacheDecision>,
    /// A summary to make ahead of time, in the background (the binding runs it and hands the
    /// result to `ahead_finish`).
    pub ahead: Option<Box<Pending>>,
}

pub enum Step {
    Done(Box<Outcome>),
    Summarize(Box<Pending>),
    /// Over the trigger while a summary made ahead of time is still running: wait for it
    /// (`ahead_finish`), then call `prepare_start` again.
    AwaitAhead,
}

/// What `restore` did with a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Restored {
    pub restored: bool,
    /// Messages of the conversation its summary replaces.
    pub covered_messages: u32,
    /// Why it was not restored: `no_summary` (no sealed summary that verifies under the guard's
    /// key), `no_covers` (a summary sealed before covers existed: pass the chain itself).
    pub reason: Option<&'static str>,
}

fn instructions(max_tokens: u32) -> String {
    format!(
        "You are compacting a conversation so that it can continue within the model's context window. \
Summarize the conversation you are given for the assistant that will continue it. Write in the user's language. \
Keep: the user's current goal and latest request; decisions made and why; key facts (names, paths, numbers, \
versions, error messages); the evidence tools produced (which tool, its key arguments, what it showed); the plan \
and its progress; open questions. Leave out pleasantries and raw tool output. Answer with a JSON object that \
follows the schema (summary, key_facts, decisions, plan, open_questions), or with plain text. \
Stay under {max_tokens} tokens."
    )
}

/// A summary from an earlier compaction: a system message with ctxguard's metadata marker or a
/// sealed summary block (verified under the guard's key when it has one).
fn is_summary(m: &Message, key: Option<&str>) -> bool {
    m.role == Role::System && (m.markers.summary_compacted || crate::message::checkpoint::is_checkpoint_summary(m, key))
}

/// The system message of a sealed summary, marked, with an id from its content.
fn summary_note(sealed: String) -> Message {
    let mut m = Message::text(Role::System, sealed);
    m.markers.summary_compacted = true;
    m.id = Some(format!("ctxguard-summary-{:012x}", content_key(&m.content, 11) & 0xffff_ffff_ffff));
    m
}

/// A retained user message: a clone with a new, deterministic id and the retained marker.
fn retain(m: &Message) -> Message {
    let mut c = m.clone();
    c.touch();
    c.id = Some(format!("ctxguard-retained-{:012x}", content_key(m, 7) & 0xffff_ffff_ffff));
    c.markers.checkpoint_retained = true;
    c
}

impl Pending {
    /// Check one answer of the summarizer: text or SessionState, non-empty, within the limit.
    pub fn validate(&self, guard: &Guard, answer: &Value) -> std::result::Result<Answer, FailureReason> {
        let a = parse_answer(answer).map_err(|e| match e {
            Invalid::Empty => FailureReason::EmptyOutput,
            Invalid::Malformed => FailureReason::InvalidOutput,
        })?;
        let text = render(&a);
        let n = guard.count_text(&text);
        if n > self.request.max_tokens as usize + 64 || n > self.room {
            return Err(FailureReason::OverBudget);
        }
        Ok(a)
    }
}

impl Guard {
    /// Tokens of a text for this guard's model (the estimate factor applied).
    pub fn count_text(&self, text: &str) -> usize {
        crate::base::round::count_scale(crate::tokens::count(self.model.encoding, text), self.model.estimate_factor)
            as usize
    }

    /// The newest messages of `messages` that fit `budget` tokens, in one pass from the newest
    /// back with per-message counts from the cache (never a recount per removal), starting at a
    /// user message when there is one, then sanitized so no tool result lacks its call.
    pub fn trim_newest(&mut self, messages: &[Message], budget: usize) -> Vec<Message> {
        let counts = self.count(&Request { messages: messages.to_vec(), ..Default::default() }).per_message;
        let mut keep_from = messages.len();
        let mut acc = 0usize;
        for (i, c) in counts.iter().enumerate().rev() {
            if acc + c.total > budget {
                break;
            }
            acc += c.total;
            keep_from = i;
        }
        let mut kept = messages.get(keep_from..).unwrap_or(&[]).to_vec();
        // A summarizer call must start with a user turn on Anthropic-style APIs: assistant (and
        // tool) messages before the first user message go; system messages (an earlier summary
        // among them) stay — they travel as the request's system.
        if let Some(first_user) = kept.iter().position(|m| m.role == Role::User) {
            let mut i = 0;
            kept.retain(|m| {
                i += 1;
                i > first_user || m.role == Role::System
            });
        }
        sanitize::sanitize(&mut kept);
        kept
    }

    /// A budget in the model's tokens, in the counting encoding's tokens (divided by the factor).
    pub fn raw_budget(&self, model_tokens: usize) -> usize {
        (model_tokens as f64 / self.model.estimate_factor.max(1.0)).floor() as usize
    }

    /// Apply what the guard remembers to `history`: the newest summary that matches it (one
    /// made ahead of time only `with_ahead`).
    fn apply_memory(&mut self, history: &[Message], with_ahead: bool) -> Option<Applied> {
        let mut mem = std::mem::take(&mut self.memory);
        let key = self.checkpoint_key.clone();
        let applied = mem.apply(history, with_ahead, &|m| !is_summary(m, key.as_deref()), &mut |m| self.facts(m).key);
        self.memory = mem;
        applied
    }

    /// Layer 1, then the decision: done (no summary needed), a summary to ask for, or a summary
    /// made ahead of time to wait for.
    pub fn prepare_start(
        &mut self,
        request: &Request,
        options: &PrepareOptions,
        now: &dyn Fn() -> f64,
    ) -> Result<Step> {
        self.scoped(|g| g.prepare_start_in(request, options, now))
    }

    fn prepare_start_in(&mut self, request: &Request, options: &PrepareOptions, now: &dyn Fn() -> f64) -> Result<Step> {
        let started = now();
        self.breaker.tick(started);
        let from_state;
        let history = match &options.session_state {
            Some(state) => {
                from_state = self.start_from_state(request, state)?;
                &from_state
            }
            None => request,
        };
        let with_memory = options.session_state.is_none();
        let applied = if with_memory { self.apply_memory(&history.messages, false) } else { None };
        let unmatched = with_memory && self.memory.unmatched_restore(applied.is_some());
        let (mut current, mut ordinals, mut covered) = match applied {
            Some(a) => (Request { messages: a.messages, ..history.clone() }, a.ordinals, a.covered),
            None => (history.clone(), memory::ordinals(&history.messages), 0),
        };
        let aged = self.aged_snapshot();
        let mut layer1 = self.guard_sources(&current, false, now);
        if unmatched {
            // A restored checkpoint that is not this history's: ignored, and said so once.
            let used = layer1.metrics.used_tokens as usize;
            let mut t = Trace::new(Operation::SummaryCompact, Status::Noop, 0.0, used, used);
            t.failure_reason = Some(CHECKPOINT_MISMATCH.to_string());
            layer1.traces.push(t);
        }
        let mut over = layer1.metrics.used_tokens > self.budget.trigger_limit;
        let mut ahead_used = None;
        let mut ahead_failed = None;
        if with_memory && (over || options.force) {
            if self.memory.ahead == AheadState::Running {
                // Its layer-1 pass is done again after the wait: as if this one did not happen.
                self.restore_aged(aged);
                return Ok(Step::AwaitAhead);
            }
            if self.memory.has_ahead() {
                match self.apply_memory(&history.messages, true).filter(|a| a.ahead) {
                    // Committed once this call ends without another compaction (one that fails
                    // leaves it to be applied again by the next call).
                    Some(a) => {
                        current = Request { messages: a.messages, ..history.clone() };
                        ordinals = a.ordinals;
                        covered = a.covered;
                        layer1 = self.guard_sources(&current, false, now);
                        over = layer1.metrics.used_tokens > self.budget.trigger_limit;
                        ahead_used = Some(current.messages.clone());
                    }
                    None => self.memory.drop_ahead(),
                }
            }
            if self.memory.ahead == AheadState::Failed {
                self.memory.ahead = AheadState::Idle;
                let failure = self.memory.ahead_failure.take().and_then(FailureReason::parse);
                ahead_failed = failure.filter(|_| options.ahead.unwrap_or(self.ahead));
            }
        }
        let skip = std::mem::take(&mut self.skip_next_compaction);
        if !options.force && (!over || skip) {
            let cleared = layer1.cleared.clone();
            let mut out = self.finish_plain(layer1.request.clone(), layer1.traces.clone(), &cleared, options, now)?;
            if let Some(chain) = ahead_used {
                self.memory.commit_ahead();
                self.used_ahead(&mut out, chain, started, now);
            } else if with_memory {
                self.start_ahead(&mut out, history, &current, &ordinals, covered, &layer1, options, started, now)?;
            }
            return Ok(Step::Done(Box::new(out)));
        }
        let Some(mut pending) =
            self.plan_compaction(history, &current, &ordinals, covered, &layer1, options, started, false)?
        else {
            let cleared = layer1.cleared.clone();
            return self
                .finish_plain(layer1.request, layer1.traces, &cleared, options, now)
                .map(|o| Step::Done(Box::new(o)));
        };
        if let Some(d) = pending.cache_decision.filter(|d| d.choice == crate::provider::pricing::Choice::Continue) {
            let used = layer1.metrics.used_tokens as usize;
            let mut traces = layer1.traces;
            let mut t = Trace::new(Operation::SummaryCompact, Status::Noop, now() - started, used, used);
            t.cache_decision = Some(d);
            traces.push(t);
            let mut out = self.finish_plain(layer1.request, traces, &layer1.cleared, options, now)?;
            out.cache_decision = Some(d);
            return Ok(Step::Done(Box::new(out)));
        }
        pending.max_attempts = self.breaker.attempts(MAX_ATTEMPTS);
        // The breaker is open: the mechanical fallback without asking. No room for even a
        // short summary next to the kept messages: the same (its note is sized to the room).
        if pending.max_attempts == 0 {
            return self
                .prepare_finish(pending, Err(FailureReason::BreakerOpen), 0, now)
                .map(|o| Step::Done(Box::new(o)));
        }
        if pending.request.max_tokens < MIN_SUMMARY_TOKENS {
            return self
                .prepare_finish(pending, Err(FailureReason::OverBudget), 0, now)
                .map(|o| Step::Done(Box::new(o)));
        }
        // The summary made ahead of time failed: the summarizer is not asked on the send path.
        // This call falls back at once (the breaker counted that failure already) and starts
        // another one in the background while the breaker allows.
        if let Some(reason) = ahead_failed {
            let mut out = self.scoped(|g| g.prepare_finish_in(pending, Err(reason), 0, false, now))?;
            if let Some(t) = out.traces.iter_mut().rev().find(|t| t.operation == Operation::SummaryCompact) {
                t.ahead = Some(true);
            }
            self.start_ahead(&mut out, history, &current, &ordinals, covered, &layer1, options, started, now)?;
            return Ok(Step::Done(Box::new(out)));
        }
        Ok(Step::Summarize(Box::new(pending)))
    }

    /// Start a summary ahead of time from this call when `wants_ahead`: the binding runs it in
    /// the background (`out.ahead`), the trace says so.
    #[allow(clippy::too_many_arguments)]
    fn start_ahead(
        &mut self,
        out: &mut Outcome,
        history: &Request,
        current: &Request,
        ordinals: &[Option<u32>],
        covered: u32,
        layer1: &SourcesOutcome,
        options: &PrepareOptions,
        started: f64,
        now: &dyn Fn() -> f64,
    ) -> Result<()> {
        if !self.wants_ahead(options, layer1) {
            return Ok(());
        }
        out.ahead =
            self.plan_compaction(history, current, ordinals, covered, layer1, options, started, true)?.map(Box::new);
        if out.ahead.is_some() {
            self.memory.ahead = AheadState::Running;
            self.memory.ahead_runs += 1;
            let used = layer1.metrics.used_tokens as usize;
            let mut t = Trace::new(Operation::SummaryCompact, Status::InProgress, now() - started, used, used);
            t.ahead = Some(true);
            out.traces.push(t);
            out.metrics.memory = self.memory.metrics();
        }
        Ok(())
    }

    /// Whether this call starts a summary ahead of time: asked for, over the ahead threshold,
    /// none running or waiting, and the breaker closed.
    fn wants_ahead(&self, options: &PrepareOptions, layer1: &SourcesOutcome) -> bool {
        let limit = (f64::from(self.budget.usable_limit) * self.ahead_ratio).floor() as u32;
        options.ahead.unwrap_or(self.ahead)
            && layer1.metrics.used_tokens > limit
            && self.memory.ahead == AheadState::Idle
            && !self.memory.has_ahead()
            && self.breaker.attempts(MAX_ATTEMPTS) == MAX_ATTEMPTS
    }

    /// A summary made ahead of time was used by this call: its chain is the checkpoint to
    /// persist, and a compaction record says so.
    fn used_ahead(&mut self, out: &mut Outcome, chain: Vec<Message>, started: f64, now: &dyn Fn() -> f64) {
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
        self.last_compaction = Some(record.clone());
        out.metrics.last_compaction = Some(record.clone());
        out.compaction = Some(record);
        out.checkpoint = Some(chain);
    }

    /// The summary message of an answer: rendered, sealed under the guard's key, marked.
    fn summary_message(&self, answer: &Answer, covers: Option<&Covers>) -> Message {
        // Layer 1 runs over the summary on every later call: attachment markup the summarizer
        // echoed is defused so that no preview ever rewrites (and unseals) it.
        let text = crate::sources::stub::defuse_tags(&render(answer));
        summary_note(crate::message::checkpoint::seal(&text, self.checkpoint_key.as_deref(), covers))
    }

    /// `prepare(messages, { sessionState })` under the `session_state` strategy: the history
    /// before the latest user message is replaced by the rendered SessionState (system messages
    /// other than earlier summaries and evidence notes stay).
    pub fn start_from_state(&self, request: &Request, state: &SessionState) -> Result<Request> {
        if self.strategy != Strategy::SessionState {
            return Err(Error::options("sessionState is only read by a guard with strategy: 'session_state'"));
        }
        let state = state.clone().validated().map_err(|_| Error::options("sessionState.summary must not be empty"))?;
        let latest = request.messages.iter().rposition(|m| m.role == Role::User).ok_or_else(|| {
            Error::new(ErrorCode::InvalidMessages, "with sessionState, messages must contain the new user message")
        })?;
        let key = self.checkpoint_key.as_deref();
        let (before, from_latest) = request.messages.split_at(latest);
        let mut messages: Vec<Message> = before
            .iter()
            .filter(|m| {
                m.role == Role::System
                    && !is_summary(m, key)
                    && !m.content.text().starts_with(evidence::EVIDENCE_MARKER)
            })
            .cloned()
            .collect();
        messages.push(self.summary_message(&Answer::State(state), None));
        messages.extend_from_slice(from_latest);
        Ok(Request { messages, ..request.clone() })
    }

    /// The cache-aware decision when the guard has an economic budget and a price, and the
    /// request is over the trigger; `None` otherwise.
    fn cache_decision(
        &mut self,
        request: &Request,
        used: u32,
        compacted: usize,
        summary_input: usize,
        summary_output: u32,
        turn: u32,
    ) -> Option<crate::provider::pricing::CacheDecision> {
        self.budget.economic_budget?;
        let (pricing, _) = self.pricing?;
        let counted = self.count(request);
        let rule = if self.model.provider == crate::provider::models::Provider::Anthropic {
            crate::provider::pricing::CacheRule::Breakpoint
        } else {
            crate::provider::pricing::CacheRule::Automatic
        };
        let cached = crate::provider::pricing::cached_prefix(self.prefix_tokens(request, &counted), rule);
        let physical = self.budget.context_window.saturating_sub(self.budget.reserved_output_tokens);
        let to_u32 = crate::report::trace::u32_of;
        Some(crate::provider::pricing::decide(
            &pricing,
            &crate::provider::pricing::DecisionInput {
                prefix_tokens: used,
                cached_tokens: cached.min(used),
                compacted_tokens: to_u32(compacted),
                summary_input_tokens: to_u32(summary_input),
                summary_output_tokens: summary_output,
                growth_per_turn: self
                    .growth_per_turn()
                    .or(Some(turn).filter(|t| *t > 0))
                    .unwrap_or(crate::provider::pricing::DEFAULT_GROWTH_PER_TURN),
                hard_limit: self.budget.usable_limit,
                physical_trigger: (f64::from(physical) * self.budget.trigger_ratio).floor() as u32,
                horizon_turns: crate::provider::pricing::DECISION_HORIZON_TURNS,
            },
        ))
    }

    /// `guard.restore(checkpoint)`: remember the summary of a stored checkpoint chain, so that a
    /// new guard given the display history applies it instead of asking the summarizer again.
    /// Nothing is applied here: the next `prepare` applies it when its covered messages are the
    /// start of the history it is given (another conversation, or an edited one, does not match:
    /// the first call that applies no summary after it traces [`CHECKPOINT_MISMATCH`]).
    pub fn restore(&mut self, chain: &Request) -> Restored {
        let key = self.checkpoint_key.clone();
        let found = chain
            .messages
            .iter()
            .enumerate()
            .find_map(|(i, m)| crate::message::checkpoint::summary_block(m, key.as_deref()).map(|b| (i, b)));
        let Some((at, (block, covers))) = found else {
            return Restored { restored: false, covered_messages: 0, reason: Some("no_summary") };
        };
        let Some(covers) = covers else {
            return Restored { restored: false, covered_messages: 0, reason: Some("no_covers") };
        };
        // The summary alone: where the format writes the host's system prompt and the summary as
        // one string or Content (Anthropic, Gemini), the prompt is the host's, given again.
        let summary = summary_note(block);
        let retained =
            chain.messages.iter().skip(at + 1).take_while(|m| m.markers.checkpoint_retained).cloned().collect();
        let covered = covers.messages;
        self.memory.restored(Summary::new(covers, None, summary, retained, false));
        Restored { restored: true, covered_messages: covered, reason: None }
    }

    /// The model-visible form of a request this guard produced: no ctxguard metadata (markers,
    /// the ids of messages ctxguard made), and summaries closed without their covers and tag.
    pub fn model_visible(mut request: Request) -> Request {
        for m in &mut request.messages {
            m.strip_metadata();
            if m.role == Role::System {
                let visible = match &m.content {
                    crate::message::Content::Text(t) => crate::message::checkpoint::model_visible(t).map(|v| crate::message::Content::Text(v.into())),
                    crate::message::Content::Parts(parts) if parts.iter().any(|p| matches!(p, crate::message::Part::Text { text, .. } if crate::message::checkpoint::model_visible(text).is_some())) => {
                        Some(crate::message::Content::Parts(
                            parts
                                .iter()
                                .map(|p| match p {
                                    crate::message::Part::Text { text, extra } => crate::message::Part::Text {
                                        text: crate::message::checkpoint::model_visible(text).map_or_else(|| text.clone(), Into::into),
                                        extra: extra.clone(),
                                    },
                                    other => other.clone(),
                                })
                                .collect(),
                        ))
                    }
                    _ => None,
                };
                if let Some(v) = visible {
                    m.content = v;
                    m.touch();
                }
            }
        }
        request
    }

    /// `guard.resetBreaker()`: close the circuit breaker.
    pub fn reset_breaker(&mut self) {
        self.breaker.reset();
    }
}
