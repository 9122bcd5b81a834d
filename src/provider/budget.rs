//! The token budget (docs/design.md, "Budget"): window, flat output reserve, economic cap, trigger and target.

use serde::{Deserialize, Serialize};

use crate::base::error::{Error, Result};
use crate::provider::models::ModelInfo;

/// Default flat reserve for the answer: the lesson of running long sessions is to reserve a flat buffer, not the
/// model's maximum output (which would waste up to half of a 200k window on o-series models).
pub const DEFAULT_RESERVED_OUTPUT: u32 = 16_384;
/// When the reserve is defaulted, it never takes more than this share of the window.
pub const DEFAULT_RESERVE_MAX_SHARE: f64 = 0.25;
/// Compaction starts when the live state passes this share of the usable limit...
pub const DEFAULT_TRIGGER_RATIO: f64 = 0.8;
/// ...and aims to get under this share.
pub const DEFAULT_TARGET_RATIO: f64 = 0.5;
/// `near_trigger` starts at this share of the trigger limit.
pub const NEAR_TRIGGER_SHARE: f64 = 0.9;

/// What the host may set (all optional when the model is in the table).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BudgetConfig {
    pub context_window: Option<f64>,
    pub max_output_tokens: Option<f64>,
    pub reserved_output_tokens: Option<f64>,
    pub economic_budget: Option<f64>,
    pub trigger_ratio: Option<f64>,
    pub target_ratio: Option<f64>,
}

/// The resolved budget. All limits are whole tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    pub context_window: u32,
    pub max_output_tokens: u32,
    pub reserved_output_tokens: u32,
    pub economic_budget: Option<u32>,
    /// `min(contextWindow - reservedOutputTokens, economicBudget)`.
    pub usable_limit: u32,
    pub trigger_ratio: f64,
    pub target_ratio: f64,
    pub trigger_limit: u32,
    pub target_limit: u32,
}

/// A whole, non-negative token figure that fits in u32; `what` names the field in errors.
fn tokens(value: f64, what: &str) -> Result<u32> {
    if !value.is_finite() || value < 0.0 || value.fract() != 0.0 || value > f64::from(u32::MAX) {
        return Err(Error::budget(format!(
            "{what} must be a whole number of tokens between 0 and 4294967295, got {value}"
        )));
    }
    // Checked above: integral and in range.
    Ok(value as u32)
}

fn ratio(value: Option<f64>, default: f64, what: &str) -> Result<f64> {
    let r = value.unwrap_or(default);
    if !r.is_finite() || r <= 0.0 || r > 1.0 {
        return Err(Error::budget(format!("{what} must be in (0, 1], got {r}")));
    }
    Ok(r)
}

