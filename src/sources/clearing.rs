//! Tool outputs by age (docs/design.md, "Recency"): the newest outputs stay as they are (under
//! their per-output limit) within a protected budget, the next older ones are compacted to a
//! smaller limit, the oldest are cleared to a stub that says how to get them back.
//!
//! Which output is in which band changes only in **steps**, so that the model input's prefix
//! stays byte-identical between steps and a provider's prompt cache keeps hitting: every step
//! re-bills everything after the first output it changes, and on Claude's preserved-thinking
//! models invalidates every thinking block after it (docs/edits.md). The plan is a pure
//! function of the conversation: it replays the conversation's growth message by message (as if
//! the pipeline had run after each one) and takes a step wherever the request would not have
//! fit otherwise — over `trigger`, the edit threshold while the provider's cache is warm (the
//! usable limit by default) — and the step saves at least `clear_at_least` tokens. A step at
//! message `k` depends only on messages `..=k`, so a later call (or a new guard after a reload)
//! finds the same steps for the same history, and a new message can only add a step, never move
//! an earlier one. Only the last message can take a step at the lower `cold_trigger`: the call
//! that is made when the provider's cache is cold anyway (its step is then remembered by the
//! guard, not replayed). `tool_total_due` (the old rule, `edits: 'trigger'`) also makes a step
//! due whenever the tool outputs pass their total.
//!
//! A step moves two frontiers forward: outputs older than the protected window are compacted
//! (those that fit the band — the total less the protected outputs and `clear_at_least`, so
//! that new outputs have room before the next step — newest first), and everything older than
//! the band is cleared. A
//! cleared output never comes back within the same history; an output only ever moves from
//! kept to compacted to cleared.

/// One tool output that clearing may act on (outputs of excluded tools are not candidates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// Its message index.
    pub at: usize,
    /// Its tokens under its per-output limit (what it takes when kept).
    pub kept: usize,
}

/// The plan's parameters, in tokens of the counting encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// The newest outputs up to this many tokens are never compacted or cleared by age (the
    /// newest one always, whatever its size).
    pub protect: usize,
    /// All tool outputs of a request together: over it, a step is due.
    pub total: usize,
    /// A step is taken only when it saves at least this many tokens.
    pub clear_at_least: usize,
    /// The request (every message plus `base`) over this is due a step.
    pub trigger: usize,
    /// The request at the last message over this is due a step (the trigger when the provider's
    /// cache is cold; `usize::MAX` otherwise).
    pub cold_trigger: usize,
    /// Tool outputs over `total` make a step due too (the rule before edits were priced).
    pub tool_total_due: bool,
    /// A step compacts the outputs between the cleared and the protected ones (the band);
    /// without it every output older than the protected ones is cleared (the deepest step,
    /// for models where each step also costs every thinking block).
    pub band: bool,
    /// Tokens of the request outside its messages (tool definitions, reply priming).
    pub base: usize,
}

/// Where the frontiers stand: candidates `[0, cleared)` are cleared, `[cleared, compacted)`
/// compacted, the rest kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Plan {
    pub cleared: usize,
    pub compacted: usize,
    /// Steps taken while replaying the conversation.
    pub steps: u32,
    /// Tokens all steps saved.
    pub saved: usize,
    /// Step evaluations (work counter: at most one per candidate, plus one).
    pub evaluations: u32,
}

/// The tokens a candidate takes in each form, asked only when a step is evaluated (compacting
/// an output costs a tokenization): `compacted(i)` and `stub(i)`, each at most `kept`.
pub trait Forms {
    fn compacted(&mut self, i: usize) -> usize;
    fn stub(&mut self, i: usize) -> usize;
}

/// Replay the conversation (`message_tokens[k]`: message `k` as layer 1 leaves it before
/// clearing, tool outputs under their limit) and return where the frontiers end.
pub fn plan(candidates: &[Candidate], message_tokens: &[usize], p: &Params, forms: &mut dyn Forms) -> Plan {
    let mut plan = Plan::default();
    let mut prefix = p.base;
    // Candidates that arrived so far, and their tokens in their current forms.
    let mut arrived = 0;
    let mut tool_tokens = 0usize;
    // Current form sizes of the compacted band (cached: a candidate is compacted at most once).
    let mut compacted_size: Vec<Option<usize>> = vec![None; candidates.len()];
    // An evaluation is not repeated until a new candidate arrives (nothing else changes what a
    // step would do).
    let mut failed_at: Option<usize> = None;
    for (k, &t) in message_tokens.iter().enumerate() {
        prefix = prefix.saturating_add(t);
        while let Some(c) = candidates.get(arrived).filter(|c| c.at == k) {
            tool_tokens += c.kept;
            arrived += 1;
        }
        let total = prefix.saturating_sub(plan.saved);
        let last = k + 1 == message_tokens.len();
        let due = total > p.trigger || (last && total > p.cold_trigger) || (p.tool_total_due && tool_tokens > p.total);
        if !due || arrived == 0 || failed_at == Some(arrived) {
            continue;
        }
        plan.evaluations += 1;
        match evaluate(candidates, arrived, &plan, p, forms, &mut compacted_size) {
            Some(step) if step.saving >= p.clear_at_least && step.saving > 0 => {
                plan.cleared = step.cleared;
                plan.compacted = step.compacted;
                plan.saved += step.saving;
                plan.steps += 1;
                // Cleared outputs no longer count as tool output (their stubs are notes).
                tool_tokens = tool_tokens.saturating_sub(step.saving + step.stubs);
            }
            _ => {}
        }
        // Until a new candidate arrives, evaluating again would find the same step (or none).
        failed_at = Some(arrived);
    }
    plan
}

