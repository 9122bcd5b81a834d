//! `ContextGuard`'s core: the resolved model, budget and counting profile, and a per-message
//! count cache shared by every pass.

/// Summaries are made ahead of time once usage passes this share of the usable limit (the
/// trigger is at 0.8 by default), by default.
pub const DEFAULT_AHEAD_RATIO: f64 = 0.65;

pub mod breaker;
pub mod memory;
pub mod store;

use serde::{Deserialize, Serialize};

use crate::base::error::Result;
use crate::count::{self, Profile};
use crate::format::{Format, Request};
use crate::message::cache::{content_key, message_key, CountCache};
use crate::message::{Facts, Message, MessageCount, Role};
use crate::provider::budget::{Budget, BudgetConfig};
use crate::provider::calibration::{CalibrationState, CalibrationSummary, Observation, ReportedUsage};
use crate::provider::models::{self, CountKind, ModelInfo, Provider};
use crate::provider::pricing::{self, CacheRule, Pricing};
use crate::report::metrics::CountSource;
use crate::report::metrics::{CompactionRecord, ContextMetrics, CountedMessage, SourceBreakdown};
use crate::report::trace::Trace;
use crate::sources::{self, SourceOptions};
use crate::tokens::Encoding;

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

/// The tool definitions of a request: their content key and raw tokens (which depend on the
/// first system message for OpenAI).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolsFacts {
    pub key: u64,
    pub tokens: usize,
}

impl ToolsFacts {
    pub fn of(guard: &Guard, first_system: Option<&Message>, request: &Request) -> ToolsFacts {
        let system = first_system.map(std::slice::from_ref).unwrap_or(&[]);
        ToolsFacts {
            key: content_key(&request.tools, guard.salt),
            tokens: count::tool_definition_tokens(&guard.profile, system, &request.tools, &request.tool_choice),
        }
    }
}

/// The whole-request count with the per-message breakdown.
#[derive(Debug, Clone)]
pub struct Counted {
    pub per_message: Vec<MessageCount>,
    pub tool_definitions: u32,
    pub priming: u32,
    pub total: u32,
}

pub struct Guard {
    pub model: ModelInfo,
    pub budget: Budget,
    pub format: Format,
    profile: Profile,
    salt: u64,
    cache: CountCache<MessageCount>,
    pub sources: SourceOptions,
    pub last_compaction: Option<CompactionRecord>,
    /// Set after an ineffective compaction: the next call goes to layer 3 instead (anti-thrash).
    pub skip_next_compaction: bool,
    pub checkpoint_key: Option<String>,
    /// Calibration from reported usage (all models; this guard updates its own).
    pub calibration: CalibrationState,
    /// Prices of this guard's model (the table's or the config's), and whether from the table.
    pub pricing: Option<(Pricing, bool)>,
    /// The last request sent (`observeUsage` or `prepare`): the cache reference point.
    sent: Option<Sent>,
    pub strategy: Strategy,
    /// Messages already handed over, by id (the binding's fast path; see `store.rs`).
    pub store: store::MessageStore,
    /// Layer 1's per-output work, remembered by content (see `guards/memo.rs`).
    remembered: sources::remembered::Remembered,
    /// This guard's number, for the facts kept on messages (`Message::memo`).
    id: u64,
    /// The summaries this guard made or restored, and the one made ahead of time.
    pub memory: memory::Memory,
    /// The summarizer's circuit breaker.
    pub breaker: breaker::Breaker,
    /// `ahead` and `aheadRatio` of the config.
    pub ahead: bool,
    pub ahead_ratio: f64,
    pub recent_tail_tokens: Option<u32>,
    /// The outputs cleared (`true`) or compacted by age (`false`) in the last layer-1 pass, by
    /// content key: a pass that ages another one took a step (`clearing_step`).
    aged: rustc_hash::FxHashSet<(u64, bool)>,
    /// The top-level call running now (`Guard::scoped`): facts kept on messages during it are
    /// valid until it ends.
    scope: Option<u64>,
    scopes: u64,
}

