//! The guard pipeline (SPEC §6), sans-IO: `start` runs layer 1 and decides whether a summary is
//! needed; when it is, the caller (the binding, or a host driving the call itself) asks the
//! summarizer with `Pending::request`, checks each answer with `Pending::validate`, and hands
//! the result to `finish`, which builds the checkpoint (or the mechanical fallback), runs the
//! emergency layer and sanitizes tool pairs.

pub mod evidence;
pub mod sanitize;
pub mod session_state;
pub mod settle;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cache::content_key;
use crate::error::{Error, ErrorCode, Result};
use crate::format::Request;
use crate::guard::Guard;
use crate::guards::{Operation, Status, Trace};
use crate::message::{Message, Role};
use crate::metrics::{CompactionRecord, ContextMetrics};

use session_state::{parse_answer, render, Answer, Invalid, SessionState};

/// How history is compacted (`strategy` in the guard's config).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// A summary replaces the older messages; recent user messages are kept verbatim and the
    /// current turn (the latest user message and everything after it) is kept whole.
    #[default]
    Summary,
    /// The SessionState is the only history source (seed 004): no retained user messages, and a
    /// mid-run compression also folds the current turn's earlier steps, keeping the latest user
    /// message and the last assistant step. `prepare(messages, { sessionState })` starts a run
    /// from the SessionState of the last settlement.
    SessionState,
}

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
        }
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

/// What a compaction keeps besides the summary, in one view (raw or model-visible).
#[derive(Debug, Clone)]
struct Kept {
    system: Vec<Message>,
    retained: Vec<Message>,
    tail: Vec<Message>,
}

/// A compaction waiting for its summary.
#[derive(Debug, Clone)]
pub struct Pending {
    pub request: SummaryRequest,
    started_ms: f64,
    before_tokens: usize,
    system: Vec<Message>,
    removed: Vec<Message>,
    retained: Vec<Message>,
    tail: Vec<Message>,
    base: Request,
    options: PrepareOptions,
    /// Tokens left under the usable limit by what is kept besides the summary.
    room: usize,
    /// Tokens of the model-visible system messages, retained user messages and current turn.
    kept_tokens: usize,
    /// Layer 1's traces of the request.
    traces: Vec<Trace>,
    /// The model-visible (layer-1) versions of `system`, `retained` and `tail`, which are raw.
    visible: Kept,
    cache_decision: Option<crate::pricing::CacheDecision>,
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
    pub cache_decision: Option<crate::pricing::CacheDecision>,
}

pub enum Step {
    Done(Box<Outcome>),
    Summarize(Box<Pending>),
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
    m.role == Role::System && (m.markers.summary_compacted || crate::checkpoint::is_checkpoint_summary(m, key))
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
        crate::count_scale(crate::tokens::count(self.model.encoding, text), self.model.estimate_factor) as usize
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

    /// Layer 1, then the decision: done (no summary needed) or a summary to ask for.
    pub fn prepare_start(&mut self, request: &Request, options: &PrepareOptions, now: &dyn Fn() -> f64) -> Result<Step> {
        self.scoped(|g| g.prepare_start_in(request, options, now))
    }

