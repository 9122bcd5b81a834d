//! Byte-pair merging for the byte-level vocabularies (tiktoken's o200k_base and cl100k_base, and the
//! open-weight families loaded at run time), on token ids rather than byte strings.
//!
//! ## The table: canonical pairs
//!
//! Every token of two or more bytes that BPE builds from its own bytes is built by one last merge,
//! of two tokens `a` and `b`: its *canonical pair*. Within any text, two adjacent parts are merged
//! into `t` only when they are `t`'s canonical pair: the merges inside the span of `t` see nothing
//! outside it (a merge across its edge would have consumed one of its parts), so they are exactly
//! the merges of BPE on `t`'s bytes alone, the last of which is the canonical pair
//! (docs/performance-notes.md, "Canonical pairs"). tiktoken's rule — merge the adjacent pair whose
//! concatenation has the lowest rank, the leftmost on ties — is therefore the same rule over the
//! canonical pairs alone, and [`Merges`] keeps only those: per token, its pair and byte length
//! (`split`), and an open-addressing index from a pair of ids to the token it makes. Merging a
//! piece never hashes bytes; the table is built straight from the vocabulary file, which stores
//! each token as its canonical pair (`vocab_file.rs`).
//!
//! A token that BPE does not build from its own bytes (none in o200k_base or cl100k_base; Llama 3
//! has 588) can only ever be a whole piece — tiktoken looks the whole piece up first, and Hugging
//! Face's `ignore_merges` does the same —, so `whole` maps its bytes to its id.
//!
//! ## The merges
//!
//! - Segments of up to [`SCAN_MAX`] bytes: tiktoken's own scan (find the lowest pair, merge, update
//!   its two neighbours), on stack arrays; to count, on contiguous parts ([`Merges::scan_count`]),
//!   one and two bytes answered by a table.
//! - Longer ones: a binary heap of `(rank, position)` keys with lazy deletion over a linked list of
//!   parts, `O(n log n)`.
//! - Pieces longer than [`LONG_MIN`] bytes are merged in overlapping windows, stitched together
//!   where both windows agree on a token (see [`Merges::long_merge`]); this keeps the scratch
//!   memory bounded by the window, and a text that repeats with a short period (a megabyte of
//!   spaces) is stitched once per period and then fast-forwarded.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

/// "No token" / "no merge".
pub(crate) const NONE: u32 = u32::MAX;

/// Bits of a token id in the packed tables.
const ID_BITS: u32 = 21;
/// Token ids must be below this (2 097 151).
pub(crate) const MAX_TOKENS: usize = (1 << ID_BITS) - 1;
/// The pair bits of a `split` entry: `left | right << ID_BITS`.
const PAIR_FIELD: u64 = (1 << (2 * ID_BITS)) - 1;
/// Where a `split` entry keeps the token's length in bytes (16 bits).
const LEN_SHIFT: u32 = 2 * ID_BITS;
/// A `split` entry of a single-byte token: the byte in the low bits.
const BYTE_FLAG: u64 = 1 << 63;
/// A `split` entry of a token BPE does not build (its bytes are in `whole`).
const WHOLE_FLAG: u64 = 1 << 62;
/// A `split` entry of an id that is not an ordinary token.
const HOLE: u64 = u64::MAX;
/// An empty index slot (never a valid slot: ids are below `id_mask`).
const EMPTY: u32 = u32::MAX;
/// A slot's probe distance (6 bits, above the id; a run this long makes the table grow).
const MAX_DIST: u32 = 63;

/// Segments up to this long are merged by the scan on stack arrays.
pub(crate) const SCAN_MAX: usize = 16;
/// Segments up to this long (and longer than [`SCAN_MAX`]) are merged with block minima
/// ([`Merges::block_merge`]); pieces longer than this are merged in windows.
pub(crate) const LONG_MIN: usize = BLOCK_MAX;
/// Most bytes of a block merge.
const BLOCK_MAX: usize = 256;
/// Positions per block of the block merge.
const BLOCK: usize = 8;
/// First window length of a long piece (doubled for a piece whose windows share no token).
const WINDOW: usize = 64;
/// Longest window before a long piece is merged whole (the fallback; see `long_merge`).
const MAX_WINDOW: usize = 1 << 14;

#[inline]
fn pack(a: u32, b: u32) -> u64 {
    (a as u64 & ((1 << ID_BITS) - 1)) | ((b as u64 & ((1 << ID_BITS) - 1)) << ID_BITS)
}