/// Guards created so far (each gets its own number).
static GUARDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Content keys of the last request sent, for the cached-prefix estimate.
#[derive(Debug, Clone)]
struct Sent {
    tools: u64,
    messages: Vec<u64>,
    total: u32,
    /// Growth between the last two requests sent.
    growth: Option<u32>,
}

/// What `guard_sources` returns: the model-visible request, its metrics and the traces.
#[derive(Debug, Clone)]
pub struct SourcesOutcome {
    pub request: Request,
    pub metrics: ContextMetrics,
    pub traces: Vec<Trace>,
    /// What clearing by age did (see `sources::clearing`).
    pub cleared: sources::pass::Cleared,
}

impl Guard {
    pub fn new(config: &GuardConfig) -> Result<Guard> {
        let model = resolve_model(config.model.as_deref(), config.encoding);
        model.encoding.require()?;
        if let Some(p) = &config.pricing {
            p.validate()?;
        }
        let pricing = match config.pricing {
            Some(p) => Some((p, false)),
            None => pricing::lookup(&model.model).map(|p| (p, true)),
        };
        let economic_budget = match config.economic_budget {
            Some(e) => Some(e.to_tokens(pricing.as_ref().map(|(p, _)| p))?),
            None => None,
        };
        let calibration = config.calibration.clone().unwrap_or_default();
        calibration.validate()?;
        let budget = Budget::resolve(
            &BudgetConfig {
                context_window: config.context_window,
                max_output_tokens: config.max_output_tokens,
                reserved_output_tokens: config.reserved_output_tokens,
                economic_budget,
                trigger_ratio: config.trigger_ratio,
                target_ratio: config.target_ratio,
            },
            &model,
        )?;
        let profile = models::profile(&model);
        let salt = content_key(&format!("{:?}", profile), 0);
        // Summaries start ahead of time below the trigger, or they are never ahead of it: a
        // given ratio must be under `triggerRatio`; the default stays under a low trigger too.
        let trigger = budget.trigger_ratio;
        let ahead_ratio = config.ahead_ratio.unwrap_or(DEFAULT_AHEAD_RATIO.min(trigger * 0.8));
        if !(ahead_ratio > 0.0 && ahead_ratio < trigger) {
            return Err(crate::base::error::Error::options(format!(
                "aheadRatio must be above 0 and below triggerRatio ({trigger}), got {ahead_ratio}"
            )));
        }
        Ok(Guard {
            format: config.format.unwrap_or(model.format),
            model,
            budget,
            profile,
            salt,
            cache: CountCache::default(),
            sources: SourceOptions {
                tool_output_limit: config.tool_output_limit,
                tool_output_limits: config.tool_output_limits.clone(),
                tool_output_total: config.tool_output_total,
                attachment_budget: config.attachment_budget,
                retrieval_tool: config.retrieval_tool.clone(),
                clear_tool_outputs: config.clear_tool_outputs.clone(),
                emergency: false,
            },
            last_compaction: None,
            skip_next_compaction: false,
            checkpoint_key: config.checkpoint_key.clone().filter(|k| !k.is_empty()),
            calibration,
            pricing,
            sent: None,
            strategy: config.strategy.unwrap_or_default(),
            store: Default::default(),
            remembered: Default::default(),
            id: GUARDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            memory: Default::default(),
            breaker: breaker::Breaker::new(config.breaker.as_ref())?,
            ahead: config.ahead.unwrap_or(false),
            ahead_ratio,
            recent_tail_tokens: config.recent_tail_tokens,
            aged: Default::default(),
            scope: None,
            scopes: 0,
        })
    }

    /// The calibration factor applied to this guard's counts (`estimate` models with enough
    /// observations; `None` otherwise).
    pub fn correction(&self) -> Option<f64> {
        if self.model.kind != CountKind::Estimate {
            return None;
        }
        self.calibration.models.get(&self.model.model).and_then(|m| m.correction())
    }

