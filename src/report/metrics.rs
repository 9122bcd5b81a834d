//! The metrics snapshot for the UI (docs/design.md, "Metrics"): plain serializable data, so a page reload can
//! restore the toolbar without recounting.

use serde::{Deserialize, Serialize};

use crate::message::Role;
use crate::provider::budget::{Budget, NEAR_TRIGGER_SHARE};
use crate::provider::models::CountKind;
use crate::tokens::Encoding;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContextState {
    Ok,
    NearTrigger,
    OverTrigger,
    OverLimit,
}

impl ContextState {
    pub fn of(used: u32, budget: &Budget) -> ContextState {
        if used > budget.usable_limit {
            ContextState::OverLimit
        } else if used > budget.trigger_limit {
            ContextState::OverTrigger
        } else if f64::from(used) >= f64::from(budget.trigger_limit) * NEAR_TRIGGER_SHARE {
            ContextState::NearTrigger
        } else {
            ContextState::Ok
        }
    }
}

/// Tokens per source of the request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceBreakdown {
    pub system: u32,
    pub tool_definitions: u32,
    pub user: u32,
    pub assistant: u32,
    pub tool_outputs: u32,
    pub attachments: u32,
    pub images: u32,
    pub summary: u32,
    pub framing: u32,
}

/// One message's count, split the way the breakdown needs it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CountedMessage {
    pub role: Role,
    pub is_summary: bool,
    /// Message text, including tool-call names and arguments.
    pub body: u32,
    pub attachments: u32,
    pub images: u32,
    pub framing: u32,
}

impl CountedMessage {
    /// A message's (possibly calibrated) count `c` split into the breakdown's buckets.
    pub fn of(f: &crate::message::Facts, c: &crate::message::MessageCount) -> CountedMessage {
        let u = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        CountedMessage {
            role: f.role,
            is_summary: f.is_summary,
            body: u(c.text + c.tool_calls),
            attachments: u(c.attachments),
            images: u(c.images),
            framing: u(c.framing),
        }
    }
}

impl SourceBreakdown {
    pub fn add(&mut self, m: &CountedMessage) {
        let bucket = if m.is_summary {
            &mut self.summary
        } else {
            match m.role {
                Role::System => &mut self.system,
                Role::User => &mut self.user,
                Role::Assistant => &mut self.assistant,
                Role::Tool => &mut self.tool_outputs,
            }
        };
        *bucket = bucket.saturating_add(m.body);
        self.attachments = self.attachments.saturating_add(m.attachments);
        self.images = self.images.saturating_add(m.images);
        self.framing = self.framing.saturating_add(m.framing);
    }

    pub fn total(&self) -> u32 {
        [
            self.system,
            self.tool_definitions,
            self.user,
            self.assistant,
            self.tool_outputs,
            self.attachments,
            self.images,
            self.summary,
            self.framing,
        ]
        .iter()
        .fold(0u32, |a, b| a.saturating_add(*b))
    }
}

/// What a compaction did (filled by the pipeline; `null` until one ran).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionRecord {
    pub before_tokens: u32,
    pub after_tokens: u32,
    pub tokens_saved: u32,
    pub removed_items: u32,
    pub duration_ms: f64,
    pub status: String,
    pub failure_reason: Option<String>,
    pub attempts: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextMetrics {
    pub model: String,
    pub encoding: Encoding,
    pub kind: CountKind,
    pub context_window: u32,
    pub reserved_output_tokens: u32,
    pub usable_limit: u32,
    pub trigger_limit: u32,
    pub target_limit: u32,
    pub used_tokens: u32,
    pub remaining_tokens: u32,
    /// The largest `max_tokens` the next request can ask for without overflowing the window:
    /// `min(budget.maxOutputTokens, contextWindow - usedTokens)`, 0 when over. Not named
    /// `maxOutputTokens`: the metrics repeat the budget's figures under the budget's names
    /// (`contextWindow`, `reservedOutputTokens`), and `budget.maxOutputTokens` is the model's
    /// cap, not the room left. For estimated models `usedTokens` is the estimate with its
    /// margin, so the room errs low.
    #[serde(default)]
    pub available_output_tokens: u32,
    pub remaining_ratio: f64,
    pub used_ratio: f64,
    pub state: ContextState,
    pub breakdown: SourceBreakdown,
    pub message_count: u32,
    pub compacted: bool,
    pub last_compaction: Option<CompactionRecord>,
    /// `exact`, `estimate`, or `calibrated` (an estimate corrected from reported usage).
    #[serde(default)]
    pub count_source: CountSource,
    /// This model's calibration from reported usage (`null` before the first `observeUsage`).
    #[serde(default)]
    pub calibration: Option<crate::provider::calibration::CalibrationSummary>,
    /// Estimated cost of the next request (`null` when the model has no price).
    #[serde(default)]
    pub cost: Option<crate::provider::pricing::CostEstimate>,
    /// Tool outputs cleared or compacted by age in this request (zeros for `measure`, which
    /// counts the messages as given).
    #[serde(default)]
    pub clearing: Clearing,
    /// The summaries the guard remembers and the summary made ahead of time.
    #[serde(default)]
    pub memory: MemoryMetrics,
    /// The summarizer's circuit breaker.
    #[serde(default)]
    pub breaker: BreakerMetrics,
    /// The vocabulary that would make these counts exact (`loadVocabulary(name)`, then a new
    /// guard) while this guard counts the model's estimate; `null` when there is none to load
    /// (docs/vocabularies.md).
    #[serde(default)]
    pub missing_vocabulary: Option<String>,
    /// When the guard edits what it sent before, what the provider's cache bills, and what the
    /// next request is expected to read from it (docs/edits.md).
    #[serde(default)]
    pub edits: EditMetrics,
}

