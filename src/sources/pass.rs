//! Layer 1 as a whole: tool-output compaction and attachment previews over a request, with one
//! trace per protection that did something (docs/design.md, "Pipeline", "Observability").

use std::borrow::Cow;
use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::message::{Content, Made, Message, Part, Role};
use crate::tokens::Encoding;

use super::attachment;
use super::clearing::{self, Candidate, Forms, Params, Plan};
use super::remembered::{Known, Remembered};
use super::tool_output::CompactOptions;
use crate::report::trace::{u32_of, Operation, Status, Trace};

/// Default limit for one tool output. Agents keep single outputs between ~2.5k tokens
/// (Codex: 10 KiB) and 25k tokens (Claude Code's MCP cap); 8k keeps a long log readable.
pub const DEFAULT_TOOL_OUTPUT_LIMIT: u32 = 8_000;
/// Default share of the usable limit that all tool outputs of a request may take together.
pub const DEFAULT_TOOL_OUTPUT_SHARE: f64 = 0.5;
/// Default total for attachment previews: at most this many tokens...
pub const DEFAULT_ATTACHMENT_BUDGET: u32 = 16_000;
/// ...and at most this share of the usable limit.
pub const DEFAULT_ATTACHMENT_SHARE: f64 = 0.125;

/// Default protected budget: the newest tool outputs up to this many tokens are never compacted
/// or cleared by age (opencode protects the newest 40k tokens of tool output)...
pub const DEFAULT_PROTECT_TOKENS: u32 = 40_000;
/// ...and at most this share of the usable limit (Gemini CLI keeps the newest 30 % of history)...
pub const DEFAULT_PROTECT_SHARE: f64 = 0.3;
/// ...or of this share where steps are deep (a guard that edits only when needed): each step
/// re-bills the provider's cache from the first output it changes (and drops every thinking
/// block on Claude's preserved-thinking models), so a smaller protected window that makes each
/// step free more room makes steps rarer (docs/edits.md).
pub const DEFAULT_PROTECT_SHARE_DEEP: f64 = 0.2;
/// Default minimum saving of a clearing step: at most this many tokens (opencode prunes only
/// when it saves 20k)...
pub const DEFAULT_CLEAR_AT_LEAST: u32 = 20_000;

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
    /// Tool outputs by age (`clearing.rs`): `false` turns it off, `true` or absent uses the
    /// defaults, an object sets them.
    pub clear_tool_outputs: Option<ClearSetting>,
    /// The emergency pass: tighter limits, may re-compact compacted outputs.
    #[serde(default)]
    pub emergency: bool,
    /// Steps are as deep as they can be: the protected window's default is
    /// [`DEFAULT_PROTECT_SHARE_DEEP`] and no band is compacted (set by the guard under
    /// `edits: 'needed'`; not an option).
    #[serde(skip)]
    pub deep: bool,
}

/// `clearToolOutputs`: on or off, or the options.
#[derive(Debug, Clone, PartialEq)]
pub enum ClearSetting {
    Switch(bool),
    Options(ClearOptions),
}

/// A boolean, or an object read as [`ClearOptions`] itself — so a bad field gets that field's own
/// error (`unknown field`, `invalid value: integer -5, expected u32`) rather than an untagged
/// enum's "did not match any variant".
impl<'de> Deserialize<'de> for ClearSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Setting;
        impl<'de> serde::de::Visitor<'de> for Setting {
            type Value = ClearSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false or { protectTokens, clearAtLeast, excludeTools, clearArguments }")
            }
            fn visit_bool<E: serde::de::Error>(self, on: bool) -> std::result::Result<ClearSetting, E> {
                Ok(ClearSetting::Switch(on))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<ClearSetting, A::Error> {
                ClearOptions::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(ClearSetting::Options)
            }
        }
        d.deserialize_any(Setting)
    }
}

