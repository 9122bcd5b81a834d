//! The summary message: what the summarizer is told, the message a summary becomes (sealed
//! under the guard's key, marked), how a summary is recognized, and the retained clones of user
//! messages kept next to it.

use crate::guard::Guard;
use crate::message::cache::content_key;
use crate::message::checkpoint::Covers;
use crate::message::{Message, Role};

use super::session_state::{render, Answer};

pub(crate) fn instructions(max_tokens: u32) -> String {
    format!(
        "You are compacting a conversation so that it can continue within the model's context window. \
Summarize the conversation you are given for the assistant that will continue it. Write in the user's language. \
Keep: the user's current goal and latest request; decisions made and why; key facts (names, paths, numbers, \
versions, error messages); the evidence tools produced (which tool, its key arguments, what it showed); the plan \
and its progress; open questions. Leave out pleasantries and raw tool output. Answer with a JSON object that \
follows the schema (summary, key_facts, decisions, plan, open_questions), or with plain text. \
Stay under {max_tokens} tokens."
    )
}

/// A summary from an earlier compaction: a system message with ctxguard's metadata marker or a
/// sealed summary block (verified under the guard's key when it has one).
pub(crate) fn is_summary(m: &Message, key: Option<&str>) -> bool {
    m.role == Role::System && (m.markers.summary_compacted || crate::message::checkpoint::is_checkpoint_summary(m, key))
}

/// The system message of a sealed summary, marked, with an id from its content.
pub(crate) fn summary_note(sealed: String) -> Message {
    let mut m = Message::text(Role::System, sealed);
    m.markers.summary_compacted = true;
    m.id = Some(format!("ctxguard-summary-{:012x}", content_key(&m.content, 11) & 0xffff_ffff_ffff));
    m
}

/// A retained user message: a clone with a new, deterministic id and the retained marker.
pub(crate) fn retain(m: &Message) -> Message {
    let mut c = m.clone();
    c.touch();
    c.id = Some(format!("ctxguard-retained-{:012x}", content_key(m, 7) & 0xffff_ffff_ffff));
    c.markers.checkpoint_retained = true;
    c
}

pub(crate) fn summary_message(g: &Guard, answer: &Answer, covers: Option<&Covers>) -> Message {
    // Layer 1 runs over the summary on every later call: attachment markup the summarizer
    // echoed is defused so that no preview ever rewrites (and unseals) it.
    let text = crate::sources::stub::defuse_tags(&render(answer));
    summary_note(crate::message::checkpoint::seal(&text, g.checkpoint_key(), covers))
}