/// The edit planner's view of the next request (docs/edits.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditMetrics {
    /// `needed` (edits only when the request would not fit, or the cache is cold) or `trigger`.
    pub when: String,
    /// What the provider's prompt cache bills (multiples of the input price, lifetime, minimum).
    pub cache: Option<crate::provider::cache::CachePrices>,
    /// Whether the provider's cache still holds the last request sent (a call within its
    /// lifetime).
    pub warm: bool,
    /// The size over which this call edits what was sent before (the model's tokens).
    pub threshold: u32,
    /// Tokens of this request identical to the last one sent at its start, as the cache serves
    /// them (its minimum and step applied; 0 when cold).
    pub expected_cached_tokens: u32,
    /// Claude's preserved thinking (`null` for other models): what this call did with thinking
    /// blocks.
    pub thinking: Option<ThinkingReport>,
}

/// What a call did with thinking blocks (preserved-thinking models; `pipeline/thinking.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingReport {
    /// Assistant turns sent with their thinking.
    pub kept: u32,
    /// Assistant turns sent without their thinking: their prefix was edited since they were
    /// produced, or an edit of this call dropped every block.
    pub dropped: u32,
    /// ...of which dropped by this call (the others were dropped earlier and stay out).
    pub newly_dropped: u32,
    /// Tokens of the blocks dropped (the model's tokens).
    pub dropped_tokens: u32,
    /// Whether the latest assistant turn of the request keeps its thinking.
    pub latest_kept: bool,
}

/// What the guard remembers of the conversation (see `guard::memory`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryMetrics {
    /// Summaries remembered (made by this guard, or restored from a checkpoint).
    pub summaries: u32,
    /// Messages of the conversation the latest summary applied replaces (0: none applied).
    pub covered_messages: u32,
    /// The summary made ahead of time: `idle`, `running`, `ready` or `failed`.
    pub ahead: AheadState,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AheadState {
    #[default]
    Idle,
    Running,
    Ready,
    Failed,
}

/// The summarizer's circuit breaker (see `guard::breaker`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BreakerMetrics {
    pub state: BreakerState,
    /// Consecutive failed compactions.
    pub failures: u32,
    /// While open: milliseconds until it half-opens (as of the last `prepare`).
    pub closes_in_ms: Option<f64>,
    /// While open with a call limit: `prepare` calls until it half-opens.
    pub closes_after_calls: Option<u32>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    /// The summarizer is asked (up to 3 attempts).
    #[default]
    Closed,
    /// The summarizer is not asked: compactions use the mechanical fallback.
    Open,
    /// The next compaction asks once: success closes it, failure opens it again.
    HalfOpen,
}

/// Tool outputs by age in the model input (see `sources::clearing`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Clearing {
    /// Outputs cleared to a stub.
    pub cleared: u32,
    /// Outputs compacted to the band's smaller limit.
    pub compacted: u32,
    /// Tokens the two saved (the model's tokens; not part of `usedTokens`).
    pub saved_tokens: u32,
    /// The newest outputs up to this many tokens are protected (the resolved `protectTokens`;
    /// 0 when clearing is off).
    pub protect_tokens: u32,
    /// A clearing step is taken only when it saves this many (the resolved `clearAtLeast`).
    pub clear_at_least: u32,
}

/// Where `usedTokens` comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CountSource {
    Exact,
    #[default]
    Estimate,
    Calibrated,
}

