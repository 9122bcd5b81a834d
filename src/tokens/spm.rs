//! SentencePiece BPE encoding, as Google's local Gemini tokenizer runs it
//! (docs/gemini-tokenizer.md) and as mistral-common runs Mistral's v3 and v7 models
//! (docs/vocabularies.md).
//!
//! The model (`spm_file.rs`) normalizes nothing but spaces (identity normalizer, extra whitespace
//! kept, spaces escaped as U+2581; Mistral's put one in front of the text, the dummy prefix,
//! which `Tokenizer` adds), and its encoder:
//! 1. cuts the text into symbols left to right: at each character, the longest user-defined symbol
//!    that starts there (a frozen symbol: one token, never merged), else the character;
//! 2. merges adjacent symbols whose concatenation is a piece, the highest score first and the
//!    leftmost on ties (scores fall strictly with the id, so: the lowest id first; Mistral's runs
//!    of spaces share the lowest score, so they merge last, leftmost first), until no adjacent
//!    pair is a piece — frozen symbols never take part;
//! 3. gives each symbol its id; a character that is no piece becomes one byte token per UTF-8
//!    byte (`<0xXX>`, byte fallback).
//!
//! Here the pieces hold spaces where the model has U+2581, so the text is matched as it is; only a
//! run that contains U+2581 itself is copied with spaces (both mean the same symbol to the model).
//! Step 2 is the byte-pair merge of `bpe.rs` started from characters instead of bytes: the runs
//! between frozen symbols are cut where two adjacent characters occur together in no piece (almost
//! every space: only one piece, `> </`, has a space after its first character), short segments use
//! a scan, long ones the priority queue — O(n log n) on any input. Unlike tiktoken there is no
//! "the whole piece is a token" shortcut: SentencePiece does not take one.

use rustc_hash::FxHashMap;

use super::bpe::{Scratch, Vocab, HEAP_THRESHOLD, NO_RANK};
use super::spm_file;

/// U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's escaped space.
const SPACE_MARK: &[u8] = "\u{2581}".as_bytes();

/// A span of the text from [`Model::spans`]: a user-defined symbol (`id` is its token) or a run
/// to merge (`id == NO_RANK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
    pub id: u32,
}

/// The user-defined symbols as a byte trie (spaces for U+2581).
struct Matcher {
    /// `node << 8 | byte` → child node.
    edges: FxHashMap<u32, u32>,
    /// The symbol id ending at each node (`NO_RANK` where none does).
    terminal: Vec<u32>,
    /// Bytes a symbol can start with (with 0xE2 when one starts with a space: U+2581).
    first: [bool; 256],
}

impl Matcher {
    fn new(symbols: &[(u32, Vec<u8>)]) -> Result<Matcher, String> {
        let mut m = Matcher { edges: FxHashMap::default(), terminal: vec![NO_RANK], first: [false; 256] };
        for (id, bytes) in symbols {
            let mut node = 0u32;
            for &b in bytes {
                let next = m.terminal.len() as u32;
                node = *m.edges.entry((node << 8) | u32::from(b)).or_insert(next);
                if node == next {
                    m.terminal.push(NO_RANK);
                }
            }
            match m.terminal.get_mut(node as usize) {
                Some(t) if *t == NO_RANK && node != 0 => *t = *id,
                _ => return Err("empty or repeated user-defined symbol".to_string()),
            }
            if let Some(&b) = bytes.first() {
                if let Some(f) = m.first.get_mut(b as usize) {
                    *f = true;
                }
            }
        }
        if m.first.get(b' ' as usize) == Some(&true) {
            if let Some(f) = m.first.get_mut(0xE2) {
                *f = true;
            }
        }
        Ok(m)
    }

