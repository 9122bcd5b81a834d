//! Layer 1 as a whole: tool-output compaction and attachment previews over a request, with one
//! trace per protection that did something (SPEC §6, §10).

use std::borrow::Cow;
use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::Deserialize;

use crate::message::{Content, Made, Message, Part, Role};
use crate::tokens::Encoding;

use super::attachment;
use super::memo::{ladder, SourceMemo};
use super::tool_output::CompactOptions;
use super::trace::{u32_of, Operation, Status, Trace};

/// Default limit for one tool output. Agents keep single outputs between ~2.5k tokens
/// (Codex: 10 KiB) and 25k tokens (Claude Code's MCP cap); 8k keeps a long log readable.
pub const DEFAULT_TOOL_OUTPUT_LIMIT: u32 = 8_000;
/// Default share of the usable limit that all tool outputs of a request may take together.
pub const DEFAULT_TOOL_OUTPUT_SHARE: f64 = 0.5;
/// Default total for attachment previews: at most this many tokens...
pub const DEFAULT_ATTACHMENT_BUDGET: u32 = 16_000;
/// ...and at most this share of the usable limit.
pub const DEFAULT_ATTACHMENT_SHARE: f64 = 0.125;

/// Options of the source guards (`guardSources` / `prepare`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SourceOptions {
    /// Token limit for one tool output.
    pub tool_output_limit: Option<u32>,
    /// Per-tool limits by tool name, overriding `toolOutputLimit`.
    pub tool_output_limits: Option<BTreeMap<String, u32>>,
    /// Total for all tool outputs of the request (default: half the usable limit).
    pub tool_output_total: Option<u32>,
    /// Total for all attachment previews (default: min(16000, usable / 8)).
    pub attachment_budget: Option<u32>,
    /// A host tool that returns a full tool output by call id, named in the marker line.
    pub retrieval_tool: Option<String>,
    /// The emergency pass: tighter limits, may re-compact compacted outputs.
    #[serde(default)]
    pub emergency: bool,
}

/// The resolved limits for one pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub tool_output: usize,
    /// Per tool name (`u32`, the type of the option: a copy of its map, not rebuilt).
    pub per_tool: BTreeMap<String, u32>,
    pub tool_output_total: usize,
    pub attachments: usize,
}

impl Limits {
    /// Limits in tokens of the counting encoding. `scale` is the model's estimate factor: limits
    /// are given in the model's tokens, so they shrink by it for estimated models.
    pub fn resolve(o: &SourceOptions, usable_limit: u32, scale: f64) -> Limits {
        let usable = usable_limit as usize;
        let share = |r: f64| (usable as f64 * r).floor() as usize;
        let mut l = Limits {
            tool_output: o.tool_output_limit.unwrap_or(DEFAULT_TOOL_OUTPUT_LIMIT) as usize,
            per_tool: o.tool_output_limits.clone().unwrap_or_default(),
            tool_output_total: o.tool_output_total.map_or_else(|| share(DEFAULT_TOOL_OUTPUT_SHARE), |t| t as usize),
            attachments: o
                .attachment_budget
                .map_or_else(|| (DEFAULT_ATTACHMENT_BUDGET as usize).min(share(DEFAULT_ATTACHMENT_SHARE)), |t| t as usize),
        };
        if scale > 1.0 {
            let down = |v: usize| (v as f64 / scale).floor() as usize;
            l.tool_output = down(l.tool_output);
            // `down` never raises a value, so a u32 stays a u32.
            l.per_tool.values_mut().for_each(|v| *v = down(*v as usize) as u32);
            l.tool_output_total = down(l.tool_output_total);
            l.attachments = down(l.attachments);
        }
        if o.emergency {
            // The emergency pass quarters every limit.
            l.tool_output /= 4;
            l.per_tool.values_mut().for_each(|v| *v /= 4);
            l.tool_output_total /= 4;
        }
        l
    }
}

