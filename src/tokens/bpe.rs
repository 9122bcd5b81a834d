//! Rank table and byte-pair merging.
//!
//! The merge reproduces tiktoken's `byte_pair_encode` exactly: repeatedly merge the adjacent pair
//! of parts whose concatenation has the lowest rank, the leftmost one on ties, until no adjacent
//! pair is a token. Short pieces use tiktoken's own scan (quadratic but with a tiny constant);
//! long pieces use a priority queue of `(rank, start)` keys (a min-tree of cache-line nodes
//! indexed by position) over a bit set of part starts, which is O(n log n). Both orders are the same: a part is
//! identified by its start offset, which never changes while the part survives, so "lowest rank,
//! then leftmost" is the same as "lowest `(rank, start)`".

use std::hash::Hasher;
use std::sync::OnceLock;

use rustc_hash::FxHasher;

/// "Not a token" / "no merge possible".
pub(crate) const NO_RANK: u32 = u32::MAX;

/// Pieces shorter than this use the scan merge, longer ones the heap merge.
pub(crate) const HEAP_THRESHOLD: usize = 32;

/// An empty slot of the open-addressing table (never a valid slot: ranks are below
/// `rank_mask`).
const EMPTY: u32 = u32::MAX;

/// Pieces at least this long are first cut where two adjacent bytes occur together in no token
/// (see [`Vocab::segments`]).
pub(crate) const SPLIT_THRESHOLD: usize = 256;

/// log2 of the Bloom filter's size in bits (256 KiB: stays in L2 where the slot table does not).
const BLOOM_BITS: u32 = 21;

/// The ordinary (non-special) tokens of one encoding.
pub(crate) struct Vocab {
    /// All token bytes, concatenated in rank order (decoded from the embedded vocabulary file once).
    bytes: &'static [u8],
    /// `starts[r]..starts[r + 1]` are the bytes of rank `r` (empty for ranks that are not ordinary
    /// tokens).
    starts: Vec<u32>,
    /// Open-addressing hash table (linear probing) keyed by token bytes, load factor in (0.4, 0.8]
    /// (0.76 for both shipped vocabularies).
    /// Each slot holds the rank in its low bits and a tag (high bits of the key's hash) above, so
    /// probes past other keys rarely touch token bytes.
    slots: Vec<u32>,
    mask: usize,
    rank_mask: u32,
    /// One-hash Bloom filter of all tokens of 3+ bytes: most spans that are not tokens (the
    /// common case while merging) are rejected without touching the slot table.
    bloom: Vec<u64>,
    /// Rank of each single byte.
    byte_rank: [u32; 256],
    /// Rank of each two-byte sequence (`NO_RANK` if it is not a token), indexed by `b0 << 8 | b1`.
    pair_rank: Vec<u32>,
    /// Length in bytes of the longest token.
    max_token_len: usize,
    /// Bit `b0 << 8 | b1` is set when some token contains the bytes `b0 b1` next to each other
    /// (8 KiB, built on the first piece of `SPLIT_THRESHOLD` bytes or more).
    joinable: OnceLock<Vec<u64>>,
}

/// FxHash of the bytes with a final mix, so that every bit range is usable (slot index in the
/// low bits, Bloom index in the middle, tag in the high bits).
#[inline]
fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    let mut x = h.finish();
    x ^= x >> 32;
    x = x.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    x ^ (x >> 29)
}

#[inline]
fn bloom_index(hash: u64) -> usize {
    ((hash >> 24) as usize) & ((1usize << BLOOM_BITS) - 1)
}

/// Ranks per call of the chunked passes of [`Vocab::from_arena`].
const TABLE_CHUNK: usize = 2048;

