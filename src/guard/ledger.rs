//! The guard's ledger: what the provider reported (calibration), what the model's tokens cost
//! (prices), and what was sent last (the prompt cache's reference point).

use crate::base::error::Result;
use crate::format::Request;
use crate::provider::calibration::{CalibrationState, CalibrationSummary, Observation, ReportedUsage};
use crate::provider::models::{CountKind, ModelInfo};
use crate::provider::pricing::Pricing;

use super::counter::{to_u32, Counted};
use super::Guard;

/// Content keys of the last request sent, for the cached-prefix estimate.
#[derive(Debug, Clone)]
pub(crate) struct Sent {
    pub(crate) tools: u64,
    pub(crate) messages: Vec<u64>,
    pub(crate) total: u32,
    /// Growth between the last two requests sent.
    pub(crate) growth: Option<u32>,
}

pub struct Ledger {
    /// Calibration from reported usage (all models; this guard updates its own).
    pub calibration: CalibrationState,
    /// Prices of this guard's model (the table's or the config's), and whether from the table.
    pub pricing: Option<(Pricing, bool)>,
    /// The last request sent (`observeUsage` or `prepare`): the cache reference point.
    pub(crate) sent: Option<Sent>,
}

impl Ledger {
    pub fn new(calibration: CalibrationState, pricing: Option<(Pricing, bool)>) -> Ledger {
        Ledger { calibration, pricing, sent: None }
    }

    /// The calibration factor applied to the counts of `model` (`estimate` models with enough
    /// observations; `None` otherwise).
    pub fn correction(&self, model: &ModelInfo) -> Option<f64> {
        if model.kind != CountKind::Estimate {
            return None;
        }
        self.calibration.models.get(&model.model).and_then(|m| m.correction())
    }

    /// The calibration of `model`, derived (`None` before the first observation).
    pub fn calibration_summary(&self, model: &ModelInfo) -> Option<CalibrationSummary> {
        self.calibration.models.get(&model.model).map(|m| m.summary(&model.model, model.kind))
    }

    /// Replace the calibration state (validated first).
    pub fn set_calibration(&mut self, state: CalibrationState) -> Result<()> {
        state.validate()?;
        self.calibration = state;
        Ok(())
    }

    /// Take a request (its tools' and messages' keys, `total` tokens) as the last one sent.
    pub(crate) fn note_sent(&mut self, tools: u64, messages: Vec<u64>, total: u32) {
        let growth = self.sent.as_ref().and_then(|s| total.checked_sub(s.total)).filter(|g| *g > 0);
        let growth = growth.or(self.sent.as_ref().and_then(|s| s.growth));
        self.sent = Some(Sent { tools, messages, total, growth });
    }

    /// Growth per turn between the last two requests sent (`None` before two).
    pub fn growth_per_turn(&self) -> Option<u32> {
        self.sent.as_ref().and_then(|s| s.growth)
    }

    /// Tokens of the prefix unchanged since the last request sent, from the tools' and the
    /// messages' content keys: the tool definitions (when unchanged) and the leading messages
    /// with the same keys.
    pub(crate) fn prefix_of(&self, tools_key: u64, keys: impl Iterator<Item = u64>, counted: &Counted) -> u32 {
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
}

impl Guard {
    /// The calibration factor applied to this guard's counts.
    pub fn correction(&self) -> Option<f64> {
        self.ledger.correction(&self.model)
    }

    /// This model's calibration, derived (`None` before the first observation).
    pub fn calibration_summary(&self) -> Option<CalibrationSummary> {
        self.ledger.calibration_summary(&self.model)
    }

    /// `observeUsage`: learn from what the provider reported for `request`, and take `request`
    /// as the last one sent (the cache reference point).
    pub fn observe_usage(&mut self, request: &Request, usage: &ReportedUsage) -> Result<Observation> {
        let (reported, cached) = usage.input()?;
        let predicted = self.count(request).total;
        let estimated = self.counter.count_raw(request).total;
        let entry = self.ledger.calibration.models.entry(self.model.model.clone()).or_default();
        let obs = entry.observe(reported, cached, estimated, predicted);
        self.note_sent(request, predicted);
        Ok(obs)
    }

    /// `observeOverflow`: learn from a provider's overflow error about `request` (see
    /// `provider::calibration_overflow`). The request failed, so it is not taken as sent.
    pub fn observe_overflow(
        &mut self,
        request: &Request,
        error: &crate::provider::overflow::Classification,
    ) -> crate::provider::calibration_overflow::OverflowObservation {
        let (predicted, estimated) = (self.count(request).total, self.counter.count_raw(request).total);
        let mut out = crate::provider::calibration_overflow::observe_overflow(
            &mut self.ledger.calibration,
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
        let tools = self.counter.tools_key(request);
        let messages = request.messages.iter().map(|m| self.counter.facts(m).key).collect();
        self.ledger.note_sent(tools, messages, total);
    }

    /// Tokens of the prefix of `request` unchanged since the last request sent.
    pub fn prefix_tokens(&mut self, request: &Request, counted: &Counted) -> u32 {
        let keys: Vec<u64> = request.messages.iter().map(|m| self.counter.facts(m).key).collect();
        self.ledger.prefix_of(self.counter.tools_key(request), keys.into_iter(), counted)
    }
}