    /// The longest symbol starting at `at`: `(end, id)`. `steps` counts the trie edges followed.
    #[inline]
    fn longest(&self, bytes: &[u8], at: usize, steps: &mut u64) -> Option<(usize, u32)> {
        let (mut node, mut i, mut best) = (0u32, at, None);
        while let Some(&b) = bytes.get(i) {
            let (b, len) = if b == 0xE2 && bytes.get(i..i + 3) == Some(SPACE_MARK) { (b' ', 3) } else { (b, 1) };
            let Some(&child) = self.edges.get(&((node << 8) | u32::from(b))) else { break };
            *steps += 1;
            node = child;
            i += len;
            match self.terminal.get(node as usize) {
                Some(&id) if id != NO_RANK => best = Some((i, id)),
                _ => {}
            }
        }
        best
    }
}

/// Merge priority of the pieces tied at the lowest score (below every id's).
const LOWEST: u32 = NO_RANK - 1;

/// A SentencePiece BPE model (Gemma 3's, Mistral's).
pub(crate) struct Model {
    vocab: Vocab,
    /// Whether each id is one of the pieces tied at the lowest score (empty when none is).
    lowest: Vec<bool>,
    /// A space goes in front of the text.
    dummy_prefix: bool,
    unk: u32,
    byte_base: u32,
    count: u32,
    matcher: Matcher,
    /// Bytes of each user-defined symbol, by id.
    user_defined: FxHashMap<u32, Vec<u8>>,
    /// Most bytes of text one token can stand for (a space counted as U+2581's three).
    max_span: usize,
}

impl Model {
    /// The built-in model (Gemma 3's).
    pub(crate) fn load() -> Result<Model, String> {
        Model::new(spm_file::decode(spm_file::file().ok_or("no data")?)?)
    }

    /// The model of a decoded file.
    pub(crate) fn new(decoded: spm_file::Decoded) -> Result<Model, String> {
        let spm_file::Decoded { arena, unk, byte_base, user_defined, dummy_prefix, lowest: tied, .. } = decoded;
        let count = u32::try_from(arena.starts.len().saturating_sub(1)).map_err(|_| "too many ids")?;
        // Kept for the life of the process, as every tokenizer (`tokenizer`'s OnceLock).
        let bytes: &'static [u8] = arena.bytes.leak();
        let vocab = Vocab::from_arena_partial(bytes, arena.starts)?;
        if vocab.lookup(b" ") == NO_RANK {
            return Err("the escaped space is not a piece".to_string());
        }
        let matcher = Matcher::new(&user_defined)?;
        let span = |t: &[u8]| t.len() + 2 * t.iter().filter(|&&b| b == b' ').count();
        let mut max_span = user_defined.iter().map(|(_, t)| span(t)).max().unwrap_or(1);
        for id in 0..count {
            if let Some(t) = vocab.token_bytes(id) {
                max_span = max_span.max(span(t));
            }
        }
        let mut lowest = vec![false; if tied.is_empty() { 0 } else { count as usize }];
        for id in tied {
            *lowest.get_mut(id as usize).ok_or("a lowest-score id out of range")? = true;
        }
        let user_defined = user_defined.into_iter().collect();
        Ok(Model { vocab, lowest, dummy_prefix, unk, byte_base, count, matcher, user_defined, max_span })
    }

    /// Whether a space goes in front of the text (SentencePiece's dummy prefix).
    pub(crate) fn dummy_prefix(&self) -> bool {
        self.dummy_prefix
    }

    /// Merge priority of the piece `id` (lower first): its id, or [`LOWEST`] for the pieces tied
    /// at the lowest score; `NO_RANK` for no piece.
    #[inline]
    fn priority(&self, id: u32) -> u32 {
        match self.lowest.get(id as usize) {
            Some(true) => LOWEST,
            _ => id,
        }
    }

    pub(crate) fn vocab_size(&self) -> usize {
        self.count as usize
    }

    /// Ordinary pieces (not control, unknown, byte or user-defined).
    pub(crate) fn ordinary_pieces(&self) -> usize {
        (0..self.count).filter(|&id| self.vocab.token_bytes(id).is_some()).count()
    }

    pub(crate) fn max_span(&self) -> usize {
        self.max_span
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.vocab.heap_bytes()
            + 8 * self.matcher.edges.capacity()
            + 4 * self.matcher.terminal.capacity()
            + self.user_defined.values().map(|v| v.capacity() + 16).sum::<usize>()
            + self.lowest.capacity()
    }

