//! Messages a host already handed over, kept by id, so that measuring a conversation that grew by
//! one message transfers, parses and hashes only that message (docs/performance-notes.md: ≤ 5 ms per turn on a
//! 2,000-message conversation). The protocol with the binding — ids, fresh messages, the call
//! number — is docs/stored-calls.md. This store alone decides what it keeps ([`KEPT_FOR_CALLS`]);
//! a call naming an id it does not hold is answered `None`, and the binding sends it again in full.

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;

use crate::base::error::Result;
use crate::format::{parse_message_at, parse_request, same_tree, Format, Request, Written};
use crate::guard::Guard;
use crate::message::Facts;
use crate::message::{Message, Origin, Role};
use crate::report::metrics::ContextMetrics;

/// How many calls an entry outlives its last use by: one not used by the call numbered `call` or
/// the one before is dropped at the end of `call`, so memory follows the live conversation.
pub const KEPT_FOR_CALLS: u64 = 2;

/// One wire message: its internal pieces and their facts.
#[derive(Debug)]
struct Entry {
    messages: Vec<Message>,
    facts: Vec<Facts>,
    last_used: u64,
    /// Its position when it was parsed (Anthropic pieces are grouped by position).
    index: usize,
    /// Writing its pieces back (model-visible) gives exactly the wire message it was parsed
    /// from, key order included: an output that still holds them unchanged may be answered with
    /// "the caller's message" instead of a copy written from the pieces.
    round_trips: bool,
    /// Its pieces are lent to a request being prepared (`messages` is empty until
    /// `Guard::give_back`); a call that needs them meanwhile is refused (the binding then takes
    /// the plain path).
    lent: bool,
    /// Its first `system` piece, if any (what `measure_ids` needs of the pieces, lent or not).
    system: Option<Message>,
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

/// The wire message at one position of an assembled request: its pieces
/// `messages[start..start + len]`, and whether they round-trip (see `Entry::round_trips`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub len: usize,
    pub round_trips: bool,
}

/// A request assembled from the store. Its messages carry their index as `origin` while they
/// are unchanged; `spans[k]` are the pieces of the caller's `messages[k]`, and `owner[i]` is the
/// position whose pieces `messages[i]` belongs to (`None`: the `system` option's).
#[derive(Debug, Clone)]
pub struct Assembled {
    pub request: Request,
    pub spans: Vec<Span>,
    pub owner: Vec<Option<usize>>,
    /// The entries whose pieces were moved into `request` (`Guard::lend_ids`): `(id, position)`.
    pub lent: Vec<(u32, usize)>,
}

impl Assembled {
    /// The position `k` when `run` is exactly the unchanged pieces of the caller's
    /// `messages[k]` and they round-trip: the output may then be the caller's message itself.
    pub fn same_as(&self, run: &[&Message]) -> Option<usize> {
        let first = run.first()?.origin.0? as usize;
        let k = (*self.owner.get(first)?)?;
        let span = self.spans.get(k)?;
        let exact = span.round_trips
            && span.start == first
            && span.len == run.len()
            && run.iter().enumerate().all(|(i, m)| m.origin.0 == u32::try_from(first + i).ok());
        exact.then_some(k)
    }
}

/// Whether `pieces`, written back in their model-visible form, are exactly `value` (key order
/// and number representation included: every number must cross into JS unchanged). Pieces
/// carrying ctxguard metadata never are (the model-visible form drops it). `exact`: whether
/// writing them back gives `value`, when parsing found out (`parse_message_at`); else they are
/// written back here and compared as trees, without serializing: this runs for every new
/// message, `measure`'s cold path included.
fn round_trips(format: Format, pieces: &[Message], value: &Value, exact: Option<bool>) -> bool {
    let metadata = |m: &Message| !m.markers.is_empty() || m.id.as_deref().is_some_and(|id| id.starts_with("ctxguard-"));
    if pieces.iter().any(metadata) || !safe_numbers(value) {
        return false;
    }
    if let Some(exact) = exact {
        return exact;
    }
    let (system, written) = match (format, pieces) {
        (Format::Openai, [m]) => (None, vec![Written::Value(crate::format::openai::message_to_wire(m))]),
        (Format::Anthropic, _) => {
            crate::format::anthropic::to_wire_with(pieces, &|_: &[&Message]| None::<crate::format::Named>)
        }
        _ => return false,
    };
    system.is_none() && matches!(written.as_slice(), [Written::Value(w)] if same_tree(w, value))
}

/// No number JS would read differently from serde_json (integers beyond 2^53 do not cross).
fn safe_numbers(v: &Value) -> bool {
    const MAX_SAFE: u64 = (1 << 53) - 1;
    match v {
        Value::Number(n) => {
            n.as_f64().is_some()
                && n.as_u64().is_none_or(|u| u <= MAX_SAFE)
                && n.as_i64().is_none_or(|i| i.unsigned_abs() <= MAX_SAFE)
        }
        Value::Array(a) => a.iter().all(safe_numbers),
        Value::Object(o) => o.values().all(safe_numbers),
        _ => true,
    }
}

