//! Planning a compaction (docs/design.md, "Compaction"): what stays, what the summary replaces,
//! and what the summarizer is asked.
//!
//! Over the trigger, the request (after layer 1) is cut in four:
//! - the system messages before the recent tail stay first (earlier summaries excepted: they
//!   are summarized again, with what came after them);
//! - the **recent tail**: the newest whole exchanges before the current turn, verbatim, up to
//!   `recentTailTokens` (default: half the target limit, never more than half of what could be
//!   summarized) — cut before a user message (whole exchanges), else before an assistant
//!   message (whole steps), so a tool call is never separated from its results. When not even
//!   the last exchange fits, the last assistant answer (with its tool results) is kept if it fits
//!   under the usable limit — with its user message when no retained one can precede it;
//! - the **current turn**: the latest user message and everything after it;
//! - everything else is the summary's: up to four recent user messages of it are kept verbatim
//!   as retained clones (`retainUserTokens`, within what the target leaves), the rest is
//!   replaced by the summary.
//!
//! Under the `session_state` strategy there is no tail and no retained message, and the current
//! turn's steps between its user message and its last assistant step are summarized too.

use crate::base::error::Result;
use crate::format::Request;
use crate::message::checkpoint::Covers;
use crate::message::{Message, Role};

use super::session_state::schema;
use super::summary::{instructions, is_summary, retain};
use super::types::{Pending, SummaryRequest};
use super::types::{DEFAULT_RETAIN_USER_TOKENS, DEFAULT_SUMMARY_MAX_TOKENS, RETAIN_USER_MESSAGES};
use super::{sanitize, Strategy};
use crate::guard::Guard;

use super::types::Turn;

/// The recent tail's default budget: this share of the target limit.
pub const DEFAULT_TAIL_SHARE: f64 = 0.5;

/// Where the request is cut (indices into the request layer 1 saw).
struct Cut {
    /// The current turn starts here (the latest user message).
    split: usize,
    /// The recent tail starts here (`split`: no tail).
    tail: usize,
    /// Under `session_state`: the current turn's folded steps, `turn.start + 1 .. last step`.
    folded: std::ops::Range<usize>,
}