    fn prepare_start_in(&mut self, request: &Request, options: &PrepareOptions, now: &dyn Fn() -> f64) -> Result<Step> {
        let started = now();
        let from_state;
        let request = match &options.session_state {
            Some(state) => {
                from_state = self.start_from_state(request, state)?;
                &from_state
            }
            None => request,
        };
        let layer1 = self.guard_sources(request, false, now);
        let used = layer1.metrics.used_tokens;
        let skip = std::mem::take(&mut self.skip_next_compaction);
        let over = used > self.budget.trigger_limit;
        if !options.force && (!over || skip) {
            return self.finish_plain(layer1.request, layer1.traces, options, now).map(|o| Step::Done(Box::new(o)));
        }
        let key = self.checkpoint_key.clone();
        let msgs = &layer1.request.messages;
        // The raw messages at the same places (layer 1 rewrites content in place): what is kept
        // goes into the checkpoint raw; the model gets the layer-1 versions.
        let raw = &request.messages;
        let latest = msgs.iter().rposition(|m| m.role == Role::User);
        let split = latest.unwrap_or(msgs.len());
        let (older, turn) = msgs.split_at(split);
        let (older_raw, turn_raw) = raw.split_at(split.min(raw.len()));
        let mut system = Vec::new();
        let mut system_visible = Vec::new();
        let mut removed = Vec::new();
        let mut removed_raw = Vec::new();
        for (m, r) in older.iter().zip(older_raw) {
            if m.role == Role::System && !is_summary(m, key.as_deref()) {
                system.push(r.clone());
                system_visible.push(m.clone());
            } else {
                removed.push(m.clone());
                removed_raw.push(r.clone());
            }
        }
        // The current turn: kept whole, or (session_state) its user message and last step, the
        // steps in between folded into the SessionState too.
        let (tail_visible, folded) = self.split_turn(turn);
        let (tail, folded_raw) = self.split_turn(turn_raw);
        let mut source_messages = removed.clone();
        let folded_len = folded.len();
        if !folded.is_empty() {
            source_messages.extend(turn.first().cloned());
            source_messages.extend(folded.iter().cloned());
            removed.extend(folded);
            removed_raw.extend(folded_raw);
        }
        if removed.is_empty() {
            return self.finish_plain(layer1.request, layer1.traces, options, now).map(|o| Step::Done(Box::new(o)));
        }
        // Recent user messages kept verbatim (a reloaded clone is not cloned twice); none under
        // the session_state strategy, where the SessionState is the only history.
        let retain_budget = match self.strategy {
            Strategy::Summary => options.retain_user_tokens.unwrap_or(DEFAULT_RETAIN_USER_TOKENS) as usize,
            Strategy::SessionState => 0,
        };
        let mut retained = Vec::new();
        let mut retained_visible = Vec::new();
        let mut retained_tokens = 0;
        for (m, v) in removed_raw.iter().zip(&removed).rev().filter(|(m, _)| m.role == Role::User) {
            let n = self.count_text(&v.content.text());
            if retained.len() >= RETAIN_USER_MESSAGES || retained_tokens + n > retain_budget {
                break;
            }
            retained_tokens += n;
            let clone = |m: &Message| if m.markers.checkpoint_retained { m.clone() } else { retain(m) };
            retained.push(clone(m));
            retained_visible.push(clone(v));
        }
        retained.reverse();
        retained_visible.reverse();
        // The rendered summary must fit next to what is kept anyway (system messages and the
        // current turn): `room` caps the answer, leaving 64 tokens for the summary's own framing.
        let fixed: Vec<Message> = system_visible.iter().chain(tail_visible.iter()).cloned().collect();
        let fixed_tokens = self.count(&Request { messages: fixed, ..layer1.request.clone() }).total as usize;
        let room = (self.budget.usable_limit as usize).saturating_sub(fixed_tokens);
        let max_tokens = options
            .summary_max_tokens
            .unwrap_or(DEFAULT_SUMMARY_MAX_TOKENS)
            .min((self.budget.target_limit / 4).max(256))
            .min(u32::try_from(room.saturating_sub(64)).unwrap_or(u32::MAX));
        // The summary source, trimmed to the summarizer's input budget in one pass from the
        // newest message back, with per-message counts from the cache.
        let instructions = instructions(max_tokens);
        let input_budget = (self.budget.usable_limit as usize)
            .saturating_sub(max_tokens as usize)
            .saturating_sub(self.count_text(&instructions) + 512);
        let source = match (folded_len, turn.first()) {
            // session_state: the run's user message gives the folded steps their meaning; it
            // stays in the source even when the older history does not fit.
            (n, Some(user)) if n > 0 => {
                let user_tokens = self.count(&Request { messages: vec![user.clone()], ..Default::default() }).total as usize;
                let mut kept = self.trim_newest(&source_messages, input_budget.saturating_sub(user_tokens));
                if kept.len() <= n {
                    kept.insert(0, user.clone());
                }
                kept
            }
            _ => self.trim_newest(&source_messages, input_budget),
        };
        // Over the economic trigger only: is continuing on the cached prefix cheaper? Never when
        // forced (the provider reported an overflow) or over the physical window.
        let cache_decision = if options.force {
            None
        } else {
            let summary_input = self.count(&Request { messages: source.clone(), ..Default::default() }).total as usize + self.count_text(&instructions);
            let turn_tokens = self.count(&Request { messages: turn.to_vec(), ..Default::default() }).total;
            self.cache_decision(&layer1.request, used, fixed_tokens + retained_tokens + max_tokens as usize, summary_input, max_tokens, turn_tokens)
        };
        if let Some(d) = cache_decision.filter(|d| d.choice == crate::pricing::Choice::Continue) {
            let mut traces = layer1.traces;
            let mut t = Trace::new(Operation::SummaryCompact, Status::Noop, now() - started, used as usize, used as usize);
            t.cache_decision = Some(d);
            traces.push(t);
            let mut out = self.finish_plain(layer1.request, traces, options, now)?;
            out.cache_decision = Some(d);
            return Ok(Step::Done(Box::new(out)));
        }
        let pending = Pending {
            request: SummaryRequest { messages: source, instructions, schema: session_state::schema(), max_tokens },
            started_ms: started,
            before_tokens: used as usize,
            system,
            removed,
            retained,
            tail,
            base: layer1.request,
            options: options.clone(),
            room,
            kept_tokens: fixed_tokens + retained_tokens,
            traces: layer1.traces,
            visible: Kept { system: system_visible, retained: retained_visible, tail: tail_visible },
            cache_decision,
        };
        // No room for even a short summary next to the kept messages: the mechanical fallback
        // (its note is sized to the room too) without asking the summarizer.
        if max_tokens < MIN_SUMMARY_TOKENS {
            return self.prepare_finish(pending, Err(FailureReason::OverBudget), 0, now).map(|o| Step::Done(Box::new(o)));
        }
        Ok(Step::Summarize(Box::new(pending)))
    }