    /// Bytes of a token as the model's decoder gives them (spaces for U+2581); `None` for ids
    /// that are not tokens the encoder emits (control pieces, `<unk>`, out of range).
    pub(crate) fn token_bytes(&self, id: u32) -> Option<std::borrow::Cow<'_, [u8]>> {
        if let Some(t) = self.vocab.token_bytes(id) {
            return Some(t.into());
        }
        if let Some(t) = self.user_defined.get(&id) {
            return Some(t.as_slice().into());
        }
        match id.checked_sub(self.byte_base) {
            Some(b) if b < 256 && id != self.unk => Some(vec![b as u8].into()),
            _ => None,
        }
    }

    /// The user-defined symbols and the runs between them, in order (`steps`: trie edges
    /// followed, for the work counters).
    pub(crate) fn spans<'t>(&'t self, text: &'t [u8]) -> Spans<'t> {
        Spans { model: self, bytes: text, pos: 0, pending: None, steps: 0 }
    }

    /// Number of tokens of a run (a span with `id == NO_RANK`).
    pub(crate) fn run_count(&self, run: &[u8], scratch: &mut Scratch) -> usize {
        let (mut parts, mut extra) = (0usize, 0usize);
        self.run_parts(run, scratch, |_, _, _| parts += 1, false, &mut extra);
        parts + extra
    }

    /// Tokens of a run: `f(id, start, end)` with offsets in the run. Returns their number.
    pub(crate) fn run_tokens(&self, run: &[u8], scratch: &mut Scratch, mut f: impl FnMut(u32, usize, usize)) -> usize {
        let mut n = 0usize;
        let mut unused = 0usize;
        self.run_parts(
            run,
            scratch,
            |id, s, e| {
                n += 1;
                f(id, s, e)
            },
            true,
            &mut unused,
        );
        n
    }

    /// Merges a run and reports its tokens. With `emit`, every token goes to `f` (byte-fallback
    /// tokens one by one); without, `f` gets one call per merged part and `extra` the additional
    /// byte tokens of unknown characters (counting needs no ids).
    fn run_parts(
        &self,
        run: &[u8],
        scratch: &mut Scratch,
        mut f: impl FnMut(u32, usize, usize),
        emit: bool,
        extra: &mut usize,
    ) {
        let has_mark = run.windows(3).any(|w| w == SPACE_MARK);
        let mut norm = std::mem::take(&mut scratch.norm);
        let mut map = std::mem::take(&mut scratch.norm_map);
        let units: &[u8] = if has_mark {
            norm.clear();
            map.clear();
            let mut i = 0usize;
            while i < run.len() {
                if run.get(i..i + 3) == Some(SPACE_MARK) {
                    norm.push(b' ');
                    map.push(i as u32);
                    i += 3;
                } else {
                    norm.extend(run.get(i));
                    map.push(i as u32);
                    i += 1;
                }
            }
            map.push(run.len() as u32);
            &norm
        } else {
            run
        };
        let at = |x: usize| if has_mark { map.get(x).map_or(run.len(), |&o| o as usize) } else { x };
        for (a, b) in self.vocab.segments_at(units, true) {
            let Some(seg) = units.get(a..b) else { continue };
            self.merge(seg, scratch);
            let mut report = |s: usize, e: usize| {
                let Some(part) = seg.get(s..e) else { return };
                if !emit {
                    f(NO_RANK, 0, 0);
                    if part.len() > 1 && part.len() == char_len(part) && self.vocab.lookup(part) == NO_RANK {
                        *extra += part.len() - 1;
                    }
                    return;
                }
                let id = self.vocab.lookup(part);
                if id != NO_RANK {
                    f(id, at(a + s), at(a + e));
                } else {
                    for (k, &byte) in part.iter().enumerate() {
                        f(self.byte_base + u32::from(byte), at(a + s + k), at(a + s + k + 1));
                    }
                }
            };
            if seg.len() < HEAP_THRESHOLD || !self.lowest.is_empty() {
                for w in scratch.parts.windows(2) {
                    if let [(s, _), (e, _)] = w {
                        report(*s as usize, *e as usize);
                    }
                }
            } else {
                let mut s = 0usize;
                while s < seg.len() {
                    let e = scratch.bounds.next(s).min(seg.len());
                    report(s, e);
                    s = e;
                }
            }
        }
        scratch.norm = norm;
        scratch.norm_map = map;
    }

    /// Merges one segment of characters; the part starts are left in `scratch.parts` (short
    /// segments and every segment of a model with tied pieces, with the end as the last entry)
    /// or `scratch.bounds` (long ones).
    fn merge(&self, seg: &[u8], scratch: &mut Scratch) {
        let n = seg.len();
        if n < HEAP_THRESHOLD {
            scratch.scan_lookups += self.scan_merge(seg, &mut scratch.parts);
            return;
        }
        if !self.lowest.is_empty() {
            scratch.scan_lookups += self.heap_merge(seg, &mut scratch.parts);
            return;
        }
        let s = &mut *scratch;
        s.bounds.fill_zeros(n + 1);
        for (i, &b) in seg.iter().enumerate() {
            if b & 0xC0 != 0x80 {
                s.bounds.set(i);
            }
        }
        s.bounds.set(n);
        let bounds = &s.bounds;
        s.tree.build(n, |x| {
            if seg.get(x).is_none_or(|&b| b & 0xC0 == 0x80) {
                return NO_RANK;
            }
            let k = bounds.next(bounds.next(x));
            if k > n {
                return NO_RANK;
            }
            seg.get(x..k).map_or(NO_RANK, |t| self.vocab.lookup(t))
        });
        self.vocab.merge_loop(seg, s);
    }

    /// Quadratic merge for short segments: `parts` ends up holding the part starts plus the end.
    /// Returns the number of vocabulary lookups.
    fn scan_merge(&self, seg: &[u8], parts: &mut Vec<(u32, u32)>) -> u64 {
        let lookups = std::cell::Cell::new(0u64);
        parts.clear();
        for (i, &b) in seg.iter().enumerate() {
            if b & 0xC0 != 0x80 {
                parts.push((i as u32, NO_RANK));
            }
        }
        parts.push((seg.len() as u32, NO_RANK));
        let rank_at = |parts: &[(u32, u32)], i: usize| -> u32 {
            match (parts.get(i), parts.get(i + 2)) {
                (Some(&(a, _)), Some(&(b, _))) => {
                    lookups.set(lookups.get() + 1);
                    seg.get(a as usize..b as usize).map_or(NO_RANK, |t| self.priority(self.vocab.lookup(t)))
                }
                _ => NO_RANK,
            }
        };
        for i in 0..parts.len() {
            let r = rank_at(parts, i);
            if let Some(p) = parts.get_mut(i) {
                p.1 = r;
            }
        }
        loop {
            let mut min = (NO_RANK, 0usize);
            for (i, &(_, r)) in parts.iter().enumerate() {
                if r < min.0 {
                    min = (r, i);
                }
            }
            if min.0 == NO_RANK {
                break;
            }
            let i = min.1;
            if i + 1 < parts.len() {
                parts.remove(i + 1);
            }
            let r = rank_at(parts, i);
            if let Some(p) = parts.get_mut(i) {
                p.1 = r;
            }
            if i > 0 {
                let r = rank_at(parts, i - 1);
                if let Some(p) = parts.get_mut(i - 1) {
                    p.1 = r;
                }
            }
        }
        lookups.get()
    }
}