/// Clearing tool outputs by age (names after Anthropic's context editing: `keep`,
/// `clear_at_least`, `exclude_tools`, `clear_tool_inputs`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClearOptions {
    /// The newest tool outputs up to this many tokens are kept as they are (under their limit);
    /// default: min(40000, 30 % of the usable limit).
    pub protect_tokens: Option<u32>,
    /// A clearing step is taken only when it saves at least this many tokens (each step changes
    /// the prompt's prefix, so it should be worth a cache write); default: min(20000, half the
    /// protected budget).
    pub clear_at_least: Option<u32>,
    /// Tools whose outputs are never compacted or cleared by age (their per-output limit holds).
    #[serde(default)]
    pub exclude_tools: Vec<String>,
    /// Also clear the call's arguments in the assistant message (`{}`); the stub keeps the key
    /// arguments.
    #[serde(default)]
    pub clear_arguments: bool,
}

impl SourceOptions {
    /// The clearing options in force, or `None` when clearing is off.
    pub fn clearing(&self) -> Option<ClearOptions> {
        match &self.clear_tool_outputs {
            None | Some(ClearSetting::Switch(true)) => Some(ClearOptions::default()),
            Some(ClearSetting::Switch(false)) => None,
            Some(ClearSetting::Options(o)) => Some(o.clone()),
        }
    }
}

/// The resolved limits for one pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub tool_output: usize,
    /// Per tool name (`u32`, the type of the option: a copy of its map, not rebuilt).
    pub per_tool: BTreeMap<String, u32>,
    pub tool_output_total: usize,
    pub attachments: usize,
    /// Clearing by age, when on: the protected budget, the minimum saving of a step, and the
    /// tool outputs' total the plan keeps to (the emergency pass leaves the plan as it was).
    pub protect: usize,
    pub clear_at_least: usize,
    pub clear_total: usize,
}

impl Limits {
    /// Limits in tokens of the counting encoding. `scale` is the model's estimate factor: limits
    /// are given in the model's tokens, so they shrink by it for estimated models.
    pub fn resolve(o: &SourceOptions, usable_limit: u32, scale: f64) -> Limits {
        let usable = usable_limit as usize;
        let share = |r: f64| (usable as f64 * r).floor() as usize;
        let clearing = o.clearing().unwrap_or_default();
        let total = o.tool_output_total.map_or_else(|| share(DEFAULT_TOOL_OUTPUT_SHARE), |t| t as usize);
        // The protected outputs are within the tool outputs' total (its default is larger).
        let protect = clearing
            .protect_tokens
            .map_or_else(
                || {
                    let s = if o.deep { DEFAULT_PROTECT_SHARE_DEEP } else { DEFAULT_PROTECT_SHARE };
                    (DEFAULT_PROTECT_TOKENS as usize).min(share(s))
                },
                |t| t as usize,
            )
            .min(total);
        let mut l = Limits {
            tool_output: o.tool_output_limit.unwrap_or(DEFAULT_TOOL_OUTPUT_LIMIT) as usize,
            per_tool: o.tool_output_limits.clone().unwrap_or_default(),
            tool_output_total: total,
            attachments: o.attachment_budget.map_or_else(
                || (DEFAULT_ATTACHMENT_BUDGET as usize).min(share(DEFAULT_ATTACHMENT_SHARE)),
                |t| t as usize,
            ),
            protect,
            clear_at_least: clearing
                .clear_at_least
                .map_or_else(|| (DEFAULT_CLEAR_AT_LEAST as usize).min(protect / 2), |t| t as usize),
            clear_total: 0,
        };
        if scale > 1.0 {
            let down = |v: usize| (v as f64 / scale).floor() as usize;
            l.tool_output = down(l.tool_output);
            // `down` never raises a value, so a u32 stays a u32.
            l.per_tool.values_mut().for_each(|v| *v = down(*v as usize) as u32);
            l.tool_output_total = down(l.tool_output_total);
            l.attachments = down(l.attachments);
            l.protect = down(l.protect);
            l.clear_at_least = down(l.clear_at_least);
        }
        l.clear_total = l.tool_output_total;
        if o.emergency {
            // The emergency pass quarters every limit, attachment previews' too (a latest
            // message whose preview grew once older attachments were summarized away must
            // still fit).
            l.tool_output /= 4;
            l.per_tool.values_mut().for_each(|v| *v /= 4);
            l.tool_output_total /= 4;
            l.attachments /= 4;
        }
        l
    }

    /// The limit of one output of `tool`: its own, never more than all tool outputs together.
    fn cap(&self, tool: Option<&str>) -> usize {
        tool.and_then(|n| self.per_tool.get(n))
            .map_or(self.tool_output, |&v| v as usize)
            .min(self.tool_output_total.max(1))
    }
}