    /// Count a request, reusing cached per-message counts; the calibration applied.
    pub fn count(&mut self, request: &Request) -> Counted {
        let raw = self.count_raw(request);
        match self.correction() {
            Some(c) => calibrate(raw, c),
            None => raw,
        }
    }

    /// Count a request without the calibration (the table's estimate).
    pub fn count_raw(&mut self, request: &Request) -> Counted {
        self.cache.begin_pass();
        let profile = &self.profile;
        let salt = self.salt;
        let cache = &mut self.cache;
        let per_message = request
            .messages
            .iter()
            .map(|m| facts_of(m, self.id, self.scope, profile, salt, self.checkpoint_key.as_deref(), cache).raw)
            .collect();
        let rc =
            count::count_request_from(profile, &request.messages, per_message, &request.tools, &request.tool_choice);
        self.cache.end_pass();
        Counted {
            tool_definitions: to_u32(rc.tool_definitions),
            priming: to_u32(rc.priming),
            total: to_u32(rc.total),
            per_message: rc.per_message,
        }
    }

    pub fn measure(&mut self, request: &Request) -> ContextMetrics {
        self.cache.begin_pass();
        let facts: Vec<Facts> = request.messages.iter().map(|m| self.facts(m)).collect();
        self.cache.end_pass();
        let first_system = request.messages.iter().find(|m| m.role == Role::System);
        let tools = ToolsFacts::of(self, first_system, request);
        self.measure_facts(&facts, &tools)
    }

    /// What `measure` needs of one message, computed once per content: its content key, raw
    /// count (through the count cache), role and markers. Within a top-level call (see
    /// [`Guard::scoped`]) they are kept on the message, so the call's later passes (layer 3's
    /// count, the final measure, `note_sent`) do not hash it again.
    pub fn facts(&mut self, m: &Message) -> Facts {
        facts_of(m, self.id, self.scope, &self.profile, self.salt, self.checkpoint_key.as_deref(), &mut self.cache)
    }

    /// Keep `m`'s facts on it for as long as it is unchanged (messages only ctxguard holds: the
    /// store's, layer 1's remembered outputs).
    pub(crate) fn stamp(&mut self, m: &Message) -> Facts {
        // Outside any scope, so that the facts are not kept for this call only first.
        let f = facts_of(m, self.id, None, &self.profile, self.salt, self.checkpoint_key.as_deref(), &mut self.cache);
        m.facts.set(self.id, 0, f);
        f
    }

    /// Run `f` as one top-level call: facts kept on messages during it stay valid until it
    /// ends (a nested call runs in the caller's scope). Between calls the host may change
    /// messages it owns, so nothing kept in a scope is trusted outside it.
    pub fn scoped<T>(&mut self, f: impl FnOnce(&mut Guard) -> T) -> T {
        if self.scope.is_some() {
            return f(self);
        }
        self.scopes += 1;
        self.scope = Some(self.scopes);
        let out = f(self);
        self.scope = None;
        out
    }

    /// Start a pass of the count cache (entries the pass uses survive its eviction).
    pub fn begin_count_pass(&mut self) {
        self.cache.begin_pass();
    }

    /// End the pass: entries it did not use go once the cache is more than twice its size.
    pub fn end_count_pass(&mut self) {
        self.cache.end_pass();
    }

    /// Use the count of a message known by its facts in the current pass (keeps it cached).
    pub fn keep_counted(&mut self, f: &Facts) {
        self.cache.get_or_insert_with(f.key, || f.raw);
    }

