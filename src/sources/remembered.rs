//! Layer 1 runs before every model call over the whole conversation; its work per tool output
//! (count it, compact it) depends only on the text and the options, so a guard remembers the
//! results by content. On the 2,000-message benchmark conversation that takes a repeated
//! `guardSources` / `prepare` from ~0.6 s (every output tokenized and compacted again) to the
//! cost of hashing the text.
//!
//! Entries unused by the latest pass are dropped once a map holds more than twice the entries
//! that pass used (as `CountCache` does), so memory follows the live conversation.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::{FxHashMap, FxHasher};

use crate::message::Message;
use crate::tokens::{self, Encoding};

use super::found::Found;
use super::tool_output::{self, CompactOptions, Compacted};

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

/// Layer 1's results for a message ctxguard holds unchanged (the store's), by its content key:
/// an unchanged message costs a lookup, not a scan of its text.
#[derive(Debug, Default)]
struct ByMessage {
    /// Tokens of a tool result's text.
    counts: FxHashMap<u64, (usize, u64)>,
    /// A tool result compacted under some options: the compacted message (its facts kept on
    /// it) and its tokens, or `None` when compaction leaves it as it is.
    outputs: FxHashMap<u64, (Option<(Message, usize)>, u64)>,
    /// The attachments a message holds (`Found::message` is 0).
    attachments: FxHashMap<u64, (Vec<Found>, u64)>,
    /// A preview: (message key, attachment, share) -> its text and tokens.
    previews: FxHashMap<u64, ((String, usize), u64)>,
}

#[derive(Debug, Default)]
pub struct Remembered {
    counts: FxHashMap<u64, (usize, u64)>,
    compacted: FxHashMap<u64, (Option<Compacted>, u64)>,
    by_message: ByMessage,
    pass: u64,
    used: usize,
}

/// Look `key` up in `map`, or insert `make()`; the entry counts as used by `pass`.
fn remember<V>(map: &mut FxHashMap<u64, (V, u64)>, key: u64, pass: u64, make: impl FnOnce() -> V) -> &V {
    let e = map.entry(key).or_insert_with(|| (make(), pass));
    e.1 = pass;
    &e.0
}

/// A key for `key`'s result under `parts` (options, or a stub's text).
pub fn mix(key: u64, parts: impl Hash) -> u64 {
    let mut h = FxHasher::default();
    key.hash(&mut h);
    parts.hash(&mut h);
    h.finish()
}

fn options_key(key: u64, opts: &CompactOptions) -> u64 {
    parts_key(key, opts.limit, opts.emergency, opts.retrieval_tool.as_deref(), opts.call_id.as_deref())
}

/// [`options_key`] from the options' parts, so a lookup need not build (and copy into) options.
fn parts_key(key: u64, limit: usize, emergency: bool, retrieval_tool: Option<&str>, call_id: Option<&str>) -> u64 {
    mix(key, (limit, emergency, retrieval_tool, call_id))
}

fn text_key(enc: Encoding, text: &str) -> u64 {
    let mut h = FxHasher::default();
    enc.as_str().hash(&mut h);
    text.hash(&mut h);
    h.finish()
}

impl Remembered {
    /// Start a pass over a request.
    pub fn begin(&mut self) {
        self.pass += 1;
        self.used = 0;
    }

    /// Drop what the pass did not use, once the maps are more than twice its size.
    pub fn end(&mut self) {
        let (pass, keep) = (self.pass, 2 * self.used + 64);
        if self.counts.len() > keep {
            self.counts.retain(|_, (_, p)| *p == pass);
        }
        if self.compacted.len() > keep {
            self.compacted.retain(|_, (_, p)| *p == pass);
        }
        let b = &mut self.by_message;
        if b.counts.len() > keep {
            b.counts.retain(|_, (_, p)| *p == pass);
        }
        if b.outputs.len() > keep {
            b.outputs.retain(|_, (_, p)| *p == pass);
        }
        if b.attachments.len() > keep {
            b.attachments.retain(|_, (_, p)| *p == pass);
        }
        if b.previews.len() > keep {
            b.previews.retain(|_, (_, p)| *p == pass);
        }
    }