/// What the caller of layer 1 knows of the messages it passes (the guard: the store's messages
/// and their content keys).
pub trait Known {
    /// The content key of a message that stands for its content for good (ctxguard's own,
    /// unchanged), if it is one: layer 1's results for it are remembered by that key.
    fn key(&self, m: &Message) -> Option<u64>;
    /// Keep the facts of a message layer 1 remembers (a compacted tool result) on it.
    fn stamp(&mut self, m: &Message);
}

/// Nothing known: every message is looked at (and remembered by its text only).
pub struct Unknown;

impl Known for Unknown {
    fn key(&self, _: &Message) -> Option<u64> {
        None
    }
    fn stamp(&mut self, _: &Message) {}
}

/// Whether a tool result is text (string or text parts only).
fn is_text(m: &Message) -> bool {
    match &m.content {
        Content::Text(_) => true,
        Content::Parts(parts) => parts.iter().all(|p| matches!(p, Part::Text { .. })),
    }
}

/// The text of a tool result, when it is text (string or text parts only).
fn tool_text(m: &Message) -> Option<Cow<'_, str>> {
    match &m.content {
        Content::Text(t) => Some(Cow::Borrowed(t.as_str())),
        Content::Parts(_) if is_text(m) => Some(Cow::Owned(m.content.text())),
        Content::Parts(_) => None,
    }
}

fn set_tool_text(m: &mut Message, text: String) {
    m.touch();
    match &mut m.content {
        Content::Text(t) => *t = text.into(),
        Content::Parts(parts) => {
            // Keep the first text part (and its unknown fields), drop the others.
            let extra = match parts.first() {
                Some(Part::Text { extra, .. }) => extra.clone(),
                _ => Default::default(),
            };
            *parts = vec![Part::Text { text: text.into(), extra }];
        }
    }
}

/// The name of the tool each result answers, from the calls before it.
fn tool_names(messages: &[Message]) -> Vec<Option<&str>> {
    let mut by_id: FxHashMap<&str, &str> = FxHashMap::default();
    messages
        .iter()
        .map(|m| {
            for c in &m.tool_calls {
                by_id.insert(c.id.as_str(), c.name.as_str());
            }
            match (m.role, &m.tool_call_id) {
                (Role::Tool, Some(id)) => by_id.get(id.as_str()).copied().or(m.name.as_deref()),
                (Role::Tool, None) => m.name.as_deref(),
                _ => None,
            }
        })
        .collect()
}