/// Where the frontiers end when this guard's previous pass left them at `start` (cleared,
/// compacted): a step only if the request as it stands now is due one. The replay
/// ([`plan`]) is what a guard without a previous pass uses (a new one, after a reload); within
/// one guard the frontiers only ever move when the request that is about to be sent would not
/// fit otherwise, however the sizes of earlier messages changed since (thinking blocks dropped,
/// a summary applied).
pub fn plan_from(
    candidates: &[Candidate],
    message_tokens: &[usize],
    p: &Params,
    forms: &mut dyn Forms,
    start: (usize, usize),
) -> Plan {
    let n = candidates.len();
    let (cleared, compacted) = (start.0.min(n), start.1.min(n).max(start.0.min(n)));
    let mut compacted_size: Vec<Option<usize>> = vec![None; n];
    let kept = |i: usize| candidates.get(i).map_or(0, |c| c.kept);
    let mut plan = Plan { cleared, compacted, ..Plan::default() };
    let mut tool_tokens: usize = candidates.iter().map(|c| c.kept).sum();
    for i in 0..cleared {
        let stub = forms.stub(i).min(kept(i));
        plan.saved += kept(i) - stub;
        tool_tokens = tool_tokens.saturating_sub(kept(i));
    }
    for i in cleared..compacted {
        let c = forms.compacted(i).min(kept(i));
        if let Some(slot) = compacted_size.get_mut(i) {
            *slot = Some(c);
        }
        plan.saved += kept(i) - c;
        tool_tokens = tool_tokens.saturating_sub(kept(i) - c);
    }
    let total = message_tokens.iter().fold(p.base, |a, &t| a.saturating_add(t)).saturating_sub(plan.saved);
    let due = total > p.trigger || total > p.cold_trigger || (p.tool_total_due && tool_tokens > p.total);
    if due && n > 0 {
        plan.evaluations += 1;
        if let Some(step) = evaluate(candidates, n, &plan, p, forms, &mut compacted_size) {
            if step.saving >= p.clear_at_least && step.saving > 0 {
                plan.cleared = step.cleared;
                plan.compacted = step.compacted;
                plan.saved += step.saving;
                plan.steps += 1;
            }
        }
    }
    plan
}

/// The frontiers a step at this point would move to, and what it would save.
fn evaluate(
    candidates: &[Candidate],
    arrived: usize,
    plan: &Plan,
    p: &Params,
    forms: &mut dyn Forms,
    compacted_size: &mut [Option<usize>],
) -> Option<Step> {
    let kept = |i: usize| candidates.get(i).map_or(0, |c| c.kept);
    // The protected window: the newest candidate always, then older ones while they fit.
    let newest = arrived.checked_sub(1)?;
    let mut protect_from = newest;
    let mut protected = kept(newest);
    while protect_from > plan.compacted && protected + kept(protect_from - 1) <= p.protect {
        protect_from -= 1;
        protected += kept(protect_from);
    }
    let compacted_to = protect_from.max(plan.compacted);
    // The band: compacted outputs, newest first, while the tool outputs stay within the total
    // less `clear_at_least`: a step leaves that much room for new outputs before the next one
    // (else, with large outputs, every new one would be due a step).
    let mut size = |i: usize, forms: &mut dyn Forms| -> usize {
        match compacted_size.get(i).copied().flatten() {
            Some(n) => n,
            None => {
                let n = forms.compacted(i).min(kept(i));
                if let Some(slot) = compacted_size.get_mut(i) {
                    *slot = Some(n);
                }
                n
            }
        }
    };
    let budget = if p.band { p.total.saturating_sub(protected).saturating_sub(p.clear_at_least) } else { 0 };
    let mut band_from = compacted_to;
    let mut band = 0usize;
    while band_from > plan.cleared {
        let n = size(band_from - 1, forms);
        if band + n > budget {
            break;
        }
        band += n;
        band_from -= 1;
    }
    let cleared_to = band_from.max(plan.cleared);
    // What the step saves: newly cleared outputs from their current form to their stub, newly
    // compacted ones from kept to compacted.
    let mut step = Step { cleared: cleared_to, compacted: compacted_to, saving: 0, stubs: 0 };
    for i in plan.cleared..cleared_to {
        let now = if i < plan.compacted { size(i, forms) } else { kept(i) };
        let stub = forms.stub(i).min(now);
        step.saving += now - stub;
        step.stubs += stub;
    }
    for i in cleared_to.max(plan.compacted)..compacted_to {
        step.saving += kept(i).saturating_sub(size(i, forms));
    }
    Some(step)
}

