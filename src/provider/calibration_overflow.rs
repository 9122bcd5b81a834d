//! `guard.observeOverflow(error, messages)`: what a context-overflow error teaches the calibration.
//!
//! The observation is "the provider counted `promptTokens` for the request ctxguard counts as
//! `estimated` (uncalibrated) and predicted as `predicted`". What happens to it, by `outcome`:
//!
//! | outcome | when | effect |
//! |---|---|---|
//! | `not_overflow` | the error is not a context overflow | none |
//! | `no_count` | an overflow whose message states no input count (or only a total with the output) | none |
//! | `approximate` | the count is "about" (OpenRouter) | none: an approximation is not learned |
//! | `exact_model` | the model is counted exactly (OpenAI) | recorded as the last observation, for the check in `metrics.calibration`; counts never change |
//! | `learned` | an estimated model, a count stated exactly or as a lower bound | learned (see `crate::provider::calibration`): an undercount enters the window and sets the floor |
//! | `outlier` | learned as an ordinary observation but rejected (far from the window, or a ratio outside [0.2, 5]: the messages are not the request that failed) | counted as an outlier |
//!
//! A lower bound ("at least 134145 input tokens", vLLM) is learned as the count: the truth is at
//! least that, so the correction it gives can only fall short of the truth, never overshoot it.
//!
//! Independently, `limitBelowWindow` says that the limit the message states is lower than the
//! guard's `contextWindow`: the host may have the wrong window for this route. The budget is not
//! changed.

use serde::Serialize;

use super::calibration::{CalibrationState, CalibrationSummary};
use crate::provider::budget::Budget;
use crate::provider::models::{CountKind, ModelInfo};
use crate::provider::overflow::{Classification, ErrorKind, Qualifier};

/// What became of an overflow observation (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OverflowOutcome {
    NotOverflow,
    NoCount,
    Approximate,
    ExactModel,
    Learned,
    Outlier,
}

/// `observeOverflow`'s result: the classification with the figures, ctxguard's own counts of the
/// request and what was learned.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OverflowObservation {
    pub outcome: OverflowOutcome,
    /// `kind`, `compactAndRetry`, `reason` and the stated figures, as `classifyProviderError`.
    #[serde(flatten)]
    pub error: Classification,
    /// ctxguard's count of the request before (calibrated when a correction applied).
    pub predicted: u32,
    /// ctxguard's uncalibrated count of the request (the table's estimate).
    pub estimated: u32,
    /// `(predicted - promptTokens) / promptTokens`: negative when ctxguard counted low
    /// (`null` without a stated count).
    pub count_error: Option<f64>,
    /// ctxguard's count of the same request after learning (`null` unless `learned`).
    pub predicted_after: Option<u32>,
    /// The correction applied to this model's counts now (1 when none).
    pub correction: f64,
    /// The guard's window, and whether the stated limit is below it.
    pub context_window: u32,
    pub limit_below_window: bool,
    /// This model's calibration after the observation (`null` before any).
    pub calibration: Option<CalibrationSummary>,
}

/// Learn from `error` for a request ctxguard predicted at `predicted` and estimates (raw) at
/// `estimated`. The caller fills `predicted_after` and `calibration` (they need a recount).
pub fn observe_overflow(
    state: &mut CalibrationState,
    model: &ModelInfo,
    budget: &Budget,
    error: &Classification,
    predicted: u32,
    estimated: u32,
) -> OverflowObservation {
    let counts = error.counts;
    let reported = counts.prompt_tokens.filter(|_| error.kind == ErrorKind::ContextOverflow);
    let outcome = match (error.kind, reported, counts.qualifier) {
        (ErrorKind::ContextOverflow, None, _) => OverflowOutcome::NoCount,
        (ErrorKind::ContextOverflow, Some(_), Some(Qualifier::About)) => OverflowOutcome::Approximate,
        (ErrorKind::ContextOverflow, Some(reported), _) => {
            let entry = state.models.entry(model.model.clone()).or_default();
            if model.kind == CountKind::Exact {
                entry.observe(reported, 0, estimated, predicted);
                OverflowOutcome::ExactModel
            } else if entry.observe_overflow(reported, estimated, predicted).outlier {
                OverflowOutcome::Outlier
            } else {
                OverflowOutcome::Learned
            }
        }
        _ => OverflowOutcome::NotOverflow,
    };
    let correction = if model.kind == CountKind::Estimate {
        state.models.get(&model.model).and_then(|m| m.correction()).unwrap_or(1.0)
    } else {
        1.0
    };
    OverflowObservation {
        outcome,
        error: *error,
        predicted,
        estimated,
        count_error: reported.filter(|r| *r > 0).map(|r| (f64::from(predicted) - f64::from(r)) / f64::from(r)),
        predicted_after: None,
        correction,
        context_window: budget.context_window,
        limit_below_window: counts.limit.is_some_and(|l| l < budget.context_window),
        calibration: None,
    }
}