#[inline]
fn mix(key: u64) -> u64 {
    key.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The ordinary tokens of one byte-level vocabulary, as canonical pairs.
pub(crate) struct Merges {
    /// Per id: `left | right << 21 | len << 42`, or `BYTE_FLAG | byte`, `WHOLE_FLAG | len << 42`,
    /// `HOLE`.
    split: Vec<u64>,
    /// Open addressing (linear probing, Robin Hood) from `pack(left, right)` to the id: each slot
    /// holds the id in its low bits (`id_mask`), its distance from its home slot (6 bits), and a
    /// tag of the pair's hash above, so probes past other pairs rarely read `split`. Load factor
    /// at most 0.8.
    index: Vec<u32>,
    /// `64 - log2(index.len())`: the slot is the top bits of the mixed key.
    shift: u32,
    id_mask: u32,
    /// Where a slot's probe distance starts (the bits of `id_mask`), and the tag bits above it.
    dist_shift: u32,
    tag_mask: u32,
    /// Id of each single byte.
    byte_token: [u32; 256],
    /// Id of each two-byte token, indexed by `b0 << 8 | b1` (`NONE` if it is not one).
    pair2: Vec<u32>,
    /// Tokens BPE does not build from their bytes, by bytes (see the module doc).
    whole: FxHashMap<Box<[u8]>, u32>,
    /// Length of the longest `whole` token (0 when there are none).
    whole_max: usize,
    /// Length in bytes of the longest token.
    max_len: usize,
}

/// One rank of a byte-level vocabulary, as the vocabulary file stores it (`vocab_file.rs`).
pub(crate) enum Part<'a> {
    /// Not an ordinary token.
    None,
    /// A single byte.
    Byte(u8),
    /// The merge of two earlier ranks (its canonical pair).
    Pair(u32, u32),
    /// A token BPE does not build from its bytes.
    Literal(&'a [u8]),
}

/// Builds a [`Merges`] rank by rank (the vocabulary file's order).
pub(crate) struct Builder {
    m: Merges,
    /// Non-empty slots of the index so far.
    used: usize,
}

impl Builder {
    /// A table for `ranks` ids of which at most `tokens` are tokens of two or more bytes.
    pub(crate) fn new(ranks: usize, tokens: usize) -> Result<Builder, String> {
        if ranks > MAX_TOKENS {
            return Err(format!("{ranks} token ids (at most {MAX_TOKENS})"));
        }
        // Load factor at most 0.8 (0.76 for o200k_base, 0.76 for cl100k_base).
        let size = (tokens + tokens / 4 + 1).next_power_of_two().max(1024);
        let id_mask = (ranks as u32 + 1).next_power_of_two().wrapping_sub(1);
        Ok(Builder {
            m: Merges {
                split: Vec::with_capacity(ranks),
                index: vec![EMPTY; size],
                shift: 64 - size.trailing_zeros(),
                id_mask,
                dist_shift: id_mask.count_ones(),
                tag_mask: !(id_mask | (MAX_DIST << id_mask.count_ones())),
                byte_token: [NONE; 256],
                pair2: vec![NONE; 1 << 16],
                whole: FxHashMap::default(),
                whole_max: 0,
                max_len: 0,
            },
            used: 0,
        })
    }

    /// Id the next token gets.
    pub(crate) fn next_id(&self) -> u32 {
        self.m.split.len() as u32
    }

    /// The table so far (to merge with while building from token bytes).
    pub(crate) fn merges(&self) -> &Merges {
        &self.m
    }

    /// The next id is not an ordinary token.
    pub(crate) fn hole(&mut self) {
        self.m.split.push(HOLE);
    }

    /// The next id is the single byte `b`.
    pub(crate) fn byte(&mut self, b: u8) {
        let id = self.next_id();
        self.m.split.push(BYTE_FLAG | b as u64 | (1 << LEN_SHIFT));
        if let Some(slot) = self.m.byte_token.get_mut(b as usize).filter(|s| **s == NONE) {
            *slot = id;
        }
        self.m.max_len = self.m.max_len.max(1);
    }

    /// The next id is the merge of the earlier tokens `a` and `b` (its canonical pair).
    pub(crate) fn pair(&mut self, a: u32, b: u32) -> Result<(), String> {
        let id = self.next_id();
        let len_of = |t: u32| match self.m.split.get(t as usize) {
            Some(&s) if s != HOLE => Ok(self.m.len(s)),
            _ => Err(format!("token {id}: part {t} is not an earlier token")),
        };
        let len = len_of(a)? + len_of(b)?;
        if len > u16::MAX as usize {
            return Err(format!("token {id}: {len} bytes (at most 65535)"));
        }
        if self.m.pair(a, b) != NONE {
            // Two ids with the same bytes: BPE builds the first; the other is only a whole piece
            // (never the case in the shipped vocabularies).
            let bytes = self.m.token_bytes(a).into_iter().chain(self.m.token_bytes(b)).flatten().collect::<Vec<u8>>();
            return self.whole(&bytes);
        }
        self.m.split.push(pack(a, b) | ((len as u64) << LEN_SHIFT));
        self.m.max_len = self.m.max_len.max(len);
        if self.used + 1 > self.m.index.len() - self.m.index.len() / 5 {
            self.m.grow()?;
        }
        self.used += 1;
        if !self.m.insert(pack(a, b), id) {
            // A probe run longer than a slot can record: a larger table (never needed for the
            // shipped vocabularies).
            self.m.grow()?;
        }
        if let (Some(&sa), Some(&sb)) = (self.m.split.get(a as usize), self.m.split.get(b as usize)) {
            if sa & BYTE_FLAG != 0 && sb & BYTE_FLAG != 0 && sa != HOLE && sb != HOLE {
                let at = ((sa & 0xFF) << 8 | (sb & 0xFF)) as usize;
                if let Some(slot) = self.m.pair2.get_mut(at).filter(|s| **s == NONE) {
                    *slot = id;
                }
            }
        }
        Ok(())
    }

    /// The next id is a token BPE does not build (only ever a whole piece).
    pub(crate) fn whole(&mut self, bytes: &[u8]) -> Result<(), String> {
        let id = self.next_id();
        if bytes.is_empty() || bytes.len() > u16::MAX as usize {
            return Err(format!("token {id}: {} bytes", bytes.len()));
        }
        self.m.split.push(WHOLE_FLAG | ((bytes.len() as u64) << LEN_SHIFT));
        self.m.whole.entry(bytes.into()).or_insert(id);
        self.m.whole_max = self.m.whole_max.max(bytes.len());
        self.m.max_len = self.m.max_len.max(bytes.len());
        Ok(())
    }

    /// The next id is `part`.
    pub(crate) fn add(&mut self, part: &Part<'_>) -> Result<(), String> {
        match *part {
            Part::None => self.hole(),
            Part::Byte(x) => self.byte(x),
            Part::Pair(x, y) => self.pair(x, y)?,
            Part::Literal(l) => self.whole(l)?,
        }
        Ok(())
    }

    /// The table; fails when a single byte has no token (BPE could not encode every input).
    pub(crate) fn finish(self) -> Result<Merges, String> {
        if self.m.byte_token.contains(&NONE) {
            return Err("a single byte is not a token".to_string());
        }
        let mut m = self.m;
        m.split.shrink_to_fit();
        Ok(m)
    }
}

/// The parts of a segment of up to [`SCAN_MAX`] bytes after [`Merges::scan`]: part starts are
/// positions `i` with `ids[i] != NONE`, linked by `next` from 0 (`next[i]` is the part's end).
pub(crate) struct Small {
    /// Number of parts.
    pub(crate) n: usize,
    ids: [u32; SCAN_MAX],
    next: [u8; SCAN_MAX + 1],
    /// Start of the last part.
    last_at: u8,
    len: u8,
}

impl Small {
    /// Calls `f(id, start, end)` for each part, offsets from `base`.
    pub(crate) fn emit(&self, base: usize, f: &mut impl FnMut(u32, usize, usize)) {
        let mut i = 0usize;
        while i < self.len as usize {
            let e = self.next.get(i).map_or(self.len as usize, |&x| x as usize);
            f(self.ids.get(i).copied().unwrap_or(NONE), base + i, base + e);
            i = e.max(i + 1);
        }
    }
}

/// Work counters (for the linearity tests; not timed).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct MergeStats {
    /// Bytes handed to a merge (scan, block or heap; the windows of long pieces included).
    pub(crate) merged_bytes: u64,
    /// Merges done by the heap merge, and its heap pushes and pops (each `O(log n)`).
    pub(crate) heap_ops: u64,
    /// Bytes merged in windows of long pieces (each byte of a long piece is in one or two windows,
    /// more while a window grows).
    pub(crate) window_bytes: u64,
    /// Windows of long pieces merged.
    pub(crate) windows: u64,
    /// Window steps skipped by the periodic fast-forward.
    pub(crate) skipped_windows: u64,
    /// Long pieces merged whole because their windows never agreed (see `long_merge`).
    pub(crate) fallbacks: u64,
    /// Bytes compared by the periodicity check of the fast-forward.
    pub(crate) period_bytes: u64,
}