/// Checks the offsets of consecutive ranks (`starts` holds one entry more than the ranks it
/// covers): non-decreasing and within `bytes_len`. Returns how many of the ranks are tokens
/// (non-empty) and the longest one's length.
#[inline(never)]
fn check_offsets(starts: &[u32], bytes_len: usize) -> Result<(usize, usize), String> {
    let (mut count, mut max_token_len) = (0usize, 0usize);
    for w in starts.windows(2) {
        if let [a, b] = w {
            if b < a || *b as usize > bytes_len {
                return Err("inconsistent token offsets".to_string());
            }
            if b > a {
                count += 1;
                max_token_len = max_token_len.max((b - a) as usize);
            }
        }
    }
    Ok((count, max_token_len))
}

impl Vocab {
    /// Builds the table from the token bytes of every rank: `starts` has one entry per rank
    /// plus a final one, and `bytes[starts[r]..starts[r + 1]]` are the bytes of rank `r` (empty for
    /// ranks that are not ordinary tokens). Fails if a single byte is missing (BPE could not encode
    /// every input) or the table is too large for 32-bit offsets.
    pub(crate) fn from_arena(bytes: &'static [u8], starts: Vec<u32>) -> Result<Vocab, String> {
        let vocab = Vocab::from_arena_partial(bytes, starts)?;
        if vocab.byte_rank.contains(&NO_RANK) {
            return Err("a single byte is not a token".to_string());
        }
        Ok(vocab)
    }

    /// [`from_arena`](Self::from_arena) without the single-byte check: for vocabularies whose
    /// units are characters and which fall back to byte tokens of their own (`spm.rs`).
    pub(crate) fn from_arena_partial(bytes: &'static [u8], starts: Vec<u32>) -> Result<Vocab, String> {
        let rank_slots = starts.len().saturating_sub(1);
        if bytes.len() >= u32::MAX as usize || rank_slots >= (NO_RANK >> 1) as usize {
            return Err("vocabulary too large".to_string());
        }
        // Both passes over the ranks run in chunks, one call each, as the vocabulary decode does
        // (data.rs): V8 compiles WebAssembly in tiers and has no on-stack replacement, so one long
        // loop in one call would run in the baseline tier (Liftoff) throughout.
        let chunks = || (0..rank_slots).step_by(TABLE_CHUNK).map(|from| (from, (from + TABLE_CHUNK).min(rank_slots)));
        let (mut count, mut max_token_len) = (0usize, 0usize);
        for (from, to) in chunks() {
            let (n, max) = check_offsets(starts.get(from..=to).unwrap_or_default(), bytes.len())?;
            count += n;
            max_token_len = max_token_len.max(max);
        }
        // Load factor in (0.4, 0.8] (0.76 for both shipped vocabularies): a slot is 4 bytes and the
        // tag spares the token bytes on probes past other keys, and most misses never reach the
        // table (the Bloom filter). Half the size of a table below 0.4 (cl100k 1 MB -> 512 KB,
        // o200k 2 MB -> 1 MB of wasm memory) at the same throughput (paired Node runs; BENCHMARKS.md,
        // sixth pass). Clusters are longer (cl100k's longest 33 -> 151 slots), and the hash is
        // fixed, but text made of the tokens at the ends of the longest clusters counts as fast
        // as with the 0.4 table (same section).
        let size = (count + count / 4).next_power_of_two().max(1024);
        // Smallest all-ones mask above every rank, so that no slot value is all ones (EMPTY).
        let rank_mask = (rank_slots as u32 + 1).next_power_of_two().wrapping_sub(1);
        let mut vocab = Vocab {
            bytes,
            starts,
            slots: vec![EMPTY; size],
            mask: size - 1,
            rank_mask,
            bloom: vec![0u64; 1 << (BLOOM_BITS - 6)],
            byte_rank: [NO_RANK; 256],
            pair_rank: vec![NO_RANK; 1 << 16],
            max_token_len,
            joinable: OnceLock::new(),
        };
        for (from, to) in chunks() {
            vocab.insert_ranks(from as u32, to as u32)?;
        }
        Ok(vocab)
    }

