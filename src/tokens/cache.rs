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

/// Sets of the cache (a power of two).
pub(crate) const SETS: usize = 1 << 12;
/// Longest piece the cache keeps.
pub(crate) const MAX_PIECE: usize = 15;
/// Entries per set.
const WAYS: usize = 4;

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

/// The cache of one tokenizer.
pub(crate) struct PieceCache {
    sets: Box<[Set]>,
    pub(crate) hits: u64,
    pub(crate) misses: u64,
}

impl PieceCache {
    pub(crate) fn new() -> PieceCache {
        PieceCache { sets: vec![Set::default(); SETS].into_boxed_slice(), hits: 0, misses: 0 }
    }

    /// Bytes held.
    pub(crate) fn heap_bytes() -> usize {
        SETS * std::mem::size_of::<Set>()
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