/// The limits of the source guards in the model's tokens (`guard.sourceLimits`): those given in
/// the options, the defaults above for the others, resolved against the usable limit (what a
/// blank field of a settings form stands for). Clearing's two are 0 when clearing is off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceLimits {
    pub tool_output_limit: u32,
    pub tool_output_total: u32,
    pub attachment_budget: u32,
    pub protect_tokens: u32,
    pub clear_at_least: u32,
}

impl SourceLimits {
    pub fn of(o: &SourceOptions, usable_limit: u32) -> SourceLimits {
        let l = Limits::resolve(&SourceOptions { emergency: false, ..o.clone() }, usable_limit, 1.0);
        let clearing = o.clearing().is_some();
        SourceLimits {
            tool_output_limit: u32_of(l.tool_output),
            tool_output_total: u32_of(l.tool_output_total),
            attachment_budget: u32_of(l.attachments),
            protect_tokens: if clearing { u32_of(l.protect) } else { 0 },
            clear_at_least: if clearing { u32_of(l.clear_at_least) } else { 0 },
        }
    }
}

/// What the caller knows of the request's size, for the clearing plan: each message's tokens
/// (as counted before layer 1), the tokens outside the messages, and when a step is due (see
/// `clearing::Params`), in tokens of the counting encoding. Without it only the tool outputs'
/// total can make a step due.
#[derive(Debug, Clone, Default)]
pub struct RequestTokens {
    pub per_message: Vec<usize>,
    pub base: usize,
    pub trigger: usize,
    pub cold_trigger: usize,
    pub tool_total_due: bool,
    /// The frontiers the previous pass of this guard left (`Cleared::frontier`; `None` for a
    /// guard's first pass): the plan starts from them and moves them only when the request is
    /// due a step now (`clearing::plan_from`); without them it replays the conversation.
    pub floor: Option<Frontier>,
    /// Steps compact a band of outputs (see `clearing::Params::band`).
    pub band: bool,
}

/// Where the clearing frontiers stand, by the tool call ids of the last cleared and the last
/// compacted output (`None`: none, or an output without an id), in the conversation whose first
/// tool output has the id `first`: a pass over another conversation (the guard given a different
/// one) plans from scratch instead of from these frontiers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontier {
    pub cleared: Option<String>,
    pub compacted: Option<String>,
    pub first: Option<String>,
}

/// What clearing did in a pass: the message indices of the cleared and of the compacted-by-age
/// outputs, and the tokens it saved (counting encoding).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cleared {
    pub cleared: Vec<usize>,
    pub compacted: Vec<usize>,
    pub saved: usize,
    /// The plan's work counters (steps found replaying the conversation, step evaluations).
    pub steps: u32,
    pub evaluations: u32,
    /// Where the frontiers stand after this pass.
    pub frontier: Frontier,
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

/// The call a tool result answers: its message index, its place in that message's calls, the
/// tool's name and the arguments (JSON text).
#[derive(Debug, Clone, Copy)]
struct CallAt<'a> {
    message: usize,
    index: usize,
    name: &'a str,
    arguments: &'a str,
}

/// The calls of the request by id (a repeated id: the latest before the result wins, as the
/// results are read in order).
fn calls_by_id(messages: &[Message]) -> FxHashMap<&str, CallAt<'_>> {
    let mut by_id = FxHashMap::default();
    for (message, m) in messages.iter().enumerate() {
        for (index, c) in m.tool_calls.iter().enumerate() {
            by_id.insert(
                c.id.as_str(),
                CallAt { message, index, name: c.name.as_str(), arguments: c.arguments.as_str() },
            );
        }
    }
    by_id
}

/// One text tool result of the request.
struct Output<'a> {
    at: usize,
    /// Its content key, when the caller holds it unchanged (`Known`).
    key: Option<u64>,
    tokens: usize,
    cap: usize,
    call: Option<CallAt<'a>>,
    call_id: Option<&'a str>,
    tool: Option<&'a str>,
    /// Never compacted or cleared by age (an excluded tool, clearing off, or already a stub).
    fixed: bool,
}

/// The form an output takes in this pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Kept,
    /// Compacted by age, to the band's limit.
    Aged,
    Cleared,
}