/// A step an evaluation found: the new frontiers, the tokens it saves, and the tokens of the
/// stubs of the outputs it clears.
struct Step {
    cleared: usize,
    compacted: usize,
    saving: usize,
    stubs: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compacted = a quarter, stub = 10 tokens.
    struct Quarter<'a>(&'a [Candidate], u32);
    impl Forms for Quarter<'_> {
        fn compacted(&mut self, i: usize) -> usize {
            self.1 += 1;
            self.0[i].kept / 4
        }
        fn stub(&mut self, _: usize) -> usize {
            10
        }
    }

    /// A session of `turns` turns: user (50), assistant call (40), tool output (`out`).
    fn session(turns: usize, out: usize) -> (Vec<Candidate>, Vec<usize>) {
        let mut tokens = Vec::new();
        let mut cands = Vec::new();
        for _ in 0..turns {
            tokens.extend([50, 40]);
            cands.push(Candidate { at: tokens.len(), kept: out });
            tokens.push(out);
        }
        (cands, tokens)
    }

    const P: Params = Params {
        protect: 12_000,
        total: 20_000,
        clear_at_least: 5_000,
        trigger: 38_000,
        cold_trigger: usize::MAX,
        tool_total_due: true,
        band: true,
        base: 100,
    };

    #[test]
    fn nothing_happens_under_the_limits() {
        let (c, t) = session(5, 2_850);
        let plan = plan(&c, &t, &P, &mut Quarter(&c, 0));
        assert_eq!(plan, Plan::default());
    }

    #[test]
    fn steps_keep_the_newest_outputs_whole_and_clear_the_oldest() {
        let (c, t) = session(200, 2_850);
        let mut forms = Quarter(&c, 0);
        let plan = plan(&c, &t, &P, &mut forms);
        // The newest outputs within the protected budget are kept (12,000 / 2,850 = 4), and
        // those that arrived since the last step.
        assert!((4..=8).contains(&(c.len() - plan.compacted)), "{plan:?}");
        assert!(plan.cleared > 150, "{plan:?}");
        assert!(plan.compacted > plan.cleared, "a compacted band between them: {plan:?}");
        // Steps, not one per output, and each saved at least clear_at_least.
        assert!(plan.steps >= 10 && plan.steps < 100, "{plan:?}");
        assert!(plan.saved >= plan.steps as usize * P.clear_at_least);
        // Work: at most one evaluation per output, each output compacted at most once.
        assert!(plan.evaluations as usize <= c.len() + 1);
        assert!(forms.1 as usize <= c.len());
    }

    #[test]
    fn a_prefix_of_the_history_gives_the_same_frontiers_as_it_did_then() {
        let (c, t) = session(120, 2_850);
        let full = plan(&c, &t, &P, &mut Quarter(&c, 0));
        let mut last = Plan::default();
        let mut changes = 0;
        for k in 1..=t.len() {
            let arrived = c.iter().filter(|x| x.at < k).count();
            let p = plan(&c[..arrived], &t[..k], &P, &mut Quarter(&c, 0));
            assert!(p.cleared >= last.cleared && p.compacted >= last.compacted, "frontiers never move back");
            if (p.cleared, p.compacted) != (last.cleared, last.compacted) {
                changes += 1;
            }
            last = p;
        }
        assert_eq!((last.cleared, last.compacted), (full.cleared, full.compacted));
        assert_eq!(changes, full.steps, "the frontiers change exactly at the steps");
    }

    #[test]
    fn a_step_that_saves_too_little_is_not_taken() {
        // Big text, small outputs: over the trigger, but clearing cannot save enough.
        let mut t = vec![40_000];
        let mut c = Vec::new();
        for i in 0..20 {
            t.push(100);
            c.push(Candidate { at: 1 + i, kept: 100 });
        }
        let plan = plan(&c, &t, &P, &mut Quarter(&c, 0));
        assert_eq!((plan.cleared, plan.compacted, plan.steps), (0, 0, 0));
        assert!(plan.evaluations as usize <= c.len() + 1);
    }

    #[test]
    fn the_newest_output_is_protected_whatever_its_size() {
        let c = vec![Candidate { at: 0, kept: 30_000 }, Candidate { at: 1, kept: 30_000 }];
        let plan = plan(&c, &[30_000, 30_000], &P, &mut Quarter(&c, 0));
        assert_eq!(plan.compacted, 1, "the older one leaves the protected window");
        assert!(plan.cleared <= 1);
    }
}
