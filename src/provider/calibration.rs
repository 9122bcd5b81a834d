//! Counts that learn from the provider: a per-model ratio `reported / estimated`, robust to
//! outliers, applied to the estimates of models without an exact tokenizer and used as a check
//! for exact ones.
//!
//! # Model
//! Each accepted observation adds `ln(reported / estimated)` to a window of the last
//! [`WINDOW`] observations (`estimated` is ctxguard's uncalibrated count of the same request,
//! the table's estimate factor included). From the window:
//! - `ratio = exp(median)`; `spread = 1.4826 × MAD` (a robust standard deviation in log space);
//! - `confidence = n / (n + 4)` for `n` observations in the window (0.43 after 3, 0.8 at 16);
//! - `correction = clamp(exp(median + margin), 0.5, 2)` with
//!   `margin = max(spread, 0.01) + 0.03 / n`: the calibrated count errs high by about one
//!   robust standard deviation, a little more while there are few observations.
//!
//! The correction is applied (counts become `calibrated`) from [`MIN_OBSERVATIONS`] observations
//! on, only for `estimate` models. It may go below 1: the table's factors carry a 10 % safety
//! margin that the calibration replaces with its own. It is clamped to [0.5, 2] of the table's
//! estimate: a larger disagreement means the host reports usage for a different request than the
//! one it passes, not a tokenizer difference. For `exact` models nothing is corrected; the
//! metrics report the ratio and the last observation's error.
//!
//! # Outliers
//! An observation with a ratio outside [0.2, 5] is rejected as garbage. Once the window holds
//! [`MIN_OBSERVATIONS`], an observation more than `max(0.2, 4 × spread)` away from the median (in
//! log space, ≈ 22 %) is an outlier: counted, reported as the last observation, not learned.
//! Three consecutive outliers that agree with each other (within 0.2) mean the model changed:
//! the window restarts from them.
//!
//! # Overflow errors
//! A context-overflow error that states the provider's count ("prompt is too long: 202609 tokens >
//! 200000 maximum") is an observation like a usage report, `reported / estimated` for the request
//! that failed, and the one that matters most when it shows an undercount (`reported` above what
//! ctxguard predicted): the next request must not fail the same way. Such an observation
//! - enters the window even when it would be an outlier (it is the provider's own count of the
//!   request just rejected, not a usage report that may belong to another request);
//! - sets a **floor**: the correction is at least its ratio, from this observation on, even before
//!   [`MIN_OBSERVATIONS`] — so the same messages now count exactly what the provider counted and
//!   the next `prepare` compacts them. The floor is the highest undercounting overflow ratio; it
//!   lapses once [`WINDOW`] later observations were learned (when its observation would have
//!   left the window) and when a regime change restarts the window.
//!
//! An overflow that shows no undercount (ctxguard already said more) is an ordinary observation.
//! Exact models learn no floor: their counts are never corrected, and their overflow counts are
//! recorded as usage reports are, for the metrics' check (see `calibration/overflow.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::base::error::{Error, Result};
use crate::provider::models::CountKind;

/// Observations kept per model.
pub const WINDOW: usize = 16;
/// Observations before the correction is applied.
pub const MIN_OBSERVATIONS: usize = 3;
/// Ratios outside this range are rejected outright.
pub const RATIO_RANGE: (f64, f64) = (0.2, 5.0);
/// The applied correction stays in this range.
pub const CORRECTION_RANGE: (f64, f64) = (0.5, 2.0);
/// Outlier threshold in log space (at least; 4 × spread when that is larger).
pub const OUTLIER_LOG: f64 = 0.2;
/// Consecutive agreeing outliers that restart the window.
pub const REGIME_CHANGE: usize = 3;
/// The state's format version.
pub const VERSION: u32 = 1;

/// The state the host persists: `guard.calibration` and `new ContextGuard({ calibration })`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CalibrationState {
    pub version: u32,
    pub models: BTreeMap<String, ModelCalibration>,
}

impl Default for CalibrationState {
    fn default() -> Self {
        CalibrationState { version: VERSION, models: BTreeMap::new() }
    }
}

/// One model's calibration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelCalibration {
    /// Accepted observations (all time).
    pub observations: u32,
    /// Rejected observations (outliers and garbage, all time).
    pub outliers: u32,
    /// The window: `reported / estimated` of the last accepted observations, oldest first.
    pub ratios: Vec<f64>,
    /// Consecutive outliers since the last accepted observation.
    pub pending: Vec<f64>,
    pub last: Option<Observation>,
    /// The lowest correction an overflow error showed (see the module docs); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<Floor>,
}