    /// Tokens of the text of the tool result whose content key is `key`.
    pub fn count_message(&mut self, key: u64, text: impl FnOnce() -> usize) -> usize {
        self.used += 1;
        *remember(&mut self.by_message.counts, key, self.pass, text)
    }

    /// The tool result whose content key is `key`, compacted under `opts`, when remembered:
    /// `Some(None)` when it stays as it is.
    pub fn output(&mut self, key: u64, opts: &CompactOptions) -> Option<Option<(&Message, usize)>> {
        self.output_by(key, opts.limit, opts.emergency, opts.retrieval_tool.as_deref(), opts.call_id.as_deref())
    }

    /// [`Remembered::output`] by the options' parts.
    pub fn output_by(
        &mut self,
        key: u64,
        limit: usize,
        emergency: bool,
        retrieval_tool: Option<&str>,
        call_id: Option<&str>,
    ) -> Option<Option<(&Message, usize)>> {
        self.used += 1;
        let pass = self.pass;
        let e = self.by_message.outputs.get_mut(&parts_key(key, limit, emergency, retrieval_tool, call_id))?;
        e.1 = pass;
        Some(e.0.as_ref().map(|(m, n)| (m, *n)))
    }

    /// Remember what compacting the tool result `key` under `opts` gave.
    pub fn keep_output(&mut self, key: u64, opts: &CompactOptions, output: Option<(Message, usize)>) {
        self.by_message.outputs.insert(options_key(key, opts), (output, self.pass));
    }

    /// [`Remembered::keep_output`] by the options' parts.
    pub fn keep_output_by(
        &mut self,
        key: u64,
        limit: usize,
        emergency: bool,
        retrieval_tool: Option<&str>,
        call_id: Option<&str>,
        output: Option<(Message, usize)>,
    ) {
        self.by_message.outputs.insert(parts_key(key, limit, emergency, retrieval_tool, call_id), (output, self.pass));
    }

    /// The attachments of the message whose content key is `key` (at message 0).
    pub fn attachments(&mut self, key: u64, find: impl FnOnce() -> Vec<Found>) -> &[Found] {
        self.used += 1;
        remember(&mut self.by_message.attachments, key, self.pass, find).as_slice()
    }

    /// The preview of attachment `at` of the message `key` within `share` tokens.
    pub fn preview(
        &mut self,
        key: u64,
        at: usize,
        share: usize,
        make: impl FnOnce() -> (String, usize),
    ) -> &(String, usize) {
        self.used += 1;
        remember(&mut self.by_message.previews, mix(key, (at, share)), self.pass, make)
    }

    /// `tokens::count`, remembered.
    pub fn count(&mut self, enc: Encoding, text: &str) -> usize {
        self.used += 1;
        let pass = self.pass;
        let e = self.counts.entry(text_key(enc, text)).or_insert_with(|| (tokens::count(enc, text), pass));
        e.1 = pass;
        e.0
    }

    /// `tool_output::compact`, remembered per text and options.
    pub fn compact(&mut self, enc: Encoding, text: &str, opts: &CompactOptions) -> Option<Compacted> {
        self.used += 1;
        let mut h = FxHasher::default();
        text_key(enc, text).hash(&mut h);
        opts.limit.hash(&mut h);
        opts.emergency.hash(&mut h);
        opts.retrieval_tool.hash(&mut h);
        opts.call_id.hash(&mut h);
        let pass = self.pass;
        let e = self.compacted.entry(h.finish()).or_insert_with(|| (tool_output::compact(enc, text, opts), pass));
        e.1 = pass;
        e.0.clone()
    }
}

/// A tag for a layer-1 output the memo keeps (`Message::made`): never handed out twice in the
/// process, so a tag names one message's content for good, even across guards and memo resets.
pub fn made_tag() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