    /// The current turn (from the latest user message) split into what stays and what is folded
    /// into the summary: under `summary`, nothing is folded; under `session_state`, the steps
    /// between the user message and the last assistant message are.
    fn split_turn(&self, turn: &[Message]) -> (Vec<Message>, Vec<Message>) {
        if self.strategy == Strategy::SessionState {
            if let Some(last_step) = turn.iter().rposition(|m| m.role == Role::Assistant).filter(|&i| i > 1) {
                let mut tail: Vec<Message> = turn.iter().take(1).cloned().collect();
                tail.extend(turn.iter().skip(last_step).cloned());
                let folded = turn.get(1..last_step).unwrap_or(&[]).to_vec();
                return (tail, folded);
            }
        }
        (turn.to_vec(), Vec::new())
    }

    /// The summary message of an answer: rendered, sealed under the guard's key, marked.
    fn summary_message(&self, answer: &Answer) -> Message {
        let sealed = crate::checkpoint::seal(&render(answer), self.checkpoint_key.as_deref());
        let mut m = Message::text(Role::System, sealed);
        m.markers.summary_compacted = true;
        m.id = Some(format!("ctxguard-summary-{:012x}", content_key(&m.content, 11) & 0xffff_ffff_ffff));
        m
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
            .filter(|m| m.role == Role::System && !is_summary(m, key) && !m.content.text().starts_with(evidence::EVIDENCE_MARKER))
            .cloned()
            .collect();
        messages.push(self.summary_message(&Answer::State(state)));
        messages.extend_from_slice(from_latest);
        Ok(Request { messages, ..request.clone() })
    }