    /// The metrics of a request given its messages' facts and its tool definitions.
    pub fn measure_facts(&mut self, facts: &[Facts], tools: &ToolsFacts) -> ContextMetrics {
        let raw_total = facts
            .iter()
            .fold(0usize, |a, f| a.saturating_add(f.raw.total))
            .saturating_add(tools.tokens)
            .saturating_add(self.profile.framing.reply_priming);
        let raw = Counted {
            per_message: facts.iter().map(|f| f.raw).collect(),
            tool_definitions: to_u32(tools.tokens),
            priming: to_u32(self.profile.framing.reply_priming),
            total: to_u32(raw_total),
        };
        let counted = match self.correction() {
            Some(c) => calibrate(raw, c),
            None => raw,
        };
        let cached_prefix = self.prefix_of(tools.key, facts.iter().map(|f| f.key), &counted);
        let mut breakdown = SourceBreakdown {
            tool_definitions: counted.tool_definitions,
            framing: counted.priming,
            ..Default::default()
        };
        for (f, c) in facts.iter().zip(&counted.per_message) {
            breakdown.add(&CountedMessage::of(f, c));
        }
        let compacted = facts.iter().any(|f| f.compacted);
        let mut metrics = ContextMetrics::new(
            &self.model.model,
            self.model.encoding,
            self.model.kind,
            &self.budget,
            breakdown,
            facts.len(),
            compacted,
            self.last_compaction.clone(),
        );
        if self.correction().is_some() {
            metrics.count_source = CountSource::Calibrated;
        }
        metrics.memory = self.memory.metrics();
        metrics.breaker = self.breaker.metrics();
        metrics.clearing = self.clearing_settings();
        metrics.calibration = self.calibration_summary();
        metrics.cost = self.pricing.map(|(p, builtin)| {
            let rule = if self.model.provider == crate::provider::models::Provider::Anthropic {
                CacheRule::Breakpoint
            } else {
                CacheRule::Automatic
            };
            let cached = pricing::cached_prefix(cached_prefix, rule);
            pricing::estimate(&p, metrics.used_tokens, cached, self.budget.reserved_output_tokens, builtin)
        });
        metrics
    }

    /// This model's calibration, derived (`None` before the first observation).
    pub fn calibration_summary(&self) -> Option<CalibrationSummary> {
        self.calibration.models.get(&self.model.model).map(|m| m.summary(&self.model.model, self.model.kind))
    }

    /// Replace the calibration state (validated first).
    pub fn set_calibration(&mut self, state: CalibrationState) -> Result<()> {
        state.validate()?;
        self.calibration = state;
        Ok(())
    }

    /// `observeUsage`: learn from what the provider reported for `request`, and take `request`
    /// as the last one sent (the cache reference point).
    pub fn observe_usage(&mut self, request: &Request, usage: &ReportedUsage) -> Result<Observation> {
        let (reported, cached) = usage.input()?;
        let predicted = self.count(request).total;
        let estimated = self.count_raw(request).total;
        let entry = self.calibration.models.entry(self.model.model.clone()).or_default();
        let obs = entry.observe(reported, cached, estimated, predicted);
        self.note_sent(request, predicted);
        Ok(obs)
    }

    /// `observeOverflow`: learn from a provider's overflow error about `request` (see
    /// `calibration::overflow`). The request failed, so it is not taken as sent.
    pub fn observe_overflow(
        &mut self,
        request: &Request,
        error: &crate::provider::overflow::Classification,
    ) -> crate::provider::calibration_overflow::OverflowObservation {
        let (predicted, estimated) = (self.count(request).total, self.count_raw(request).total);
        let mut out = crate::provider::calibration_overflow::observe_overflow(
            &mut self.calibration,
            &self.model,
            &self.budget,
            error,
            predicted,
            estimated,
        );
        if out.outcome == crate::provider::calibration_overflow::OverflowOutcome::Learned {
            out.predicted_after = Some(self.count(request).total);
        }
        out.calibration = self.calibration_summary();
        out
    }