/// An overflow's ratio that the correction may not go under, and when it was set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Floor {
    /// `reported / estimated` of the overflow.
    pub ratio: f64,
    /// `observations` right after it was learned.
    pub at: u32,
}

/// What one `observeUsage` saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Observation {
    /// Input tokens the provider reported (cached included).
    pub reported: u32,
    /// Of which read from the provider's cache.
    pub reported_cached: u32,
    /// ctxguard's uncalibrated count of the same request.
    pub estimated: u32,
    /// What ctxguard said before this observation (calibrated when the correction applied).
    pub predicted: u32,
    /// `reported / estimated`.
    pub ratio: f64,
    /// `(predicted - reported) / reported`: positive when ctxguard counted high.
    pub error: f64,
    /// Rejected (not learned).
    pub outlier: bool,
}

/// `metrics.calibration` and `observeUsage`'s result: the state of one model, derived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CalibrationSummary {
    pub model: String,
    pub observations: u32,
    pub outliers: u32,
    /// Median `reported / estimated` of the window (`null` before the first observation).
    pub ratio: Option<f64>,
    pub spread: Option<f64>,
    pub confidence: f64,
    /// The factor applied to estimates (1 when not applied).
    pub correction: f64,
    /// Whether counts are corrected (`estimate` models with enough observations, or a floor).
    pub applied: bool,
    pub last: Option<Observation>,
    /// An overflow's floor under the correction while it is in force (`null` otherwise).
    pub floor: Option<f64>,
}

fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let hi = sorted.get(n / 2).copied()?;
    if n % 2 == 1 {
        Some(hi)
    } else {
        Some((sorted.get(n / 2 - 1).copied()? + hi) / 2.0)
    }
}

/// `values` in `f64::total_cmp` order, through [`sort_pairs`] (the crate's one pair sort, see
/// `sort.rs`): each value keyed by its bits mapped so that unsigned order
/// is `total_cmp`'s order (equal keys are equal bits, so their order does not matter).
fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut keyed: Vec<(u64, u64)> = values
        .map(|x| {
            let bits = x.to_bits();
            // `total_cmp`: flip all but the sign bit of negatives; then the sign bit, so that the
            // i64 order it compares becomes the u64 order.
            let key = (bits ^ ((((bits as i64) >> 63) as u64) >> 1)) ^ (1 << 63);
            (key, bits)
        })
        .collect();
    crate::base::sort::sort_pairs(&mut keyed);
    keyed.into_iter().map(|(_, bits)| f64::from_bits(bits)).collect()
}

/// `(median, spread)` of the logs of the ratios.
fn log_stats(ratios: &[f64]) -> Option<(f64, f64)> {
    let logs = sorted(ratios.iter().map(|r| r.ln()));
    let m = median(&logs)?;
    let mad = median(&sorted(logs.iter().map(|l| (l - m).abs())))?;
    Some((m, 1.4826 * mad))
}

impl ModelCalibration {
    /// The factor for estimates: from the window once there are enough observations, and at
    /// least an overflow's floor while it is in force.
    pub fn correction(&self) -> Option<f64> {
        let window = if self.ratios.len() >= MIN_OBSERVATIONS {
            log_stats(&self.ratios).map(|(m, spread)| {
                let n = self.ratios.len() as f64;
                (m + spread.max(0.01) + 0.03 / n).exp()
            })
        } else {
            None
        };
        let c = match (window, self.active_floor()) {
            (Some(w), Some(f)) => w.max(f),
            (w, f) => w.or(f)?,
        };
        Some(c.clamp(CORRECTION_RANGE.0, CORRECTION_RANGE.1))
    }

    /// The floor's ratio while it is in force: fewer than [`WINDOW`] observations learned since.
    pub fn active_floor(&self) -> Option<f64> {
        self.floor.filter(|f| self.observations.saturating_sub(f.at) < WINDOW as u32).map(|f| f.ratio)
    }

