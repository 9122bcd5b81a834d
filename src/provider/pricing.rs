//! Money: a per-model price table, the estimated cost of the next request, `economicBudget` in
//! dollars, and the cache-aware compaction decision.
//!
//! # Prices
//! USD per million tokens, written on [`PRICES_AS_OF`]. Every figure can be overridden per guard
//! (`pricing: { input, cachedInput, output, cacheWrite? }`). Sources:
//! - OpenAI: the API pricing page, <https://platform.openai.com/docs/pricing> (also mirrored at
//!   developers.openai.com/api/docs/pricing); cached input is 10 % of input on the GPT-5 family,
//!   25 % on GPT-4.1 / o3 / o4-mini, 50 % on GPT-4o.
//! - Anthropic: <https://platform.claude.com/docs/en/about-claude/pricing> ("Model pricing":
//!   base input, 5-minute cache writes = 1.25 × input, cache hits = 0.1 × input, output).
//! - Google: <https://ai.google.dev/gemini-api/docs/pricing> (prompts up to 200k tokens; the
//!   higher long-prompt tier of 2.5 Pro is not modelled, so long Gemini prompts are under-priced).
//! - DeepSeek: <https://api-docs.deepseek.com/quick_start/pricing> (cache hit / cache miss / output).
//!
//! # Cost of the next request
//! `input = uncached × (cacheWrite ?? input) + cached × cachedInput`, `output = reservedOutputTokens
//! × output`, all per token (the table's figure / 1e6). `cacheWrite` is set for Anthropic only:
//! the estimate assumes the host marks the conversation for caching (`cache_control` on the last
//! block), so the new part of the prefix is written to the cache. See [`cached_prefix`] for which
//! part is taken as cached.
//!
//! # Cache-aware compaction
//! See [`decide`].

use serde::{Deserialize, Serialize};

use crate::base::error::{Error, Result};

/// The date the table was written (and checked against the sources above).
pub const PRICES_AS_OF: &str = "2026-11-30";

/// OpenAI caches only prompts of at least this many tokens...
pub const OPENAI_CACHE_MIN: u32 = 1_024;
/// ...in increments of this many tokens.
pub const OPENAI_CACHE_STEP: u32 = 128;
/// Anthropic's smallest cacheable prefix (Sonnet and Opus; Haiku needs 2048, not modelled).
pub const ANTHROPIC_CACHE_MIN: u32 = 1_024;

/// Turns over which the cache-aware decision compares continuing with compacting.
pub const DECISION_HORIZON_TURNS: u32 = 10;
/// Growth of the conversation per turn when the guard has not seen two requests yet.
pub const DEFAULT_GROWTH_PER_TURN: u32 = 1_000;

/// Prices in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pricing {
    #[serde(serialize_with = "crate::base::round::ser_round")]
    pub input: f64,
    #[serde(serialize_with = "crate::base::round::ser_round")]
    pub cached_input: f64,
    #[serde(serialize_with = "crate::base::round::ser_round")]
    pub output: f64,
    /// Price of writing input to the cache (Anthropic: 1.25 × input); `None`: no write premium.
    #[serde(default, serialize_with = "crate::base::round::ser_round_opt")]
    pub cache_write: Option<f64>,
}

impl Pricing {
    /// Check an override: finite, non-negative figures.
    pub fn validate(&self) -> Result<()> {
        let all = [Some(self.input), Some(self.cached_input), Some(self.output), self.cache_write];
        if all.iter().flatten().any(|p| !p.is_finite() || *p < 0.0) {
            return Err(Error::options("pricing: every price must be a finite number >= 0 (USD per million tokens)"));
        }
        Ok(())
    }

    /// USD per uncached input token (the cache-write price where there is one).
    pub fn uncached_per_token(&self) -> f64 {
        self.cache_write.unwrap_or(self.input) / 1e6
    }

    pub fn cached_per_token(&self) -> f64 {
        self.cached_input / 1e6
    }

    pub fn output_per_token(&self) -> f64 {
        self.output / 1e6
    }
}

const fn p(input: f64, cached_input: f64, output: f64) -> Pricing {
    Pricing { input, cached_input, output, cache_write: None }
}