/// Plan a compaction of `current` (the history with a remembered summary applied, raw;
/// `ordinals`: each message's place among the history's non-system messages) whose layer-1
/// version is `layer1`. `None` when nothing can be summarized. `ahead`: a summary made ahead
/// of time (no cache decision: it is used only once the trigger is crossed).
pub(super) fn plan_compaction(g: &mut Guard, turn: &Turn<'_>, ahead: bool) -> Result<Option<Pending>> {
    let Turn { history, current, ordinals, covered: covered_before, layer1, options, started } = turn;
    let (history, ordinals, covered_before, options, started) =
        (*history, ordinals.as_slice(), *covered_before, *options, *started);
    let key = g.checkpoint_key().map(str::to_string);
    let msgs = &layer1.request.messages;
    // A provider that compacted this conversation keeps compacting it: no summary of ours on
    // top of its compaction (docs/edits.md, "Provider artifacts"); clearing and the emergency
    // layer still make the request fit.
    if msgs.iter().any(Message::holds_compaction) {
        return Ok(None);
    }
    let used = layer1.metrics.used_tokens;
    let per = g.count(&layer1.request).per_message;
    let tokens = |i: usize| per.get(i).map_or(0, |c| c.total);
    let split = msgs.iter().rposition(|m| m.role == Role::User).unwrap_or(msgs.len());
    let folded = folded_steps(g, msgs, split);
    // What stays whatever the tail: system messages (earlier summaries excepted) and the
    // current turn (minus its folded steps).
    let stays = |i: usize| {
        msgs.get(i).is_some_and(|m| {
            if i < split {
                m.role == Role::System && !is_summary(m, key.as_deref())
            } else {
                !folded.contains(&i)
            }
        })
    };
    let outside = Request {
        messages: Vec::new(),
        tools: layer1.request.tools.clone(),
        tool_choice: layer1.request.tool_choice.clone(),
        prepended_system: false,
    };
    let fixed: usize =
        (0..msgs.len()).filter(|&i| stays(i)).map(tokens).sum::<usize>() + g.count(&outside).total as usize;
    let usable = g.budget.usable_limit as usize;
    let target = g.budget.target_limit as usize;
    let max_tokens = options
        .summary_max_tokens
        .unwrap_or(DEFAULT_SUMMARY_MAX_TOKENS)
        .min((g.budget.target_limit / 4).max(256))
        .min(u32::try_from(usable.saturating_sub(fixed).saturating_sub(64)).unwrap_or(u32::MAX));
    // Room under the usable limit for the last exchange when not even it fits the tail budget.
    let last_answer_room = usable.saturating_sub(fixed + max_tokens as usize + 64);
    let tail = match g.policy.strategy {
        Strategy::SessionState => split,
        Strategy::Summary => {
            // At most half of what could be summarized stays verbatim: a compaction (forced
            // after an overflow, say) always summarizes something.
            let older: usize =
                (0..split).filter(|&i| msgs.get(i).is_some_and(|m| m.role != Role::System)).map(tokens).sum();
            let budget = options
                .recent_tail_tokens
                .or(g.policy.recent_tail_tokens)
                .map_or_else(|| (target as f64 * DEFAULT_TAIL_SHARE) as usize, |t| t as usize)
                .min(target.saturating_sub(fixed + max_tokens as usize))
                .min(older / 2);
            tail_start(msgs, split, budget, last_answer_room, &tokens, key.as_deref())
        }
    };
    let mut cut = Cut { split, tail, folded };
    let removed: Vec<usize> = (0..cut.tail)
        .filter(|&i| msgs.get(i).is_some_and(|m| m.role != Role::System || is_summary(m, key.as_deref())))
        .chain(cut.folded.clone())
        .collect();
    if removed.is_empty() {
        return Ok(None);
    }
    // Recent user messages of the summarized range, kept verbatim (a reloaded clone is not
    // cloned twice); none under session_state, where the SessionState is the only history.
    // They fit next to everything else that stays and the summary's answer.
    let staying: usize = (cut.tail..msgs.len())
        .filter(|&i| {
            !cut.folded.contains(&i) && (i >= cut.split || msgs.get(i).is_some_and(|m| m.role != Role::System))
        })
        .map(tokens)
        .sum::<usize>()
        + fixed;
    let retain_budget = match g.policy.strategy {
        Strategy::Summary => (options.retain_user_tokens.unwrap_or(DEFAULT_RETAIN_USER_TOKENS) as usize)
            .min(usable.saturating_sub(staying + max_tokens as usize + 64))
            .min(target.saturating_sub(staying + max_tokens as usize)),
        Strategy::SessionState => 0,
    };
    let mut retained = Vec::new();
    let mut retained_tokens = 0;
    for &i in removed.iter().rev().filter(|&&i| i < cut.tail && msgs.get(i).is_some_and(|m| m.role == Role::User)) {
        let n = msgs.get(i).map_or(0, |v| g.count_text(&v.content.text()));
        if retained.len() >= RETAIN_USER_MESSAGES || retained_tokens + n > retain_budget {
            break;
        }
        retained_tokens += n;
        if let Some(m) = current.messages.get(i) {
            retained.push(if m.markers.checkpoint_retained { m.clone() } else { retain(m) });
        }
    }
    retained.reverse();
    // Messages after the summary start with a user message (Anthropic-style APIs require
    // it): a tail that starts with an assistant answer needs a retained user message before
    // it. When none fits under the target (the current turn alone fills it: a large tool
    // output), the tail starts at the user message of its exchange if that still fits under
    // the usable limit, else at the next user message.
    if retained.is_empty() && msgs.get(cut.tail).is_some_and(|m| m.role == Role::Assistant) {
        let exchange = (0..cut.tail)
            .rev()
            .take_while(|&i| msgs.get(i).is_some_and(|m| !is_summary(m, key.as_deref())))
            .find(|&i| msgs.get(i).is_some_and(|m| m.role == Role::User))
            .filter(|&u| {
                (u..cut.split)
                    .filter(|&i| msgs.get(i).is_some_and(|m| m.role != Role::System))
                    .map(tokens)
                    .sum::<usize>()
                    <= last_answer_room
            });
        cut.tail = exchange.unwrap_or_else(|| {
            (cut.tail..cut.split).find(|&i| msgs.get(i).is_some_and(|m| m.role == Role::User)).unwrap_or(cut.split)
        });
    }
    let removed: Vec<usize> = (0..cut.tail)
        .filter(|&i| msgs.get(i).is_some_and(|m| m.role != Role::System || is_summary(m, key.as_deref())))
        .chain(cut.folded.clone())
        .collect();
    // The summary source: the summarized messages (layer 1's versions, cleared outputs as
    // their stubs), trimmed to the summarizer's input budget in one pass from the newest back.
    let instructions = instructions(max_tokens);
    let input_budget = usable.saturating_sub(max_tokens as usize).saturating_sub(g.count_text(&instructions) + 512);
    // Under session_state the run's user message goes between the older history and the
    // folded steps (it is kept, and summarized with them).
    let source_messages: Vec<Message> = removed
        .iter()
        .flat_map(|&i| if i == cut.folded.start && !cut.folded.is_empty() { vec![cut.split, i] } else { vec![i] })
        .filter_map(|i| msgs.get(i).cloned())
        .collect();
    let source = if cut.folded.is_empty() {
        trim_newest(g, &source_messages, input_budget)
    } else {
        // session_state: the run's user message gives the folded steps their meaning; it
        // stays in the source even when the older history does not fit.
        let user = msgs.get(cut.split).cloned().into_iter().collect::<Vec<_>>();
        let user_tokens = g.count(&Request { messages: user.clone(), ..Default::default() }).total as usize;
        let mut kept = trim_newest(g, &source_messages, input_budget.saturating_sub(user_tokens));
        if kept.len() <= cut.folded.len() {
            kept.splice(0..0, user);
        }
        kept
    };
    // What the summary covers in the history: every history message it replaces, and the
    // ones in that range it keeps (the run's user message under session_state).
    let removed_set: rustc_hash::FxHashSet<usize> = removed.iter().copied().collect();
    let covers_messages = removed
        .iter()
        .filter_map(|&i| ordinals.get(i).copied().flatten())
        .map(|o| o + 1)
        .max()
        .unwrap_or(0)
        .max(covered_before);
    let keep: Vec<u32> = ordinals
        .iter()
        .enumerate()
        .filter(|(i, o)| !removed_set.contains(i) && o.is_some_and(|o| o < covers_messages))
        .filter_map(|(_, o)| *o)
        .collect();
    let covered: Vec<&Message> =
        history.messages.iter().filter(|m| m.role != Role::System).take(covers_messages as usize).collect();
    let covers = Covers::of(covered.iter().copied(), keep);
    let keys = covered.iter().map(|m| g.facts(m).key).collect();
    let kept_tokens: usize =
        (0..msgs.len()).filter(|i| !removed_set.contains(i)).map(tokens).sum::<usize>() + retained_tokens;
    let room = usable.saturating_sub(kept_tokens);
    let cache_decision = if options.force || ahead {
        None
    } else {
        let summary_input = g.count(&Request { messages: source.clone(), ..Default::default() }).total as usize
            + g.count_text(&instructions);
        let turn_tokens = (cut.split..msgs.len()).map(tokens).sum::<usize>();
        cache_decision(
            g,
            &layer1.request,
            used,
            kept_tokens + max_tokens as usize,
            summary_input,
            max_tokens,
            crate::report::trace::u32_of(turn_tokens),
        )
    };
    Ok(Some(Pending {
        request: SummaryRequest { messages: source, instructions, schema: schema(), max_tokens },
        started_ms: started,
        before_tokens: used as usize,
        history: history.clone(),
        removed: removed.iter().filter_map(|&i| msgs.get(i).cloned()).collect(),
        covers,
        keys,
        retained,
        options: options.clone(),
        room,
        kept_tokens,
        traces: layer1.traces.clone(),
        cache_decision,
        max_attempts: super::MAX_ATTEMPTS,
        ahead,
    }))
}