    /// Learn from an overflow error that stated the provider's count (`reported`) of the request
    /// ctxguard counts `estimated` (uncalibrated) and predicted `predicted`. An undercount enters
    /// the window whatever its distance from the median and raises the floor; anything else is
    /// an ordinary observation. Garbage (a ratio outside [`RATIO_RANGE`]) is rejected either way.
    pub fn observe_overflow(&mut self, reported: u32, estimated: u32, predicted: u32) -> Observation {
        let ratio = if estimated == 0 { f64::INFINITY } else { f64::from(reported) / f64::from(estimated) };
        if reported <= predicted || !(RATIO_RANGE.0..=RATIO_RANGE.1).contains(&ratio) {
            return self.observe(reported, 0, estimated, predicted);
        }
        self.pending.clear();
        self.ratios.push(ratio);
        if self.ratios.len() > WINDOW {
            self.ratios.remove(0);
        }
        self.observations = self.observations.saturating_add(1);
        let ratio = self.active_floor().map_or(ratio, |f| f.max(ratio));
        self.floor = Some(Floor { ratio, at: self.observations });
        let obs = Observation {
            reported,
            reported_cached: 0,
            estimated,
            predicted,
            ratio: f64::from(reported) / f64::from(estimated),
            error: (f64::from(predicted) - f64::from(reported)) / f64::from(reported),
            outlier: false,
        };
        self.last = Some(obs.clone());
        obs
    }

    pub fn confidence(&self) -> f64 {
        let n = self.ratios.len() as f64;
        n / (n + 4.0)
    }

    /// Learn from one observation. `predicted` is what ctxguard said before it.
    pub fn observe(&mut self, reported: u32, reported_cached: u32, estimated: u32, predicted: u32) -> Observation {
        let ratio = if estimated == 0 { f64::INFINITY } else { f64::from(reported) / f64::from(estimated) };
        let error =
            if reported == 0 { 0.0 } else { (f64::from(predicted) - f64::from(reported)) / f64::from(reported) };
        let garbage = !(RATIO_RANGE.0..=RATIO_RANGE.1).contains(&ratio);
        let outlier = garbage
            || (self.ratios.len() >= MIN_OBSERVATIONS
                && log_stats(&self.ratios).is_some_and(|(m, s)| (ratio.ln() - m).abs() > OUTLIER_LOG.max(4.0 * s)));
        if outlier {
            self.outliers = self.outliers.saturating_add(1);
            if !garbage {
                self.pending.push(ratio);
                let logs = sorted(self.pending.iter().map(|r| r.ln()));
                let agree = matches!((logs.first(), logs.last()), (Some(a), Some(b)) if b - a <= OUTLIER_LOG);
                if self.pending.len() >= REGIME_CHANGE && agree {
                    self.ratios = std::mem::take(&mut self.pending);
                    self.floor = None;
                    self.observations = self.observations.saturating_add(REGIME_CHANGE as u32);
                } else if self.pending.len() >= REGIME_CHANGE {
                    self.pending.remove(0);
                }
            }
        } else {
            self.pending.clear();
            self.ratios.push(ratio);
            if self.ratios.len() > WINDOW {
                self.ratios.remove(0);
            }
            self.observations = self.observations.saturating_add(1);
        }
        let obs = Observation {
            reported,
            reported_cached: reported_cached.min(reported),
            estimated,
            predicted,
            ratio: if ratio.is_finite() { ratio } else { 0.0 },
            error,
            outlier,
        };
        self.last = Some(obs.clone());
        obs
    }

    pub fn summary(&self, model: &str, kind: CountKind) -> CalibrationSummary {
        let stats = log_stats(&self.ratios);
        let correction = self.correction().filter(|_| kind == CountKind::Estimate);
        CalibrationSummary {
            model: model.to_string(),
            observations: self.observations,
            outliers: self.outliers,
            ratio: stats.map(|(m, _)| m.exp()),
            spread: stats.map(|(_, s)| s),
            confidence: self.confidence(),
            correction: correction.unwrap_or(1.0),
            applied: correction.is_some(),
            last: self.last.clone(),
            floor: self.active_floor(),
        }
    }
}

