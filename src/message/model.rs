//! The internal message model (docs/design.md, "Messages and formats"). Adapters in `format/` convert the wire formats to and
//! from it; everything that decides (counting, guards, compaction) works on this model only.
//!
//! Unknown wire fields are kept in `extra` maps and written back untouched.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::base::text::Text;

/// JSON object used for unknown fields carried through untouched.
pub type Extra = Map<String, Value>;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    #[default]
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// Where an image comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ImageSource {
    /// An `https:` URL or a `data:` URL, as the wire had it.
    Url(String),
    /// Base64 bytes with a media type (Anthropic `source.type = "base64"`).
    Base64 { media_type: String, data: Text },
    /// A provider file id or anything else we cannot look into.
    Other,
}

/// One content part. Wire-specific fields ctxguard does not interpret live in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Part {
    Text {
        text: Text,
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        extra: Extra,
    },
    Image {
        source: ImageSource,
        /// OpenAI `detail`: `low`, `high` or `auto`.
        detail: Option<String>,
        /// Pixel size when the host knows it (or ctxguard read it from the data URL header).
        width: Option<u32>,
        height: Option<u32>,
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        extra: Extra,
    },
    /// A file / document / attachment. `text` is the extracted text the host supplied, if any.
    File {
        name: Option<String>,
        media_type: Option<String>,
        text: Option<Text>,
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        extra: Extra,
    },
    Audio {
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        extra: Extra,
    },
    /// Position of `tool_calls[index]` among the content blocks (Anthropic interleaves
    /// `tool_use` blocks with text); lets the adapter restore the original block order.
    ToolCallRef { index: usize },
    /// A part kind ctxguard does not know: carried through, counted as its JSON text.
    Unknown { value: Value },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(Text),
    Parts(Vec<Part>),
}

impl Default for Content {
    fn default() -> Self {
        Content::Text(Text::default())
    }
}

impl Content {
    /// All text of the content, parts joined with newlines (images and files excluded).
    pub fn text(&self) -> String {
        match self {
            Content::Text(t) => t.to_string(),
            Content::Parts(parts) => {
                let mut out = String::new();
                for p in parts {
                    if let Part::Text { text, .. } = p {
                        if !out.is_empty() {
                            out.push('\n');
                        }
                        out.push_str(text);
                    }
                }
                out
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            Content::Text(t) => t.is_empty(),
            Content::Parts(p) => p.is_empty(),
        }
    }
}

/// An assistant's call of a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub id: Text,
    pub name: Text,
    /// Arguments as the JSON text the model produced (OpenAI) or the serialized `input` (Anthropic).
    pub arguments: Text,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Extra,
}

/// The first words of the mechanical fallback's evidence note (`pipeline/evidence.rs`): counted
/// as a summary in the metrics' breakdown, since it stands where the summary would.
pub const EVIDENCE_MARKER: &str = "[ctxguard:evidence]";

/// ctxguard's own markers. Serialized on the wire under the `ctxguard` key of a message.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Markers {
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub summary_compacted: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub checkpoint_retained: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pinned: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub compacted_tool_output: bool,
}

impl Markers {
    pub fn is_empty(&self) -> bool {
        *self == Markers::default()
    }
}