    /// Enters the tokens of ranks `from..to` in the tables (one chunk of [`Vocab::from_arena`]).
    #[inline(never)]
    fn insert_ranks(&mut self, from: u32, to: u32) -> Result<(), String> {
        for rank in from..to {
            let Some(t) = self.token_bytes(rank) else { continue };
            // No lookup before inserting: should a byte string appear twice (none does in the
            // shipped vocabularies; tests/tokens/vocab_data.rs checks), linear probing still finds the
            // lower rank first, as it was inserted first, and the short tables keep it below.
            let h = hash_bytes(t);
            let short = match t {
                [b] => Some(*b as usize),
                [b0, b1] => Some(0x100 + (((*b0 as usize) << 8) | *b1 as usize)),
                _ => None,
            };
            let value = self.slot_value(h, rank);
            let mut i = h as usize & self.mask;
            loop {
                match self.slots.get_mut(i) {
                    Some(slot) if *slot == EMPTY => {
                        *slot = value;
                        break;
                    }
                    Some(_) => i = (i + 1) & self.mask,
                    None => return Err("hash table index out of range".to_string()),
                }
            }
            let slot = match short {
                Some(b) if b < 0x100 => self.byte_rank.get_mut(b),
                Some(pair) => self.pair_rank.get_mut(pair - 0x100),
                None => {
                    let b = bloom_index(h);
                    if let Some(word) = self.bloom.get_mut(b >> 6) {
                        *word |= 1 << (b & 63);
                    }
                    None
                }
            };
            if let Some(slot) = slot.filter(|s| **s == NO_RANK) {
                *slot = rank;
            }
        }
        Ok(())
    }

    #[inline]
    fn slot_value(&self, hash: u64, rank: u32) -> u32 {
        ((hash >> 32) as u32 & !self.rank_mask) | rank
    }

    /// Bytes held by the tables: the heap tables plus the token bytes (static data, but resident
    /// in a wasm instance's memory all the same).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.bytes.len()
            + 4 * (self.starts.capacity() + self.slots.capacity() + self.pair_rank.capacity())
            + 8 * self.bloom.capacity()
            + self.joinable.get().map_or(0, |j| 8 * j.capacity())
    }

    /// Number of rank slots (the highest ordinary rank plus one).
    pub(crate) fn rank_count(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Length in bytes of the longest token.
    pub(crate) fn max_token_len(&self) -> usize {
        self.max_token_len
    }

    /// Bytes of an ordinary token (`None` for other ids).
    #[inline]
    pub(crate) fn token_bytes(&self, rank: u32) -> Option<&[u8]> {
        let r = rank as usize;
        let start = *self.starts.get(r)? as usize;
        let end = *self.starts.get(r.checked_add(1)?)? as usize;
        if start == end {
            return None;
        }
        self.bytes.get(start..end)
    }

    /// Rank of a byte string, or `NO_RANK`.
    #[inline]
    pub(crate) fn lookup(&self, piece: &[u8]) -> u32 {
        match piece {
            [] => NO_RANK,
            [b] => self.byte_rank.get(*b as usize).copied().unwrap_or(NO_RANK),
            [b0, b1] => self.pair_rank.get(((*b0 as usize) << 8) | *b1 as usize).copied().unwrap_or(NO_RANK),
            _ if piece.len() > self.max_token_len => NO_RANK,
            _ => {
                let h = hash_bytes(piece);
                let b = bloom_index(h);
                match self.bloom.get(b >> 6) {
                    Some(word) if word & (1 << (b & 63)) != 0 => {}
                    _ => return NO_RANK,
                }
                let tag = (h >> 32) as u32 & !self.rank_mask;
                let mut i = h as usize & self.mask;
                loop {
                    match self.slots.get(i) {
                        Some(&v) if v == EMPTY => return NO_RANK,
                        Some(&v) => {
                            if v & !self.rank_mask == tag {
                                let r = v & self.rank_mask;
                                if self.token_bytes(r) == Some(piece) {
                                    return r;
                                }
                            }
                            i = (i + 1) & self.mask;
                        }
                        None => return NO_RANK,
                    }
                }
            }
        }
    }
}

