//! Messages a host already handed over, kept by id, so that measuring a conversation that grew by
//! one message transfers, parses and hashes only that message (issue #7: ≤ 5 ms per turn on a
//! 2,000-message conversation).
//!
//! The binding gives every message object it sends an id and remembers, on the JS side, which
//! object had which id (with a snapshot of its JSON leaves, so a message edited in place is sent
//! again). A call names the conversation as a list of ids, with the messages the store has not
//! seen (or that changed) given in full. Entries live while they are used: an entry not used by
//! the call numbered `call` or the one before is dropped at the end of `call`, so memory follows
//! the live conversation. The JS side never reuses an id older than that, and an unknown id makes
//! the call answer `None` (the binding then takes the plain path), so the two sides cannot drift.

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;

use crate::error::Result;
use crate::format::{parse_message_at, parse_request};
use crate::guard::{Facts, Guard, ToolsFacts};
use crate::message::{Message, Role};
use crate::metrics::ContextMetrics;

/// One wire message: its internal pieces and their facts.
#[derive(Debug)]
struct Entry {
    messages: Vec<Message>,
    facts: Vec<Facts>,
    last_used: u64,
}

#[derive(Debug, Default)]
pub struct MessageStore {
    entries: FxHashMap<u32, Entry>,
}

impl MessageStore {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A message the store has not seen: its new id, its position in the conversation (for error
/// indexes) and its wire value.
#[derive(Debug, Clone)]
pub struct Fresh {
    pub id: u32,
    pub index: usize,
    pub value: Value,
}

impl Guard {
    /// `measure` over a conversation named by ids (see the module doc). `system` and `tools` are
    /// the call's options, read as in `parse_request`. `Ok(None)`: an id is unknown to the store.
    /// A bad message is an error naming its index, and leaves the store as it was. Always `None`
    /// for a format whose messages parse in context (AI SDK): the binding takes the plain path.
    pub fn measure_ids(&mut self, ids: &[u32], fresh: &[Fresh], call: u64, system: Option<&Value>, tools: Option<&Value>) -> Result<Option<ContextMetrics>> {
        let format = self.format;
        if !format.is_context_free() {
            return Ok(None);
        }
        let head = parse_request(format, &Value::Array(Vec::new()), system, tools)?;
        let mut parsed = Vec::with_capacity(fresh.len());
        for f in fresh {
            parsed.push((f.id, parse_message_at(format, &f.value, f.index)?));
        }
        let new_ids: FxHashSet<u32> = parsed.iter().map(|(id, _)| *id).collect();
        if ids.iter().any(|id| !new_ids.contains(id) && !self.store.entries.contains_key(id)) {
            return Ok(None);
        }
        // One pass of the count cache: new messages are counted (or found) in it, known ones keep
        // their entries alive.
        self.begin_count_pass();
        for (id, messages) in parsed {
            let facts = messages.iter().map(|m| self.facts(m)).collect();
            self.store.entries.insert(id, Entry { messages, facts, last_used: call });
        }
        let mut facts: Vec<Facts> = head.messages.iter().map(|m| self.facts(m)).collect();
        let mut first_system = head.messages.iter().find(|m| m.role == Role::System).cloned();
        for id in ids {
            if let Some(e) = self.store.entries.get_mut(id) {
                e.last_used = call;
                let known = facts.len();
                facts.extend_from_slice(&e.facts);
                if first_system.is_none() {
                    first_system = e.messages.iter().find(|m| m.role == Role::System).cloned();
                }
                if !new_ids.contains(id) {
                    for f in facts.get(known..).unwrap_or(&[]).to_vec() {
                        self.keep_counted(&f);
                    }
                }
            }
        }
        self.end_count_pass();
        self.store.entries.retain(|_, e| e.last_used.saturating_add(1) >= call);
        let tools = ToolsFacts::of(self, first_system.as_ref(), &head);
        Ok(Some(self.measure_facts(&facts, &tools)))
    }
}