impl Budget {
    /// Resolve the host's config against the model table row.
    pub fn resolve(config: &BudgetConfig, model: &ModelInfo) -> Result<Budget> {
        let window = match (config.context_window, model.context_window) {
            (Some(w), _) => tokens(w, "contextWindow")?,
            (None, Some(w)) => w,
            (None, None) if model.model.trim().is_empty() => {
                return Err(Error::new(
                    crate::base::error::ErrorCode::UnknownModel,
                    "no model: name the model the conversation is sent to, e.g. new ContextGuard({ model: 'gpt-4o' }) \
                     (knownModels() lists the models ctxguard knows), or give contextWindow (and maxOutputTokens) \
                     for another one",
                ))
            }
            (None, None) => {
                let known = crate::provider::models::known_models();
                let hint =
                    match crate::base::explain::closest(model.model.trim(), known.iter().map(|m| m.model.as_str())) {
                        Some(m) => format!("did you mean {m:?}? Else give "),
                        None => "give ".to_string(),
                    };
                return Err(Error::new(
                    crate::base::error::ErrorCode::UnknownModel,
                    format!(
                        "model {:?} is not in the table (knownModels() lists it); {hint}contextWindow (and \
                         maxOutputTokens) for it",
                        model.model
                    ),
                ));
            }
        };
        if window == 0 {
            return Err(Error::budget("contextWindow must be greater than 0"));
        }
        let max_output = match (config.max_output_tokens, model.max_output_tokens) {
            (Some(v), _) => tokens(v, "maxOutputTokens")?,
            (None, Some(v)) => v.min(window),
            (None, None) => window,
        };
        if max_output > window {
            return Err(Error::budget(format!("maxOutputTokens ({max_output}) exceeds contextWindow ({window})")));
        }
        let reserved = match config.reserved_output_tokens {
            Some(v) => {
                let v = tokens(v, "reservedOutputTokens")?;
                if v > max_output {
                    let whose = if config.max_output_tokens.is_some() {
                        "the maxOutputTokens you set"
                    } else {
                        "the most this model writes in one reply (its table entry; set maxOutputTokens if it writes more)"
                    };
                    return Err(Error::budget(format!(
                        "reservedOutputTokens ({v}) exceeds maxOutputTokens ({max_output}), {whose}: reserve \
                         {max_output} or less (to leave room for more than the reply, lower contextWindow)"
                    )));
                }
                v
            }
            None => {
                let share = (f64::from(window) * DEFAULT_RESERVE_MAX_SHARE).floor() as u32;
                DEFAULT_RESERVED_OUTPUT.min(max_output).min(share)
            }
        };
        if reserved >= window {
            return Err(Error::budget(format!(
                "reservedOutputTokens ({reserved}) leaves no room for input in contextWindow ({window})"
            )));
        }
        let economic = match config.economic_budget {
            Some(v) => {
                let v = tokens(v, "economicBudget")?;
                if v == 0 {
                    return Err(Error::budget("economicBudget must be greater than 0"));
                }
                Some(v)
            }
            None => None,
        };
        let physical = window - reserved;
        let usable = economic.map_or(physical, |e| e.min(physical));
        let trigger_ratio = ratio(config.trigger_ratio, DEFAULT_TRIGGER_RATIO, "triggerRatio")?;
        let target_ratio = ratio(config.target_ratio, DEFAULT_TARGET_RATIO, "targetRatio")?;
        if target_ratio >= trigger_ratio {
            return Err(Error::budget(format!(
                "targetRatio ({target_ratio}) must be below triggerRatio ({trigger_ratio})"
            )));
        }
        let trigger_limit = (f64::from(usable) * trigger_ratio).floor() as u32;
        let target_limit = (f64::from(usable) * target_ratio).floor() as u32;
        Ok(Budget {
            context_window: window,
            max_output_tokens: max_output,
            reserved_output_tokens: reserved,
            economic_budget: economic,
            usable_limit: usable,
            trigger_ratio,
            target_ratio,
            trigger_limit,
            target_limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::models::info;

    fn cfg() -> BudgetConfig {
        BudgetConfig::default()
    }

    #[test]
    fn flat_reserve_not_the_max_output() {
        let b = Budget::resolve(&cfg(), &info("o3")).unwrap();
        assert_eq!(b.context_window, 200_000);
        assert_eq!(b.max_output_tokens, 100_000);
        assert_eq!(b.reserved_output_tokens, DEFAULT_RESERVED_OUTPUT);
        assert_eq!(b.usable_limit, 200_000 - 16_384);
        assert_eq!(b.trigger_limit, ((200_000 - 16_384) as f64 * 0.8).floor() as u32);
        assert_eq!(b.target_limit, ((200_000 - 16_384) as f64 * 0.5).floor() as u32);
    }

    #[test]
    fn reserve_capped_by_max_output_and_window_share() {
        let b = Budget::resolve(&cfg(), &info("gpt-4-turbo")).unwrap();
        assert_eq!(b.reserved_output_tokens, 4_096);
        let b = Budget::resolve(&cfg(), &info("gpt-4")).unwrap();
        assert_eq!(b.reserved_output_tokens, 2_048); // a quarter of 8,192
    }

    #[test]
    fn economic_budget_caps_usable() {
        let c = BudgetConfig { economic_budget: Some(50_000.0), ..cfg() };
        let b = Budget::resolve(&c, &info("gpt-4.1")).unwrap();
        assert_eq!(b.usable_limit, 50_000);
        assert_eq!(b.trigger_limit, 40_000);
    }

    #[test]
    fn impossible_configurations_are_errors() {
        let unknown = info("my-model");
        assert_eq!(Budget::resolve(&cfg(), &unknown).unwrap_err().code, crate::ErrorCode::UnknownModel);
        let bad = [
            BudgetConfig { context_window: Some(1000.0), reserved_output_tokens: Some(1000.0), ..cfg() },
            BudgetConfig { context_window: Some(1000.0), max_output_tokens: Some(2000.0), ..cfg() },
            BudgetConfig { context_window: Some(-5.0), ..cfg() },
            BudgetConfig { context_window: Some(1.5), ..cfg() },
            BudgetConfig { context_window: Some(f64::NAN), ..cfg() },
            BudgetConfig { context_window: Some(0.0), ..cfg() },
            BudgetConfig { context_window: Some(1e12), ..cfg() },
            BudgetConfig { context_window: Some(8000.0), trigger_ratio: Some(0.4), target_ratio: Some(0.6), ..cfg() },
            BudgetConfig { context_window: Some(8000.0), trigger_ratio: Some(1.5), ..cfg() },
            BudgetConfig { context_window: Some(8000.0), target_ratio: Some(0.0), ..cfg() },
            BudgetConfig { context_window: Some(8000.0), economic_budget: Some(0.0), ..cfg() },
            BudgetConfig {
                context_window: Some(8000.0),
                max_output_tokens: Some(100.0),
                reserved_output_tokens: Some(200.0),
                ..cfg()
            },
        ];
        for c in bad {
            let e = Budget::resolve(&c, &unknown).unwrap_err();
            assert_eq!(e.code, crate::ErrorCode::InvalidBudget, "{c:?}: {e}");
        }
    }

    #[test]
    fn explicit_limits_for_unknown_models() {
        let c = BudgetConfig { context_window: Some(32_768.0), max_output_tokens: Some(4_096.0), ..cfg() };
        let b = Budget::resolve(&c, &info("local-llm")).unwrap();
        assert_eq!(b.reserved_output_tokens, 4_096);
        assert_eq!(b.usable_limit, 28_672);
    }
}