impl ContextMetrics {
    /// The metrics of a request of `breakdown` under `budget`, counted for `model` with `encoding`
    /// (`kind`); the caller fills in what its parts know (message count, compaction, memory...).
    pub fn new(
        model: &str,
        encoding: Encoding,
        kind: CountKind,
        budget: &Budget,
        breakdown: SourceBreakdown,
    ) -> ContextMetrics {
        let used = breakdown.total();
        let usable = budget.usable_limit;
        let remaining = usable.saturating_sub(used);
        let (remaining_ratio, used_ratio) = if usable == 0 {
            (0.0, 1.0)
        } else {
            (f64::from(remaining) / f64::from(usable), f64::from(used) / f64::from(usable))
        };
        ContextMetrics {
            model: model.to_string(),
            encoding,
            kind,
            context_window: budget.context_window,
            reserved_output_tokens: budget.reserved_output_tokens,
            usable_limit: usable,
            trigger_limit: budget.trigger_limit,
            target_limit: budget.target_limit,
            used_tokens: used,
            remaining_tokens: remaining,
            available_output_tokens: budget.max_output_tokens.min(budget.context_window.saturating_sub(used)),
            remaining_ratio,
            used_ratio,
            state: ContextState::of(used, budget),
            breakdown,
            message_count: 0,
            compacted: false,
            last_compaction: None,
            count_source: if kind == CountKind::Exact { CountSource::Exact } else { CountSource::Estimate },
            calibration: None,
            cost: None,
            clearing: Clearing::default(),
            memory: MemoryMetrics::default(),
            breaker: BreakerMetrics::default(),
            edits: EditMetrics::default(),
            missing_vocabulary: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::budget::BudgetConfig;

    fn budget() -> Budget {
        let c = BudgetConfig {
            context_window: Some(10_000.0),
            max_output_tokens: Some(2_000.0),
            reserved_output_tokens: Some(2_000.0),
            ..Default::default()
        };
        Budget::resolve(&c, &crate::provider::models::info("x")).unwrap()
    }

    #[test]
    fn states_at_their_edges() {
        let b = budget(); // usable 8000, trigger 6400, near from 5760
        assert_eq!(ContextState::of(0, &b), ContextState::Ok);
        assert_eq!(ContextState::of(5_759, &b), ContextState::Ok);
        assert_eq!(ContextState::of(5_760, &b), ContextState::NearTrigger);
        assert_eq!(ContextState::of(6_400, &b), ContextState::NearTrigger);
        assert_eq!(ContextState::of(6_401, &b), ContextState::OverTrigger);
        assert_eq!(ContextState::of(8_000, &b), ContextState::OverTrigger);
        assert_eq!(ContextState::of(8_001, &b), ContextState::OverLimit);
    }

    #[test]
    fn available_output_under_at_and_over_the_window() {
        let b = budget(); // window 10000, max output 2000
        let room = |used: u32| {
            let s = SourceBreakdown { user: used, ..Default::default() };
            ContextMetrics::new("x", Encoding::O200kBase, CountKind::Exact, &b, s).available_output_tokens
        };
        assert_eq!(room(0), 2_000, "the model's cap");
        assert_eq!(room(8_000), 2_000, "exactly the cap left");
        assert_eq!(room(8_500), 1_500, "the window's rest");
        assert_eq!(room(9_999), 1);
        assert_eq!(room(10_000), 0, "at the window");
        assert_eq!(room(12_000), 0, "over the window: 0, never negative");
        let json = serde_json::to_value(ContextMetrics::new(
            "x",
            Encoding::O200kBase,
            CountKind::Exact,
            &b,
            SourceBreakdown::default(),
        ))
        .unwrap();
        assert_eq!(json["availableOutputTokens"], 2_000);
        assert!(json.get("maxOutputTokens").is_none());
    }

    #[test]
    fn breakdown_buckets_and_snapshot() {
        let mut s = SourceBreakdown { tool_definitions: 50, ..Default::default() };
        s.add(&CountedMessage { role: Role::System, body: 10, framing: 3, ..Default::default() });
        s.add(&CountedMessage { role: Role::System, is_summary: true, body: 100, framing: 3, ..Default::default() });
        s.add(&CountedMessage {
            role: Role::User,
            body: 7,
            attachments: 400,
            images: 765,
            framing: 3,
            ..Default::default()
        });
        s.add(&CountedMessage { role: Role::Tool, body: 2_000, framing: 3, ..Default::default() });
        assert_eq!(
            (s.system, s.summary, s.user, s.tool_outputs, s.attachments, s.images, s.framing),
            (10, 100, 7, 2_000, 400, 765, 12)
        );
        let m = ContextMetrics::new("x", Encoding::O200kBase, CountKind::Estimate, &budget(), s);
        assert_eq!(m.used_tokens, 50 + 10 + 100 + 7 + 400 + 765 + 2_000 + 12);
        assert_eq!(m.remaining_tokens, 8_000 - m.used_tokens);
        assert!((m.remaining_ratio + m.used_ratio - 1.0).abs() < 1e-9);
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["state"], "ok");
        assert_eq!(json["breakdown"]["toolOutputs"], 2_000);
        assert!(json["lastCompaction"].is_null());
    }
}