/// Reusable buffers for merging (one per top-level call, so long texts do not allocate per piece).
#[derive(Default)]
pub(crate) struct Scratch {
    /// Scan merge: `(start, rank of the pair starting here)`.
    pub(crate) parts: Vec<(u32, u32)>,
    /// Heap merge: bit `i` is set where a part starts, and bit `n` (the end of the piece).
    pub(crate) bounds: Bits,
    /// Heap merge: the priority queue of pair ranks.
    pub(crate) tree: MinTree,
    /// SentencePiece (`spm.rs`): a run with U+2581 in it, rewritten with spaces, and the offset
    /// in the run of each of its bytes (plus the end).
    pub(crate) norm: Vec<u8>,
    pub(crate) norm_map: Vec<u32>,
    /// Statistics for tests: priority-queue operations (pops and leaf updates, each O(log n))
    /// since the scratch was created.
    pub(crate) queue_ops: u64,
    /// Statistics for tests: vocabulary lookups of SentencePiece's short-segment scan (`spm.rs`).
    pub(crate) scan_lookups: u64,
    /// Statistics for tests: tree nodes written by those operations.
    pub(crate) tree_writes: u64,
}

/// Where the token boundaries of a merged piece are, after `merge`.
enum Merged {
    /// The whole piece is one token (or a single byte).
    Whole,
    /// One token per byte: only for pieces of 4 GiB or more (impossible on wasm32), which the
    /// 32-bit heap merge cannot index; this over-counts rather than failing.
    Bytes,
    /// Part starts are `parts[..].0` (the last entry is the piece length).
    Scan,
    /// Parts start where `bounds` has a bit set.
    Heap,
}

impl Vocab {
    /// Runs the merge on one piece and returns how many tokens it has; the boundaries stay in
    /// `scratch` for `emit`.
    fn merge(&self, piece: &[u8], scratch: &mut Scratch) -> (usize, Merged) {
        let n = piece.len();
        if n <= 1 {
            return (n, Merged::Whole);
        }
        if n <= self.max_token_len && self.lookup(piece) != NO_RANK {
            return (1, Merged::Whole);
        }
        if n >= u32::MAX as usize {
            return (n, Merged::Bytes);
        }
        if n < HEAP_THRESHOLD {
            self.scan_merge(piece, &mut scratch.parts);
            (scratch.parts.len().saturating_sub(1), Merged::Scan)
        } else {
            let merges = self.heap_merge(piece, scratch);
            (n - merges, Merged::Heap)
        }
    }

    /// Number of tokens of one piece.
    #[inline]
    pub(crate) fn piece_count(&self, piece: &[u8], scratch: &mut Scratch) -> usize {
        if piece.len() < SPLIT_THRESHOLD {
            return self.merge(piece, scratch).0;
        }
        self.segments(piece).map(|(a, b)| piece.get(a..b).map_or(0, |seg| self.merge(seg, scratch).0)).sum()
    }

    /// The bigram table behind [`segments`](Self::segments).
    fn joinable(&self) -> &[u64] {
        self.joinable.get_or_init(|| {
            let mut bits = vec![0u64; 1 << 10];
            for rank in 0..self.rank_count() as u32 {
                for w in self.token_bytes(rank).unwrap_or_default().windows(2) {
                    if let [b0, b1] = w {
                        let i = ((*b0 as usize) << 8) | *b1 as usize;
                        if let Some(word) = bits.get_mut(i >> 6) {
                            *word |= 1 << (i & 63);
                        }
                    }
                }
            }
            bits
        })
    }