    /// The cache-aware decision when the guard has an economic budget and a price, and the
    /// request is over the trigger; `None` otherwise.
    fn cache_decision(&mut self, request: &Request, used: u32, compacted: usize, summary_input: usize, summary_output: u32, turn: u32) -> Option<crate::pricing::CacheDecision> {
        self.budget.economic_budget?;
        let (pricing, _) = self.pricing?;
        let counted = self.count(request);
        let rule = if self.model.provider == crate::models::Provider::Anthropic { crate::pricing::CacheRule::Breakpoint } else { crate::pricing::CacheRule::Automatic };
        let cached = crate::pricing::cached_prefix(self.prefix_tokens(request, &counted), rule);
        let physical = self.budget.context_window.saturating_sub(self.budget.reserved_output_tokens);
        let to_u32 = crate::guards::trace_u32;
        Some(crate::pricing::decide(
            &pricing,
            &crate::pricing::DecisionInput {
                prefix_tokens: used,
                cached_tokens: cached.min(used),
                compacted_tokens: to_u32(compacted),
                summary_input_tokens: to_u32(summary_input),
                summary_output_tokens: summary_output,
                growth_per_turn: self.growth_per_turn().or(Some(turn).filter(|t| *t > 0)).unwrap_or(crate::pricing::DEFAULT_GROWTH_PER_TURN),
                hard_limit: self.budget.usable_limit,
                physical_trigger: (f64::from(physical) * self.budget.trigger_ratio).floor() as u32,
                horizon_turns: crate::pricing::DECISION_HORIZON_TURNS,
            },
        ))
    }

    /// Build the checkpoint from the summary (or the mechanical fallback), then layer 3.
    pub fn prepare_finish(
        &mut self,
        pending: Pending,
        result: std::result::Result<Answer, FailureReason>,
        attempts: u32,
        now: &dyn Fn() -> f64,
    ) -> Result<Outcome> {
        self.scoped(|g| g.prepare_finish_in(pending, result, attempts, now))
    }

    fn prepare_finish_in(
        &mut self,
        pending: Pending,
        result: std::result::Result<Answer, FailureReason>,
        attempts: u32,
        now: &dyn Fn() -> f64,
    ) -> Result<Outcome> {
        let Pending { started_ms, before_tokens, system, removed, retained, tail, base, options, cache_decision, kept_tokens, traces, visible, .. } = pending;
        let mut traces = traces;
        let mut chain = system;
        let note: Option<Message>;
        let (status, failure, state) = match result {
            Ok(answer) => {
                // Under session_state a text answer becomes the SessionState's summary.
                let state = match &answer {
                    Answer::State(s) => s.clone(),
                    Answer::Text(t) => SessionState { summary: t.clone(), ..Default::default() },
                };
                let answer = match self.strategy {
                    Strategy::SessionState => Answer::State(state.clone()),
                    Strategy::Summary => answer,
                };
                note = Some(self.summary_message(&answer));
                (Status::Completed, None, Some(state))
            }
            Err(reason) => {
                // The note gets at most EVIDENCE_TOKENS, and never more than the room the kept
                // messages leave under the usable limit (layer 3 does not drop system notes).
                let room = (self.budget.usable_limit as usize).saturating_sub(kept_tokens);
                let budget = EVIDENCE_TOKENS.min(self.raw_budget(room.saturating_sub(16)));
                note = evidence::evidence_message(&removed, reason.as_str(), self.model.encoding, budget);
                let state = note.as_ref().map(|n| SessionState { summary: n.content.text(), ..Default::default() });
                (Status::Fallback, Some(reason), state)
            }
        };
        // The same chain in both views: raw (persisted) and layer 1's (what the model gets now;
        // the next call guards the raw chain afresh, so the current turn's outputs then get the
        // room the summary freed).
        chain.extend(note.clone());
        chain.extend(retained);
        chain.extend(tail);
        sanitize::sanitize(&mut chain);
        let Kept { system: mut shown, retained: shown_retained, tail: shown_tail } = visible;
        shown.extend(note);
        shown.extend(shown_retained);
        shown.extend(shown_tail);
        sanitize::sanitize(&mut shown);
        // Persisted: the raw chain, and only when a summary was written — a fallback is the model
        // input of this call, not a checkpoint (the stored history stays whole; the next call
        // asks the summarizer again).
        let checkpoint = failure.is_none().then_some(chain);
        let chain = shown;
        let after_compaction = self.count(&Request { messages: chain.clone(), ..base.clone() }).total as usize;
        let record = CompactionRecord {
            before_tokens: crate::guards::trace_u32(before_tokens),
            after_tokens: crate::guards::trace_u32(after_compaction),
            tokens_saved: crate::guards::trace_u32(before_tokens.saturating_sub(after_compaction)),
            removed_items: crate::guards::trace_u32(removed.len()),
            duration_ms: now() - started_ms,
            status: if failure.is_none() { "completed".into() } else { "fallback".into() },
            failure_reason: failure.map(|r| r.as_str().to_string()),
            attempts,
        };
        // Refuse to thrash: an ineffective compaction is not repeated on the next call.
        let saved = before_tokens.saturating_sub(after_compaction) as f64;
        self.skip_next_compaction =
            after_compaction > self.budget.target_limit as usize || saved < before_tokens as f64 * MIN_SAVED_SHARE;
        let mut t = Trace::new(Operation::SummaryCompact, status, record.duration_ms, before_tokens, after_compaction);
        t.removed_history_items = Some(record.removed_items);
        t.failure_reason = record.failure_reason.clone();
        t.cache_decision = cache_decision;
        traces.push(t);
        self.last_compaction = Some(record.clone());
        let mut out = self.finish_plain(Request { messages: chain, ..base }, traces, &options, now)?;
        out.compaction = Some(record);
        out.checkpoint = checkpoint;
        out.degraded = failure.is_some();
        out.degraded_reason = failure;
        out.session_state = state;
        out.cache_decision = cache_decision;
        Ok(out)
    }

