//! A bounded cache of recent pieces: the bytes of a piece of up to 15 bytes → its number of tokens
//! (docs/performance-notes.md, "Piece cache").
//!
//! Natural text repeats its words: a megabyte of English prose has ~170,000 pieces but ~11,000
//! distinct ones. A piece's tokens depend only on its bytes, so the merge of a piece seen before
//! is a lookup. Each tokenizer has one cache (taken for the whole of a call; a call that finds
//! it taken — another thread counting with the same tokenizer — merges without it), of a fixed
//! size: [`SETS`] sets of four entries, 16 bytes an entry, 256 KiB. An entry is the piece's bytes,
//! its length and its count packed into two words, so a set is one 64-byte cache line and a probe
//! compares two words per entry; a set keeps its entries in order of last use (a hit moves to the
//! front, a miss evicts the last).
//!
//! Longer pieces — CJK runs, long identifiers, a megabyte without a space — are kept apart, by two
//! independent 64-bit hashes of their bytes and their length (24 bytes an entry, no copy of the
//! piece): counting a text again costs a hash of each long piece instead of its merge. That table
//! grows with the long pieces seen, up to [`LONG_ENTRIES`] (about 800 KiB), and starts over when
//! full. A wrong answer needs two different 64-bit hashes to collide at once (the per-message
//! count cache, `message::cache`, keys on one).

/// Sets of the cache (a power of two).
pub(crate) const SETS: usize = 1 << 12;
/// Longest piece the cache keeps.
pub(crate) const MAX_PIECE: usize = 15;
/// Entries per set.
const WAYS: usize = 4;
/// Most long pieces kept: 7/8 of 2^15, the most a table of 2^15 buckets holds (25 bytes a bucket).
pub(crate) const LONG_ENTRIES: usize = (1 << 15) / 8 * 7;
/// Bytes of the fixed part (the sets of short pieces).
pub(crate) const FIXED_BYTES: usize = SETS * std::mem::size_of::<Set>();

/// The count's bits in an entry's second word (its top four: a piece of 15 bytes has at most 15
/// tokens).
const COUNT_SHIFT: u32 = 60;
const COUNT_MASK: u64 = 0xF << COUNT_SHIFT;

/// One set: four entries of two words, `[bytes 0..8, bytes 8..15 | len << 56 | count << 60]`;
/// `[0, 0]` is empty (a stored piece has a length of at least 1).
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Set([[u64; 2]; WAYS]);

/// The key of a piece: its bytes and length packed into two words (the count bits zero).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key(u64, u64);

impl Key {
    /// The key of `text[start..start + len]` (`len` at most [`MAX_PIECE`]): two unaligned loads
    /// and masks when 16 bytes follow `start`, else a copy.
    #[inline(always)]
    pub(crate) fn of(text: &[u8], start: usize, len: usize) -> Key {
        let (lo, hi) = match text.get(start..start + 16) {
            Some(w) => {
                let (a, b) = w.split_at(8);
                (
                    u64::from_le_bytes(a.try_into().unwrap_or_default()),
                    u64::from_le_bytes(b.try_into().unwrap_or_default()),
                )
            }
            None => {
                let mut buf = [0u8; 16];
                if let (Some(dst), Some(src)) = (buf.get_mut(..len), text.get(start..start + len)) {
                    dst.copy_from_slice(src);
                }
                let (a, b) = buf.split_at(8);
                (
                    u64::from_le_bytes(a.try_into().unwrap_or_default()),
                    u64::from_le_bytes(b.try_into().unwrap_or_default()),
                )
            }
        };
        let bits = 8 * len as u32;
        let (m0, m1) = if len >= 8 {
            (u64::MAX, (1u64 << (bits - 64)).wrapping_sub(1))
        } else {
            ((1u64 << bits).wrapping_sub(1), 0)
        };
        Key(lo & m0, (hi & m1) | ((len as u64) << 56))
    }

    #[inline(always)]
    fn set(self) -> usize {
        let h = (self.0 ^ self.1.rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - SETS.trailing_zeros())) as usize
    }
}

/// The key of a long piece: two 64-bit hashes of its bytes, each seeded with its length, with
/// different multipliers and mixing.
fn long_key(piece: &[u8]) -> (u64, u64) {
    let len = piece.len() as u64;
    let (mut a, mut b) = (0x243F_6A88_85A3_08D3 ^ len, 0x1319_8A2E_0370_7344 ^ len.rotate_left(32));
    let mut mix = |w: u64| {
        a = (a.rotate_left(5) ^ w).wrapping_mul(0x517C_C1B7_2722_0A95);
        b = (b ^ w.rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(31);
    };
    let mut words = piece.chunks_exact(8);
    for w in words.by_ref() {
        mix(u64::from_le_bytes(w.try_into().unwrap_or_default()));
    }
    let mut tail = [0u8; 8];
    if let Some(dst) = tail.get_mut(..words.remainder().len()) {
        dst.copy_from_slice(words.remainder());
    }
    mix(u64::from_le_bytes(tail));
    (a ^ (a >> 32), b ^ (b >> 29))
}

/// The cache of one tokenizer.
pub(crate) struct PieceCache {
    sets: Box<[Set]>,
    /// Long pieces: their key → their count.
    long: rustc_hash::FxHashMap<(u64, u64), u32>,
    pub(crate) hits: u64,
    pub(crate) misses: u64,
}

impl PieceCache {
    pub(crate) fn new() -> PieceCache {
        PieceCache {
            sets: vec![Set::default(); SETS].into_boxed_slice(),
            long: rustc_hash::FxHashMap::default(),
            hits: 0,
            misses: 0,
        }
    }

    /// Bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        FIXED_BYTES + self.long.capacity() * 8 / 7 * (std::mem::size_of::<((u64, u64), u32)>() + 1)
    }

    /// The count of a piece longer than [`MAX_PIECE`], or computes it with `f` and keeps it.
    #[inline]
    pub(crate) fn long_count_or(&mut self, piece: &[u8], f: impl FnOnce() -> usize) -> usize {
        let key = long_key(piece);
        if let Some(&n) = self.long.get(&key) {
            self.hits += 1;
            return n as usize;
        }
        self.misses += 1;
        let n = f();
        if self.long.len() >= LONG_ENTRIES {
            self.long.clear();
        }
        if let Ok(count) = u32::try_from(n) {
            self.long.insert(key, count);
        }
        n
    }

    /// The count of `key`'s piece, or computes it with `f` (at most 15) and keeps it.
    #[inline(always)]
    pub(crate) fn count_or(&mut self, key: Key, f: impl FnOnce() -> usize) -> usize {
        let Some(set) = self.sets.get_mut(key.set()) else { return f() };
        let ways = &mut set.0;
        for w in 0..WAYS {
            let Some(&[k0, k1]) = ways.get(w) else { break };
            if k0 == key.0 && k1 & !COUNT_MASK == key.1 {
                self.hits += 1;
                if w > 0 {
                    if let Some(front) = ways.get_mut(..=w) {
                        front.rotate_right(1);
                    }
                }
                return (k1 >> COUNT_SHIFT) as usize;
            }
        }
        self.misses += 1;
        let n = f();
        ways.rotate_right(1);
        if let Some(first) = ways.first_mut() {
            *first = [key.0, key.1 | ((n.min(15) as u64) << COUNT_SHIFT)];
        }
        n
    }
}
