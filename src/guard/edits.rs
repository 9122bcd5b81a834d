//! The guard's edit part: when a call may change what earlier calls sent, and what it knows of
//! the thinking blocks it sent (docs/edits.md).
//!
//! Every edit of what was sent before — a clearing step, a summary, an emergency trim — re-bills
//! everything after the first changed message as cache writes, and on Claude's preserved-thinking
//! models invalidates every thinking block after it. So a call edits only when the request would
//! not fit otherwise (over the usable limit: the edit threshold while the provider's cache is
//! warm) or when the cache is cold anyway (no call within its lifetime: the trigger is the
//! threshold then, as before edits were priced). Preserved-thinking models edit only when the
//! request would not fit: a cold cache does not make thinking blocks valid again.

use serde::{Deserialize, Serialize};

use crate::provider::cache::CachePrices;
use crate::sources::pass::Frontier;

use super::Guard;

/// `edits` in the guard's config: when the guard changes what it sent before.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditWhen {
    /// Only when the request would not fit, or the provider's cache is cold (the default).
    #[default]
    Needed,
    /// Whenever the request passes the trigger, or its tool outputs their total (the rule
    /// before edits were priced).
    Trigger,
}

pub struct Edits {
    pub when: EditWhen,
    /// What the provider's prompt cache bills (the provider's figures, the guard's prices, the
    /// host's `cache` overrides).
    pub cache: CachePrices,
    /// When the last request was sent (what `prepare` last returned), on the host's clock when it
    /// passes `now`, else the guard's.
    pub sent_at: Option<f64>,
    /// The time of the call running now (set at its start).
    pub call_at: f64,
    /// Where clearing's frontiers stood after the last pass (`None` before the first; see
    /// `RequestTokens::floor`).
    pub frontier: Option<Frontier>,
    /// Preserved thinking (`pipeline/thinking.rs`): what each call returned, by the history it
    /// was given (rolling hashes), the most recent [`PRODUCED_KEPT`] calls.
    pub produced: rustc_hash::FxHashMap<u64, u64>,
    produced_order: std::collections::VecDeque<u64>,
    /// Thinking blocks dropped once (by their identity): never sent again.
    pub dropped_thinking: rustc_hash::FxHashSet<u64>,
    /// The history of the call running now, as the thinking check reads it: each message's
    /// rolling hash, and where each assistant turn with thinking sits (by its blocks' identity).
    pub call_history: Option<(Vec<u64>, rustc_hash::FxHashMap<u64, usize>)>,
}

/// Calls whose model input the guard remembers for the thinking check: a turn older than that
/// many calls counts as produced by no call of this guard (kept only if nothing before it was
/// edited).
pub const PRODUCED_KEPT: usize = 4_096;

impl Edits {
    pub fn new(when: EditWhen, cache: CachePrices) -> Edits {
        Edits {
            when,
            cache,
            sent_at: None,
            call_at: 0.0,
            frontier: None,
            produced: Default::default(),
            produced_order: Default::default(),
            dropped_thinking: Default::default(),
            call_history: None,
        }
    }

    /// Remember that the call given the history `key` returned the model input `sent`.
    pub fn remember_produced(&mut self, key: u64, sent: u64) {
        if self.produced.insert(key, sent).is_none() {
            self.produced_order.push_back(key);
        }
        while self.produced_order.len() > PRODUCED_KEPT {
            if let Some(old) = self.produced_order.pop_front() {
                self.produced.remove(&old);
            }
        }
    }

    /// Whether the provider still holds the last request sent in its cache at the call running
    /// now: taken as warm unless the last request this guard sent is older than the cache's
    /// lifetime. A guard that sent nothing yet (a new one, after a reload) cannot know; it edits
    /// as the guard before it would have, only when the request would not fit.
    pub fn warm(&self) -> bool {
        self.sent_at.is_none_or(|t| self.call_at < t || self.call_at - t < self.cache.ttl_ms)
    }
}

impl Guard {
    /// The request size (model tokens) over which the call running now edits what was sent
    /// before: the trigger under `edits: 'trigger'` or while the provider's cache is cold (for
    /// models without preserved thinking), else the usable limit.
    pub fn edit_threshold(&self) -> u32 {
        if self.edits.when == EditWhen::Trigger || (!self.model.preserved_thinking && !self.edits.warm()) {
            self.budget.trigger_limit
        } else {
            self.budget.usable_limit
        }
    }

    /// The threshold every replayed clearing step uses (model tokens): the usable limit, or the
    /// trigger under `edits: 'trigger'` — a function of the config only, so a replay finds the
    /// same steps in every call and after a reload.
    pub fn replay_threshold(&self) -> u32 {
        match self.edits.when {
            EditWhen::Trigger => self.budget.trigger_limit,
            EditWhen::Needed => self.budget.usable_limit,
        }
    }
}