impl CalibrationState {
    /// Check a restored state: the version, and every figure in range.
    pub fn validate(&self) -> Result<()> {
        if self.version != VERSION {
            return Err(Error::options(format!("calibration.version must be {VERSION}, got {}", self.version)));
        }
        let ok = |r: &f64| r.is_finite() && (RATIO_RANGE.0..=RATIO_RANGE.1).contains(r);
        for (name, m) in &self.models {
            if m.ratios.len() > WINDOW || m.pending.len() > REGIME_CHANGE {
                return Err(Error::options(format!(
                    "calibration.models[{name:?}]: at most {WINDOW} ratios and {REGIME_CHANGE} pending"
                )));
            }
            if !m.ratios.iter().chain(&m.pending).all(ok) {
                return Err(Error::options(format!(
                    "calibration.models[{name:?}]: ratios must be finite numbers in [{}, {}]",
                    RATIO_RANGE.0, RATIO_RANGE.1
                )));
            }
            if let Some(l) = &m.last {
                if !l.ratio.is_finite() || l.ratio < 0.0 || !l.error.is_finite() {
                    return Err(Error::options(format!(
                        "calibration.models[{name:?}].last: ratio and error must be finite"
                    )));
                }
            }
            if let Some(f) = &m.floor {
                if !ok(&f.ratio) || f.at > m.observations {
                    return Err(Error::options(format!(
                        "calibration.models[{name:?}].floor: ratio must be in [{}, {}] and at no more than observations",
                        RATIO_RANGE.0, RATIO_RANGE.1
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Usage as the provider reported it. OpenAI (`prompt_tokens`, `prompt_tokens_details.cached_tokens`),
/// Anthropic (`input_tokens` + `cache_read_input_tokens` + `cache_creation_input_tokens`) and Gemini
/// (`promptTokenCount`, `cachedContentTokenCount`) and Vercel AI SDK (`inputTokens`,
/// `cachedInputTokens` / `inputTokenDetails.cacheReadTokens`) shapes; other fields are ignored.
/// Anthropic's `iterations` (compaction and server-tool sampling steps, docs/edits.md "Provider
/// artifacts"): the first one read the request as it was sent, so it is the one compared with
/// ctxguard's count (the top-level figures leave out a compaction step and add up the later ones).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ReportedUsage {
    prompt_tokens: Option<f64>,
    prompt_tokens_details: Option<PromptDetails>,
    input_tokens: Option<f64>,
    cache_read_input_tokens: Option<f64>,
    cache_creation_input_tokens: Option<f64>,
    iterations: Option<Vec<Iteration>>,
    #[serde(rename = "promptTokenCount")]
    prompt_token_count: Option<f64>,
    #[serde(rename = "cachedContentTokenCount")]
    cached_content_token_count: Option<f64>,
    /// Vercel AI SDK (`result.usage`): `inputTokens` (cached included), `cachedInputTokens` (v5)
    /// or `inputTokenDetails.cacheReadTokens` (v6).
    #[serde(rename = "inputTokens")]
    ai_input_tokens: Option<f64>,
    #[serde(rename = "cachedInputTokens")]
    ai_cached_input_tokens: Option<f64>,
    #[serde(rename = "inputTokenDetails")]
    ai_input_details: Option<AiInputDetails>,
}

/// One step of an Anthropic request (`usage.iterations[]`: `compaction` or `message`).
#[derive(Debug, Clone, Default, Deserialize)]
struct Iteration {
    input_tokens: Option<f64>,
    cache_read_input_tokens: Option<f64>,
    cache_creation_input_tokens: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct PromptDetails {
    cached_tokens: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct AiInputDetails {
    #[serde(rename = "cacheReadTokens")]
    cache_read_tokens: Option<f64>,
}

fn whole(v: Option<f64>, what: &str) -> Result<u32> {
    match v {
        None => Ok(0),
        Some(x) if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= f64::from(u32::MAX) => Ok(x as u32),
        Some(x) => Err(Error::options(format!("usage.{what} must be a whole number of tokens, got {x}"))),
    }
}

impl ReportedUsage {
    /// `(input tokens including cached, cached)`.
    pub fn input(&self) -> Result<(u32, u32)> {
        if let Some(p) = self.prompt_tokens {
            let cached = whole(
                self.prompt_tokens_details.as_ref().and_then(|d| d.cached_tokens),
                "prompt_tokens_details.cached_tokens",
            )?;
            return Ok((whole(Some(p), "prompt_tokens")?, cached));
        }
        if let Some(first) = self.iterations.as_ref().and_then(|it| it.first()).filter(|f| f.input_tokens.is_some()) {
            let read = whole(first.cache_read_input_tokens, "iterations[0].cache_read_input_tokens")?;
            let write = whole(first.cache_creation_input_tokens, "iterations[0].cache_creation_input_tokens")?;
            let total =
                whole(first.input_tokens, "iterations[0].input_tokens")?.saturating_add(read).saturating_add(write);
            return Ok((total, read));
        }
        if let Some(i) = self.input_tokens {
            let read = whole(self.cache_read_input_tokens, "cache_read_input_tokens")?;
            let write = whole(self.cache_creation_input_tokens, "cache_creation_input_tokens")?;
            let total = whole(Some(i), "input_tokens")?.saturating_add(read).saturating_add(write);
            return Ok((total, read));
        }
        if let Some(p) = self.prompt_token_count {
            let cached = whole(self.cached_content_token_count, "cachedContentTokenCount")?;
            return Ok((whole(Some(p), "promptTokenCount")?, cached));
        }
        if let Some(i) = self.ai_input_tokens {
            let cached =
                self.ai_cached_input_tokens.or(self.ai_input_details.as_ref().and_then(|d| d.cache_read_tokens));
            return Ok((whole(Some(i), "inputTokens")?, whole(cached, "cachedInputTokens")?));
        }
        Err(Error::options(
            "usage needs prompt_tokens (OpenAI), input_tokens (Anthropic), promptTokenCount (Gemini) or inputTokens (AI SDK)",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_is_total_cmp_order() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let specials = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            1e-310,
            -1e-310,
            f64::MAX,
            f64::MIN,
        ];
        for round in 0..200 {
            let mut values: Vec<f64> = (0..(round % 40)).map(|_| f64::from_bits(next())).collect();
            values.extend((0..(round % 7)).map(|_| (next() % 100) as f64 / 8.0 - 6.0));
            values.extend(specials.iter().take(round % 15));
            let mut expected = values.clone();
            expected.sort_by(f64::total_cmp);
            let got = sorted(values.into_iter());
            assert_eq!(
                got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                expected.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn usage_shapes() {
        let u: ReportedUsage = serde_json::from_str(
            r#"{"prompt_tokens":2000,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":1024}}"#,
        )
        .unwrap();
        assert_eq!(u.input().unwrap(), (2000, 1024));
        let u: ReportedUsage = serde_json::from_str(
            r#"{"input_tokens":50,"cache_read_input_tokens":1800,"cache_creation_input_tokens":150,"output_tokens":9}"#,
        )
        .unwrap();
        assert_eq!(u.input().unwrap(), (2000, 1800));
        let u: ReportedUsage = serde_json::from_str(r#"{"input_tokens":50,"cache_read_input_tokens":null}"#).unwrap();
        assert_eq!(u.input().unwrap(), (50, 0));
        // Anthropic's compaction beta: a threshold compaction ran first (it read the request as
        // sent); the top-level figures are the reply's, on the compacted context.
        let u: ReportedUsage = serde_json::from_str(
            r#"{"input_tokens":23000,"output_tokens":1000,"iterations":[
                {"type":"compaction","input_tokens":180000,"output_tokens":3500},
                {"type":"message","input_tokens":23000,"output_tokens":1000}]}"#,
        )
        .unwrap();
        assert_eq!(u.input().unwrap(), (180_000, 0));
        // On-demand compaction: top-level zeros, the summary call in `iterations`.
        let u: ReportedUsage = serde_json::from_str(
            r#"{"input_tokens":0,"output_tokens":0,"iterations":[{"type":"compaction","input_tokens":144,"output_tokens":276}]}"#,
        )
        .unwrap();
        assert_eq!(u.input().unwrap(), (144, 0));
        // No compaction: one message step with its cache figures, as the top level.
        let u: ReportedUsage = serde_json::from_str(
            r#"{"input_tokens":50,"cache_read_input_tokens":1800,"iterations":[
                {"type":"message","input_tokens":50,"cache_read_input_tokens":1800,"output_tokens":9}]}"#,
        )
        .unwrap();
        assert_eq!(u.input().unwrap(), (1850, 1800));
        let u: ReportedUsage =
            serde_json::from_str(r#"{"promptTokenCount":700,"cachedContentTokenCount":100}"#).unwrap();
        assert_eq!(u.input().unwrap(), (700, 100));
        let u: ReportedUsage = serde_json::from_str(r#"{"completion_tokens":5}"#).unwrap();
        assert!(u.input().is_err());
        let u: ReportedUsage = serde_json::from_str(r#"{"prompt_tokens":-1}"#).unwrap();
        assert!(u.input().is_err());
    }

    #[test]
    fn median_and_outliers() {
        let mut m = ModelCalibration::default();
        for r in [0.9, 0.92, 0.88] {
            m.observe((r * 1000.0) as u32, 0, 1000, 1000);
        }
        assert!(m.correction().is_some());
        let o = m.observe(3000, 0, 1000, 1000);
        assert!(o.outlier);
        assert_eq!(m.ratios.len(), 3);
        let garbage = m.observe(100_000, 0, 1000, 1000);
        assert!(garbage.outlier);
        assert!(m.pending.len() == 1);
    }

    #[test]
    fn regime_change_restarts_the_window() {
        let mut m = ModelCalibration::default();
        for _ in 0..5 {
            m.observe(900, 0, 1000, 1000);
        }
        for _ in 0..3 {
            m.observe(1500, 0, 1000, 1000);
        }
        assert_eq!(m.ratios, vec![1.5, 1.5, 1.5]);
    }
}