/// Under `session_state`: the current turn's steps between its user message (`split`) and
/// its last assistant step, which the SessionState folds in. Empty otherwise.
pub(crate) fn folded_steps(g: &Guard, msgs: &[Message], split: usize) -> std::ops::Range<usize> {
    if g.policy.strategy == Strategy::SessionState {
        let turn = msgs.get(split..).unwrap_or(&[]);
        if let Some(last_step) = turn.iter().rposition(|m| m.role == Role::Assistant).filter(|&i| i > 1) {
            return split + 1..split + last_step;
        }
    }
    split..split
}

/// Where the recent tail starts: the earliest user message whose exchanges up to `split` fit
/// `budget` (whole exchanges); else the earliest assistant message that does (whole steps of
/// the last exchange, never a tool result without its call); when none does, the last
/// assistant answer if it fits `last_answer_room`; else `split` (no tail).
fn tail_start(
    msgs: &[Message],
    split: usize,
    budget: usize,
    last_answer_room: usize,
    tokens: &dyn Fn(usize) -> usize,
    key: Option<&str>,
) -> usize {
    let mut acc = 0usize;
    let (mut at_user, mut at_step) = (split, split);
    for i in (0..split).rev() {
        let Some(m) = msgs.get(i) else { break };
        if m.role == Role::System && is_summary(m, key) {
            break;
        }
        if m.role != Role::System {
            acc += tokens(i);
        }
        if acc > budget {
            break;
        }
        match m.role {
            Role::User => at_user = i,
            Role::Assistant => at_step = i,
            _ => {}
        }
    }
    let best = if at_user < split { at_user } else { at_step };
    if best < split {
        return best;
    }
    // Not even the last exchange fits: its assistant answer alone, when that fits.
    let Some(last) = (0..split).rev().find(|&i| msgs.get(i).is_some_and(|m| m.role == Role::Assistant)) else {
        return split;
    };
    let answer: usize =
        (last..split).filter(|&i| msgs.get(i).is_some_and(|m| m.role != Role::System)).map(tokens).sum();
    if answer <= last_answer_room && !msgs.get(last..split).unwrap_or(&[]).iter().any(|m| is_summary(m, key)) {
        last
    } else {
        split
    }
}

