//! The guard's counting part: the counting profile of its model, the per-message count cache
//! shared by every pass, and the facts it keeps on messages within one top-level call.

use crate::count::{self, Profile};
use crate::format::Request;
use crate::message::cache::{content_key, message_key, CountCache};
use crate::message::{Facts, Message, MessageCount, Role};
use crate::provider::models::ModelInfo;
use crate::sources;
use crate::tokens::Encoding;

/// The whole-request count with the per-message breakdown.
#[derive(Debug, Clone)]
pub struct Counted {
    pub per_message: Vec<MessageCount>,
    pub tool_definitions: u32,
    pub priming: u32,
    pub total: u32,
}

/// The tool definitions of a request: their content key and raw tokens (which depend on the
/// first system message for OpenAI).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolsFacts {
    pub key: u64,
    pub tokens: usize,
}

/// Guards created so far (each counter gets its own number).
static GUARDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

pub struct Counter {
    /// The counting encoding and the model's estimate factor (1 for exact models).
    pub encoding: Encoding,
    pub factor: f64,
    pub(crate) profile: Profile,
    /// Mixed into every content key: counts depend on the profile.
    pub(crate) salt: u64,
    cache: CountCache<MessageCount>,
    /// The host's checkpoint key: a summary is recognized (and counted as one) only when sealed
    /// under it.
    pub checkpoint_key: Option<String>,
    /// This guard's number, for the facts kept on messages (`Message::memo`).
    pub(crate) id: u64,
    /// The top-level call running now (`Guard::scoped`): facts kept on messages during it are
    /// valid until it ends.
    pub(crate) scope: Option<u64>,
    pub(crate) scopes: u64,
}

impl Counter {
    pub fn new(model: &ModelInfo, profile: Profile, checkpoint_key: Option<String>) -> Counter {
        let salt = content_key(&format!("{:?}", profile), 0);
        Counter {
            encoding: model.encoding,
            factor: model.estimate_factor,
            profile,
            salt,
            cache: CountCache::default(),
            checkpoint_key,
            id: GUARDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            scope: None,
            scopes: 0,
        }
    }

    /// Tokens of a text for this guard's model (the estimate factor applied).
    pub fn count_text(&self, text: &str) -> usize {
        crate::base::round::count_scale(crate::tokens::count(self.encoding, text), self.factor) as usize
    }

    /// A budget in the model's tokens, in the counting encoding's tokens (divided by the factor).
    pub fn raw_budget(&self, model_tokens: usize) -> usize {
        (model_tokens as f64 / self.factor.max(1.0)).floor() as usize
    }

    /// Raw tokens in the model's tokens (the factor applied, rounded up).
    pub fn scale(&self, raw: usize) -> u32 {
        crate::base::round::count_scale(raw, self.factor)
    }

    /// Count a request without the calibration (the table's estimate), reusing cached
    /// per-message counts.
    pub fn count_raw(&mut self, request: &Request) -> Counted {
        self.cache.begin_pass();
        let per_message = request.messages.iter().map(|m| self.facts(m).raw).collect();
        let rc = count::count_request_from(
            &self.profile,
            &request.messages,
            per_message,
            &request.tools,
            &request.tool_choice,
        );
        self.cache.end_pass();
        Counted {
            tool_definitions: to_u32(rc.tool_definitions),
            priming: to_u32(rc.priming),
            total: to_u32(rc.total),
            per_message: rc.per_message,
        }
    }

    /// What `measure` needs of one message, computed once per content: its content key, raw
    /// count (through the count cache), role and markers. Within a top-level call (see
    /// `Guard::scoped`) they are kept on the message, so the call's later passes (layer 3's
    /// count, the final measure, `note_sent`) do not hash it again.
    pub fn facts(&mut self, m: &Message) -> Facts {
        self.facts_in(m, self.scope)
    }

    /// Keep `m`'s facts on it for as long as it is unchanged (messages only ctxguard holds: the
    /// store's, layer 1's remembered outputs).
    pub(crate) fn stamp(&mut self, m: &Message) -> Facts {
        // Outside any scope, so that the facts are not kept for this call only first.
        let f = self.facts_in(m, None);
        m.facts.set(self.id, 0, f);
        f
    }

    /// The facts `m` carries for this guard, when it carries them for good (a message the guard
    /// holds unchanged).
    pub(crate) fn kept_key(&self, m: &Message) -> Option<u64> {
        m.facts.get(self.id, None).map(|f| f.key)
    }

