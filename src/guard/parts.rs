//! `Guard`, ContextGuard's core: the model, budget and format it resolved, and its owned parts —
//! counting (`counter.rs`), what was reported, priced and sent (`ledger.rs`), layer 1's state
//! (`sources.rs`), the remembered summaries (`memory.rs`), the compaction policy (`policy.rs`),
//! the summarizer's breaker (`breaker.rs`) and the binding's message store (`store.rs`). Each
//! part has its own `impl` in its own file; what needs several parts is an `impl Guard` in the
//! file of the part it is about. The pipeline (`crate::pipeline`) is functions over a guard.

use crate::base::error::Result;
use crate::format::Format;
use crate::provider::budget::{Budget, BudgetConfig};
use crate::provider::models::{self, ModelInfo};
use crate::provider::pricing;
use crate::sources::SourceOptions;

use super::breaker::Breaker;
use super::config::{resolve_model, GuardConfig};
use super::counter::Counter;
use super::edits::Edits;
use super::ledger::Ledger;
use super::memory::Memory;
use super::policy::Policy;
use super::sources::Sources;
use super::store::MessageStore;

pub struct Guard {
    pub model: ModelInfo,
    pub budget: Budget,
    pub format: Format,
    pub counter: Counter,
    pub ledger: Ledger,
    pub sources: Sources,
    /// The summaries this guard made or restored, the one made ahead of time, the last
    /// compaction.
    pub memory: Memory,
    pub policy: Policy,
    /// The summarizer's circuit breaker.
    pub breaker: Breaker,
    /// Messages already handed over, by id (the binding's fast path; see `store.rs`).
    pub store: MessageStore,
    /// When the guard edits what it sent before, and what it knows of what it sent.
    pub edits: Edits,
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
        let policy = Policy::new(config, budget.trigger_ratio)?;
        let cache =
            crate::provider::cache::CachePrices::of(&model, pricing.as_ref().map(|(p, _)| p), config.cache.as_ref())?;
        let checkpoint_key = config.checkpoint_key.clone().filter(|k| !k.is_empty());
        // Steps as deep as they can be wherever the guard edits only when needed: each step
        // re-bills the cache from the first output it changes, so it should free as much room as
        // the protected window allows (docs/edits.md).
        let edits = config.edits.unwrap_or_default();
        let deep = edits == super::edits::EditWhen::Needed;
        Ok(Guard {
            format: config.format.unwrap_or(model.format),
            counter: Counter::new(&model, models::profile(&model), checkpoint_key),
            model,
            budget,
            ledger: Ledger::new(calibration, pricing),
            sources: Sources::new(SourceOptions {
                tool_output_limit: config.tool_output_limit,
                tool_output_limits: config.tool_output_limits.clone(),
                tool_output_total: config.tool_output_total,
                attachment_budget: config.attachment_budget,
                retrieval_tool: config.retrieval_tool.clone(),
                clear_tool_outputs: config.clear_tool_outputs.clone(),
                emergency: false,
                deep,
            }),
            memory: Memory::default(),
            policy,
            breaker: Breaker::new(config.breaker.as_ref())?,
            store: MessageStore::default(),
            edits: Edits::new(edits, cache),
        })
    }

    /// The host's checkpoint key (summaries are sealed under it).
    pub fn checkpoint_key(&self) -> Option<&str> {
        self.counter.checkpoint_key.as_deref()
    }

    /// Run `f` as one top-level call: facts kept on messages during it stay valid until it
    /// ends (a nested call runs in the caller's scope). Between calls the host may change
    /// messages it owns, so nothing kept in a scope is trusted outside it.
    pub fn scoped<T>(&mut self, f: impl FnOnce(&mut Guard) -> T) -> T {
        if self.counter.scope.is_some() {
            return f(self);
        }
        self.counter.scopes += 1;
        self.counter.scope = Some(self.counter.scopes);
        let out = f(self);
        self.counter.scope = None;
        out
    }
}