/// Which wire shape a message came from, so the adapter can write it back the same way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Wire {
    /// The wire role when it differs from `role` (`developer`, `function`).
    pub role: Option<String>,
    /// The message used the legacy `function_call` field instead of `tool_calls`.
    pub legacy_function_call: bool,
    /// Anthropic: index of the wire message this one was split from (tool_result blocks of one
    /// user message become several `Tool` messages plus one `User` message).
    pub group: Option<usize>,
    /// Anthropic: position of this message's block(s) within the wire message's content.
    pub block: Option<usize>,
    /// Content was a plain string on the wire (rather than a list of parts).
    pub content_was_string: bool,
    /// Content was `null` / absent on the wire.
    pub content_was_null: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub role: Role,
    pub content: Content,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Tool` messages: the id of the call this result answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Markers::is_empty")]
    pub markers: Markers,
    #[serde(default)]
    pub wire: Wire,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Extra,
    /// Which message of a call assembled from the guard's store this one is, while it is
    /// unchanged (see `store.rs`): every place that rewrites a message clears it. Not part of
    /// the content: never serialized, and ignored by `==`.
    #[serde(skip)]
    pub origin: Origin,
    /// What a guard computed of this message's content (its content key, count and markers),
    /// kept so that one call hashes and counts each message once (see `Guard::facts`). Every
    /// place that rewrites a message clears it (`touch`), as it clears `origin`. Not part of
    /// the content: never serialized, and ignored by `==`.
    #[serde(skip)]
    pub facts: KeptFacts,
    /// Which output of layer 1's memo this message is, while it is unchanged (see
    /// `sources::remembered::made_tag`): a tag is never given to two different outputs, so two messages
    /// with the same tag write the same wire value. Cleared by `touch`, as `origin`. Not part of
    /// the content: never serialized, and ignored by `==`.
    #[serde(skip)]
    pub made: Made,
}

/// Tokens of one message, by bucket. `total` is the sum of the other fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageCount {
    pub total: usize,
    /// Message text (text content and text parts), minus embedded attachment blocks.
    pub text: usize,
    /// File parts (name + extracted text, or a flat allowance), embedded
    /// `<attachment ...>...</attachment>` blocks, and audio parts.
    pub attachments: usize,
    /// Image parts, by the provider's image formula.
    pub images: usize,
    /// Assistant tool calls: names, arguments and their per-call overhead.
    pub tool_calls: usize,
    /// Per-message overhead: the fixed framing, the role and the `name`.
    pub framing: usize,
    /// Chat templates (`count::template`): what the request-level sum needs of this message.
    #[serde(skip)]
    pub template: TemplateFacts,
}

/// What a message's count carries for a chat template's request-level sum (`count::template`).
/// Not serialized: figures for that sum only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct TemplateFacts {
    /// Qwen 3: the message's tokens rendered after the last user query (reasoning kept), and as
    /// the last message there (an empty think block when there is no reasoning).
    pub after_query: u32,
    pub after_query_last: u32,
    /// Qwen 3: a user message that only carries tool responses (not a user query).
    pub tool_response_user: bool,
    /// DeepSeek: the message makes tool calls (the first such message of a conversation renders
    /// them differently: `first_call_extra` more tokens, fewer when negative — V3 closes a lone
    /// first call with nothing).
    pub calls: bool,
    pub first_call_extra: i32,
}

/// What a guard's `measure` needs of one message, computed once per content (see
/// `Guard::facts`): its content key, raw count, role and ctxguard markers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Facts {
    pub key: u64,
    pub raw: MessageCount,
    pub role: Role,
    pub is_summary: bool,
    pub compacted: bool,
    /// Holds a provider's compaction ([`Message::holds_compaction`]).
    pub provider_compaction: bool,
}

/// A guard's facts of a message (`Message::facts`): which guard computed them and in which
/// scope (`0`: for as long as the message is unchanged, used for messages only ctxguard holds,
/// such as the store's; else one top-level call of that guard).
#[derive(Debug, Clone, Default)]
pub struct KeptFacts(std::sync::OnceLock<(u64, u64, Facts)>);

impl PartialEq for KeptFacts {
    /// Bookkeeping, not content (as `Origin`).
    fn eq(&self, _: &KeptFacts) -> bool {
        true
    }
}

impl KeptFacts {
    /// The facts `guard` computed in `scope` (or in scope 0).
    pub(crate) fn get(&self, guard: u64, scope: Option<u64>) -> Option<Facts> {
        self.0.get().filter(|(g, s, _)| *g == guard && (*s == 0 || Some(*s) == scope)).map(|(_, _, f)| *f)
    }

    /// Keep `facts` (a message keeps the first facts it was given until it is rewritten).
    pub(crate) fn set(&self, guard: u64, scope: u64, facts: Facts) {
        let _ = self.0.set((guard, scope, facts));
    }
}

/// The position of a message in a request assembled from the store (`Message::origin`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Origin(pub Option<u32>);

impl PartialEq for Origin {
    /// Origins are bookkeeping, not content: two messages with the same content are equal.
    fn eq(&self, _: &Origin) -> bool {
        true
    }
}

/// The tag of a layer-1 output a guard remembers (`Message::made`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Made(pub Option<u64>);

impl PartialEq for Made {
    /// Bookkeeping, not content (as `Origin`).
    fn eq(&self, _: &Made) -> bool {
        true
    }
}

impl Message {
    /// The mechanical fallback's evidence note: a system message whose text starts with
    /// [`EVIDENCE_MARKER`].
    pub fn is_evidence_note(&self) -> bool {
        self.role == Role::System
            && match &self.content {
                Content::Text(t) => t.starts_with(EVIDENCE_MARKER),
                Content::Parts(parts) => {
                    matches!(parts.iter().find(|p| matches!(p, Part::Text { .. })), Some(Part::Text { text, .. }) if text.starts_with(EVIDENCE_MARKER))
                }
            }
    }

    /// Mark the message as rewritten: it no longer stands for the stored message it came from
    /// (nor for a remembered layer-1 output).
    pub fn touch(&mut self) {
        self.origin = Origin(None);
        self.facts = KeptFacts::default();
        self.made = Made(None);
    }

    /// The model-visible form: no ctxguard markers, and no id on a message ctxguard created
    /// (providers reject unknown fields).
    pub fn strip_metadata(&mut self) {
        if !self.markers.is_empty() {
            self.markers = Markers::default();
            self.touch();
        }
        if self.id.as_deref().is_some_and(|id| id.starts_with("ctxguard-")) {
            self.id = None;
            self.touch();
        }
    }

    pub fn text(role: Role, text: impl Into<Text>) -> Self {
        Message { role, content: Content::Text(text.into()), ..Default::default() }
    }

    /// Keep the content parts for which `keep` holds (it may change them). A format that records
    /// where each part came from (`partBlocks` in the reserved wire entry of `extra`, one entry
    /// per part) keeps those entries in step, so a part removed never shifts the others onto
    /// another part's place.
    pub fn retain_parts(&mut self, mut keep: impl FnMut(&mut Part) -> bool) {
        let Content::Parts(parts) = &mut self.content else { return };
        let kept: Vec<bool> = parts.iter_mut().map(&mut keep).collect();
        if kept.iter().all(|&k| k) {
            return;
        }
        let mut flags = kept.iter();
        parts.retain(|_| flags.next().copied().unwrap_or(true));
        let blocks = self
            .extra
            .get_mut(WIRE_INFO_KEY)
            .and_then(Value::as_object_mut)
            .and_then(|info| info.get_mut(PART_BLOCKS_KEY))
            .and_then(Value::as_array_mut)
            .filter(|b| b.len() == kept.len());
        if let Some(blocks) = blocks {
            let mut flags = kept.iter();
            blocks.retain(|_| flags.next().copied().unwrap_or(true));
        }
        self.touch();
    }

    /// Whether the message holds a provider's compaction (an item or block of type `compaction`:
    /// the provider ignores what comes before it; docs/edits.md, "Provider artifacts").
    pub fn holds_compaction(&self) -> bool {
        match &self.content {
            Content::Parts(parts) => parts.iter().any(|p| {
                matches!(p, Part::Unknown { value } if value.get("type").and_then(|t| t.as_str()) == Some("compaction"))
            }),
            Content::Text(_) => false,
        }
    }
}

/// Reserved key in `Message::extra` for the formats' bookkeeping; never written to the wire.
/// Code that counts or displays `extra` should skip it.
pub const WIRE_INFO_KEY: &str = "ctxguard:wire";

/// The entry of the reserved wire object that says, per content part, where the part came from
/// in the caller's message ([`Message::retain_parts`] keeps it in step).
pub const PART_BLOCKS_KEY: &str = "partBlocks";

/// From where the provider reads a conversation: the index of its latest item for which
/// `compaction` holds (a provider's compaction) when an item whose `role` is not system comes
/// before it (those are not sent again; the system messages before it are).
pub fn compaction_start<T>(items: &[T], role: impl Fn(&T) -> Role, compaction: impl Fn(&T) -> bool) -> Option<usize> {
    let at = items.iter().rposition(compaction)?;
    items.iter().take(at).any(|i| role(i) != Role::System).then_some(at)
}

/// A tool (function) definition offered to the model, in either format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON schema of the parameters (OpenAI `parameters`, Anthropic `input_schema`).
    #[serde(default)]
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Extra,
}