    /// Layer 3 when needed, sanitation, guidance, metrics.
    fn finish_plain(&mut self, request: Request, mut traces: Vec<Trace>, options: &PrepareOptions, now: &dyn Fn() -> f64) -> Result<Outcome> {
        let (mut request, mut dropped) = self.emergency(request, &mut traces, now)?;
        // Broken pairs in the input itself (a result without its call, a call without its
        // result) are rejected by every provider: what is sent is always valid.
        let s = sanitize::sanitize(&mut request.messages);
        dropped += s.orphan_results + s.empty_messages;
        if let Some(g) = options.guidance.as_deref().filter(|g| !g.trim().is_empty()) {
            request.messages.push(Message::text(Role::System, g));
        }
        let metrics = self.measure(&request);
        // What prepare returns is what the host sends: the cache reference point for the next cost.
        self.note_sent(&request, metrics.used_tokens);
        Ok(Outcome {
            request,
            metrics,
            traces,
            compaction: None,
            checkpoint: None,
            degraded: false,
            degraded_reason: None,
            dropped_messages: crate::guards::trace_u32(dropped),
            session_state: None,
            cache_decision: None,
        })
    }

    /// Layer 3: if still over the usable limit, re-compact tool outputs with tighter limits,
    /// then drop the oldest unprotected messages. System messages (the summary and pinned notes
    /// among them) and the latest user message are never dropped.
    fn emergency(&mut self, request: Request, traces: &mut Vec<Trace>, now: &dyn Fn() -> f64) -> Result<(Request, usize)> {
        let usable = self.budget.usable_limit as usize;
        let mut request = request;
        if self.count(&request).total as usize <= usable {
            return Ok((request, 0));
        }
        let tighter = self.guard_sources(&request, true, now);
        traces.extend(tighter.traces.into_iter().filter(|t| t.operation == Operation::ToolOutput));
        request = tighter.request;
        let mut dropped = 0;
        for _round in 0..3 {
            let counted = self.count(&request);
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
                if m.role == Role::System || Some(i) == latest {
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
        let remaining = self.count(&request).total as usize;
        if remaining > usable {
            return Err(Error::new(
                ErrorCode::LatestMessageTooLarge,
                format!("the system messages and the latest user message alone need {remaining} tokens; the usable limit is {usable}"),
            ));
        }
        Ok((request, dropped))
    }
}