    fn facts_in(&mut self, m: &Message, scope: Option<u64>) -> Facts {
        if let Some(f) = m.facts.get(self.id, scope) {
            debug_assert_eq!(f.key, message_key(m, self.salt), "a message changed without `touch`");
            self.cache.get_or_insert_with(f.key, || f.raw);
            return f;
        }
        let key = message_key(m, self.salt);
        let profile = &self.profile;
        let summary_block = m.role == Role::System
            && crate::message::checkpoint::is_checkpoint_summary(m, self.checkpoint_key.as_deref());
        // A summary is counted as the model receives it: its closing line without the seal
        // (`covers=…`, `tag=…`) that only the stored chain carries.
        let raw = self.cache.get_or_insert_with(key, || {
            let visible = summary_block
                .then(|| crate::message::checkpoint::model_visible_content(&m.content))
                .flatten()
                .map(|content| Message { content, ..m.clone() });
            count::count_message(profile, visible.as_ref().unwrap_or(m))
        });
        let f = Facts {
            key,
            raw,
            role: m.role,
            is_summary: m.role == Role::System
                && (m.markers.summary_compacted || summary_block || m.is_evidence_note()),
            compacted: m.markers.summary_compacted
                || summary_block
                || m.markers.compacted_tool_output
                || m.markers.checkpoint_retained
                || (matches!(m.role, Role::Tool | Role::User) && carries_guard_marker(&m.content)),
            provider_compaction: m.holds_compaction(),
        };
        if let Some(scope) = scope {
            m.facts.set(self.id, scope, f);
        }
        f
    }

    /// The tool definitions of `request` (their tokens depend on its first system message).
    pub fn tools(&self, request: &Request) -> ToolsFacts {
        self.tools_after(request.messages.iter().find(|m| m.role == Role::System), request)
    }

    /// The tool definitions of `request` when its first system message is `first_system`.
    pub fn tools_after(&self, first_system: Option<&Message>, request: &Request) -> ToolsFacts {
        let system = first_system.map(std::slice::from_ref).unwrap_or(&[]);
        match count::deferred::in_context(&request.tools, &request.messages) {
            None => ToolsFacts {
                key: content_key(&request.tools, self.salt),
                tokens: count::tool_definition_tokens(&self.profile, system, &request.tools, &request.tool_choice),
            },
            Some(tools) => ToolsFacts {
                key: content_key(&tools, self.salt),
                tokens: count::tool_definition_tokens(&self.profile, system, &tools, &request.tool_choice),
            },
        }
    }

    /// The content key of a request's tool definitions.
    pub fn tools_key(&self, request: &Request) -> u64 {
        content_key(&request.tools, self.salt)
    }

    /// Tokens the provider adds to every request (reply priming).
    pub fn reply_priming(&self) -> usize {
        self.profile.framing.reply_priming
    }

    /// Tokens outside the messages' own counts for a request of these messages (the reply
    /// priming, or a chat template's request-level tokens: `count::priming`).
    pub fn priming_of(&self, facts: &[Facts]) -> usize {
        count::priming(&self.profile, facts.iter().map(|f| (f.role, f.raw)))
    }

    /// Start a pass of the count cache (entries the pass uses survive its eviction).
    pub fn begin_pass(&mut self) {
        self.cache.begin_pass();
    }

    /// End the pass: entries it did not use go once the cache is more than twice its size.
    pub fn end_pass(&mut self) {
        self.cache.end_pass();
    }

    /// Use the count of a message known by its facts in the current pass (keeps it cached).
    pub fn keep_counted(&mut self, f: &Facts) {
        self.cache.get_or_insert_with(f.key, || f.raw);
    }

    /// Entries, hits and misses of the count cache.
    pub fn cache_stats(&self) -> (usize, u64, u64) {
        (self.cache.len(), self.cache.hits, self.cache.misses)
    }
}

/// Whether a message's text carries a source-guard marker (compacted output or preview).
fn carries_guard_marker(content: &crate::message::Content) -> bool {
    let has = |t: &str| {
        crate::base::scan::contains_any(
            t,
            &[sources::tool_output::MARKER, sources::attachment::MARKER, sources::stub::CLEARED_MARKER],
        )
    };
    match content {
        crate::message::Content::Text(t) => has(t),
        crate::message::Content::Parts(parts) => parts.iter().any(|p| match p {
            crate::message::Part::Text { text, .. } => has(text),
            crate::message::Part::File { text: Some(t), .. } => has(t),
            _ => false,
        }),
    }
}

/// Scale every bucket by the calibration factor (rounded to nearest; totals re-summed).
pub(crate) fn calibrate(raw: Counted, c: f64) -> Counted {
    let s = |n: usize| (n as f64 * c).round() as usize;
    let per_message: Vec<MessageCount> = raw
        .per_message
        .iter()
        .map(|m| {
            let (text, attachments, images, tool_calls, framing) =
                (s(m.text), s(m.attachments), s(m.images), s(m.tool_calls), s(m.framing));
            MessageCount {
                total: text + attachments + images + tool_calls + framing,
                text,
                attachments,
                images,
                tool_calls,
                framing,
                template: m.template,
            }
        })
        .collect();
    let tool_definitions = to_u32(s(raw.tool_definitions as usize));
    let priming = to_u32(s(raw.priming as usize));
    let body = per_message.iter().fold(0u32, |a, m| a.saturating_add(to_u32(m.total)));
    Counted {
        per_message,
        tool_definitions,
        priming,
        total: body.saturating_add(tool_definitions).saturating_add(priming),
    }
}

pub(crate) fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
