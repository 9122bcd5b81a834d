//! What a provider's prompt cache bills, per provider, as the edit planner prices an edit
//! (docs/edits.md): every token after the first changed message of a request is written to the
//! cache again instead of read from it.
//!
//! The figures are multiples of the model's plain input price:
//! - Anthropic: reads 0.1 (0.05 on Opus 5.5 and Sonnet 5.5, 0.025 on Fable and Mythos 5.x),
//!   writes 1.25 for the 5-minute cache, which every read refreshes; prefixes from 1,024 tokens
//!   (512 on the 5.x models).
//! - OpenAI: reads at the model's cached-input discount (0.5 on GPT-4o, 0.25 on GPT-4.1 and o3,
//!   0.1 on GPT-5), no write premium; in-memory retention of 5 to 10 minutes; prefixes from 1,024
//!   tokens, served in steps of 128.
//! - Google: implicit caching at 0.1 (the context-cache price), no write premium, lifetime not
//!   documented (taken as 5 minutes); prefixes from 2,048 tokens.
//! - Others (DeepSeek and the OpenAI-compatible routers): reads at the table's cached price, no
//!   write premium, 5 minutes.
//!
//! When the guard has prices (`pricing`, the table's or the host's), the read and write
//! multiples come from them; the host can override every figure with the config's `cache`.

use serde::{Deserialize, Serialize};

use crate::base::error::{Error, Result};

use super::models::{ModelInfo, Provider};
use super::pricing::Pricing;

/// Five minutes, in milliseconds: Anthropic's default cache lifetime, and the shortest of
/// OpenAI's in-memory retention.
pub const FIVE_MINUTES_MS: f64 = 300_000.0;

/// What the provider's prompt cache bills for this guard's model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachePrices {
    /// A token read from the cache, as a multiple of the plain input price.
    #[serde(serialize_with = "crate::base::round::ser_round")]
    pub read: f64,
    /// A token written to the cache (billed on the request that writes it), likewise.
    #[serde(serialize_with = "crate::base::round::ser_round")]
    pub write: f64,
    /// How long an entry lives after its last use, in milliseconds.
    pub ttl_ms: f64,
    /// Prefixes shorter than this are not cached.
    pub min_tokens: u32,
    /// Cached prefixes are served in steps of this many tokens (1: any length).
    pub step: u32,
}

/// `cache` in the guard's config: every field overrides the provider's figure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CacheConfig {
    pub read: Option<f64>,
    pub write: Option<f64>,
    pub ttl_ms: Option<f64>,
    pub min_tokens: Option<u32>,
}

impl CachePrices {
    /// The figures for `model` (priced by `pricing` when the guard has prices), overridden by
    /// the host's `config`.
    pub fn of(model: &ModelInfo, pricing: Option<&Pricing>, config: Option<&CacheConfig>) -> Result<CachePrices> {
        let name = model.model.to_ascii_lowercase();
        let mut c = match model.provider {
            Provider::Anthropic => CachePrices {
                read: anthropic_read(&name),
                write: 1.25,
                ttl_ms: FIVE_MINUTES_MS,
                min_tokens: if is_claude_5(&name) { 512 } else { 1_024 },
                step: 1,
            },
            Provider::Openai => {
                CachePrices { read: 0.5, write: 1.0, ttl_ms: FIVE_MINUTES_MS, min_tokens: 1_024, step: 128 }
            }
            Provider::Google => {
                CachePrices { read: 0.1, write: 1.0, ttl_ms: FIVE_MINUTES_MS, min_tokens: 2_048, step: 1 }
            }
            _ => CachePrices { read: 0.5, write: 1.0, ttl_ms: FIVE_MINUTES_MS, min_tokens: 1_024, step: 1 },
        };
        if let Some(p) = pricing.filter(|p| p.input > 0.0) {
            c.read = ratio(p.cached_input, p.input);
            c.write = p.cache_write.map_or(1.0, |w| ratio(w, p.input));
        }
        if let Some(o) = config {
            let check = |v: Option<f64>, what: &str| -> Result<Option<f64>> {
                match v {
                    Some(x) if !x.is_finite() || x < 0.0 => {
                        Err(Error::options(format!("cache.{what} must be a finite number >= 0, got {x}")))
                    }
                    other => Ok(other),
                }
            };
            c.read = check(o.read, "read")?.unwrap_or(c.read);
            c.write = check(o.write, "write")?.unwrap_or(c.write);
            c.ttl_ms = check(o.ttl_ms, "ttlMs")?.unwrap_or(c.ttl_ms);
            c.min_tokens = o.min_tokens.unwrap_or(c.min_tokens);
        }
        Ok(c)
    }

    /// The part of a prefix of `tokens` unchanged tokens that the cache serves.
    pub fn served(&self, tokens: u32) -> u32 {
        if tokens < self.min_tokens {
            return 0;
        }
        tokens / self.step.max(1) * self.step.max(1)
    }

    /// What re-billing `tokens` costs over reading them from the cache, in input-token
    /// equivalents: the price of an edit whose invalidated part is `tokens` long.
    pub fn rewrite_cost(&self, tokens: u32) -> f64 {
        f64::from(tokens) * (self.write - self.read).max(0.0)
    }
}

/// `price / input` without binary noise (0.3 / 3.0 is 0.1, not 0.1000…2).
fn ratio(price: f64, input: f64) -> f64 {
    (price / input * 1e9).round() / 1e9
}

fn is_claude_5(name: &str) -> bool {
    ["fable-5", "mythos-5", "opus-5", "sonnet-5", "haiku-5"].iter().any(|f| name.contains(f))
}

/// Anthropic's cache read multiple for a model name.
fn anthropic_read(name: &str) -> f64 {
    if name.contains("fable-5") || name.contains("mythos-5") {
        0.025
    } else if name.contains("opus-5-5") || name.contains("sonnet-5-5") {
        0.05
    } else {
        0.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::models::info;

    #[test]
    fn each_provider_has_its_figures_and_prices_win_over_the_defaults() {
        let gpt = CachePrices::of(&info("gpt-4o"), crate::provider::pricing::lookup("gpt-4o").as_ref(), None).unwrap();
        assert_eq!((gpt.read, gpt.write, gpt.step), (0.5, 1.0, 128));
        let claude = CachePrices::of(&info("claude-sonnet-4-5"), None, None).unwrap();
        assert_eq!((claude.read, claude.write, claude.min_tokens), (0.1, 1.25, 1_024));
        let fable = CachePrices::of(&info("claude-fable-5-1"), None, None).unwrap();
        assert_eq!((fable.read, fable.min_tokens), (0.025, 512));
        let over = CacheConfig { ttl_ms: Some(3_600_000.0), write: Some(2.0), ..Default::default() };
        let hour = CachePrices::of(&info("claude-sonnet-4-5"), None, Some(&over)).unwrap();
        assert_eq!((hour.write, hour.ttl_ms), (2.0, 3_600_000.0));
        assert!(CachePrices::of(&info("gpt-4o"), None, Some(&CacheConfig { read: Some(-1.0), ..Default::default() }))
            .is_err());
    }

    #[test]
    fn served_prefixes_follow_the_minimum_and_the_step() {
        let gpt = CachePrices::of(&info("gpt-4o"), None, None).unwrap();
        assert_eq!(gpt.served(1_000), 0);
        assert_eq!(gpt.served(1_300), 1_280);
        assert_eq!(gpt.rewrite_cost(1_000), 500.0);
    }
}
