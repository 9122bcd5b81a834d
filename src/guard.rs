//! `ContextGuard`'s core: the resolved model, budget and counting profile, and a per-message
//! count cache shared by every pass.

use serde::Deserialize;

use crate::budget::{Budget, BudgetConfig};
use crate::cache::{content_key, CountCache};
use crate::count::{self, MessageCount, Profile};
use crate::error::Result;
use crate::format::{Format, Request};
use crate::guards::{self, SourceOptions, Trace};
use crate::message::{Message, Role};
use crate::metrics::{CompactionRecord, ContextMetrics, CountedMessage, SourceBreakdown};
use crate::models::{self, CountKind, ModelInfo, Provider};
use crate::tokens::Encoding;

/// `new ContextGuard(config)`; every field optional when `model` is in the table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuardConfig {
    pub model: Option<String>,
    pub context_window: Option<f64>,
    pub max_output_tokens: Option<f64>,
    pub reserved_output_tokens: Option<f64>,
    pub economic_budget: Option<f64>,
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
}

/// Resolve a model name plus an optional encoding override.
///
/// - No model: OpenAI Chat Completions counting with the given encoding (`o200k_base` by
///   default), exact — the rules are published; only the limits are unknown.
/// - A model and an explicit encoding: "count with exactly this tokenizer", so the estimate
///   factor drops to 1; the count is `exact` only for OpenAI models, whose framing is published.
pub fn resolve_model(model: Option<&str>, encoding: Option<Encoding>) -> ModelInfo {
    let name = model.map(str::trim).filter(|m| !m.is_empty());
    let mut info = models::info(name.unwrap_or(""));
    if name.is_none() {
        info.provider = Provider::Openai;
        info.kind = CountKind::Exact;
        info.estimate_factor = 1.0;
    }
    if let Some(enc) = encoding {
        info.encoding = enc;
        info.estimate_factor = 1.0;
        if name.is_some() {
            info.kind = if info.provider == Provider::Openai && info.known { CountKind::Exact } else { CountKind::Estimate };
        }
    }
    info
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
}

/// What `guard_sources` returns: the model-visible request, its metrics and the traces.
#[derive(Debug, Clone)]
pub struct SourcesOutcome {
    pub request: Request,
    pub metrics: ContextMetrics,
    pub traces: Vec<Trace>,
}

impl Guard {
    pub fn new(config: &GuardConfig) -> Result<Guard> {
        let model = resolve_model(config.model.as_deref(), config.encoding);
        let budget = Budget::resolve(
            &BudgetConfig {
                context_window: config.context_window,
                max_output_tokens: config.max_output_tokens,
                reserved_output_tokens: config.reserved_output_tokens,
                economic_budget: config.economic_budget,
                trigger_ratio: config.trigger_ratio,
                target_ratio: config.target_ratio,
            },
            &model,
        )?;
        let profile = models::profile(&model);
        let salt = content_key(&format!("{:?}", profile), 0);
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
                emergency: false,
            },
            last_compaction: None,
            skip_next_compaction: false,
        })
    }

    /// Count a request, reusing cached per-message counts.
    pub fn count(&mut self, request: &Request) -> Counted {
        self.cache.begin_pass();
        let profile = &self.profile;
        let salt = self.salt;
        let cache = &mut self.cache;
        let per_message = request
            .messages
            .iter()
            .map(|m| cache.get_or_insert_with(content_key(m, salt), || count::count_message(profile, m)))
            .collect();
        let rc = count::count_request_from(profile, &request.messages, per_message, &request.tools, &request.tool_choice);
        self.cache.end_pass();
        Counted {
            tool_definitions: to_u32(rc.tool_definitions),
            priming: to_u32(rc.priming),
            total: to_u32(rc.total),
            per_message: rc.per_message,
        }
    }

    pub fn measure(&mut self, request: &Request) -> ContextMetrics {
        let counted = self.count(request);
        let mut breakdown = SourceBreakdown { tool_definitions: counted.tool_definitions, framing: counted.priming, ..Default::default() };
        for (m, c) in request.messages.iter().zip(&counted.per_message) {
            breakdown.add(&counted_message(m, c));
        }
        let compacted = request.messages.iter().any(|m| {
            m.markers.summary_compacted
                || m.markers.compacted_tool_output
                || m.markers.checkpoint_retained
                || (matches!(m.role, Role::Tool | Role::User) && carries_guard_marker(&m.content))
        });
        ContextMetrics::new(
            &self.model.model,
            self.model.encoding,
            self.model.kind,
            &self.budget,
            breakdown,
            request.messages.len(),
            compacted,
            self.last_compaction.clone(),
        )
    }

    /// Layer 1 over a copy of the request: tool-output compaction and attachment previews.
    pub fn guard_sources(&mut self, request: &Request, emergency: bool, now: &dyn Fn() -> f64) -> SourcesOutcome {
        let opts = SourceOptions { emergency, ..self.sources.clone() };
        let (messages, traces) = guards::guard_sources(
            &request.messages,
            self.model.encoding,
            self.budget.usable_limit,
            self.model.estimate_factor,
            &opts,
            now,
        );
        let out = Request { messages, ..request.clone() };
        let metrics = self.measure(&out);
        SourcesOutcome { request: out, metrics, traces }
    }

    pub fn cache_stats(&self) -> (usize, u64, u64) {
        (self.cache.len(), self.cache.hits, self.cache.misses)
    }
}

/// Whether a message's text carries a source-guard marker (compacted output or preview).
fn carries_guard_marker(content: &crate::message::Content) -> bool {
    let has = |t: &str| t.contains(guards::tool_output::MARKER) || t.contains(guards::attachment::MARKER);
    match content {
        crate::message::Content::Text(t) => has(t),
        crate::message::Content::Parts(parts) => parts.iter().any(|p| match p {
            crate::message::Part::Text { text, .. } => has(text),
            crate::message::Part::File { text: Some(t), .. } => has(t),
            _ => false,
        }),
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Split one message's count into the breakdown's buckets.
pub fn counted_message(m: &Message, c: &MessageCount) -> CountedMessage {
    CountedMessage {
        role: m.role,
        is_summary: m.markers.summary_compacted,
        body: to_u32(c.text + c.tool_calls),
        attachments: to_u32(c.attachments),
        images: to_u32(c.images),
        framing: to_u32(c.framing),
    }
}