/// Anthropic: cache hits at 0.1 × input, 5-minute cache writes at 1.25 × input.
const fn a(input: f64, output: f64) -> Pricing {
    Pricing { input, cached_input: input * 0.1, output, cache_write: Some(input * 1.25) }
}

/// Longest model-name prefix wins (as in the model table).
pub static PRICES: &[(&str, Pricing)] = &[
    // OpenAI
    ("gpt-5", p(1.25, 0.125, 10.0)),
    ("gpt-5-mini", p(0.25, 0.025, 2.0)),
    ("gpt-5-nano", p(0.05, 0.005, 0.40)),
    ("gpt-5-chat", p(1.25, 0.125, 10.0)),
    ("gpt-4.1", p(2.0, 0.50, 8.0)),
    ("gpt-4.1-mini", p(0.40, 0.10, 1.60)),
    ("gpt-4.1-nano", p(0.10, 0.025, 0.40)),
    ("gpt-4o", p(2.50, 1.25, 10.0)),
    ("gpt-4o-mini", p(0.15, 0.075, 0.60)),
    ("o1", p(15.0, 7.50, 60.0)),
    ("o3", p(2.0, 0.50, 8.0)),
    ("o4-mini", p(1.10, 0.275, 4.40)),
    // Anthropic
    ("claude-opus-4-5", a(5.0, 25.0)),
    ("claude-opus-4", a(15.0, 75.0)),
    ("claude-sonnet-4", a(3.0, 15.0)),
    ("claude-3-7-sonnet", a(3.0, 15.0)),
    ("claude-3-5-sonnet", a(3.0, 15.0)),
    ("claude-haiku-4", a(1.0, 5.0)),
    ("claude-3-5-haiku", a(0.80, 4.0)),
    ("claude-3-haiku", Pricing { input: 0.25, cached_input: 0.03, output: 1.25, cache_write: Some(0.30) }),
    // Google (prompts up to 200k tokens; context-cache reads at 10 % of input)
    ("gemini-2.5-pro", p(1.25, 0.125, 10.0)),
    ("gemini-2.5-flash", p(0.30, 0.03, 2.50)),
    ("gemini-2.5-flash-lite", p(0.10, 0.01, 0.40)),
    // DeepSeek (V3.2 prices for both endpoints)
    ("deepseek-chat", p(0.28, 0.028, 0.42)),
    ("deepseek-reasoner", p(0.28, 0.028, 0.42)),
];

/// The table's price for a model name (router prefixes like `openai/` ignored).
pub fn lookup(model: &str) -> Option<Pricing> {
    let lower = model.trim().to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    PRICES
        .iter()
        .filter(|(prefix, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, price)| *price)
}

/// `economicBudget`: a token cap (a number) or a cost per request (`{ usd }`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EconomicBudget {
    Tokens(f64),
    Usd(UsdBudget),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UsdBudget {
    pub usd: f64,
}

/// Written by hand: it was `#[serde(untagged, expecting = "a number of tokens or { usd: number }")]`
/// over a `deny_unknown_fields` struct, which buffers the value through serde's `Content` (~7 KB
/// of wasm code for this one field). It accepts what that accepted: any number as a token cap;
/// `{ "usd": number }` with no other key, or a one-element array `[number]` (a struct also reads
/// from a sequence), as a dollar budget; anything else fails with the same message. (A JSON
/// object with a repeated `usd` key now takes the last one instead of failing; option objects
/// come from `JSON.stringify`, which never repeats a key.)
impl<'de> Deserialize<'de> for EconomicBudget {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let usd = match &v {
            serde_json::Value::Number(n) => {
                if let Some(t) = n.as_f64() {
                    return Ok(EconomicBudget::Tokens(t));
                }
                None
            }
            serde_json::Value::Object(m) if m.len() == 1 => m.get("usd"),
            serde_json::Value::Array(a) if a.len() == 1 => a.first(),
            _ => None,
        };
        match usd.and_then(serde_json::Value::as_f64) {
            Some(usd) => Ok(EconomicBudget::Usd(UsdBudget { usd })),
            None => Err(serde::de::Error::custom("a number of tokens or { usd: number }")),
        }
    }
}