/// The parts of a segment of up to [`BLOCK_MAX`] bytes being merged: the pair key of each part
/// (`rank << 8 | position`, `u32::MAX` when it has no pair: ranks are below 2^21, so the lowest
/// key is the lowest rank, leftmost on ties), the lowest key of each block of [`BLOCK`]
/// positions, and the parts as a linked list of positions.
pub(crate) struct Blocks {
    keys: [u32; BLOCK_MAX],
    mins: [u32; BLOCK_MAX / BLOCK],
    ids: [u32; BLOCK_MAX],
    next: [u16; BLOCK_MAX + 1],
    prev: [u16; BLOCK_MAX + 1],
}

/// The key of no pair.
const NO_KEY: u32 = u32::MAX;

impl Blocks {
    fn new() -> Box<Blocks> {
        Box::new(Blocks {
            keys: [NO_KEY; BLOCK_MAX],
            mins: [NO_KEY; BLOCK_MAX / BLOCK],
            ids: [NONE; BLOCK_MAX],
            next: [0; BLOCK_MAX + 1],
            prev: [0; BLOCK_MAX + 1],
        })
    }

    #[inline]
    fn key(rank: u32, x: usize) -> u32 {
        if rank == NONE {
            NO_KEY
        } else {
            (rank << 8) | (x as u32 & 0xFF)
        }
    }

    /// Recomputes the minimum of block `b`.
    #[inline]
    fn refresh(&mut self, b: usize) {
        let b = b & (BLOCK_MAX / BLOCK - 1);
        let block: Option<&[u32; BLOCK]> = self.keys.get(b * BLOCK..b * BLOCK + BLOCK).and_then(|k| k.try_into().ok());
        let m = block.map_or(NO_KEY, |k| k.iter().fold(NO_KEY, |m, &x| m.min(x)));
        if let Some(slot) = self.mins.get_mut(b) {
            *slot = m;
        }
    }

    /// Sets the key of position `x` and keeps its block's minimum: lowered in place, rescanned
    /// only when the old key was the minimum and the new one is higher.
    #[inline]
    fn set(&mut self, x: usize, rank: u32) {
        let x = x & (BLOCK_MAX - 1);
        let new = Self::key(rank, x);
        let Some(k) = self.keys.get_mut(x) else { return };
        let old = std::mem::replace(k, new);
        let b = x / BLOCK;
        let Some(&m) = self.mins.get(b) else { return };
        if new < m {
            if let Some(slot) = self.mins.get_mut(b) {
                *slot = new;
            }
        } else if old == m && new != old {
            self.refresh(b);
        }
    }
}

/// Reusable buffers of the heap merge and the windows (one per top-level call).
#[derive(Default)]
pub(crate) struct MergeScratch {
    blocks: Option<Box<Blocks>>,
    ids: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    rank: Vec<u32>,
    heap: Vec<Reverse<u64>>,
    /// The current window's tokens after the last common token (absolute starts, ids).
    cur_s: Vec<u32>,
    cur_i: Vec<u32>,
    /// The next window's tokens.
    nxt_s: Vec<u32>,
    nxt_i: Vec<u32>,
    /// The tokens committed by the last stitch and the layout before it (fast-forward).
    step_s: Vec<u32>,
    step_i: Vec<u32>,
    layout: Vec<(u32, u32)>,
    pub(crate) stats: MergeStats,
}

impl Merges {
    /// The tag bits of a slot (above the id and the distance).
    #[inline]
    fn tag(&self, h: u64) -> u32 {
        (h >> 16) as u32 & self.tag_mask
    }