    /// Cuts a piece into segments that merge independently: between two adjacent bytes that no
    /// token contains next to each other, no part can ever span the cut (every part is a token),
    /// so the pair across it never merges and the merges on either side never see each other —
    /// the tokens of the piece are the tokens of the segments, in order. Yields `(start, end)`
    /// ranges covering the piece.
    pub(crate) fn segments<'p>(&'p self, piece: &'p [u8]) -> impl Iterator<Item = (usize, usize)> + 'p {
        self.segments_at(piece, false)
    }

    /// [`segments`](Self::segments); with `chars`, cuts only at character boundaries (for
    /// vocabularies whose units are characters: a cut inside a character would split a unit).
    pub(crate) fn segments_at<'p>(&'p self, piece: &'p [u8], chars: bool) -> impl Iterator<Item = (usize, usize)> + 'p {
        let joinable = self.joinable();
        let mut start = 0usize;
        let mut i = 1usize;
        let n = piece.len();
        let cuts = std::iter::from_fn(move || {
            while i < n {
                let at = i;
                i += 1;
                let (Some(&b0), Some(&b1)) = (piece.get(at - 1), piece.get(at)) else { break };
                let x = ((b0 as usize) << 8) | b1 as usize;
                let join =
                    joinable.get(x >> 6).is_none_or(|w| w & (1 << (x & 63)) != 0) || (chars && b1 & 0xC0 == 0x80);
                if !join {
                    let seg = (start, at);
                    start = at;
                    return Some(seg);
                }
            }
            if start < n {
                let seg = (start, n);
                start = n;
                return Some(seg);
            }
            None
        });
        cuts
    }

    /// Tokens of one piece: calls `f(rank, start, end)` for each, in order (offsets within the
    /// piece). Returns the number of tokens.
    pub(crate) fn piece_tokens(
        &self,
        piece: &[u8],
        scratch: &mut Scratch,
        mut f: impl FnMut(u32, usize, usize),
    ) -> usize {
        if piece.len() < SPLIT_THRESHOLD {
            return self.segment_tokens(piece, scratch, f);
        }
        let mut count = 0;
        for (a, b) in self.segments(piece) {
            if let Some(seg) = piece.get(a..b) {
                count += self.segment_tokens(seg, scratch, |id, s, e| f(id, a + s, a + e));
            }
        }
        count
    }

    /// [`piece_tokens`](Self::piece_tokens) without the cut into segments.
    fn segment_tokens(&self, piece: &[u8], scratch: &mut Scratch, mut f: impl FnMut(u32, usize, usize)) -> usize {
        let (count, how) = self.merge(piece, scratch);
        match how {
            Merged::Whole => {
                if !piece.is_empty() {
                    f(self.lookup(piece), 0, piece.len());
                }
            }
            Merged::Bytes => {
                for (i, b) in piece.iter().enumerate() {
                    f(self.byte_rank.get(*b as usize).copied().unwrap_or(NO_RANK), i, i + 1);
                }
            }
            Merged::Scan => {
                for w in scratch.parts.windows(2) {
                    if let [(a, _), (b, _)] = w {
                        let (a, b) = (*a as usize, *b as usize);
                        f(piece.get(a..b).map_or(NO_RANK, |t| self.lookup(t)), a, b);
                    }
                }
            }
            Merged::Heap => {
                let mut i = 0usize;
                while i < piece.len() {
                    let e = scratch.bounds.next(i).min(piece.len());
                    f(piece.get(i..e).map_or(NO_RANK, |t| self.lookup(t)), i, e);
                    i = e;
                }
            }
        }
        count
    }

