//! The guard's layer-1 part: the source-guard options, the per-output work layer 1 remembers by
//! content, and which outputs the last pass aged (so that a pass that ages another one is known
//! as a clearing step).

use crate::format::Request;
use crate::message::Message;
use crate::report::metrics::ContextMetrics;
use crate::report::trace::Trace;
use crate::sources::remembered::{Known, Remembered};
use crate::sources::{self, SourceOptions};

use super::counter::Counter;
use super::Guard;

pub struct Sources {
    pub options: SourceOptions,
    /// Layer 1's per-output work, remembered by content (`sources/remembered.rs`).
    pub(crate) remembered: Remembered,
    /// The outputs cleared (`true`) or compacted by age (`false`) in the last layer-1 pass, by
    /// content key: a pass that ages another one took a step (`clearing_step`).
    pub(crate) aged: rustc_hash::FxHashSet<(u64, bool)>,
}

impl Sources {
    pub fn new(options: SourceOptions) -> Sources {
        Sources { options, remembered: Remembered::default(), aged: Default::default() }
    }
}

/// The clearing state a layer-1 pass leaves: the outputs it aged, and where the frontiers stand.
#[derive(Debug, Clone)]
pub struct Aged {
    outputs: rustc_hash::FxHashSet<(u64, bool)>,
    frontier: Option<crate::sources::pass::Frontier>,
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
    /// Layer 1 over a copy of the request: tool-output compaction and attachment previews.
    pub fn guard_sources(&mut self, request: &Request, emergency: bool, now: &dyn Fn() -> f64) -> SourcesOutcome {
        self.scoped(|g| g.guard_sources_in(request, emergency, now))
    }

    fn guard_sources_in(&mut self, request: &Request, emergency: bool, now: &dyn Fn() -> f64) -> SourcesOutcome {
        let t0 = now();
        let mut opts = SourceOptions { emergency, ..self.sources.options.clone() };
        // The emergency pass tightens the limits of what layer 1 already did; the forms by age
        // it chose stay as they are.
        let sizes = if emergency {
            opts.clear_tool_outputs = Some(sources::pass::ClearSetting::Switch(false));
            None
        } else {
            Some(self.request_tokens(request))
        };
        let mut memo = std::mem::take(&mut self.sources.remembered);
        let (enc, usable, factor) = (self.model.encoding, self.budget.usable_limit, self.model.estimate_factor);
        let pass = sources::pass::Pass { enc, opts: &opts, memo: &mut memo, known: &mut self.counter, now };
        let (messages, mut traces, cleared) =
            sources::guard_sources(&request.messages, usable, factor, sizes.as_ref(), pass);
        self.sources.remembered = memo;
        if !emergency {
            self.edits.frontier = Some(cleared.frontier.clone());
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
        // Message counts are in the model's tokens (the estimate factor applied); the plan works
        // in the counting encoding's, as layer 1 counts the outputs it compacts.
        let facts: Vec<_> = request.messages.iter().map(|m| self.facts(m)).collect();
        let factor = self.counter.factor.max(1.0);
        let per_message = facts.iter().map(|f| (f.raw.total as f64 / factor).floor() as usize).collect();
        let tools = self.counter.tools(request);
        let threshold = self.edit_threshold();
        let replay = self.replay_threshold();
        sources::pass::RequestTokens {
            per_message,
            base: self.counter.raw_budget(tools.tokens + self.counter.priming_of(&facts)),
            trigger: self.counter.raw_budget(replay as usize),
            cold_trigger: if threshold < replay { self.counter.raw_budget(threshold as usize) } else { usize::MAX },
            tool_total_due: self.edits.when == super::edits::EditWhen::Trigger,
            floor: self.edits.frontier.clone(),
            band: !self.sources.options.deep,
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
    pub(crate) fn clearing_settings(&self) -> crate::report::metrics::Clearing {
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
        sources::pass::SourceLimits::of(&self.sources.options, self.budget.usable_limit)
    }

    /// The clearing state a layer-1 pass leaves (a pass that is to be done again restores it).
    pub fn aged_snapshot(&self) -> Aged {
        Aged { outputs: self.sources.aged.clone(), frontier: self.edits.frontier.clone() }
    }

    pub fn restore_aged(&mut self, aged: Aged) {
        self.sources.aged = aged.outputs;
        self.edits.frontier = aged.frontier;
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
            if !self.sources.aged.contains(&(k, cleared)) {
                first_new = Some(first_new.map_or(i, |f| f.min(i)));
                newly_cleared += usize::from(cleared);
            }
        }
        self.sources.aged = now_aged;
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
        let invalidated = crate::base::round::count_scale(invalidated, self.model.estimate_factor);
        t.prefix_invalidated_tokens = Some(invalidated);
        t.edit_cost = Some(self.edits.cache.rewrite_cost(invalidated));
        Some(t)
    }
}

/// Layer 1 remembers its results for the messages whose facts are kept on them for good.
impl Known for Counter {
    fn key(&self, m: &Message) -> Option<u64> {
        self.kept_key(m)
    }

    fn stamp(&mut self, m: &Message) {
        Counter::stamp(self, m);
    }
}
