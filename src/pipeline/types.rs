//! The pipeline's data: what a `prepare` call is given (options), what the summarizer is asked
//! and what a pending compaction carries, what a pass returns, why an attempt failed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::format::Request;
use crate::guard::{Guard, SourcesOutcome};
use crate::message::checkpoint::Covers;
use crate::message::Message;
use crate::report::metrics::{CompactionRecord, ContextMetrics};
use crate::report::trace::Trace;

use super::session_state::{parse_answer, render, Answer, Invalid, SessionState};

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
    pub(crate) started_ms: f64,
    pub(crate) before_tokens: usize,
    /// The history as passed (raw): the summary's chain is built on it.
    pub(crate) history: Request,
    /// The summarized messages, layer 1's versions (the fallback's evidence comes from them).
    pub(crate) removed: Vec<Message>,
    /// What the summary covers in `history`, and this guard's keys of those messages.
    pub(crate) covers: Covers,
    pub(crate) keys: Vec<u64>,
    pub(crate) retained: Vec<Message>,
    pub(crate) options: PrepareOptions,
    /// Tokens left under the usable limit by what is kept besides the summary.
    pub(crate) room: usize,
    /// Tokens of what is kept besides the summary (system messages, retained user messages,
    /// recent tail, current turn).
    pub(crate) kept_tokens: usize,
    /// Layer 1's traces of the request.
    pub(crate) traces: Vec<Trace>,
    pub(crate) cache_decision: Option<crate::provider::pricing::CacheDecision>,
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

/// What one `prepare` call works on, from the start to the decision: the history as passed,
/// the same with a remembered summary applied (`current`, with each message's place among the
/// history's non-system messages and how many of them the summary covers), layer 1's pass over
/// it, the call's options and when it started.
pub(crate) struct Turn<'a> {
    pub(crate) history: &'a Request,
    pub(crate) current: Request,
    pub(crate) ordinals: Vec<Option<u32>>,
    pub(crate) covered: u32,
    pub(crate) layer1: SourcesOutcome,
    pub(crate) options: &'a PrepareOptions,
    pub(crate) started: f64,
}
