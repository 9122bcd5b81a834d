//! Rank table and byte-pair merging.
//!
//! The merge reproduces tiktoken's `byte_pair_encode` exactly: repeatedly merge the adjacent pair
//! of parts whose concatenation has the lowest rank, the leftmost one on ties, until no adjacent
//! pair is a token. Short pieces use tiktoken's own scan (quadratic but with a tiny constant);
//! long pieces use a binary heap of `(rank, start)` over a linked list of parts with lazy
//! invalidation, which is O(n log n). Both orders are the same: a part is identified by its start
//! offset, which never changes while the part survives, so "lowest rank, then leftmost" is the
//! same as "lowest `(rank, start)`".

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::Hasher;

use rustc_hash::FxHasher;

/// "Not a token" / "no merge possible".
pub(crate) const NO_RANK: u32 = u32::MAX;

/// Pieces shorter than this use the scan merge, longer ones the heap merge.
const HEAP_THRESHOLD: usize = 128;

/// An empty slot of the open-addressing table.
const EMPTY: u32 = u32::MAX;

/// The ordinary (non-special) tokens of one encoding.
pub(crate) struct Vocab {
    /// All token bytes, concatenated in rank order.
    bytes: Vec<u8>,
    /// `starts[r]..starts[r + 1]` are the bytes of rank `r` (empty for ranks that are not ordinary
    /// tokens).
    starts: Vec<u32>,
    /// Open-addressing hash table (linear probing) of ranks, keyed by token bytes.
    slots: Vec<u32>,
    mask: usize,
    /// Rank of each single byte.
    byte_rank: [u32; 256],
    /// Rank of each two-byte sequence (`NO_RANK` if it is not a token), indexed by `b0 << 8 | b1`.
    pair_rank: Vec<u32>,
    /// Length in bytes of the longest token.
    max_token_len: usize,
}

#[inline]
fn hash_bytes(bytes: &[u8]) -> usize {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.finish() as usize
}