/// A pair to merge in `heap_merge`: (priority, start of the left part, left, right, end of the
/// right part); the smallest first, so the leftmost among equal priorities.
type Candidate = (u32, u32, u32, u32, u32);

impl Model {
    /// The merge of a long segment by priority, leftmost on ties, with a heap over a linked list
    /// of parts: O(n log n). `parts` ends up as in `scan_merge`. Returns the number of lookups.
    fn heap_merge(&self, seg: &[u8], parts: &mut Vec<(u32, u32)>) -> u64 {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let starts: Vec<u32> = (0u32..).zip(seg).filter(|(_, &b)| b & 0xC0 != 0x80).map(|(i, _)| i).collect();
        let n = starts.len();
        let end_of = |next: &[u32], i: usize| -> u32 {
            next.get(i).and_then(|&k| starts.get(k as usize)).copied().unwrap_or(seg.len() as u32)
        };
        let mut next: Vec<u32> = (1..=n as u32).collect();
        let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
        let mut alive = vec![true; n];
        let mut lookups = 0u64;
        let mut heap: BinaryHeap<Reverse<Candidate>> = BinaryHeap::new();
        let push = |heap: &mut BinaryHeap<_>, next: &[u32], i: usize, lookups: &mut u64| {
            let Some(&j) = next.get(i) else { return };
            if j as usize >= n {
                return;
            }
            let (a, e) = (starts.get(i).copied().unwrap_or(0), end_of(next, j as usize));
            *lookups += 1;
            let p = seg.get(a as usize..e as usize).map_or(NO_RANK, |t| self.priority(self.vocab.lookup(t)));
            if p != NO_RANK {
                heap.push(Reverse((p, a, i as u32, j, e)));
            }
        };
        for i in 0..n {
            push(&mut heap, &next, i, &mut lookups);
        }
        while let Some(Reverse((_, _, i, j, e))) = heap.pop() {
            let (i, j) = (i as usize, j as usize);
            let valid = alive.get(i) == Some(&true)
                && alive.get(j) == Some(&true)
                && next.get(i) == Some(&(j as u32))
                && end_of(&next, j) == e;
            if !valid {
                continue;
            }
            let after = next.get(j).copied().unwrap_or(n as u32);
            if let Some(a) = alive.get_mut(j) {
                *a = false;
            }
            if let Some(x) = next.get_mut(i) {
                *x = after;
            }
            if let Some(p) = prev.get_mut(after as usize) {
                *p = i as u32;
            }
            if let Some(&p) = prev.get(i) {
                if (p as usize) < n {
                    push(&mut heap, &next, p as usize, &mut lookups);
                }
            }
            push(&mut heap, &next, i, &mut lookups);
        }
        parts.clear();
        let mut i = 0usize;
        while i < n {
            parts.push((starts.get(i).copied().unwrap_or(0), NO_RANK));
            i = next.get(i).map_or(n, |&k| k as usize);
        }
        parts.push((seg.len() as u32, NO_RANK));
        lookups
    }
}