/// Fresh messages parsed: `(id, position, (pieces, whether they write back exactly))`.
type Parsed = Vec<(u32, usize, (Vec<Message>, Option<bool>))>;

impl Guard {
    /// Parse the `system` and `tools` options and the fresh messages, in the order the plain
    /// path reads them (so the first error is the same): `(head, parsed fresh messages)`.
    fn parse_stored_call(
        &self,
        fresh: &[Fresh],
        system: Option<&Value>,
        tools: Option<&Value>,
    ) -> Result<(Request, Parsed)> {
        let format = self.format;
        let empty = Value::Array(Vec::new());
        let parse_fresh = || -> Result<Parsed> {
            fresh.iter().map(|f| Ok((f.id, f.index, parse_message_at(format, &f.value, f.index)?))).collect()
        };
        // OpenAI reads the messages before the system option, Anthropic after it; tools last.
        let (mut head, parsed) = if format == Format::Anthropic {
            let head = parse_request(format, &empty, system, None)?;
            (head, parse_fresh()?)
        } else {
            let parsed = parse_fresh()?;
            (parse_request(format, &empty, system, None)?, parsed)
        };
        let with_tools = parse_request(format, &empty, None, tools)?;
        head.tools = with_tools.tools;
        head.tool_choice = with_tools.tool_choice;
        Ok((head, parsed))
    }

    /// Parse and keep the fresh messages of a call; `Ok(None)` when `ids` names a message the
    /// store does not hold. Nothing is kept when any message is bad. The new messages are
    /// counted (through the count cache, in the caller's pass, if any).
    fn store_call(
        &mut self,
        ids: &[u32],
        fresh: &[Fresh],
        call: u64,
        system: Option<&Value>,
        tools: Option<&Value>,
    ) -> Result<Option<(Request, FxHashSet<u32>)>> {
        if !self.format.is_context_free() {
            return Ok(None);
        }
        // An id the store no longer holds is answered before anything is parsed: the binding
        // sends the call again with every message in full.
        let new_ids: FxHashSet<u32> = fresh.iter().map(|f| f.id).collect();
        if ids.iter().any(|id| !new_ids.contains(id) && !self.store.entries.contains_key(id)) {
            return Ok(None);
        }
        let (head, parsed) = self.parse_stored_call(fresh, system, tools)?;
        let format = self.format;
        for ((id, index, (messages, exact)), f) in parsed.into_iter().zip(fresh) {
            // Kept on the pieces too: a call assembled from them hashes none of them again.
            let facts = messages.iter().map(|m| self.counter.stamp(m)).collect();
            let round_trips = round_trips(format, &messages, &f.value, exact);
            let system = messages.iter().find(|m| m.role == Role::System).cloned();
            self.store
                .entries
                .insert(id, Entry { messages, facts, last_used: call, index, round_trips, lent: false, system });
        }
        Ok(Some((head, new_ids)))
    }

    /// Drop the entries none of the last [`KEPT_FOR_CALLS`] calls (this one included) used.
    fn end_stored_call(&mut self, ids: &[u32], call: u64) {
        for id in ids {
            if let Some(e) = self.store.entries.get_mut(id) {
                e.last_used = call;
            }
        }
        self.store.entries.retain(|_, e| e.last_used.saturating_add(KEPT_FOR_CALLS) > call);
    }

    /// `measure` over a conversation named by ids (docs/stored-calls.md). `system` and `tools` are
    /// the call's options, read as in `parse_request`. `Ok(None)`: an id is unknown to the store.
    /// A bad message is an error naming its index, and leaves the store as it was. Always `None`
    /// for a format whose messages parse in context (AI SDK): the binding takes the plain path.
    pub fn measure_ids(
        &mut self,
        ids: &[u32],
        fresh: &[Fresh],
        call: u64,
        system: Option<&Value>,
        tools: Option<&Value>,
    ) -> Result<Option<ContextMetrics>> {
        // One pass of the count cache: new messages are counted (or found) in it, known ones keep
        // their entries alive.
        self.counter.begin_pass();
        let stored = self.store_call(ids, fresh, call, system, tools);
        let (head, new_ids) = match stored {
            Ok(Some(s)) => s,
            other => {
                self.counter.end_pass();
                return other.map(|_| None);
            }
        };
        let mut facts: Vec<Facts> = head.messages.iter().map(|m| self.facts(m)).collect();
        let mut first_system = head.messages.iter().find(|m| m.role == Role::System).cloned();
        for id in ids {
            if let Some(e) = self.store.entries.get(id) {
                let known = facts.len();
                facts.extend_from_slice(&e.facts);
                if first_system.is_none() {
                    first_system = e.system.clone();
                }
                if !new_ids.contains(id) {
                    for f in facts.get(known..).unwrap_or(&[]).to_vec() {
                        self.counter.keep_counted(&f);
                    }
                }
            }
        }
        self.counter.end_pass();
        self.end_stored_call(ids, call);
        let tools = self.counter.tools_after(first_system.as_ref(), &head);
        Ok(Some(self.measure_facts(&facts, &tools)))
    }