impl Vocab {
    /// Builds the table from the bytes of each rank (`None` for ranks that are not ordinary
    /// tokens). Fails if a single byte is missing (BPE could not encode every input) or the table
    /// is too large for 32-bit offsets.
    pub(crate) fn from_ranks(tokens: &[Option<Vec<u8>>]) -> Result<Vocab, String> {
        let total: usize = tokens.iter().flatten().map(Vec::len).sum();
        if total >= u32::MAX as usize || tokens.len() >= EMPTY as usize {
            return Err("vocabulary too large".to_string());
        }
        let mut bytes = Vec::with_capacity(total);
        let mut starts = Vec::with_capacity(tokens.len() + 1);
        starts.push(0u32);
        let mut count = 0usize;
        let mut max_token_len = 0usize;
        for token in tokens {
            if let Some(t) = token {
                bytes.extend_from_slice(t);
                count += 1;
                max_token_len = max_token_len.max(t.len());
            }
            starts.push(bytes.len() as u32);
        }
        let size = (count * 2).next_power_of_two().max(1024);
        let mut vocab = Vocab {
            bytes,
            starts,
            slots: vec![EMPTY; size],
            mask: size - 1,
            byte_rank: [NO_RANK; 256],
            pair_rank: vec![NO_RANK; 1 << 16],
            max_token_len,
        };
        for (rank, token) in tokens.iter().enumerate() {
            let Some(t) = token else { continue };
            if t.is_empty() {
                continue;
            }
            let rank = rank as u32;
            // Keep the first rank for duplicate byte strings (there are none in the shipped
            // vocabularies).
            if vocab.lookup(t) != NO_RANK {
                continue;
            }
            let mut i = hash_bytes(t) & vocab.mask;
            loop {
                match vocab.slots.get_mut(i) {
                    Some(slot) if *slot == EMPTY => {
                        *slot = rank;
                        break;
                    }
                    Some(_) => i = (i + 1) & vocab.mask,
                    None => return Err("hash table index out of range".to_string()),
                }
            }
            match t.as_slice() {
                [b] => {
                    if let Some(slot) = vocab.byte_rank.get_mut(*b as usize) {
                        *slot = rank;
                    }
                }
                [b0, b1] => {
                    if let Some(slot) = vocab.pair_rank.get_mut(((*b0 as usize) << 8) | *b1 as usize) {
                        *slot = rank;
                    }
                }
                _ => {}
            }
        }
        if vocab.byte_rank.contains(&NO_RANK) {
            return Err("a single byte is not a token".to_string());
        }
        Ok(vocab)
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
                let mut i = hash_bytes(piece) & self.mask;
                loop {
                    match self.slots.get(i) {
                        Some(&r) if r == EMPTY => return NO_RANK,
                        Some(&r) => {
                            if self.token_bytes(r) == Some(piece) {
                                return r;
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
    parts: Vec<(u32, u32)>,
    /// Heap merge: end of the part starting at `i` (meaningful where a part starts).
    end: Vec<u32>,
    /// Heap merge: start of the part before the one starting at `i`.
    prev: Vec<u32>,
    /// Heap merge: rank of merging the part at `i` with the next part, or `NO_RANK`.
    pair: Vec<u32>,
    heap: Vec<Reverse<u64>>,
    /// Statistics for tests: number of heap pushes and pops since the scratch was created.
    pub(crate) heap_ops: u64,
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
    /// Part `i` ends at `end[i]`, starting from 0.
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
        self.merge(piece, scratch).0
    }

    /// Tokens of one piece: calls `f(rank, start, end)` for each, in order (offsets within the
    /// piece). Returns the number of tokens.
    pub(crate) fn piece_tokens(
        &self,
        piece: &[u8],
        scratch: &mut Scratch,
        mut f: impl FnMut(u32, usize, usize),
    ) -> usize {
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
                    let Some(&e) = scratch.end.get(i) else { break };
                    let e = e as usize;
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
                (Some(&(a, _)), Some(&(b, _))) => {
                    piece.get(a as usize..b as usize).map_or(NO_RANK, |t| self.lookup(t))
                }
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

    /// Heap merge; returns the number of merges done. The part structure is left in
    /// `scratch.end`. Pieces must be shorter than 4 GiB (offsets are 32-bit; `merge` checks).
    fn heap_merge(&self, piece: &[u8], s: &mut Scratch) -> usize {
        let n = piece.len();
        s.end.clear();
        s.prev.clear();
        s.pair.clear();
        let mut heap_vec = std::mem::take(&mut s.heap);
        heap_vec.clear();
        let mut ops = 0u64;
        for i in 0..n {
            s.end.push(i as u32 + 1);
            s.prev.push((i as u32).wrapping_sub(1));
            let r = match (piece.get(i), piece.get(i + 1)) {
                (Some(&b0), Some(&b1)) => {
                    self.pair_rank.get(((b0 as usize) << 8) | b1 as usize).copied().unwrap_or(NO_RANK)
                }
                _ => NO_RANK,
            };
            s.pair.push(r);
            if r != NO_RANK {
                heap_vec.push(Reverse(((r as u64) << 32) | i as u64));
                ops += 1;
            }
        }
        let mut heap = BinaryHeap::from(heap_vec);
        let mut merges = 0usize;
        let end = &mut s.end;
        let prev = &mut s.prev;
        let pair = &mut s.pair;
        let rank_of = |a: usize, b: usize| piece.get(a..b).map_or(NO_RANK, |t| self.lookup(t));

        while let Some(Reverse(key)) = heap.pop() {
            ops += 1;
            let r = (key >> 32) as u32;
            let i = (key & 0xFFFF_FFFF) as usize;
            // Stale entry: the part at i was merged away, or its right neighbour changed (a pair's
            // span only grows, so its rank can never come back to an old value).
            if pair.get(i) != Some(&r) {
                continue;
            }
            let Some(&j) = end.get(i) else { break };
            let j = j as usize;
            let Some(&k) = end.get(j) else { break };
            let k = k as usize;
            // Merge [i, j) and [j, k).
            if let Some(e) = end.get_mut(i) {
                *e = k as u32;
            }
            if let Some(p) = pair.get_mut(j) {
                *p = NO_RANK;
            }
            merges += 1;
            // New pair with the right neighbour [k, end[k]).
            let new_right = if k < n {
                if let Some(p) = prev.get_mut(k) {
                    *p = i as u32;
                }
                end.get(k).map_or(NO_RANK, |&e2| rank_of(i, e2 as usize))
            } else {
                NO_RANK
            };
            if let Some(p) = pair.get_mut(i) {
                *p = new_right;
            }
            if new_right != NO_RANK {
                heap.push(Reverse(((new_right as u64) << 32) | i as u64));
                ops += 1;
            }
            // New pair with the left neighbour [prev[i], i).
            if i > 0 {
                if let Some(&pv) = prev.get(i) {
                    let pv = pv as usize;
                    let new_left = rank_of(pv, k);
                    if let Some(p) = pair.get_mut(pv) {
                        *p = new_left;
                    }
                    if new_left != NO_RANK {
                        heap.push(Reverse(((new_left as u64) << 32) | pv as u64));
                        ops += 1;
                    }
                }
            }
        }
        let mut v = heap.into_vec();
        v.clear();
        s.heap = v;
        s.heap_ops += ops;
        merges
    }
}