impl EconomicBudget {
    /// The token cap. A dollar budget caps the **input** side of one request, priced as uncached
    /// input (the worst case: nothing cached): `floor(usd / (input / 1e6))`. Output is bounded by
    /// `reservedOutputTokens`, not by this cap.
    pub fn to_tokens(self, pricing: Option<&Pricing>) -> Result<f64> {
        match self {
            EconomicBudget::Tokens(t) => Ok(t),
            EconomicBudget::Usd(UsdBudget { usd }) => {
                if !usd.is_finite() || usd <= 0.0 {
                    return Err(Error::budget(format!("economicBudget.usd must be a positive number, got {usd}")));
                }
                let price = pricing.ok_or_else(|| {
                    Error::budget(
                        "economicBudget in USD needs a price: the model is not in the price table; give `pricing`",
                    )
                })?;
                if price.input <= 0.0 {
                    return Err(Error::budget("economicBudget in USD needs a positive input price"));
                }
                Ok((usd / (price.input / 1e6)).floor().min(f64::from(u32::MAX)))
            }
        }
    }
}

/// Estimated cost of the next request (metrics `cost`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CostEstimate {
    pub currency: Currency,
    pub input_tokens: u32,
    pub cached_input_tokens: u32,
    pub uncached_input_tokens: u32,
    pub output_tokens: u32,
    /// The dollar figures reach JS rounded to nine decimals (exact for prices per million tokens
    /// with up to three decimals): `0.0039475`, not `0.0039475000000000005`.
    #[serde(serialize_with = "crate::base::round::ser_round")]
    pub cached_input_usd: f64,
    #[serde(serialize_with = "crate::base::round::ser_round")]
    pub uncached_input_usd: f64,
    #[serde(serialize_with = "crate::base::round::ser_round")]
    pub output_usd: f64,
    #[serde(serialize_with = "crate::base::round::ser_round")]
    pub total_usd: f64,
    pub pricing: Pricing,
    /// Date of the built-in table, or `null` when the guard's `pricing` override was used.
    pub prices_as_of: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Currency {
    #[serde(rename = "USD")]
    Usd,
}

/// Cost of a request of `input` tokens of which `cached` are read from the cache, plus `output`.
pub fn estimate(pricing: &Pricing, input: u32, cached: u32, output: u32, builtin: bool) -> CostEstimate {
    let cached = cached.min(input);
    let uncached = input - cached;
    let cached_usd = f64::from(cached) * pricing.cached_per_token();
    let uncached_usd = f64::from(uncached) * pricing.uncached_per_token();
    let output_usd = f64::from(output) * pricing.output_per_token();
    CostEstimate {
        currency: Currency::Usd,
        input_tokens: input,
        cached_input_tokens: cached,
        uncached_input_tokens: uncached,
        output_tokens: output,
        cached_input_usd: cached_usd,
        uncached_input_usd: uncached_usd,
        output_usd,
        total_usd: cached_usd + uncached_usd + output_usd,
        pricing: *pricing,
        prices_as_of: builtin.then(|| PRICES_AS_OF.to_string()),
    }
}

/// Which provider rule the cached prefix follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheRule {
    /// Automatic prefix caching from 1024 tokens, in 128-token steps (OpenAI and others).
    Automatic,
    /// Explicit breakpoints (Anthropic), from 1024 tokens, no steps.
    Breakpoint,
}

/// The cached part of the next request.
///
/// Rule: the request is `[tool definitions, messages...]`; the prefix that is byte-identical to
/// the previous request **sent** (the last `observeUsage` or `prepare`) — tool definitions if
/// unchanged, then leading messages whose content keys match in order — is taken as cached, when
/// it reaches the provider's minimum (1024 tokens); OpenAI rounds it down to a multiple of 128.
/// `measure` alone never moves the reference point: a request is cached only once sent. Cache
/// lifetimes (5–10 minutes) are not modelled: the next request is assumed to follow in time.
pub fn cached_prefix(prefix_tokens: u32, rule: CacheRule) -> u32 {
    match rule {
        CacheRule::Automatic if prefix_tokens >= OPENAI_CACHE_MIN => {
            prefix_tokens / OPENAI_CACHE_STEP * OPENAI_CACHE_STEP
        }
        CacheRule::Breakpoint if prefix_tokens >= ANTHROPIC_CACHE_MIN => prefix_tokens,
        _ => 0,
    }
}