    /// tiktoken's `_byte_pair_merge`: `parts` ends up holding the part starts plus the end.
    fn scan_merge(&self, piece: &[u8], parts: &mut Vec<(u32, u32)>) {
        parts.clear();
        let n = piece.len();
        for (i, w) in piece.windows(2).enumerate() {
            parts.push((i as u32, self.lookup(w)));
        }
        parts.push(((n - 1) as u32, NO_RANK));
        parts.push((n as u32, NO_RANK));

        // Rank of merging part i with part i + 1, looked up before part i + 1 is removed (hence
        // the + 3, as in tiktoken).
        let rank_at = |parts: &Vec<(u32, u32)>, i: usize| -> u32 {
            match (parts.get(i), parts.get(i + 3)) {
                (Some(&(a, _)), Some(&(b, _))) => piece.get(a as usize..b as usize).map_or(NO_RANK, |t| self.lookup(t)),
                _ => NO_RANK,
            }
        };

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
            if i > 0 {
                let r = rank_at(parts, i - 1);
                if let Some(p) = parts.get_mut(i - 1) {
                    p.1 = r;
                }
            }
            let r = rank_at(parts, i);
            if let Some(p) = parts.get_mut(i) {
                p.1 = r;
            }
            if i + 1 < parts.len() {
                parts.remove(i + 1);
            }
        }
    }

    /// Long-piece merge; returns the number of merges done. The part starts are left in
    /// `scratch.bounds`. Pieces must be shorter than 4 GiB (offsets are 32-bit; `merge` checks).
    ///
    /// The priority queue is a [`MinTree`] over positions: the rank of the pair starting at `x`
    /// (`NO_RANK` if there is none) at leaf `x`, and the lowest key `rank << 32 | x` at the
    /// root: lowest rank, leftmost on ties — tiktoken's choice. A part is identified by its start
    /// offset, which never changes while the part survives. The parts are a bit set of their
    /// starts (128 KiB for a megabyte piece, so it stays in cache; neighbours are a bit scan
    /// away), which leaves the tree's leaf node as the one memory access per update that misses
    /// the cache on a megabyte piece.
    fn heap_merge(&self, piece: &[u8], s: &mut Scratch) -> usize {
        let n = piece.len();
        s.bounds.fill_ones(n + 1);
        s.tree.build(n, |x| match (piece.get(x), piece.get(x + 1)) {
            (Some(&b0), Some(&b1)) => {
                self.pair_rank.get(((b0 as usize) << 8) | b1 as usize).copied().unwrap_or(NO_RANK)
            }
            _ => NO_RANK,
        });
        self.merge_loop(piece, s)
    }

    /// The merge loop of [`heap_merge`](Self::heap_merge), from the part starts in
    /// `scratch.bounds` (bit `n` set too) and the rank of each part's pair with the next at its
    /// start in `scratch.tree`; returns the number of merges. `spm.rs` starts it from characters.
    pub(crate) fn merge_loop(&self, piece: &[u8], s: &mut Scratch) -> usize {
        let n = piece.len();
        let tree = &mut s.tree;
        let mut ops = 0u64;
        let mut merges = 0usize;
        let bounds = &mut s.bounds;
        let rank_of = |a: usize, b: usize| piece.get(a..b).map_or(NO_RANK, |t| self.lookup(t));

        loop {
            let top = tree.min();
            if (top >> 32) as u32 == NO_RANK {
                break;
            }
            let i = (top & 0xFFFF_FFFF) as usize;
            ops += 1;
            let j = bounds.next(i);
            let k = bounds.next(j);
            if k > n {
                break;
            }
            // Merge [i, j) and [j, k); j no longer starts a part.
            bounds.clear(j);
            tree.set(j, NO_RANK);
            ops += 1;
            merges += 1;
            // New pair with the right neighbour [k, next).
            let new_right = if k < n { rank_of(i, bounds.next(k)) } else { NO_RANK };
            tree.set(i, new_right);
            ops += 1;
            // New pair with the left neighbour [prev, i).
            if i > 0 {
                let pv = bounds.prev(i);
                tree.set(pv, rank_of(pv, k));
                ops += 1;
            }
        }
        s.queue_ops += ops;
        s.tree_writes += std::mem::take(&mut tree.writes);
        merges
    }
}

