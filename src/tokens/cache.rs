//! A bounded cache of recent pieces: the bytes of a piece of up to 15 bytes → its number of tokens
//! and its first and last token (docs/performance-notes.md, "Piece cache").
//!
//! Natural text repeats its words: a megabyte of English prose has ~170,000 pieces but ~11,000
//! distinct ones. A piece's tokens depend only on its bytes, so the merge of a piece seen before
//! is a lookup. Each tokenizer has one cache (taken for the whole of a call; a call that finds
//! it taken — another thread counting with the same tokenizer — merges without it), of a fixed
//! size: [`SETS`] sets of two entries, 32 bytes each, 256 KiB. An entry is the piece's bytes and
//! length packed into 16 bytes (so a probe compares two words and touches one cache line) and
//! the value; a set keeps the most recently used entry first.

/// Sets of the cache (a power of two).
pub(crate) const SETS: usize = 1 << 12;
/// Longest piece the cache keeps.
pub(crate) const MAX_PIECE: usize = 15;

#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Entry {
    /// Bytes 0..8 of the piece, little-endian, zero-padded.
    k0: u64,
    /// Bytes 8..15, and the length in the top byte (never 0 for a stored piece).
    k1: u64,
    /// [`Value::pack`].
    val: u64,
    _pad: u64,
}

/// What the cache keeps of a piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Value {
    pub(crate) count: u32,
    pub(crate) first: u32,
    pub(crate) last: u32,
}

impl Value {
    fn pack(self) -> u64 {
        (self.count as u64 & 0xFF) | ((self.first as u64 & 0x1F_FFFF) << 8) | ((self.last as u64 & 0x1F_FFFF) << 32)
    }
    fn unpack(v: u64) -> Value {
        Value { count: (v & 0xFF) as u32, first: ((v >> 8) & 0x1F_FFFF) as u32, last: ((v >> 32) & 0x1F_FFFF) as u32 }
    }
}

/// The key of a piece: its bytes and length packed into two words.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key(u64, u64);

impl Key {
    /// The key of `text[start..start + len]` (`len` at most [`MAX_PIECE`]): two unaligned loads
    /// and masks when 16 bytes follow `start`, else a copy.
    #[inline]
    pub(crate) fn of(text: &[u8], start: usize, len: usize) -> Key {
        let word = |at: usize| -> Option<u64> { Some(u64::from_le_bytes(text.get(at..at + 8)?.try_into().ok()?)) };
        let (lo, hi) = match (word(start), word(start + 8)) {
            (Some(lo), Some(hi)) => (lo, hi),
            _ => {
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
        Key(lo & m0, (hi & m1 & 0x00FF_FFFF_FFFF_FFFF) | ((len as u64) << 56))
    }

    #[inline]
    fn set(self) -> usize {
        let h = (self.0 ^ self.1.rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - SETS.trailing_zeros())) as usize
    }
}

/// The cache of one tokenizer.
pub(crate) struct PieceCache {
    sets: Box<[[Entry; 2]]>,
    pub(crate) hits: u64,
    pub(crate) misses: u64,
}

impl PieceCache {
    pub(crate) fn new() -> PieceCache {
        PieceCache { sets: vec![[Entry::default(); 2]; SETS].into_boxed_slice(), hits: 0, misses: 0 }
    }

    /// Bytes held.
    pub(crate) fn heap_bytes() -> usize {
        SETS * 2 * std::mem::size_of::<Entry>()
    }

    /// The value of `key`, or computes it with `f` and keeps it.
    #[inline]
    pub(crate) fn get_or(&mut self, key: Key, f: impl FnOnce() -> Value) -> Value {
        let Some(set) = self.sets.get_mut(key.set()) else { return f() };
        let [a, b] = set;
        if a.k0 == key.0 && a.k1 == key.1 {
            self.hits += 1;
            return Value::unpack(a.val);
        }
        if b.k0 == key.0 && b.k1 == key.1 {
            self.hits += 1;
            std::mem::swap(a, b);
            return Value::unpack(a.val);
        }
        self.misses += 1;
        let v = f();
        *b = *a;
        *a = Entry { k0: key.0, k1: key.1, val: v.pack(), _pad: 0 };
        v
    }
}