/// What the cache-aware decision needs to know (all in the model's tokens).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionInput {
    /// Size of the request as it stands (over the economic trigger).
    pub prefix_tokens: u32,
    /// Of which read from the provider's cache (see [`cached_prefix`]).
    pub cached_tokens: u32,
    /// Size of the request right after compacting (system + summary + retained + current turn).
    pub compacted_tokens: u32,
    /// Input of the summary call (the messages folded into the summary).
    pub summary_input_tokens: u32,
    /// Output of the summary call (its token cap).
    pub summary_output_tokens: u32,
    /// Tokens the conversation grows by per turn.
    pub growth_per_turn: u32,
    /// The hard cap (usable limit): a request never goes above it, compaction is forced there.
    pub hard_limit: u32,
    /// The physical trigger (window − reserve) × triggerRatio: over it, compaction is never delayed.
    pub physical_trigger: u32,
    pub horizon_turns: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    Continue,
    Compact,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionReason {
    /// The physical window requires compaction: never delayed.
    PhysicalWindow,
    /// The request is over the hard (usable) limit.
    OverLimit,
    /// Continuing on the cached prefix is cheaper over the horizon.
    CheaperToContinue,
    /// Compacting now (summary call + uncached new prefix) is cheaper or equal over the horizon.
    CheaperToCompact,
}

/// The decision and why (a trace-like record; `cacheDecision` on the `prepare` result).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheDecision {
    pub operation: &'static str,
    pub choice: Choice,
    pub reason: DecisionReason,
    /// Estimated input cost of continuing (and compacting later when the hard limit forces it).
    #[serde(serialize_with = "crate::base::round::ser_round")]
    pub continue_usd: f64,
    /// Estimated input cost of compacting now (summary call included).
    #[serde(serialize_with = "crate::base::round::ser_round")]
    pub compact_usd: f64,
    /// Turns of the horizon before continuing hits the hard limit (`horizonTurns` if never).
    pub turns_until_forced: u32,
    #[serde(flatten)]
    pub input: DecisionInput,
}

/// Cost of one request of `size` tokens of which `cached` come from the cache.
fn turn_cost(pricing: &Pricing, size: u32, cached: u32) -> f64 {
    let cached = cached.min(size);
    f64::from(cached) * pricing.cached_per_token() + f64::from(size - cached) * pricing.uncached_per_token()
}

/// Cost of the summary call: its input uncached at the plain input price, its output capped.
fn summary_cost(pricing: &Pricing, input: u32, output: u32) -> f64 {
    f64::from(input) * pricing.input / 1e6 + f64::from(output) * pricing.output_per_token()
}

/// Simulate `horizon` turns from a request of `size` tokens (`cached` of them cached), growing by
/// `growth` per turn; whenever a request would pass the hard limit, a compaction happens first
/// (summary call, then an uncached prefix of `compacted` tokens). Returns the cost and the turn
/// of the first forced compaction.
fn simulate(pricing: &Pricing, d: &DecisionInput, mut size: u32, mut cached: u32) -> (f64, u32) {
    let mut cost = 0.0;
    let mut first_forced = d.horizon_turns;
    for turn in 0..d.horizon_turns {
        if size > d.hard_limit {
            let folded = size.saturating_sub(d.compacted_tokens).saturating_add(d.summary_output_tokens);
            cost += summary_cost(pricing, folded, d.summary_output_tokens);
            size = d.compacted_tokens;
            cached = 0;
            first_forced = first_forced.min(turn);
        }
        cost += turn_cost(pricing, size, cached);
        cached = size;
        size = size.saturating_add(d.growth_per_turn);
    }
    (cost, first_forced)
}