    /// Take `request` (of `total` tokens) as the last request sent.
    pub fn note_sent(&mut self, request: &Request, total: u32) {
        let growth = self.sent.as_ref().and_then(|s| total.checked_sub(s.total)).filter(|g| *g > 0);
        let growth = growth.or(self.sent.as_ref().and_then(|s| s.growth));
        self.sent = Some(Sent {
            tools: content_key(&request.tools, self.salt),
            messages: request.messages.iter().map(|m| self.facts(m).key).collect(),
            total,
            growth,
        });
    }

    /// Growth per turn between the last two requests sent (`None` before two).
    pub fn growth_per_turn(&self) -> Option<u32> {
        self.sent.as_ref().and_then(|s| s.growth)
    }

    /// Tokens of the prefix of `request` unchanged since the last request sent: the tool
    /// definitions (when unchanged) and the leading messages with the same content keys.
    pub fn prefix_tokens(&mut self, request: &Request, counted: &Counted) -> u32 {
        let keys: Vec<u64> = request.messages.iter().map(|m| self.facts(m).key).collect();
        self.prefix_of(content_key(&request.tools, self.salt), keys.into_iter(), counted)
    }

    /// [`Guard::prefix_tokens`] from the tools' and the messages' content keys.
    fn prefix_of(&self, tools_key: u64, keys: impl Iterator<Item = u64>, counted: &Counted) -> u32 {
        let Some(sent) = &self.sent else { return 0 };
        if tools_key != sent.tools {
            return 0;
        }
        let mut total = counted.tool_definitions;
        for ((k, c), s) in keys.zip(&counted.per_message).zip(&sent.messages) {
            if k != *s {
                break;
            }
            total = total.saturating_add(to_u32(c.total));
        }
        total
    }

    /// Layer 1 over a copy of the request: tool-output compaction and attachment previews.
    pub fn guard_sources(&mut self, request: &Request, emergency: bool, now: &dyn Fn() -> f64) -> SourcesOutcome {
        self.scoped(|g| g.guard_sources_in(request, emergency, now))
    }

    fn guard_sources_in(&mut self, request: &Request, emergency: bool, now: &dyn Fn() -> f64) -> SourcesOutcome {
        let t0 = now();
        let mut opts = SourceOptions { emergency, ..self.sources.clone() };
        // The emergency pass tightens the limits of what layer 1 already did; the forms by age
        // it chose stay as they are.
        let sizes = if emergency {
            opts.clear_tool_outputs = Some(sources::pass::ClearSetting::Switch(false));
            None
        } else {
            Some(self.request_tokens(request))
        };
        let mut memo = std::mem::take(&mut self.remembered);
        let (enc, usable, factor) = (self.model.encoding, self.budget.usable_limit, self.model.estimate_factor);
        let (messages, mut traces, cleared) =
            sources::guard_sources(&request.messages, enc, usable, factor, &opts, sizes.as_ref(), &mut memo, self, now);
        self.remembered = memo;
        if !emergency {
            traces.extend(self.clearing_step(&request.messages, &messages, &cleared, now() - t0));
        }
        // Traces speak the model's tokens, like the metrics (raw counts times the factor).
        let factor = self.model.estimate_factor;
        let traces = if factor > 1.0 {
            traces
                .into_iter()
                .map(|mut t| {
                    t.before_tokens = crate::base::round::count_scale(t.before_tokens as usize, factor);
                    t.after_tokens = crate::base::round::count_scale(t.after_tokens as usize, factor);
                    t.tokens_saved = t.before_tokens.saturating_sub(t.after_tokens);
                    t
                })
                .collect()
        } else {
            traces
        };
        let out = Request {
            messages,
            tools: request.tools.clone(),
            tool_choice: request.tool_choice.clone(),
            prepended_system: request.prepended_system,
        };
        let mut metrics = self.measure(&out);
        metrics.clearing = self.clearing_summary(&cleared);
        SourcesOutcome { request: out, metrics, traces, cleared }
    }