    /// The request a conversation named by ids stands for (as `parse_request` reads it), for
    /// `prepare` and `guardSources`; see [`Assembled`]. `Ok(None)`: an id is unknown to the
    /// store, or the format parses in context (AI SDK).
    pub fn assemble_ids(
        &mut self,
        ids: &[u32],
        fresh: &[Fresh],
        call: u64,
        system: Option<&Value>,
        tools: Option<&Value>,
    ) -> Result<Option<Assembled>> {
        self.assemble(ids, fresh, call, system, tools, false)
    }

    /// [`Guard::assemble_ids`], except that the pieces are moved out of the store, not copied,
    /// where they can be (`Assembled::lent`): the request must be handed back with
    /// [`Guard::give_back`] once it has been read, in the same synchronous stretch of work as far
    /// as possible. Until then a call that needs those pieces is refused.
    pub fn lend_ids(
        &mut self,
        ids: &[u32],
        fresh: &[Fresh],
        call: u64,
        system: Option<&Value>,
        tools: Option<&Value>,
    ) -> Result<Option<Assembled>> {
        self.assemble(ids, fresh, call, system, tools, true)
    }

    fn assemble(
        &mut self,
        ids: &[u32],
        fresh: &[Fresh],
        call: u64,
        system: Option<&Value>,
        tools: Option<&Value>,
        lend: bool,
    ) -> Result<Option<Assembled>> {
        if ids.iter().any(|id| self.store.entries.get(id).is_some_and(|e| e.lent)) {
            return Ok(None);
        }
        let Some((head, _)) = self.store_call(ids, fresh, call, system, tools)? else {
            return Ok(None);
        };
        let mut request = head;
        request.messages.reserve(ids.len());
        let mut owner: Vec<Option<usize>> = Vec::with_capacity(request.messages.len() + ids.len());
        owner.resize(request.messages.len(), None);
        let mut spans = Vec::with_capacity(ids.len());
        let mut lent: Vec<(u32, usize)> = Vec::new();
        // Where the pieces of an entry lent by this call sit (the same message twice).
        let mut lent_at: FxHashMap<u32, Span> = FxHashMap::default();
        let mut missing = false;
        for (k, id) in ids.iter().enumerate() {
            // Never: `store_call` checked every id.
            let Some(e) = self.store.entries.get_mut(id) else {
                missing = true;
                break;
            };
            let start = request.messages.len();
            let renumber = e.index != k && e.messages.iter().any(|m| m.wire.group.is_some());
            let mut add = |mut m: Message, request: &mut Request| {
                // Anthropic pieces name the position of their wire message, as parsing it there would.
                if m.wire.group.is_some() && e.index != k {
                    m.wire.group = Some(k);
                    // The group is part of the content key: these facts no longer apply.
                    m.facts = Default::default();
                }
                m.origin = Origin(u32::try_from(request.messages.len()).ok());
                request.messages.push(m);
                owner.push(Some(k));
            };
            let len;
            if let Some(first) = lent_at.get(id).copied() {
                let copies: Vec<Message> =
                    request.messages.get(first.start..first.start + first.len).unwrap_or(&[]).to_vec();
                len = copies.len();
                for mut m in copies {
                    // Lent unrenumbered: the group is the entry's own.
                    if m.wire.group.is_some() {
                        m.wire.group = Some(e.index);
                    }
                    add(m, &mut request);
                }
            } else if lend && !renumber {
                e.lent = true;
                len = e.messages.len();
                // Drained, not taken: the entry keeps its vector for `give_back`.
                for m in e.messages.drain(..) {
                    add(m, &mut request);
                }
                lent.push((*id, k));
                lent_at.insert(*id, Span { start, len, round_trips: e.round_trips });
            } else {
                len = e.messages.len();
                for m in &e.messages {
                    add(m.clone(), &mut request);
                }
            }
            spans.push(Span { start, len, round_trips: e.round_trips });
        }
        let mut assembled = Assembled { request, spans, owner, lent };
        if missing {
            let request = std::mem::take(&mut assembled.request);
            self.give_back(request, &mut assembled);
            return Ok(None);
        }
        self.end_stored_call(ids, call);
        Ok(Some(assembled))
    }

    /// Put the pieces [`Guard::lend_ids`] moved into `request` back into the store (an entry
    /// dropped meanwhile just drops them).
    pub fn give_back(&mut self, mut request: Request, assembled: &mut Assembled) {
        for (id, k) in std::mem::take(&mut assembled.lent) {
            let Some(span) = assembled.spans.get(k).copied() else { continue };
            let Some(pieces) = request.messages.get_mut(span.start..span.start + span.len) else { continue };
            if let Some(e) = self.store.entries.get_mut(&id) {
                if e.lent {
                    e.messages.clear();
                    e.messages.extend(pieces.iter_mut().map(|m| {
                        let mut m = std::mem::take(m);
                        m.origin = Origin(None);
                        m
                    }));
                    e.lent = false;
                }
            }
        }
    }
}