/// user message when there is one, then sanitized so no tool result lacks its call.
pub fn trim_newest(g: &mut Guard, messages: &[Message], budget: usize) -> Vec<Message> {
    let counts = g.count(&Request { messages: messages.to_vec(), ..Default::default() }).per_message;
    let mut keep_from = messages.len();
    let mut acc = 0usize;
    for (i, c) in counts.iter().enumerate().rev() {
        if acc + c.total > budget {
            break;
        }
        acc += c.total;
        keep_from = i;
    }
    let mut kept = messages.get(keep_from..).unwrap_or(&[]).to_vec();
    // A summarizer call must start with a user turn on Anthropic-style APIs: assistant (and
    // tool) messages before the first user message go; system messages (an earlier summary
    // among them) stay — they travel as the request's system.
    if let Some(first_user) = kept.iter().position(|m| m.role == Role::User) {
        let mut i = 0;
        kept.retain(|m| {
            i += 1;
            i > first_user || m.role == Role::System
        });
    }
    sanitize::sanitize(&mut kept);
    kept
}

/// request is over the trigger; `None` otherwise.
fn cache_decision(
    g: &mut Guard,
    request: &Request,
    used: u32,
    compacted: usize,
    summary_input: usize,
    summary_output: u32,
    turn: u32,
) -> Option<crate::provider::pricing::CacheDecision> {
    g.budget.economic_budget?;
    let (pricing, _) = g.ledger.pricing?;
    let counted = g.count(request);
    let rule = if g.model.provider == crate::provider::models::Provider::Anthropic {
        crate::provider::pricing::CacheRule::Breakpoint
    } else {
        crate::provider::pricing::CacheRule::Automatic
    };
    let cached = crate::provider::pricing::cached_prefix(g.prefix_tokens(request, &counted), rule);
    let physical = g.budget.context_window.saturating_sub(g.budget.reserved_output_tokens);
    let to_u32 = crate::report::trace::u32_of;
    Some(crate::provider::pricing::decide(
        &pricing,
        &crate::provider::pricing::DecisionInput {
            prefix_tokens: used,
            cached_tokens: cached.min(used),
            compacted_tokens: to_u32(compacted),
            summary_input_tokens: to_u32(summary_input),
            summary_output_tokens: summary_output,
            growth_per_turn: g
                .ledger
                .growth_per_turn()
                .or(Some(turn).filter(|t| *t > 0))
                .unwrap_or(crate::provider::pricing::DEFAULT_GROWTH_PER_TURN),
            hard_limit: g.budget.usable_limit,
            physical_trigger: (f64::from(physical) * g.budget.trigger_ratio).floor() as u32,
            horizon_turns: crate::provider::pricing::DECISION_HORIZON_TURNS,
        },
    ))
}