    /// What the clearing plan needs of the request: each message's tokens (before layer 1), the
    /// tokens outside the messages, and the trigger, in tokens of the counting encoding.
    fn request_tokens(&mut self, request: &Request) -> sources::pass::RequestTokens {
        let per_message = request.messages.iter().map(|m| self.facts(m).raw.total).collect();
        let first_system = request.messages.iter().find(|m| m.role == Role::System);
        let tools = ToolsFacts::of(self, first_system, request);
        sources::pass::RequestTokens {
            per_message,
            base: tools.tokens + self.profile.framing.reply_priming,
            trigger: self.raw_budget(self.budget.trigger_limit as usize),
        }
    }

    /// The clearing summary of the metrics, in the model's tokens.
    pub fn clearing_summary(&self, c: &sources::pass::Cleared) -> crate::report::metrics::Clearing {
        crate::report::metrics::Clearing {
            cleared: crate::report::trace::u32_of(c.cleared.len()),
            compacted: crate::report::trace::u32_of(c.compacted.len()),
            saved_tokens: crate::base::round::count_scale(c.saved, self.model.estimate_factor),
            ..self.clearing_settings()
        }
    }

    /// The protected budget and the minimum step of clearing by age in force for this guard, in
    /// the model's tokens (zeros when clearing is off): the defaults resolved, so a UI can show
    /// them.
    fn clearing_settings(&self) -> crate::report::metrics::Clearing {
        let l = self.source_limits();
        crate::report::metrics::Clearing {
            protect_tokens: l.protect_tokens,
            clear_at_least: l.clear_at_least,
            ..Default::default()
        }
    }

    /// The source guards' limits in force for this guard, in the model's tokens, the defaults
    /// resolved (`guard.sourceLimits`).
    pub fn source_limits(&self) -> sources::pass::SourceLimits {
        sources::pass::SourceLimits::of(&self.sources, self.budget.usable_limit)
    }

    /// The clearing state a layer-1 pass leaves (a pass that is to be done again restores it).
    pub fn aged_snapshot(&self) -> rustc_hash::FxHashSet<(u64, bool)> {
        self.aged.clone()
    }

    pub fn restore_aged(&mut self, aged: rustc_hash::FxHashSet<(u64, bool)>) {
        self.aged = aged;
    }

    /// A `tool_output_clear` trace when this pass cleared or compacted by age an output the
    /// previous pass had kept (a step): how many, and the tokens of the model input from the
    /// first message it changed to the end (the part of the prompt a provider's cache can no
    /// longer serve). The outputs are known by their content keys across passes.
    fn clearing_step(
        &mut self,
        input: &[Message],
        output: &[Message],
        c: &sources::pass::Cleared,
        duration_ms: f64,
    ) -> Option<Trace> {
        let mut now_aged = rustc_hash::FxHashSet::default();
        let mut first_new: Option<usize> = None;
        let mut newly_cleared = 0usize;
        let marked = c.cleared.iter().map(|&i| (i, true)).chain(c.compacted.iter().map(|&i| (i, false)));
        for (i, cleared) in marked {
            let Some(m) = input.get(i) else { continue };
            let k = self.facts(m).key;
            now_aged.insert((k, cleared));
            if !self.aged.contains(&(k, cleared)) {
                first_new = Some(first_new.map_or(i, |f| f.min(i)));
                newly_cleared += usize::from(cleared);
            }
        }
        self.aged = now_aged;
        let first = first_new?;
        let invalidated: usize = output.get(first..).unwrap_or(&[]).iter().map(|m| self.facts(m).raw.total).sum();
        // Before and after: the tokens of the outputs aged (cleared or compacted by age).
        let aged: usize =
            c.cleared.iter().chain(&c.compacted).filter_map(|&i| output.get(i)).map(|m| self.facts(m).raw.total).sum();
        let scale = |n: usize| crate::base::round::count_scale(n, self.model.estimate_factor) as usize;
        let mut t = Trace::new(
            crate::report::trace::Operation::ToolOutputClear,
            crate::report::trace::Status::Applied,
            duration_ms,
            scale(aged + c.saved),
            scale(aged),
        );
        t.messages_cleared = Some(crate::report::trace::u32_of(newly_cleared));
        t.tokens_saved = crate::base::round::count_scale(c.saved, self.model.estimate_factor);
        t.prefix_invalidated_tokens = Some(crate::base::round::count_scale(invalidated, self.model.estimate_factor));
        Some(t)
    }