/// Continue on the cached prefix, or compact now?
///
/// Only meaningful when the **economic** trigger is what the request passed. Over the physical
/// trigger (`(window − reserve) × triggerRatio`) or over the hard limit, the answer is always
/// `compact` (never delayed). Otherwise two policies are simulated over [`DECISION_HORIZON_TURNS`]
/// turns, each turn growing by `growthPerTurn` and reading the previous request from the cache:
/// - **continue**: this request with its cached prefix; compaction happens when the hard limit
///   forces it (then the summary call and an uncached compacted prefix);
/// - **compact**: the summary call now (input at the plain input price, output at its cap), then
///   the compacted prefix uncached, then cached growth.
///
/// Output tokens of the conversation's own answers are the same in both and left out. `continue`
/// is chosen only when strictly cheaper.
pub fn decide(pricing: &Pricing, d: &DecisionInput) -> CacheDecision {
    let (compact_usd, _) = {
        let now = summary_cost(pricing, d.summary_input_tokens, d.summary_output_tokens);
        let (rest, t) = simulate(pricing, d, d.compacted_tokens, 0);
        (now + rest, t)
    };
    let (continue_usd, turns_until_forced) = simulate(pricing, d, d.prefix_tokens, d.cached_tokens);
    let (choice, reason) = if d.prefix_tokens > d.physical_trigger {
        (Choice::Compact, DecisionReason::PhysicalWindow)
    } else if d.prefix_tokens > d.hard_limit {
        (Choice::Compact, DecisionReason::OverLimit)
    } else if continue_usd < compact_usd {
        (Choice::Continue, DecisionReason::CheaperToContinue)
    } else {
        (Choice::Compact, DecisionReason::CheaperToCompact)
    };
    CacheDecision {
        operation: "cache_decision",
        choice,
        reason,
        continue_usd,
        compact_usd,
        turns_until_forced,
        input: *d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derived deserializer `EconomicBudget` had before it was written by hand.
    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged, expecting = "a number of tokens or { usd: number }")]
    enum Derived {
        Tokens(f64),
        Usd(DerivedUsd),
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct DerivedUsd {
        usd: f64,
    }

    #[test]
    fn economic_budget_reads_what_the_derived_one_read() {
        let inputs = [
            "8000",
            "0",
            "-1",
            "1.5",
            "1e300",
            "18446744073709551615",
            "-9223372036854775808",
            r#"{"usd":0.05}"#,
            r#"{"usd":5}"#,
            r#"{"usd":-1}"#,
            "[0.5]",
            "[3]",
            "[]",
            "[1,2]",
            r#"["1"]"#,
            "{}",
            r#"{"usd":"1"}"#,
            r#"{"usd":null}"#,
            r#"{"usd":1,"eur":2}"#,
            r#"{"eur":2}"#,
            r#"{"USD":1}"#,
            r#""cheap""#,
            "true",
            "null",
            r#"[{"usd":1}]"#,
            r#"{"usd":[1]}"#,
            r#"{"usd":{"usd":1}}"#,
            "[1",
            r#"{"usd":1"#,
            "",
        ];
        for text in inputs {
            let ours = serde_json::from_str::<EconomicBudget>(text).map_err(|e| e.to_string());
            let derived = serde_json::from_str::<Derived>(text).map_err(|e| e.to_string());
            let ours = ours.map(|b| match b {
                EconomicBudget::Tokens(t) => Derived::Tokens(t),
                EconomicBudget::Usd(UsdBudget { usd }) => Derived::Usd(DerivedUsd { usd }),
            });
            assert_eq!(ours, derived, "{text}");
        }
    }

    #[test]
    fn lookup_longest_prefix() {
        assert_eq!(lookup("gpt-4o-mini-2024-07-18").unwrap().input, 0.15);
        assert_eq!(lookup("openai/gpt-4o").unwrap().input, 2.5);
        assert_eq!(lookup("claude-opus-4-5-20251101").unwrap().input, 5.0);
        assert_eq!(lookup("claude-opus-4-1").unwrap().input, 15.0);
        assert_eq!(lookup("claude-sonnet-4-5").unwrap().cache_write, Some(3.75));
        assert!(lookup("my-local-model").is_none());
    }

    #[test]
    fn cached_prefix_rules() {
        assert_eq!(cached_prefix(1_023, CacheRule::Automatic), 0);
        assert_eq!(cached_prefix(1_300, CacheRule::Automatic), 1_280);
        assert_eq!(cached_prefix(1_300, CacheRule::Breakpoint), 1_300);
        assert_eq!(cached_prefix(900, CacheRule::Breakpoint), 0);
    }
}
