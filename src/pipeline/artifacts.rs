//! What providers put in a conversation and bill on their side (docs/edits.md, "Provider
//! artifacts"): OpenAI's `compaction` items (Responses, `context_management` or
//! `/responses/compact`) and Anthropic's `compaction` blocks (`compact_20260112`, on-demand
//! compaction). Both replace everything before them: Anthropic ignores the content before the
//! latest block (and refuses one with a signature that has messages in front of it), OpenAI's
//! guide lets the client drop the items before the latest one. So the model input starts at the
//! latest of them, after the host's system messages, and the message that holds it is never
//! summarized or dropped: it is opaque, counted as its JSON text. A conversation the provider
//! compacts is not summarized by ctxguard on top (`plan.rs`); clearing and the emergency layer
//! still make it fit.

use crate::format::Request;
use crate::message::{compaction_start, Message, Role};

/// `history` from its latest provider compaction on (its system messages kept), or `None` when
/// it holds none before its last message.
pub fn from_latest_compaction(history: &Request) -> Option<Request> {
    let at = compaction_start(&history.messages, |m| m.role, Message::holds_compaction)?;
    let mut messages: Vec<Message> =
        history.messages.iter().take(at).filter(|m| m.role == Role::System).cloned().collect();
    messages.extend(history.messages.iter().skip(at).cloned());
    Some(Request { messages, ..history.clone() })
}