/// A bit set over positions `0..len` (the part starts of the heap merge: a megabyte piece needs
/// 128 KiB, which stays in cache where per-position links would not).
#[derive(Default)]
pub(crate) struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    /// `len` bits, none set.
    pub(crate) fn fill_zeros(&mut self, len: usize) {
        self.words.clear();
        self.words.resize(len.div_ceil(64), 0);
        self.len = len;
    }

    #[inline]
    pub(crate) fn set(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w |= 1u64 << (i % 64);
        }
    }

    /// `len` bits, all set.
    fn fill_ones(&mut self, len: usize) {
        self.words.clear();
        self.words.resize(len.div_ceil(64), u64::MAX);
        if len % 64 != 0 {
            if let Some(last) = self.words.last_mut() {
                *last = (1u64 << (len % 64)) - 1;
            }
        }
        self.len = len;
    }

    #[inline]
    fn clear(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w &= !(1u64 << (i % 64));
        }
    }

    /// First set bit after `i`, or `len` if there is none.
    #[inline]
    pub(crate) fn next(&self, i: usize) -> usize {
        let mut w = i / 64;
        let mut bits = self.words.get(w).copied().unwrap_or(0) & (u64::MAX << (i % 64) << 1);
        loop {
            if bits != 0 {
                return (w * 64 + bits.trailing_zeros() as usize).min(self.len);
            }
            w += 1;
            match self.words.get(w) {
                Some(&b) => bits = b,
                None => return self.len,
            }
        }
    }

    /// Last set bit before `i`, or 0 if there is none.
    #[inline]
    fn prev(&self, i: usize) -> usize {
        let mut w = i / 64;
        let mut bits = self.words.get(w).copied().unwrap_or(0) & ((1u64 << (i % 64)) - 1);
        loop {
            if bits != 0 {
                return w * 64 + 63 - bits.leading_zeros() as usize;
            }
            if w == 0 {
                return 0;
            }
            w -= 1;
            bits = self.words.get(w).copied().unwrap_or(0);
        }
    }
}

/// Leaves per leaf node of [`MinTree`]: 16 `u32` are one 64-byte cache line.
const LEAF_FAN: usize = 16;
/// Children per inner node of [`MinTree`]: 8 `u64` keys are one cache line.
const FAN: usize = 8;

/// `rank << 32 | pos`: ordering keys orders by rank, then position (tiktoken's merge order).
#[inline]
fn key(rank: u32, pos: usize) -> u64 {
    ((rank as u64) << 32) | pos as u64
}

/// A priority queue of `(rank, position)` over positions `0..n` with point updates: leaves hold
/// the rank at each position, 16 to a node; inner nodes hold the minimum key `rank << 32 | pos`
/// of each child, 8 to a node; the root key names the next merge directly. An update touches one
/// node per level (`log8(n / 16)` inner levels) and stops at the first node whose minimum does
/// not change. All nodes are one cache line, so a megabyte piece misses the cache on one or two
/// nodes per update where a binary tree misses on ten or more.
#[derive(Default)]
pub(crate) struct MinTree {
    leaves: Vec<[u32; LEAF_FAN]>,
    /// Inner levels, bottom first; level `l` starts at `level_start[l]` and has one value per
    /// node of the level below, padded with `u64::MAX` to whole nodes.
    inner: Vec<[u64; FAN]>,
    level_start: Vec<usize>,
    root: u64,
    /// Statistics for tests: values written (leaves and inner keys).
    writes: u64,
}

/// Minimum key of leaf node `c`.
#[inline]
fn leaf_min(node: &[u32; LEAF_FAN], c: usize) -> u64 {
    let base = c * LEAF_FAN;
    node.iter().enumerate().map(|(o, &r)| key(r, base + o)).min().unwrap_or(u64::MAX)
}