/// The limit of an output in the compacted band: a quarter of what it takes when kept (at least
/// 256 tokens: shorter outputs stay as they are until they are cleared).
fn band_limit(o: &Output<'_>) -> usize {
    (o.tokens.min(o.cap) / 4).max(256)
}

/// The stub of a cleared output.
fn stub_of(o: &Output<'_>, opts: &SourceOptions) -> String {
    super::stub::stub_text(o.tool, o.call.map(|c| c.arguments), o.tokens, opts.retrieval_tool.as_deref(), o.call_id)
}

/// Compact tool outputs: outputs over their limit, and by age (`clearing.rs`): a copy of
/// `messages` with the rewritten ones replaced (each message is copied once: a compacted output
/// is not copied whole first), the trace (`None` when nothing changed: no noise), and what
/// clearing did.
pub fn guard_tool_outputs(
    messages: &[Message],
    limits: &Limits,
    sizes: Option<&RequestTokens>,
    pass: &mut Pass<'_>,
) -> (Vec<Message>, Option<Trace>, Cleared) {
    let (enc, opts, now) = (pass.enc, pass.opts, pass.now);
    let (memo, known) = (&mut *pass.memo, &mut *pass.known);
    let t0 = now();
    let calls = calls_by_id(messages);
    let clearing = opts.clearing();
    let mut outputs: Vec<Output<'_>> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if m.role != Role::Tool || !is_text(m) {
            continue;
        }
        let call = m.tool_call_id.as_deref().and_then(|id| calls.get(id)).copied();
        let tool = call.map(|c| c.name).or(m.name.as_deref());
        let key = known.key(m);
        let text = || tool_text(m).unwrap_or_default();
        let tokens = match key {
            Some(k) => memo.count_message(k, || crate::tokens::count(enc, &text())),
            None => memo.count(enc, &text()),
        };
        let fixed = match &clearing {
            None => true,
            Some(c) => tool.is_some_and(|t| c.exclude_tools.iter().any(|x| x == t)) || super::stub::is_stub(&text()),
        };
        outputs.push(Output {
            at: i,
            key,
            tokens,
            cap: limits.cap(tool),
            call,
            call_id: m.tool_call_id.as_deref(),
            tool,
            fixed,
        });
    }
    let (forms, plan, frontier) = plan_forms(messages, &outputs, enc, limits, opts, sizes, memo);
    // The rewritten messages by index (few of them).
    let mut replaced: BTreeMap<usize, Message> = BTreeMap::new();
    let before: usize = outputs.iter().map(|o| o.tokens).sum();
    let mut after = before;
    let (mut truncated, mut report) =
        (0usize, Cleared { steps: plan.steps, evaluations: plan.evaluations, frontier, ..Cleared::default() });
    for (o, form) in outputs.iter().zip(forms) {
        let Some(m) = messages.get(o.at) else { continue };
        if form == Form::Cleared {
            let (out, tokens) = cleared_output(m, o, enc, opts, memo, known);
            // A short output ("ok", "Tool execution denied.") is no larger than its stub:
            // clearing it would only make the request longer; it stays as it is.
            if tokens >= o.tokens.min(o.cap) {
                continue;
            }
            after = after - o.tokens + tokens;
            report.saved += o.tokens.min(o.cap).saturating_sub(tokens);
            report.cleared.push(o.at);
            replaced.insert(o.at, out);
            truncated += 1;
            if clearing.as_ref().is_some_and(|c| c.clear_arguments) {
                if let Some(c) = o.call {
                    let host = replaced
                        .entry(c.message)
                        .or_insert_with(|| messages.get(c.message).cloned().unwrap_or_default());
                    // A call the provider signed (Gemini's `thoughtSignature`) is never edited.
                    if let Some(tc) =
                        host.tool_calls.get_mut(c.index).filter(|tc| !tc.extra.contains_key("thoughtSignature"))
                    {
                        if tc.arguments.as_str() != "{}" {
                            tc.arguments = "{}".into();
                            host.touch();
                        }
                    }
                }
            }
            continue;
        }
        // An output already compacted (by this guard, by age, on an earlier call: a request made
        // of the guard's own output) stays as it is in the band.
        let aged_before = form == Form::Aged && tool_text(m).is_some_and(|t| super::tool_output::is_compacted(&t));
        let limit = if form == Form::Aged && !aged_before { band_limit(o) } else { o.cap };
        if form == Form::Aged {
            report.compacted.push(o.at);
        }
        if let Some((out, tokens)) = compacted_output(m, o, limit, enc, opts, memo, known) {
            if form == Form::Aged {
                report.saved += o.tokens.min(o.cap).saturating_sub(tokens);
            }
            after = after - o.tokens + tokens;
            replaced.insert(o.at, out);
            truncated += 1;
        }
    }
    let out = messages.iter().enumerate().map(|(i, m)| replaced.remove(&i).unwrap_or_else(|| m.clone())).collect();
    if truncated == 0 {
        return (out, None, report);
    }
    let mut t = Trace::new(Operation::ToolOutput, Status::Applied, now() - t0, before, after);
    t.messages_truncated = Some(u32_of(truncated));
    t.messages_cleared = clearing.is_some().then(|| u32_of(report.cleared.len()));
    t.emergency = Some(opts.emergency);
    (out, Some(t), report)
}

