//! A stored checkpoint given back to a new guard (`restore`), and the model-visible form of what
//! the guard produced.

use crate::format::Request;
use crate::guard::memory::Summary;
use crate::guard::Guard;
use crate::message::Role;

use super::summary::summary_note;
use super::types::Restored;

/// the first call that applies no summary after it traces [`CHECKPOINT_MISMATCH`]).
pub fn restore(g: &mut Guard, chain: &Request) -> Restored {
    let key = g.checkpoint_key().map(str::to_string);
    let found = chain
        .messages
        .iter()
        .enumerate()
        .find_map(|(i, m)| crate::message::checkpoint::summary_block(m, key.as_deref()).map(|b| (i, b)));
    let Some((at, (block, covers))) = found else {
        return Restored { restored: false, covered_messages: 0, reason: Some("no_summary") };
    };
    let Some(covers) = covers else {
        return Restored { restored: false, covered_messages: 0, reason: Some("no_covers") };
    };
    // The summary alone: where the format writes the host's system prompt and the summary as
    // one string or Content (Anthropic, Gemini), the prompt is the host's, given again.
    let summary = summary_note(block);
    let retained = chain.messages.iter().skip(at + 1).take_while(|m| m.markers.checkpoint_retained).cloned().collect();
    let covered = covers.messages;
    g.memory.restored(Summary::new(covers, None, summary, retained, false));
    Restored { restored: true, covered_messages: covered, reason: None }
}

/// The model-visible form of a request this guard produced: no ctxguard metadata (markers,
/// the ids of messages ctxguard made), and summaries closed without their covers and tag.
pub fn model_visible(request: Request) -> Request {
    model_visible_for(request, false)
}

/// [`model_visible`]; with `notes_as_user`, ctxguard's own system notes (summaries, evidence
/// notes, guidance) are written as user messages, so that the host's `system` is sent exactly as
/// the host wrote it (Claude's preserved thinking binds every thinking block to it: see
/// `Outcome::notes_as_user`).
pub fn model_visible_for(mut request: Request, notes_as_user: bool) -> Request {
    for m in &mut request.messages {
        let note = notes_as_user
            && m.role == Role::System
            && (m.markers.summary_compacted
                || m.markers.pinned
                || m.id.as_deref().is_some_and(|id| id.starts_with("ctxguard-")));
        m.strip_metadata();
        if m.role == Role::System {
            let visible = crate::message::checkpoint::model_visible_content(&m.content);
            if let Some(v) = visible {
                m.content = v;
                m.touch();
            }
        }
        if note {
            m.role = Role::User;
            m.touch();
        }
    }
    request
}
