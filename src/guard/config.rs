//! `new ContextGuard(config)`: the config object, the model it resolves to, and the compaction
//! strategy.

use serde::{Deserialize, Serialize};

use crate::format::Format;
use crate::provider::calibration::CalibrationState;
use crate::provider::models::{self, CountKind, ModelInfo, Provider};
use crate::provider::pricing::Pricing;
use crate::sources;
use crate::tokens::Encoding;

use super::breaker;

/// Summaries are made ahead of time once usage passes this share of the usable limit (the
/// trigger is at 0.8 by default), by default.
pub const DEFAULT_AHEAD_RATIO: f64 = 0.65;

/// `new ContextGuard(config)`; every field optional when `model` is in the table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuardConfig {
    pub model: Option<String>,
    pub context_window: Option<f64>,
    pub max_output_tokens: Option<f64>,
    pub reserved_output_tokens: Option<f64>,
    /// Tokens, or `{ usd }` per request (see `pricing::EconomicBudget`).
    pub economic_budget: Option<crate::provider::pricing::EconomicBudget>,
    pub trigger_ratio: Option<f64>,
    pub target_ratio: Option<f64>,
    pub format: Option<Format>,
    pub encoding: Option<Encoding>,
    /// Source guards: token limit for one tool output (default 8000).
    pub tool_output_limit: Option<u32>,
    /// Per-tool limits by tool name.
    pub tool_output_limits: Option<std::collections::BTreeMap<String, u32>>,
    /// Total for all tool outputs of a request (default: half the usable limit).
    pub tool_output_total: Option<u32>,
    /// Total for all attachment previews (default: min(16000, usable / 8)).
    pub attachment_budget: Option<u32>,
    /// A host tool that returns a full tool output by call id, named in compaction markers.
    pub retrieval_tool: Option<String>,
    /// Tool outputs by age: `false`, `true` (the defaults) or the options (see
    /// `sources::clearing`).
    pub clear_tool_outputs: Option<sources::pass::ClearSetting>,
    /// A secret of the host: summaries are sealed with a tag under it, and only summaries whose
    /// tag verifies are taken as checkpoints (threat model: docs/design.md, "Checkpoints").
    pub checkpoint_key: Option<String>,
    /// Prices overriding the table (USD per million tokens).
    pub pricing: Option<Pricing>,
    /// A calibration state saved from `guard.calibration`.
    pub calibration: Option<CalibrationState>,
    /// `summary` (default) or `session_state` (see [`Strategy`]).
    pub strategy: Option<Strategy>,
    /// Make summaries ahead of time, in the background (default for `prepare`'s `ahead`).
    pub ahead: Option<bool>,
    /// The ahead threshold, as a share of the usable limit (default 0.65; the trigger is 0.8).
    pub ahead_ratio: Option<f64>,
    /// The recent tail a compaction keeps verbatim, in tokens (default: half the target).
    pub recent_tail_tokens: Option<u32>,
    /// The summarizer's circuit breaker (see `breaker.rs`).
    pub breaker: Option<breaker::BreakerConfig>,
}

/// Resolve a model name plus an optional encoding override.
///
/// - No model: OpenAI Chat Completions counting with the given encoding (`o200k_base` by
///   default), exact — the rules are published; only the limits are unknown.
/// - No model in a build whose only vocabulary is `gemma3` (`ctxguard/gemini`): Gemini's
///   counting, exact.
/// - A model and an explicit encoding: "count with exactly this tokenizer", so the estimate
///   factor drops to 1; the count is `exact` only for OpenAI models, whose framing is published,
///   and for Gemini models counted with `gemma3` (`models::exact_with`).
pub fn resolve_model(model: Option<&str>, encoding: Option<Encoding>) -> ModelInfo {
    let name = model.map(str::trim).filter(|m| !m.is_empty());
    let mut info = models::info(name.unwrap_or(""));
    if name.is_none() {
        info.encoding = Encoding::build_default();
        info.provider = if info.encoding == Encoding::Gemma3 { Provider::Google } else { Provider::Openai };
        info.kind = CountKind::Exact;
        info.estimate_factor = 1.0;
    }
    if let Some(enc) = encoding {
        info.encoding = enc;
        info.estimate_factor = 1.0;
        if name.is_some() {
            info.kind = if models::exact_with(&info, enc) { CountKind::Exact } else { CountKind::Estimate };
        }
    }
    info
}

/// How history is compacted (`strategy` in the guard's config).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// A summary replaces the older messages; recent user messages are kept verbatim and the
    /// current turn (the latest user message and everything after it) is kept whole.
    #[default]
    Summary,
    /// The SessionState is the only history source (docs/design.md, "Session settlement"): no retained user messages, and a
    /// mid-run compression also folds the current turn's earlier steps, keeping the latest user
    /// message and the last assistant step. `prepare(messages, { sessionState })` starts a run
    /// from the SessionState of the last settlement.
    SessionState,
}
