//! The pair section of a vocabulary file (format 3, `data.rs`): the two parts of every pair token,
//! entropy-coded (download size: docs/performance-notes.md).
//!
//! A part is a rank below 2^18. Ranks below 4096 (the tokens most often used as parts) are a
//! symbol of their own; a larger rank of bit length `k` is the symbol `(k, the 4 bits after its
//! leading 1)` plus its `k - 5` low bits, stored raw. The symbols (4,192 of them) are coded with
//! rANS (32-bit state, byte-wise renormalisation, probabilities in 16 bits) under one static
//! frequency table for left parts and one for right parts, stored in the file. Gzip had taken
//! the same ranks stored as byte planes to 716 KB for o200k (Node's zlib, level 9); this is
//! ~680 KB (BENCHMARKS.md).
//!
//! ```text
//! tables      2 × 4,192 u16 little-endian: the left parts' frequencies, then the right parts';
//!             each table sums to 2^16
//! raw length  u32 little-endian: bytes of low bits
//! low bits    the raw low bits of every part, in order, least significant bit first
//! stream      the rANS bytes to the end of the file (the first four: the state, big-endian)
//! ```

/// Ranks below this are symbols of their own.
const SMALL: u32 = 4096;
/// Bit length of the smallest rank that is not.
const SMALL_BITS: u32 = 13;
/// Symbols: the small ranks, then 6 bit lengths (13..=18) × 16.
pub const SYMBOLS: usize = SMALL as usize + 6 * 16;
/// Probabilities are in units of 2^-SCALE.
const SCALE: u32 = 16;
const TOTAL: u32 = 1 << SCALE;
/// Lower bound of the coder's state.
const LOW: u32 = 1 << 23;
/// Bytes of the two frequency tables.
pub const TABLES_LEN: usize = 2 * SYMBOLS * 2;

/// The symbol of rank `x`, with its raw low bits `(count, value)`.
fn symbol(x: u32) -> (usize, u32, u32) {
    if x < SMALL {
        return (x as usize, 0, 0);
    }
    let k = 32 - x.leading_zeros();
    let raw = k - 5;
    (SMALL as usize + (k - SMALL_BITS) as usize * 16 + ((x >> raw) & 15) as usize, raw, x & ((1 << raw) - 1))
}

/// Frequencies summing to [`TOTAL`] for symbol counts: every symbol that occurs gets at least 1
/// and none more than `u16::MAX` (so one symbol alone leaves 1 to a symbol that never occurs).
fn normalise(counts: &[u64]) -> Result<Vec<u32>, String> {
    let total: u64 = counts.iter().sum::<u64>().max(1);
    let mut f: Vec<u32> = counts
        .iter()
        .map(|&c| if c > 0 { ((c * u64::from(TOTAL) * 2 + total) / (2 * total)).max(1) as u32 } else { 0 })
        .collect();
    // Give the rounding error to the largest, then what is over u16::MAX to the first unused.
    let sum: u32 = f.iter().sum();
    let largest = f.iter_mut().max_by_key(|v| **v).ok_or("no symbols")?;
    let fixed = i64::from(*largest) + i64::from(TOTAL) - i64::from(sum);
    if fixed < 1 {
        return Err("pair table cannot be normalised".to_string());
    }
    let over = (fixed - i64::from(u16::MAX)).max(0) as u32;
    *largest = fixed as u32 - over;
    if over > 0 {
        *f.iter_mut().find(|v| **v == 0).ok_or("pair table cannot be normalised")? = over;
    }
    Ok(f)
}

/// Writes the pair section for `left` and `right` (equal lengths, ranks below 2^18).
pub fn write(out: &mut Vec<u8>, left: &[u32], right: &[u32]) -> Result<(), String> {
    if left.len() != right.len() || left.iter().chain(right).any(|&r| r >= 1 << 18) {
        return Err("pair parts: unequal lengths or a rank of 2^18 or more".to_string());
    }
    let mut counts = [vec![0u64; SYMBOLS], vec![0u64; SYMBOLS]];
    let mut raw = BitWriter::default();
    let mut symbols = Vec::with_capacity(2 * left.len());
    for (&a, &b) in left.iter().zip(right) {
        for (side, x) in [(0, a), (1, b)] {
            let (s, n, bits) = symbol(x);
            if let Some(c) = counts.get_mut(side).and_then(|c| c.get_mut(s)) {
                *c += 1;
            }
            raw.put(n, bits);
            symbols.push((side, s));
        }
    }
    let freq = [normalise(&counts[0])?, normalise(&counts[1])?];
    let start = freq.clone().map(|f| {
        let mut acc = 0;
        f.iter()
            .map(|f| {
                acc += f;
                acc - f
            })
            .collect::<Vec<u32>>()
    });
    // rANS is last in, first out: encode backwards, then reverse the bytes.
    let mut stream = Vec::new();
    let mut x = LOW;
    for &(side, s) in symbols.iter().rev() {
        let at = |t: &[Vec<u32>; 2]| t.get(side).and_then(|t| t.get(s)).copied().unwrap_or(0);
        let (f, c) = (at(&freq), at(&start));
        if f == 0 {
            return Err("pair symbol without a frequency".to_string());
        }
        let max = ((LOW >> SCALE) << 8) * f;
        while x >= max {
            stream.push(x as u8);
            x >>= 8;
        }
        x = ((x / f) << SCALE) + (x % f) + c;
    }
    stream.extend_from_slice(&x.to_le_bytes());
    stream.reverse();
    for f in freq.iter().flatten() {
        out.extend_from_slice(&(*f as u16).to_le_bytes());
    }
    let raw = raw.finish();
    out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    out.extend_from_slice(&raw);
    out.extend_from_slice(&stream);
    Ok(())
}