    /// Enters `key → id` in the index (Robin Hood: a key that has probed further takes the slot
    /// of one that has probed less, which keeps every probe run short); false when a probe run
    /// would be longer than [`MAX_DIST`].
    fn insert(&mut self, key: u64, id: u32) -> bool {
        let h = mix(key);
        let shift = self.dist_shift;
        let mut value = self.tag(h) | id;
        let mut dist = 0u32;
        let mask = self.index.len() - 1;
        let mut i = (h >> self.shift) as usize;
        loop {
            let Some(slot) = self.index.get_mut(i) else { return false };
            if *slot == EMPTY {
                *slot = value | (dist << shift);
                return true;
            }
            let theirs = (*slot >> shift) & MAX_DIST;
            if theirs < dist {
                let displaced = *slot;
                *slot = value | (dist << shift);
                value = displaced & !(MAX_DIST << shift);
                dist = theirs;
            }
            dist += 1;
            if dist >= MAX_DIST {
                return false;
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the index and enters every pair again.
    fn grow(&mut self) -> Result<(), String> {
        let size = self.index.len() * 2;
        if size > 1 << 28 {
            return Err("merge index too large".to_string());
        }
        self.index = vec![EMPTY; size];
        self.shift = 64 - size.trailing_zeros();
        let pairs: Vec<(u64, u32)> = (0u32..)
            .zip(&self.split)
            .filter(|(_, &s)| s & (BYTE_FLAG | WHOLE_FLAG) == 0)
            .map(|(id, &s)| (s & PAIR_FIELD, id))
            .collect();
        for (key, id) in pairs {
            if !self.insert(key, id) {
                return self.grow();
            }
        }
        Ok(())
    }

    #[inline]
    fn len(&self, s: u64) -> usize {
        ((s >> LEN_SHIFT) & 0xFFFF) as usize
    }

    /// Number of ids (holes included).
    pub(crate) fn rank_count(&self) -> usize {
        self.split.len()
    }

    /// The tokens BPE does not build from their bytes over the lower ranks (whole pieces only).
    pub(crate) fn whole_tokens(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.whole.keys().map(|k| &k[..])
    }

    /// Number of ids that are ordinary tokens.
    pub(crate) fn ordinary_tokens(&self) -> usize {
        self.split.iter().filter(|&&s| s != HOLE).count()
    }

    pub(crate) fn max_token_len(&self) -> usize {
        self.max_len
    }

    /// Bytes held by the tables.
    pub(crate) fn heap_bytes(&self) -> usize {
        8 * self.split.capacity()
            + 4 * (self.index.capacity() + self.pair2.capacity())
            + self.whole.keys().map(|k| k.len() + 32).sum::<usize>()
    }

    /// Id of a single byte.
    #[inline]
    pub(crate) fn byte(&self, b: u8) -> u32 {
        self.byte_token.get(b as usize).copied().unwrap_or(NONE)
    }

    /// The token whose canonical pair is `(a, b)`, or `NONE`. A miss usually ends at the first
    /// slot whose key has probed less than this one (Robin Hood), or at an empty one.
    #[inline]
    pub(crate) fn pair(&self, a: u32, b: u32) -> u32 {
        let key = pack(a, b);
        let h = mix(key);
        let shift = self.dist_shift;
        let want = self.tag(h);
        let mask = self.index.len() - 1;
        let mut i = (h >> self.shift) as usize;
        let mut dist = 0u32;
        loop {
            let v = match self.index.get(i) {
                Some(&v) => v,
                None => return NONE,
            };
            if v == EMPTY {
                return NONE;
            }
            let theirs = (v >> shift) & MAX_DIST;
            if theirs < dist {
                return NONE;
            }
            if theirs == dist && v & self.tag_mask == want {
                let t = v & self.id_mask;
                if self.split.get(t as usize).is_some_and(|&s| s & (PAIR_FIELD | BYTE_FLAG | WHOLE_FLAG) == key) {
                    return t;
                }
            }
            dist += 1;
            i = (i + 1) & mask;
        }
    }

    /// The token of the two bytes `b0 b1`, or `NONE`.
    #[inline]
    fn pair_of_bytes(&self, b0: u8, b1: u8) -> u32 {
        self.pair2.get(((b0 as usize) << 8) | b1 as usize).copied().unwrap_or(NONE)
    }

    /// The bytes of an ordinary token (`None` for other ids).
    pub(crate) fn token_bytes(&self, id: u32) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        self.append_bytes(id, &mut out).then_some(out)
    }

    /// Appends the bytes of `id` to `out`; false (and nothing appended) for other ids.
    pub(crate) fn append_bytes(&self, id: u32, out: &mut Vec<u8>) -> bool {
        let Some(&s) = self.split.get(id as usize) else { return false };
        if s == HOLE {
            return false;
        }
        if s & WHOLE_FLAG != 0 && s & BYTE_FLAG == 0 {
            // Rare (tokens BPE does not build): found by a scan of the few of them.
            return match self.whole.iter().find(|(_, &v)| v == id) {
                Some((k, _)) => {
                    out.extend_from_slice(k);
                    true
                }
                None => false,
            };
        }
        // Depth-first over the pair tree, left part first (parts always have lower ids, so the
        // walk ends).
        let mut stack = vec![id];
        while let Some(t) = stack.pop() {
            match self.split.get(t as usize) {
                Some(&s) if s & BYTE_FLAG != 0 && s != HOLE => out.push((s & 0xFF) as u8),
                Some(&s) if s & WHOLE_FLAG != 0 && s != HOLE => {
                    if !self.append_bytes(t, out) {
                        return false;
                    }
                }
                Some(&s) if s != HOLE => {
                    let (a, b) = ((s & ((1 << ID_BITS) - 1)) as u32, ((s >> ID_BITS) & ((1 << ID_BITS) - 1)) as u32);
                    if a >= t || b >= t {
                        return false;
                    }
                    stack.push(b);
                    stack.push(a);
                }
                _ => return false,
            }
        }
        true
    }

    /// The id of a piece that is a token BPE does not build (see the module doc), or `NONE`.
    #[inline]
    fn whole_piece(&self, piece: &[u8]) -> u32 {
        if piece.len() > self.whole_max || self.whole.is_empty() {
            return NONE;
        }
        self.whole.get(piece).copied().unwrap_or(NONE)
    }

    /// tiktoken's scan merge of a segment of at most [`SCAN_MAX`] bytes (longer input is cut): the
    /// lowest pair rank over fixed-size arrays (parts that merged away keep `NONE`), then its two
    /// neighbours' pairs looked up again; a linked list instead of moving the parts.
    #[inline]
    pub(crate) fn scan(&self, seg: &[u8]) -> Small {
        // Indices are masked with SCAN_MAX - 1 (a power of two): always in bounds.
        const M: usize = SCAN_MAX - 1;
        let seg = seg.get(..SCAN_MAX).unwrap_or(seg);
        let n = seg.len();
        let mut out = Small { n, ids: [NONE; SCAN_MAX], next: [0; SCAN_MAX + 1], last_at: 0, len: n as u8 };
        if n == 0 {
            return out;
        }
        let w = self.whole_piece(seg);
        if w != NONE {
            out.n = 1;
            if let (Some(id), Some(nx)) = (out.ids.get_mut(0), out.next.get_mut(0)) {
                *id = w;
                *nx = n as u8;
            }
            return out;
        }
        let mut ranks = [NONE; SCAN_MAX];
        let mut prev = [0u8; SCAN_MAX + 1];
        for (i, &b) in seg.iter().enumerate() {
            if let Some(id) = out.ids.get_mut(i & M) {
                *id = self.byte(b);
            }
        }
        for (i, w) in seg.windows(2).enumerate() {
            if let (Some(r), [b0, b1]) = (ranks.get_mut(i & M), w) {
                *r = self.pair_of_bytes(*b0, *b1);
            }
        }
        for i in 0..=n {
            if let (Some(nx), Some(pv)) = (out.next.get_mut(i), prev.get_mut(i)) {
                *nx = (i + 1) as u8;
                *pv = i.saturating_sub(1) as u8;
            }
        }
        let mut parts = n;
        let live = ranks.get(..n - 1).unwrap_or_default().len();
        while let Some(head) = ranks.get(..live) {
            let best = head.iter().copied().min().unwrap_or(NONE);
            if best == NONE {
                break;
            }
            let i = head.iter().position(|&r| r == best).unwrap_or(0) & M;
            let j = out.next.get(i).copied().unwrap_or(0) as usize;
            let k = out.next.get(j).copied().unwrap_or(n as u8) as usize;
            parts -= 1;
            if let Some(id) = out.ids.get_mut(i) {
                *id = best;
            }
            if let Some(id) = out.ids.get_mut(j & M) {
                *id = NONE;
            }
            if let Some(r) = ranks.get_mut(j & M) {
                *r = NONE;
            }
            if let Some(nx) = out.next.get_mut(i) {
                *nx = k as u8;
            }
            if let Some(pv) = prev.get_mut(k) {
                *pv = i as u8;
            }
            let right = if k < n { self.pair(best, out.ids.get(k & M).copied().unwrap_or(NONE)) } else { NONE };
            if let Some(r) = ranks.get_mut(i) {
                *r = right;
            }
            if i > 0 {
                let p = prev.get(i).copied().unwrap_or(0) as usize & M;
                let left = self.pair(out.ids.get(p).copied().unwrap_or(NONE), best);
                if let Some(r) = ranks.get_mut(p) {
                    *r = left;
                }
            }
        }
        out.n = parts;
        out.last_at = prev.get(n).copied().unwrap_or(0);
        out
    }

    /// The number of tokens of a segment of at most [`SCAN_MAX`] bytes (longer input is cut):
    /// tiktoken's scan on two short arrays, the parts kept contiguous (a merge shifts the parts
    /// after it down by one), which for the few bytes of most pieces costs less than the linked
    /// parts of [`Merges::scan`].
    #[inline]
    pub(crate) fn scan_count(&self, seg: &[u8]) -> usize {
        // Indices are masked with SCAN_MAX - 1 (a power of two): always in bounds.
        const M: usize = SCAN_MAX - 1;
        let seg = seg.get(..SCAN_MAX).unwrap_or(seg);
        let n = seg.len();
        if n <= 1 || self.whole_piece(seg) != NONE {
            return n.min(1);
        }
        if let [b0, b1] = *seg {
            return if self.pair_of_bytes(b0, b1) == NONE { 2 } else { 1 };
        }
        let mut ids = [NONE; SCAN_MAX];
        let mut ranks = [NONE; SCAN_MAX];
        for (i, &b) in seg.iter().enumerate() {
            if let Some(id) = ids.get_mut(i & M) {
                *id = self.byte(b);
            }
        }
        for (i, w) in seg.windows(2).enumerate() {
            if let (Some(r), [b0, b1]) = (ranks.get_mut(i & M), w) {
                *r = self.pair_of_bytes(*b0, *b1);
            }
        }
        let mut len = n;
        loop {
            let mut best = NONE;
            let mut at = 0usize;
            for (i, &r) in ranks.iter().enumerate().take(len - 1) {
                if r < best {
                    best = r;
                    at = i;
                }
            }
            if best == NONE {
                return len;
            }
            // Part `at` becomes `best`; part `at + 1` leaves, the later parts and their pair
            // ranks move down by one.
            len -= 1;
            for i in at + 1..len {
                let (id, r) = (ids.get((i + 1) & M).copied(), ranks.get((i + 1) & M).copied());
                if let (Some(d), Some(s), Some(id), Some(r)) = (ids.get_mut(i & M), ranks.get_mut(i & M), id, r) {
                    *d = id;
                    *s = r;
                }
            }
            if let Some(id) = ids.get_mut(at & M) {
                *id = best;
            }
            let right =
                if at + 1 < len { self.pair(best, ids.get((at + 1) & M).copied().unwrap_or(NONE)) } else { NONE };
            if let Some(r) = ranks.get_mut(at & M) {
                *r = right;
            }
            if at > 0 {
                let left = self.pair(ids.get((at - 1) & M).copied().unwrap_or(NONE), best);
                if let Some(r) = ranks.get_mut((at - 1) & M) {
                    *r = left;
                }
            }
        }
    }

    /// Merge of a segment of up to [`BLOCK_MAX`] bytes (longer input is cut): the lowest pair is
    /// the lowest of the blocks' minima (16 blocks at most), and a merge rescans only the blocks of
    /// the positions it changed. Returns the number of tokens; the parts stay in `bl` (ids by
    /// start position, linked by `next` from 0).
    pub(crate) fn block_merge(&self, seg: &[u8], bl: &mut Blocks) -> usize {
        let seg = seg.get(..BLOCK_MAX).unwrap_or(seg);
        let n = seg.len();
        if n == 0 {
            return 0;
        }
        let w = self.whole_piece(seg);
        if w != NONE {
            if let (Some(id), Some(nx)) = (bl.ids.get_mut(0), bl.next.get_mut(0)) {
                *id = w;
                *nx = n as u16;
            }
            return 1;
        }
        let nb = n.div_ceil(BLOCK);
        for (i, &b) in seg.iter().enumerate() {
            if let Some(id) = bl.ids.get_mut(i) {
                *id = self.byte(b);
            }
        }
        for i in 0..=n {
            if let (Some(nx), Some(pv)) = (bl.next.get_mut(i), bl.prev.get_mut(i)) {
                *nx = (i + 1) as u16;
                *pv = i.wrapping_sub(1) as u16;
            }
        }
        for (i, w) in seg.windows(2).enumerate() {
            if let ([b0, b1], Some(k)) = (w, bl.keys.get_mut(i)) {
                *k = Blocks::key(self.pair_of_bytes(*b0, *b1), i);
            }
        }
        for x in n - 1..nb * BLOCK {
            if let Some(k) = bl.keys.get_mut(x) {
                *k = NO_KEY;
            }
        }
        for b in 0..nb {
            bl.refresh(b);
        }
        let mut merges = 0usize;
        loop {
            let best = bl.mins.get(..nb).and_then(|m| m.iter().copied().min()).unwrap_or(NO_KEY);
            if best == NO_KEY {
                break;
            }
            let r = best >> 8;
            let i = (best & 0xFF) as usize;
            let j = bl.next.get(i).copied().unwrap_or(0) as usize & (BLOCK_MAX - 1);
            let k = bl.next.get(j).copied().unwrap_or(n as u16) as usize;
            merges += 1;
            if let Some(id) = bl.ids.get_mut(i) {
                *id = r;
            }
            if let Some(nx) = bl.next.get_mut(i) {
                *nx = k as u16;
            }
            if let Some(pv) = bl.prev.get_mut(k) {
                *pv = i as u16;
            }
            bl.set(j, NONE);
            let right =
                if k < n { self.pair(r, bl.ids.get(k & (BLOCK_MAX - 1)).copied().unwrap_or(NONE)) } else { NONE };
            bl.set(i, right);
            if i > 0 {
                let p = bl.prev.get(i).copied().unwrap_or(0) as usize & (BLOCK_MAX - 1);
                let left = self.pair(bl.ids.get(p).copied().unwrap_or(NONE), r);
                bl.set(p, left);
            }
        }
        n - merges
    }

    /// Heap merge of a segment: returns the number of tokens; the parts are left in `s.ids` (by
    /// start position) linked by `s.next`, from position 0.
    pub(crate) fn heap_merge(&self, seg: &[u8], s: &mut MergeScratch) -> usize {
        let n = seg.len();
        if n == 0 {
            return 0;
        }
        s.ids.clear();
        s.next.clear();
        s.prev.clear();
        s.rank.clear();
        s.heap.clear();
        let w = self.whole_piece(seg);
        if w != NONE {
            s.ids.push(w);
            s.next.push(n as u32);
            return 1;
        }
        s.ids.extend(seg.iter().map(|&b| self.byte(b)));
        s.next.extend(1..=n as u32);
        s.prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
        for (i, w) in seg.windows(2).enumerate() {
            let r = match w {
                [b0, b1] => self.pair_of_bytes(*b0, *b1),
                _ => NONE,
            };
            s.rank.push(r);
            if r != NONE {
                s.heap.push(Reverse(((r as u64) << 32) | i as u64));
            }
        }
        s.rank.push(NONE);
        let mut heap = BinaryHeap::from(std::mem::take(&mut s.heap));
        let mut ops = heap.len() as u64;
        let mut merges = 0usize;
        while let Some(Reverse(key)) = heap.pop() {
            ops += 1;
            let r = (key >> 32) as u32;
            let i = (key & 0xFFFF_FFFF) as usize;
            if s.rank.get(i) != Some(&r) {
                continue; // stale: the part merged since, or its pair changed
            }
            let Some(&j) = s.next.get(i) else { break };
            let k = s.next.get(j as usize).copied().unwrap_or(n as u32);
            merges += 1;
            if let Some(id) = s.ids.get_mut(i) {
                *id = r;
            }
            if let Some(nx) = s.next.get_mut(i) {
                *nx = k;
            }
            if let Some(p) = s.prev.get_mut(k as usize) {
                *p = i as u32;
            }
            if let Some(rj) = s.rank.get_mut(j as usize) {
                *rj = NONE;
            }
            let right = match s.ids.get(k as usize) {
                Some(&idk) if (k as usize) < n => self.pair(r, idk),
                _ => NONE,
            };
            if let Some(ri) = s.rank.get_mut(i) {
                *ri = right;
            }
            if right != NONE {
                heap.push(Reverse(((right as u64) << 32) | i as u64));
                ops += 1;
            }
            if i > 0 {
                let p = s.prev.get(i).copied().unwrap_or(NONE) as usize;
                let left = match s.ids.get(p) {
                    Some(&idp) => self.pair(idp, r),
                    None => NONE,
                };
                if let Some(rp) = s.rank.get_mut(p) {
                    *rp = left;
                }
                if left != NONE {
                    heap.push(Reverse(((left as u64) << 32) | p as u64));
                    ops += 1;
                }
            }
        }
        s.heap = heap.into_vec();
        s.stats.heap_ops += ops;
        n - merges
    }

    /// Tokens of a segment of any length up to [`LONG_MIN`]-ish (scan or heap merge), appended to
    /// `starts`/`ids` with starts offset by `base`; returns how many.
    fn merge_into(
        &self,
        seg: &[u8],
        base: u32,
        s: &mut MergeScratch,
        out_s: &mut Vec<u32>,
        out_i: &mut Vec<u32>,
    ) -> usize {
        s.stats.merged_bytes += seg.len() as u64;
        if seg.len() <= SCAN_MAX {
            let sm = self.scan(seg);
            sm.emit(base as usize, &mut |id, a, _| {
                out_s.push(a as u32);
                out_i.push(id);
            });
            return sm.n;
        }
        if seg.len() <= BLOCK_MAX {
            let bl = s.blocks.get_or_insert_with(Blocks::new);
            let count = self.block_merge(seg, bl);
            let mut at = 0usize;
            while at < seg.len() {
                out_s.push(base + at as u32);
                out_i.push(bl.ids.get(at).copied().unwrap_or(NONE));
                at = bl.next.get(at).map_or(seg.len(), |&x| x as usize).max(at + 1);
            }
            return count;
        }
        let count = self.heap_merge(seg, s);
        let mut at = 0usize;
        while at < seg.len() {
            out_s.push(base + at as u32);
            out_i.push(s.ids.get(at).copied().unwrap_or(NONE));
            at = s.next.get(at).map_or(seg.len(), |&x| x as usize);
        }
        count
    }

    /// Number of tokens of a segment (any length).
    pub(crate) fn count(&self, seg: &[u8], s: &mut MergeScratch) -> usize {
        if seg.len() <= LONG_MIN {
            s.stats.merged_bytes += seg.len() as u64;
        }
        if seg.len() <= SCAN_MAX {
            self.scan_count(seg)
        } else if seg.len() <= LONG_MIN {
            self.block_merge(seg, s.blocks.get_or_insert_with(Blocks::new))
        } else {
            self.long_merge(seg, s, None)
        }
    }

    /// Tokens of a segment (any length): `f(id, start, end)` in order, offsets from `base`.
    pub(crate) fn tokens(
        &self,
        seg: &[u8],
        base: usize,
        s: &mut MergeScratch,
        f: &mut impl FnMut(u32, usize, usize),
    ) -> usize {
        if seg.len() <= SCAN_MAX {
            let sm = self.scan(seg);
            sm.emit(base, f);
            return sm.n;
        }
        let mut starts = Vec::new();
        let mut ids = Vec::new();
        let count = if seg.len() <= LONG_MIN {
            self.merge_into(seg, 0, s, &mut starts, &mut ids)
        } else {
            self.long_merge(seg, s, Some((&mut starts, &mut ids)))
        };
        for (k, (&a, &id)) in starts.iter().zip(&ids).enumerate() {
            let e = starts.get(k + 1).map_or(seg.len(), |&x| x as usize);
            f(id, base + a as usize, base + e);
        }
        count
    }

    /// A long piece, in windows: returns its number of tokens, and with `out` its tokens (starts
    /// and ids).
    ///
    /// Why stitching windows is exact (the bpe crate of github/rust-gems, "Properties of BPE"):
    /// call a token sequence *valid* when it is what BPE makes of its own bytes. Every contiguous
    /// run of a valid sequence is valid (BPE never merged across its edges), and two valid
    /// sequences that overlap in one shared token — `A ++ [T]` and `[T] ++ B`, `T` at the same
    /// place in the text — make a valid `A ++ [T] ++ B`. So: merge a window, merge the next one
    /// starting inside it, find a token both agree on (same start, same end), keep the first
    /// window's tokens up to it and continue from the second window's after it. Whatever the
    /// windows get wrong near their edges, the result is valid for the whole piece, and BPE's
    /// output being unique, it is BPE's output.
    ///
    /// When two windows share no token, the window doubles (the second window is merged again
    /// from the last shared token); past [`MAX_WINDOW`] bytes the whole piece is merged at once
    /// (`fallbacks`; never seen on real text). When a step repeats the previous one exactly —
    /// the same tokens after the shared one and the text repeating with the step's period — it
    /// repeats until the text stops repeating, and those steps are added up without merging
    /// (`skipped_windows`): a megabyte of spaces costs a few windows.
    pub(crate) fn long_merge(
        &self,
        piece: &[u8],
        s: &mut MergeScratch,
        mut out: Option<(&mut Vec<u32>, &mut Vec<u32>)>,
    ) -> usize {
        let n = piece.len();
        let mut w = WINDOW;
        let mut total = 0usize;
        let mut cur_s = std::mem::take(&mut s.cur_s);
        let mut cur_i = std::mem::take(&mut s.cur_i);
        let mut nxt_s = std::mem::take(&mut s.nxt_s);
        let mut nxt_i = std::mem::take(&mut s.nxt_i);
        let mut step_s = std::mem::take(&mut s.step_s);
        let mut step_i = std::mem::take(&mut s.step_i);
        let mut layout = std::mem::take(&mut s.layout);
        // The last shared token: (start, end, id), and the step that committed it.
        let mut link: Option<(u32, u32, u32)> = None;
        let mut last_step: Option<(u32, usize)> = None; // (advance, tokens committed)
        let mut fallback = false;
        let window = |from: usize, w: usize, s: &mut MergeScratch, ws: &mut Vec<u32>, wi: &mut Vec<u32>| -> usize {
            let to = (from + w).min(n);
            ws.clear();
            wi.clear();
            s.stats.windows += 1;
            s.stats.window_bytes += (to - from) as u64;
            self.merge_into(piece.get(from..to).unwrap_or_default(), from as u32, s, ws, wi);
            to
        };
        let mut cur_end = window(0, w, s, &mut cur_s, &mut cur_i);
        loop {
            if cur_end >= n {
                total += cur_s.len();
                if let Some((os, oi)) = out.as_mut() {
                    os.extend_from_slice(&cur_s);
                    oi.extend_from_slice(&cur_i);
                }
                break;
            }
            // The next window starts at the last token start at least a quarter window before
            // the end of this one (the first token's start if there is none).
            let target = cur_end.saturating_sub(w / 4) as u32;
            let qi = cur_s.iter().rposition(|&x| x <= target).unwrap_or(0);
            let q = cur_s.get(qi).copied().unwrap_or(0) as usize;
            let nxt_end = window(q, w, s, &mut nxt_s, &mut nxt_i);
            // The first token of this window (from `qi` on) that the next window has too.
            let mut shared = None;
            let mut k = 0usize;
            for j in qi..cur_s.len() {
                let (Some(&a), Some(&id)) = (cur_s.get(j), cur_i.get(j)) else { break };
                let e = cur_s.get(j + 1).map_or(cur_end as u32, |&x| x);
                while nxt_s.get(k).is_some_and(|&x| x < a) {
                    k += 1;
                }
                if nxt_s.get(k) == Some(&a) && nxt_i.get(k) == Some(&id) {
                    let ne = nxt_s.get(k + 1).map_or(nxt_end as u32, |&x| x);
                    // A shared token that ends the next window leaves nothing to continue from,
                    // unless that window ends the piece.
                    if ne == e && ((e as usize) < nxt_end || nxt_end == n) {
                        shared = Some((j, k));
                        break;
                    }
                }
            }
            let Some((j, k)) = shared else {
                // No shared token: a longer window, merged again from the last shared token (whose
                // tokens after it become the current window).
                w *= 2;
                if w > MAX_WINDOW {
                    fallback = true;
                    break;
                }
                match link {
                    None => cur_end = window(0, w, s, &mut cur_s, &mut cur_i),
                    Some((a, e, id)) => {
                        cur_end = window(a as usize, w, s, &mut nxt_s, &mut nxt_i);
                        let first_ok = nxt_s.first() == Some(&a)
                            && nxt_i.first() == Some(&id)
                            && nxt_s.get(1).map_or(cur_end as u32, |&x| x) == e;
                        if !first_ok {
                            fallback = true;
                            break;
                        }
                        cur_s.clear();
                        cur_i.clear();
                        cur_s.extend_from_slice(nxt_s.get(1..).unwrap_or_default());
                        cur_i.extend_from_slice(nxt_i.get(1..).unwrap_or_default());
                    }
                }
                last_step = None;
                continue;
            };
            // Commit this window's tokens up to the shared one; the next window's after it are
            // the current ones.
            let committed = j + 1;
            total += committed;
            step_s.clear();
            step_i.clear();
            step_s.extend_from_slice(cur_s.get(..committed).unwrap_or_default());
            step_i.extend_from_slice(cur_i.get(..committed).unwrap_or_default());
            if let Some((os, oi)) = out.as_mut() {
                os.extend_from_slice(&step_s);
                oi.extend_from_slice(&step_i);
            }
            let (ta, tid) = (cur_s.get(j).copied().unwrap_or(0), cur_i.get(j).copied().unwrap_or(NONE));
            let te = nxt_s.get(k + 1).copied().unwrap_or(nxt_end as u32);
            let old_base = cur_s.first().copied().unwrap_or(0);
            cur_s.clear();
            cur_i.clear();
            cur_s.extend_from_slice(nxt_s.get(k + 1..).unwrap_or_default());
            cur_i.extend_from_slice(nxt_i.get(k + 1..).unwrap_or_default());
            cur_end = nxt_end;
            link = Some((ta, te, tid));
            // Fast-forward: the next step repeats this one shifted by `advance` when the tokens after
            // the shared one lie the same way from the new base as after the previous step, and
            // the text the next step reads repeats with that period.
            let base = te;
            let advance = base.saturating_sub(old_base);
            let end_rel = (cur_end as u32).wrapping_sub(base);
            let same = last_step == Some((advance, committed))
                && layout.len() == cur_s.len() + 1
                && layout.last() == Some(&(end_rel, NONE))
                && layout
                    .iter()
                    .zip(cur_s.iter().zip(&cur_i))
                    .all(|(&(off, id), (&a, &i))| a.wrapping_sub(base) == off && i == id);
            layout.clear();
            layout.extend(cur_s.iter().zip(&cur_i).map(|(&a, &i)| (a.wrapping_sub(base), i)));
            layout.push((end_rel, NONE));
            last_step = Some((advance, committed));
            if same && advance > 0 {
                let adv = advance as usize;
                let base = base as usize;
                // How far the next step reads: to the end of its window (as the loop picks it).
                let target = cur_end.saturating_sub(w / 4) as u32;
                let q_next = cur_s.iter().rev().find(|&&x| x <= target).or(cur_s.first()).map_or(base, |&x| x as usize);
                let reach = (q_next + w).saturating_sub(base);
                // The text from `base` on repeats with period `adv` up to `period_end`.
                let mut period_end = base;
                while period_end < n && piece.get(period_end) == piece.get(period_end - adv) {
                    period_end += 1;
                }
                s.stats.period_bytes += (period_end - base) as u64;
                let limit = period_end.min(n - 1);
                if base + reach <= limit {
                    let r = (limit - base - reach) / adv + 1;
                    let shift = (r * adv) as u32;
                    total += r * committed;
                    s.stats.skipped_windows += r as u64;
                    if let Some((os, oi)) = out.as_mut() {
                        for step in 1..=r as u32 {
                            let d = step * advance;
                            os.extend(step_s.iter().map(|&a| a + d));
                            oi.extend_from_slice(&step_i);
                        }
                    }
                    for a in cur_s.iter_mut() {
                        *a += shift;
                    }
                    cur_end += shift as usize;
                    link = link.map(|(a, e, id)| (a + shift, e + shift, id));
                }
            }
        }
        if fallback {
            s.stats.fallbacks += 1;
            s.stats.merged_bytes += n as u64;
            if let Some((os, oi)) = out.as_mut() {
                os.clear();
                oi.clear();
            }
            total = 0;
            let count = self.heap_merge(piece, s);
            if let Some((os, oi)) = out.as_mut() {
                let mut at = 0usize;
                while at < n {
                    os.push(at as u32);
                    oi.push(s.ids.get(at).copied().unwrap_or(NONE));
                    at = s.next.get(at).map_or(n, |&x| x as usize);
                }
            }
            total += count;
        }
        s.cur_s = cur_s;
        s.cur_i = cur_i;
        s.nxt_s = nxt_s;
        s.nxt_i = nxt_i;
        s.step_s = step_s;
        s.step_i = step_i;
        s.layout = layout;
        total
    }
}

/// Builds the table from the token bytes of every rank (empty for ranks that are not ordinary
/// tokens), finding each token's canonical pair by running BPE on its bytes over the earlier
/// ranks; `visit(rank, part)` sees what each rank became (the vocabulary file's writer keeps it).
/// A token that does not end up as two parts is a [`Part::Literal`] (only ever a whole piece).
/// [`Builder::finish`] makes the table (and checks that every single byte is a token).
pub(crate) fn canonical<'a, I>(
    tokens: I,
    visit: &mut impl FnMut(u32, Part<'a>) -> Result<(), String>,
) -> Result<Builder, String>
where
    I: Iterator<Item = &'a [u8]> + Clone,
{
    let ranks = tokens.clone().count();
    let multi = tokens.clone().filter(|t| t.len() > 1).count();
    let mut b = Builder::new(ranks, multi)?;
    let mut s = MergeScratch::default();
    for (rank, t) in (0u32..).zip(tokens) {
        let part = match t {
            [] => Part::None,
            [x] => Part::Byte(*x),
            _ => {
                let m = b.merges();
                let parts = m.heap_merge(t, &mut s);
                let first = s.ids.first().copied().unwrap_or(NONE);
                let second = s.next.first().and_then(|&j| s.ids.get(j as usize)).copied().unwrap_or(NONE);
                if parts == 2 && first != NONE && second != NONE && m.pair(first, second) == NONE {
                    Part::Pair(first, second)
                } else {
                    Part::Literal(t)
                }
            }
        };
        b.add(&part)?;
        visit(rank, part)?;
    }
    Ok(b)
}