/// Compact tool outputs: a copy of `messages` with the compacted ones replaced (each message is
/// copied once: a compacted output is not copied whole first), and the trace, or `None` when
/// nothing changed (no noise).
pub fn guard_tool_outputs(
    messages: &[Message],
    enc: Encoding,
    limits: &Limits,
    opts: &SourceOptions,
    memo: &mut SourceMemo,
    known: &mut dyn Known,
    now: &dyn Fn() -> f64,
) -> (Vec<Message>, Option<Trace>) {
    let t0 = now();
    let names = tool_names(messages);
    // The outputs replaced, by index, in increasing order (few of the messages).
    let mut replaced: Vec<(usize, Message)> = Vec::new();
    // (message index, its content key if known, tokens, cap)
    let mut outputs = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if m.role != Role::Tool || !is_text(m) {
            continue;
        }
        let name = names.get(i).copied().flatten();
        let cap = name.and_then(|n| limits.per_tool.get(n)).map_or(limits.tool_output, |&v| v as usize);
        let key = known.key(m);
        let text = || tool_text(m).unwrap_or_default();
        let n = match key {
            Some(k) => memo.count_message(k, || crate::tokens::count(enc, &text())),
            None => memo.count(enc, &text()),
        };
        outputs.push((i, key, n, cap));
    }
    let capped: Vec<usize> = outputs.iter().map(|(_, _, n, cap)| (*n).min(*cap)).collect();
    let shares = attachment::fair_shares(&capped, limits.tool_output_total);
    let before: usize = outputs.iter().map(|o| o.2).sum();
    let mut after = before;
    let mut truncated = 0usize;
    for ((i, key, n, cap), share) in outputs.into_iter().zip(shares) {
        // An output that must give up room to the others gets its share rounded down to a
        // stable step (see `memo::ladder`); one that fits its share keeps its cap.
        let limit = if share < n.min(cap) { ladder(share) } else { cap };
        let Some(m) = messages.get(i) else { continue };
        // A message ctxguard holds unchanged: its compacted form (facts included) remembered.
        if let Some(remembered) = key.and_then(|k| memo.output_by(k, limit, opts.emergency, opts.retrieval_tool.as_deref(), m.tool_call_id.as_deref())) {
            if let Some((out, tokens)) = remembered {
                after = after - n + tokens;
                replaced.push((i, out.clone()));
                truncated += 1;
            }
            continue;
        }
        let o = CompactOptions {
            limit,
            emergency: opts.emergency,
            retrieval_tool: opts.retrieval_tool.clone(),
            call_id: m.tool_call_id.as_deref().map(str::to_string),
        };
        let text = tool_text(m).unwrap_or_default();
        let compacted = memo.compact(enc, &text, &o).filter(|c| c.tokens < n);
        let kept = compacted.map(|c| {
            after = after - n + c.tokens;
            let mut out = m.clone();
            set_tool_text(&mut out, c.text);
            truncated += 1;
            (out, c.tokens)
        });
        match key {
            Some(k) => {
                let mut kept = kept;
                if let Some((out, _)) = &mut kept {
                    // Remembered: its copies in later calls write the same wire value.
                    out.made = Made(Some(super::memo::made_tag()));
                    known.stamp(out);
                    replaced.push((i, out.clone()));
                }
                memo.keep_output(k, &o, kept);
            }
            None => replaced.extend(kept.map(|(out, _)| (i, out))),
        }
    }
    let mut replaced = replaced.into_iter().peekable();
    let out = messages
        .iter()
        .enumerate()
        .map(|(i, m)| match replaced.next_if(|(at, _)| *at == i) {
            Some((_, r)) => r,
            None => m.clone(),
        })
        .collect();
    if truncated == 0 {
        return (out, None);
    }
    let mut t = Trace::new(Operation::ToolOutput, Status::Applied, now() - t0, before, after);
    t.messages_truncated = Some(u32_of(truncated));
    t.emergency = Some(opts.emergency);
    (out, Some(t))
}

/// Preview attachments in place. Returns the trace, or `None` when there is no attachment.
pub fn guard_attachments(messages: &mut [Message], enc: Encoding, limits: &Limits, memo: &mut SourceMemo, known: &dyn Known, now: &dyn Fn() -> f64) -> Option<Trace> {
    let t0 = now();
    let r = attachment::apply(messages, enc, limits.attachments, memo, known);
    if r.blocks == 0 {
        return None;
    }
    let status = if r.truncated > 0 { Status::Applied } else { Status::Noop };
    let mut t = Trace::new(Operation::AttachmentPreview, status, now() - t0, r.before_tokens, r.after_tokens);
    t.attachment_blocks = Some(u32_of(r.blocks));
    t.attachment_blocks_truncated = Some(u32_of(r.truncated));
    Some(t)
}

/// Both source guards over a copy of `messages`; the input is never modified.
#[allow(clippy::too_many_arguments)]
pub fn guard_sources(
    messages: &[Message],
    enc: Encoding,
    usable_limit: u32,
    scale: f64,
    opts: &SourceOptions,
    memo: &mut SourceMemo,
    known: &mut dyn Known,
    now: &dyn Fn() -> f64,
) -> (Vec<Message>, Vec<Trace>) {
    let limits = Limits::resolve(opts, usable_limit, scale);
    let mut traces = Vec::new();
    memo.begin();
    let (mut out, trace) = guard_tool_outputs(messages, enc, &limits, opts, memo, known, now);
    traces.extend(trace);
    traces.extend(guard_attachments(&mut out, enc, &limits, memo, known, now));
    memo.end();
    (out, traces)
}
