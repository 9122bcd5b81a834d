//! Counting and measuring a request with everything the guard knows: the counter's raw counts,
//! the ledger's calibration and prices, and the state of the other parts for the metrics.

use crate::format::Request;
use crate::message::{compaction_start, Facts, Message, Role};
use crate::provider::models::CountKind;
use crate::provider::pricing::{self, CacheRule};
use crate::report::metrics::{ContextMetrics, CountSource, CountedMessage, SourceBreakdown};

use super::counter::{calibrate, to_u32, Counted, ToolsFacts};
use super::Guard;

impl Guard {
    /// Count a request, reusing cached per-message counts; the calibration applied.
    pub fn count(&mut self, request: &Request) -> Counted {
        let raw = self.counter.count_raw(request);
        match self.correction() {
            Some(c) => calibrate(raw, c),
            None => raw,
        }
    }

    /// Count a request without the calibration (the table's estimate).
    pub fn count_raw(&mut self, request: &Request) -> Counted {
        self.counter.count_raw(request)
    }

    /// Tokens of a text for this guard's model (the estimate factor applied).
    pub fn count_text(&self, text: &str) -> usize {
        self.counter.count_text(text)
    }

    /// A budget in the model's tokens, in the counting encoding's tokens.
    pub fn raw_budget(&self, model_tokens: usize) -> usize {
        self.counter.raw_budget(model_tokens)
    }

    /// The facts of one message (see [`Counter::facts`](super::counter::Counter::facts)).
    pub fn facts(&mut self, m: &Message) -> Facts {
        self.counter.facts(m)
    }

    pub fn measure(&mut self, request: &Request) -> ContextMetrics {
        self.counter.begin_pass();
        let facts: Vec<Facts> = request.messages.iter().map(|m| self.counter.facts(m)).collect();
        self.counter.end_pass();
        let tools = self.counter.tools(request);
        self.measure_facts(&facts, &tools)
    }

    /// The metrics of a request given its messages' facts and its tool definitions: of what the
    /// provider reads, which starts at the latest provider compaction (`pipeline/artifacts.rs`;
    /// `prepare` sends no more).
    pub fn measure_facts(&mut self, facts: &[Facts], tools: &ToolsFacts) -> ContextMetrics {
        let read: Vec<Facts>;
        let facts = match compaction_start(facts, |f| f.role, |f| f.provider_compaction) {
            Some(at) => {
                let (before, after) = facts.split_at(at);
                read = before.iter().filter(|f| f.role == Role::System).chain(after).copied().collect();
                &read
            }
            None => facts,
        };
        let priming = self.counter.priming_of(facts);
        let mut per_message: Vec<_> = facts.iter().map(|f| f.raw).collect();
        crate::count::join_system(&self.counter.profile, facts.iter().map(|f| f.role), &mut per_message);
        let raw_total = per_message
            .iter()
            .fold(0usize, |a, c| a.saturating_add(c.total))
            .saturating_add(tools.tokens)
            .saturating_add(priming);
        let raw = Counted {
            per_message,
            tool_definitions: to_u32(tools.tokens),
            priming: to_u32(priming),
            total: to_u32(raw_total),
        };
        let counted = match self.correction() {
            Some(c) => calibrate(raw, c),
            None => raw,
        };
        let cached_prefix = self.ledger.prefix_of(tools.key, facts.iter().map(|f| f.key), &counted);
        let mut breakdown = SourceBreakdown {
            tool_definitions: counted.tool_definitions,
            framing: counted.priming,
            ..Default::default()
        };
        for (f, c) in facts.iter().zip(&counted.per_message) {
            breakdown.add(&CountedMessage::of(f, c));
        }
        let compacted = facts.iter().any(|f| f.compacted);
        let mut metrics =
            ContextMetrics::new(&self.model.model, self.model.encoding, self.model.kind, &self.budget, breakdown);
        metrics.message_count = to_u32(facts.len());
        metrics.compacted = compacted;
        metrics.last_compaction = self.memory.last_compaction.clone();
        if self.correction().is_some() {
            metrics.count_source = CountSource::Calibrated;
        }
        metrics.memory = self.memory.metrics();
        metrics.breaker = self.breaker.metrics();
        if self.model.kind == CountKind::Estimate {
            metrics.missing_vocabulary = self.model.vocabulary.map(str::to_string);
        }
        metrics.clearing = self.clearing_settings();
        metrics.calibration = self.calibration_summary();
        let warm = self.edits.warm();
        metrics.edits = crate::report::metrics::EditMetrics {
            when: match self.edits.when {
                super::edits::EditWhen::Needed => "needed".into(),
                super::edits::EditWhen::Trigger => "trigger".into(),
            },
            cache: Some(self.edits.cache),
            warm,
            threshold: self.edit_threshold(),
            expected_cached_tokens: if warm { self.edits.cache.served(cached_prefix) } else { 0 },
            thinking: None,
        };
        metrics.cost = self.ledger.pricing.map(|(p, builtin)| {
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
}