#[inline]
fn inner_min(node: &[u64; FAN]) -> u64 {
    node.iter().copied().min().unwrap_or(u64::MAX)
}

impl MinTree {
    /// Rebuilds the tree for `n` positions with leaf values `leaf(x)`.
    pub(crate) fn build(&mut self, n: usize, leaf: impl Fn(usize) -> u32) {
        self.leaves.clear();
        self.inner.clear();
        self.level_start.clear();
        let chunks = n.div_ceil(LEAF_FAN).max(1);
        self.leaves.extend((0..chunks).map(|c| {
            let mut node = [NO_RANK; LEAF_FAN];
            for (o, v) in node.iter_mut().enumerate() {
                let x = c * LEAF_FAN + o;
                if x < n {
                    *v = leaf(x);
                }
            }
            node
        }));
        // Level 0 holds the leaf nodes' minima; each level has one value per node of the one
        // below, until a level fits in one node.
        let mut count = chunks;
        let mut below_start = 0usize;
        let mut first = true;
        loop {
            let start = self.inner.len();
            self.level_start.push(start);
            let nodes = count.div_ceil(FAN);
            for c in 0..nodes {
                let mut node = [u64::MAX; FAN];
                for (o, v) in node.iter_mut().enumerate() {
                    let child = c * FAN + o;
                    if child < count {
                        *v = if first {
                            self.leaves.get(child).map_or(u64::MAX, |l| leaf_min(l, child))
                        } else {
                            self.inner.get(below_start + child).map_or(u64::MAX, inner_min)
                        };
                    }
                }
                self.inner.push(node);
            }
            first = false;
            below_start = start;
            count = nodes;
            if nodes <= 1 {
                break;
            }
        }
        self.root = self.inner.get(below_start).map_or(u64::MAX, inner_min);
    }

    /// The lowest `(rank, position)` as a key (`rank == NO_RANK` when none is left).
    #[inline]
    fn min(&self) -> u64 {
        self.root
    }

    /// Key stored for child `idx` of inner level `l` (the root for the level above the top).
    #[inline]
    fn parent_key(&self, l: usize, idx: usize) -> Option<u64> {
        match self.level_start.get(l) {
            Some(&start) => self.inner.get(start + idx / FAN).and_then(|n| n.get(idx % FAN)).copied(),
            None => Some(self.root),
        }
    }

    /// Sets the rank at position `x` and fixes the minima above it, stopping at the first node
    /// whose minimum does not change. A node's minimum before the write is read from its parent's
    /// slot; the node is only rescanned when the write raised its minimum.
    #[inline]
    fn set(&mut self, x: usize, rank: u32) {
        let c = x / LEAF_FAN;
        let Some(before) = self.parent_key(0, c) else { return };
        let Some(node) = self.leaves.get_mut(c) else { return };
        let Some(slot) = node.get_mut(x % LEAF_FAN) else { return };
        let was = key(*slot, x);
        let new = key(rank, x);
        if was == new {
            return;
        }
        *slot = rank;
        self.writes += 1;
        let after = if new < before {
            new
        } else if was == before {
            leaf_min(node, c)
        } else {
            before
        };
        if after == before {
            return;
        }
        let (mut idx, mut was, mut new) = (c, before, after);
        for l in 0..self.level_start.len() {
            let Some(before) = self.parent_key(l + 1, idx / FAN) else { return };
            let start = self.level_start.get(l).copied().unwrap_or(0);
            let Some(node) = self.inner.get_mut(start + idx / FAN) else { return };
            let Some(slot) = node.get_mut(idx % FAN) else { return };
            *slot = new;
            self.writes += 1;
            let after = if new < before {
                new
            } else if was == before {
                inner_min(node)
            } else {
                before
            };
            if after == before {
                return;
            }
            idx /= FAN;
            was = before;
            new = after;
        }
        self.root = new;
    }
}