/// Length in bytes of the first character of `b` (1 for a stray continuation byte).
fn char_len(b: &[u8]) -> usize {
    match b.first() {
        Some(&x) if x >= 0xF0 => 4,
        Some(&x) if x >= 0xE0 => 3,
        Some(&x) if x >= 0xC0 => 2,
        _ => 1,
    }
}

/// Iterator of [`Model::spans`].
pub(crate) struct Spans<'t> {
    model: &'t Model,
    bytes: &'t [u8],
    pos: usize,
    pending: Option<Span>,
    pub(crate) steps: u64,
}

impl Iterator for Spans<'_> {
    type Item = Span;

    fn next(&mut self) -> Option<Span> {
        if let Some(p) = self.pending.take() {
            return Some(p);
        }
        let start = self.pos;
        let m = &self.model.matcher;
        while let Some(&b) = self.bytes.get(self.pos) {
            if m.first.get(b as usize).copied().unwrap_or(false) {
                if let Some((end, id)) = m.longest(self.bytes, self.pos, &mut self.steps) {
                    let symbol = Span { start: self.pos, end, id };
                    self.pos = end;
                    if start < symbol.start {
                        self.pending = Some(symbol);
                        return Some(Span { start, end: symbol.start, id: NO_RANK });
                    }
                    return Some(symbol);
                }
            }
            self.pos += 1;
        }
        (start < self.bytes.len()).then_some(Span { start, end: self.bytes.len(), id: NO_RANK })
    }
}