#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    acc: u64,
    bits: u32,
}

impl BitWriter {
    fn put(&mut self, n: u32, value: u32) {
        self.acc |= u64::from(value) << self.bits;
        self.bits += n;
        while self.bits >= 8 {
            self.bytes.push(self.acc as u8);
            self.acc >>= 8;
            self.bits -= 8;
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.bits > 0 {
            self.bytes.push(self.acc as u8);
        }
        self.bytes
    }
}

/// One side's decoding table.
struct Table {
    freq: Vec<u32>,
    start: Vec<u32>,
    /// The symbol of each of the [`TOTAL`] slots.
    slot: Vec<u16>,
}

impl Table {
    fn read(bytes: &[u8]) -> Result<Table, String> {
        let freq: Vec<u32> = bytes
            .chunks_exact(2)
            .map(|b| u32::from(u16::from_le_bytes([b.first().copied().unwrap_or(0), b.get(1).copied().unwrap_or(0)])))
            .collect();
        if freq.iter().sum::<u32>() != TOTAL {
            return Err("vocabulary file: a pair table does not sum to 2^16".to_string());
        }
        let mut start = Vec::with_capacity(SYMBOLS);
        let mut slot = Vec::with_capacity(TOTAL as usize);
        for (s, &f) in freq.iter().enumerate() {
            start.push(slot.len() as u32);
            slot.resize(slot.len() + f as usize, s as u16);
        }
        Ok(Table { freq, start, slot })
    }
}

/// Reads the parts back, left and right alternately (see the module doc).
pub struct Reader<'a> {
    tables: [Table; 2],
    raw: &'a [u8],
    bit: usize,
    stream: &'a [u8],
    at: usize,
    x: u32,
}

impl<'a> Reader<'a> {
    /// The pair section `section` (everything after the literals, to the end of the file).
    pub fn new(section: &'a [u8]) -> Result<Reader<'a>, String> {
        let truncated = || "vocabulary file truncated (pairs)".to_string();
        let tables = section.get(..TABLES_LEN).ok_or_else(truncated)?;
        let (left, right) = tables.split_at(TABLES_LEN / 2);
        let tables = [Table::read(left)?, Table::read(right)?];
        let raw_len = section.get(TABLES_LEN..TABLES_LEN + 4).ok_or_else(truncated)?;
        let raw_len = u32::from_le_bytes(raw_len.try_into().map_err(|_| truncated())?) as usize;
        let raw = section.get(TABLES_LEN + 4..).and_then(|r| r.get(..raw_len)).ok_or_else(truncated)?;
        let stream = section.get(TABLES_LEN + 4 + raw_len..).unwrap_or_default();
        let state = stream.get(..4).ok_or_else(truncated)?;
        let x = u32::from_be_bytes(state.try_into().map_err(|_| truncated())?);
        Ok(Reader { tables, raw, bit: 0, stream, at: 4, x })
    }

    /// The next part (`side` 0: a left part, 1: a right one).
    #[inline]
    pub fn next(&mut self, side: usize) -> Result<usize, String> {
        let t = self.tables.get(side).ok_or("bad side")?;
        let slot = self.x & (TOTAL - 1);
        let s = *t.slot.get(slot as usize).ok_or("bad pair stream")? as usize;
        let (f, c) = (t.freq.get(s).copied().unwrap_or(0), t.start.get(s).copied().unwrap_or(0));
        self.x = f * (self.x >> SCALE) + slot - c;
        while self.x < LOW {
            let b = *self.stream.get(self.at).ok_or("vocabulary file truncated (pair stream)")?;
            self.at += 1;
            self.x = (self.x << 8) | u32::from(b);
        }
        let Some(bucket) = s.checked_sub(SMALL as usize) else { return Ok(s) };
        let n = bucket / 16 + SMALL_BITS as usize - 5;
        Ok(((16 | (bucket % 16)) << n) | self.bits(n)?)
    }

    /// `n` (at most 13) raw low bits.
    #[inline]
    fn bits(&mut self, n: usize) -> Result<usize, String> {
        let (byte, shift) = (self.bit / 8, self.bit % 8);
        let b = |i: usize| self.raw.get(byte + i).copied().unwrap_or(0) as usize;
        let word = b(0) | b(1) << 8 | b(2) << 16;
        self.bit += n;
        if self.bit > 8 * self.raw.len() {
            return Err("vocabulary file truncated (low bits)".to_string());
        }
        Ok((word >> shift) & ((1 << n) - 1))
    }

    /// Whether every byte was used and the coder ended where the writer began.
    pub fn finished(&self) -> bool {
        self.at == self.stream.len() && self.x == LOW && self.bit.div_ceil(8) == self.raw.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let left: Vec<u32> = (0..5000u32).map(|i| (i * 7919) % (1 << 18)).collect();
        let right: Vec<u32> = (0..5000u32).map(|i| (i * i) % 40 + (i % 3) * 100_000).collect();
        let mut out = Vec::new();
        write(&mut out, &left, &right).unwrap();
        let mut r = Reader::new(&out).unwrap();
        for (&a, &b) in left.iter().zip(&right) {
            assert_eq!(r.next(0).unwrap(), a as usize);
            assert_eq!(r.next(1).unwrap(), b as usize);
        }
        assert!(r.finished());
        // Nothing: still a valid section.
        let mut empty = Vec::new();
        write(&mut empty, &[], &[]).unwrap();
        assert!(Reader::new(&empty).unwrap().finished());
        assert!(write(&mut Vec::new(), &[1 << 18], &[0]).is_err());
    }
}