    pub fn cache_stats(&self) -> (usize, u64, u64) {
        (self.cache.len(), self.cache.hits, self.cache.misses)
    }
}

/// Layer 1 remembers its results for the messages whose facts are kept on them for good.
impl sources::remembered::Known for Guard {
    fn key(&self, m: &Message) -> Option<u64> {
        m.facts.get(self.id, None).map(|f| f.key)
    }

    fn stamp(&mut self, m: &Message) {
        Guard::stamp(self, m);
    }
}

/// [`Guard::facts`] on the guard's parts (so that a pass can hold the count cache while the
/// profile is borrowed).
fn facts_of(
    m: &Message,
    guard: u64,
    scope: Option<u64>,
    profile: &Profile,
    salt: u64,
    checkpoint_key: Option<&str>,
    cache: &mut CountCache<MessageCount>,
) -> Facts {
    if let Some(f) = m.facts.get(guard, scope) {
        debug_assert_eq!(f.key, message_key(m, salt), "a message changed without `touch`");
        cache.get_or_insert_with(f.key, || f.raw);
        return f;
    }
    let key = message_key(m, salt);
    let raw = cache.get_or_insert_with(key, || count::count_message(profile, m));
    let summary_block = m.role == Role::System && crate::message::checkpoint::is_checkpoint_summary(m, checkpoint_key);
    let f = Facts {
        key,
        raw,
        role: m.role,
        is_summary: m.role == Role::System && (m.markers.summary_compacted || summary_block),
        compacted: m.markers.summary_compacted
            || summary_block
            || m.markers.compacted_tool_output
            || m.markers.checkpoint_retained
            || (matches!(m.role, Role::Tool | Role::User) && carries_guard_marker(&m.content)),
    };
    if let Some(scope) = scope {
        m.facts.set(guard, scope, f);
    }
    f
}

/// Whether a message's text carries a source-guard marker (compacted output or preview).
fn carries_guard_marker(content: &crate::message::Content) -> bool {
    let has = |t: &str| {
        crate::base::scan::contains_any(
            t,
            &[sources::tool_output::MARKER, sources::attachment::MARKER, sources::stub::CLEARED_MARKER],
        )
    };
    match content {
        crate::message::Content::Text(t) => has(t),
        crate::message::Content::Parts(parts) => parts.iter().any(|p| match p {
            crate::message::Part::Text { text, .. } => has(text),
            crate::message::Part::File { text: Some(t), .. } => has(t),
            _ => false,
        }),
    }
}

/// Scale every bucket by the calibration factor (rounded to nearest; totals re-summed).
fn calibrate(raw: Counted, c: f64) -> Counted {
    let s = |n: usize| (n as f64 * c).round() as usize;
    let per_message: Vec<MessageCount> = raw
        .per_message
        .iter()
        .map(|m| {
            let (text, attachments, images, tool_calls, framing) =
                (s(m.text), s(m.attachments), s(m.images), s(m.tool_calls), s(m.framing));
            MessageCount {
                total: text + attachments + images + tool_calls + framing,
                text,
                attachments,
                images,
                tool_calls,
                framing,
            }
        })
        .collect();
    let tool_definitions = to_u32(s(raw.tool_definitions as usize));
    let priming = to_u32(s(raw.priming as usize));
    let body = per_message.iter().fold(0u32, |a, m| a.saturating_add(to_u32(m.total)));
    Counted {
        per_message,
        tool_definitions,
        priming,
        total: body.saturating_add(tool_definitions).saturating_add(priming),
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