/// Each output's form: replay the conversation's growth (`clearing::plan`) over the outputs
/// clearing may act on.
fn plan_forms(
    messages: &[Message],
    outputs: &[Output<'_>],
    enc: Encoding,
    limits: &Limits,
    opts: &SourceOptions,
    sizes: Option<&RequestTokens>,
    memo: &mut Remembered,
) -> (Vec<Form>, Plan, Frontier) {
    let movable: Vec<usize> = outputs.iter().enumerate().filter(|(_, o)| !o.fixed).map(|(j, _)| j).collect();
    if movable.is_empty() {
        return (vec![Form::Kept; outputs.len()], Plan::default(), Frontier::default());
    }
    let candidates: Vec<Candidate> = movable
        .iter()
        .filter_map(|&j| outputs.get(j))
        .map(|o| Candidate { at: o.at, kept: o.tokens.min(o.cap) })
        .collect();
    // Each message's tokens before clearing, tool outputs under their limit.
    let mut tokens: Vec<usize> = match sizes {
        Some(s) if s.per_message.len() == messages.len() => s.per_message.clone(),
        _ => vec![0; messages.len()],
    };
    for o in outputs {
        if let Some(t) = tokens.get_mut(o.at) {
            *t = t.saturating_sub(o.tokens) + o.tokens.min(o.cap);
        }
    }
    let params = Params {
        protect: limits.protect,
        total: limits.clear_total,
        clear_at_least: limits.clear_at_least,
        trigger: sizes.map_or(usize::MAX, |s| s.trigger),
        cold_trigger: sizes.map_or(usize::MAX, |s| s.cold_trigger),
        tool_total_due: sizes.is_none_or(|s| s.tool_total_due),
        band: sizes.is_none_or(|s| s.band),
        base: sizes.map_or(0, |s| s.base),
    };
    struct Sizes<'a, 'b> {
        messages: &'a [Message],
        outputs: Vec<&'a Output<'b>>,
        enc: Encoding,
        opts: &'a SourceOptions,
        memo: &'a mut Remembered,
    }
    impl Forms for Sizes<'_, '_> {
        fn compacted(&mut self, i: usize) -> usize {
            let Some(o) = self.outputs.get(i) else { return 0 };
            let text = self.messages.get(o.at).and_then(tool_text).unwrap_or_default();
            if super::tool_output::is_compacted(&text) {
                return o.tokens;
            }
            let co = CompactOptions {
                limit: band_limit(o),
                emergency: false,
                retrieval_tool: self.opts.retrieval_tool.clone(),
                call_id: self.messages.get(o.at).and_then(|m| m.tool_call_id.as_deref()).map(str::to_string),
            };
            self.memo.compact(self.enc, &text, &co).map_or(o.tokens, |c| c.tokens)
        }
        fn stub(&mut self, i: usize) -> usize {
            let Some(o) = self.outputs.get(i) else { return 0 };
            let stub = stub_of(o, self.opts);
            // An output no larger than its stub stays as it is (see `guard_tool_outputs`).
            self.memo.count(self.enc, &stub).min(o.tokens.min(o.cap))
        }
    }
    let mut forms_of =
        Sizes { messages, outputs: movable.iter().filter_map(|&j| outputs.get(j)).collect(), enc, opts, memo };
    // Where the previous pass of this guard left the frontiers, when it left them at outputs
    // this request still has (or at none).
    // A frontier output may be a stub by now (a request made of the guard's own output):
    // the frontier is after every movable output up to it.
    let id_of = |c: usize| movable.get(c).and_then(|&j| outputs.get(j)).and_then(|o| o.call_id);
    let at = |id: &Option<String>| match id.as_deref() {
        None => Some(0),
        Some(id) => {
            let j = outputs.iter().position(|o| o.call_id == Some(id))?;
            Some(movable.iter().take_while(|&&m| m <= j).count())
        }
    };
    let first = outputs.first().and_then(|o| o.call_id).map(str::to_string);
    let start = sizes
        .and_then(|s| s.floor.as_ref())
        .filter(|f| f.first == first)
        .and_then(|f| Some((at(&f.cleared)?, at(&f.compacted)?)));
    let plan = match start {
        Some(start) => clearing::plan_from(&candidates, &tokens, &params, &mut forms_of, start),
        None => clearing::plan(&candidates, &tokens, &params, &mut forms_of),
    };
    let frontier = Frontier {
        cleared: plan.cleared.checked_sub(1).and_then(id_of).map(str::to_string),
        compacted: plan.compacted.checked_sub(1).and_then(id_of).map(str::to_string),
        first,
    };
    let mut forms = vec![Form::Kept; outputs.len()];
    for (c, &j) in movable.iter().enumerate() {
        if let Some(f) = forms.get_mut(j) {
            *f = if c < plan.cleared {
                Form::Cleared
            } else if c < plan.compacted {
                Form::Aged
            } else {
                Form::Kept
            };
        }
    }
    (forms, plan, frontier)
}

/// A cleared output: its stub (remembered for a message the caller holds), and its tokens.
fn cleared_output(
    m: &Message,
    o: &Output<'_>,
    enc: Encoding,
    opts: &SourceOptions,
    memo: &mut Remembered,
    known: &mut dyn Known,
) -> (Message, usize) {
    let stub = stub_of(o, opts);
    let make = |memo: &mut Remembered| {
        let mut out = m.clone();
        let tokens = memo.count(enc, &stub);
        set_tool_text(&mut out, stub.clone());
        (out, tokens)
    };
    match o.key {
        Some(k) => {
            let sk = super::remembered::mix(k, stub.as_str());
            if let Some(Some((out, tokens))) = memo.output_by(sk, 0, false, None, None) {
                return (out.clone(), tokens);
            }
            let (mut out, tokens) = make(memo);
            out.made = Made(Some(super::remembered::made_tag()));
            known.stamp(&out);
            memo.keep_output_by(sk, 0, false, None, None, Some((out.clone(), tokens)));
            (out, tokens)
        }
        None => make(memo),
    }
}

/// An output compacted to `limit`, or `None` when it fits (remembered for a message the caller
/// holds).
fn compacted_output(
    m: &Message,
    o: &Output<'_>,
    limit: usize,
    enc: Encoding,
    opts: &SourceOptions,
    memo: &mut Remembered,
    known: &mut dyn Known,
) -> Option<(Message, usize)> {
    // A message ctxguard holds unchanged: its compacted form (facts included) remembered.
    if let Some(remembered) = o.key.and_then(|k| {
        memo.output_by(k, limit, opts.emergency, opts.retrieval_tool.as_deref(), m.tool_call_id.as_deref())
    }) {
        return remembered.map(|(out, tokens)| (out.clone(), tokens));
    }
    let co = CompactOptions {
        limit,
        emergency: opts.emergency,
        retrieval_tool: opts.retrieval_tool.clone(),
        call_id: m.tool_call_id.as_deref().map(str::to_string),
    };
    let text = tool_text(m).unwrap_or_default();
    let kept = memo.compact(enc, &text, &co).filter(|c| c.tokens < o.tokens).map(|c| {
        let mut out = m.clone();
        set_tool_text(&mut out, c.text);
        (out, c.tokens)
    });
    match o.key {
        Some(k) => {
            let mut kept = kept;
            if let Some((out, _)) = &mut kept {
                // Remembered: its copies in later calls write the same wire value.
                out.made = Made(Some(super::remembered::made_tag()));
                known.stamp(out);
            }
            memo.keep_output(k, &co, kept.clone());
            kept
        }
        None => kept,
    }
}

/// Preview attachments in place. Returns the trace, or `None` when there is no attachment.
pub fn guard_attachments(
    messages: &mut [Message],
    enc: Encoding,
    limits: &Limits,
    memo: &mut Remembered,
    known: &dyn Known,
    now: &dyn Fn() -> f64,
) -> Option<Trace> {
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

/// What one layer-1 pass works with besides the messages: the counting encoding, the options,
/// the work remembered by content, the messages the caller holds (`Known`), and the clock.
pub struct Pass<'a> {
    pub enc: Encoding,
    pub opts: &'a SourceOptions,
    pub memo: &'a mut Remembered,
    pub known: &'a mut dyn Known,
    pub now: &'a dyn Fn() -> f64,
}

/// Both source guards over a copy of `messages` under a usable limit (limits in the model's
/// tokens, shrunk by `scale`, its estimate factor); the input is never modified.
pub fn guard_sources(
    messages: &[Message],
    usable_limit: u32,
    scale: f64,
    sizes: Option<&RequestTokens>,
    mut pass: Pass<'_>,
) -> (Vec<Message>, Vec<Trace>, Cleared) {
    let limits = Limits::resolve(pass.opts, usable_limit, scale);
    let mut traces = Vec::new();
    pass.memo.begin();
    let (mut out, trace, cleared) = guard_tool_outputs(messages, &limits, sizes, &mut pass);
    traces.extend(trace);
    let Pass { enc, memo, known, now, .. } = pass;
    traces.extend(guard_attachments(&mut out, enc, &limits, memo, known, now));
    memo.end();
    (out, traces, cleared)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> std::result::Result<SourceOptions, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn source_limits_are_the_options_or_the_defaults_resolved() {
        let of = |json: &str, usable| SourceLimits::of(&read(json).unwrap(), usable);
        let d = |a, b, c, p, q| SourceLimits {
            tool_output_limit: a,
            tool_output_total: b,
            attachment_budget: c,
            protect_tokens: p,
            clear_at_least: q,
        };
        assert_eq!(of("{}", 100_000), d(8_000, 50_000, 12_500, 30_000, 15_000));
        assert_eq!(of("{}", 1_000_000), d(8_000, 500_000, 16_000, 40_000, 20_000));
        assert_eq!(of(r#"{"clearToolOutputs":false,"emergency":true}"#, 100_000), d(8_000, 50_000, 12_500, 0, 0));
        assert_eq!(
            of(r#"{"toolOutputLimit":1000,"attachmentBudget":400,"toolOutputTotal":9000}"#, 100_000),
            d(1_000, 9_000, 400, 9_000, 4_500)
        );
    }

    #[test]
    fn clear_tool_outputs_reads_a_switch_or_options_with_field_errors() {
        assert_eq!(read(r#"{"clearToolOutputs":false}"#).unwrap().clearing(), None);
        assert_eq!(read(r#"{"clearToolOutputs":true}"#).unwrap().clearing(), Some(ClearOptions::default()));
        let o = read(r#"{"clearToolOutputs":{"protectTokens":9000,"excludeTools":["search"]}}"#).unwrap();
        let c = o.clearing().unwrap();
        assert_eq!(
            (c.protect_tokens, c.exclude_tools, c.clear_arguments),
            (Some(9000), vec!["search".to_string()], false)
        );
        let negative = read(r#"{"clearToolOutputs":{"protectTokens":-5}}"#).unwrap_err();
        assert!(negative.contains("invalid value: integer `-5`, expected u32"), "{negative}");
        let typo = read(r#"{"clearToolOutputs":{"protectToken":5}}"#).unwrap_err();
        assert!(typo.contains("unknown field `protectToken`"), "{typo}");
        let tools = read(r#"{"clearToolOutputs":{"excludeTools":"search"}}"#).unwrap_err();
        assert!(tools.contains("expected a sequence"), "{tools}");
        let other = read(r#"{"clearToolOutputs":"on"}"#).unwrap_err();
        assert!(other.contains("true, false or {"), "{other}");
    }
}
