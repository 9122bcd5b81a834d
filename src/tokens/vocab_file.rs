//! The vocabularies as binary data prepared at build time (docs/performance-notes.md).
//!
//! Every ordinary token of a byte-pair vocabulary longer than one byte is the concatenation of
//! two tokens of lower rank (it was made by merging them), so `data/<encoding>.bin` stores each
//! token as the ranks of those two parts rather than as its bytes — its *canonical pair*, the last
//! merge of BPE on its own bytes (`merge.rs`), which is all the tokenizer needs: it builds its
//! merge table straight from the pairs, never from token bytes.
//!
//! ```text
//! "CTXV"            4 bytes, magic
//! version           1 byte, 4 (3: the same with any two-part split, `write_splits`)
//! count             u32 little-endian: number of ranks (the highest ordinary rank plus one)
//! kinds             `count` bytes, one per rank: 0 not an ordinary token, 1 a single byte,
//!                   2 a pair of lower ranks, 3 literal bytes
//! singles           one byte per kind-1 rank
//! literals          per kind-3 rank: a length byte, then the bytes
//! pairs             the left and right part of every kind-2 rank, entropy-coded (`rans.rs`)
//! ```
//!
//! Gzip (Node's zlib, level 9) takes the cl100k file to 316 KB and o200k to 681 KB (format 3,
//! the split with the smallest rank sum, was 2 KB smaller each); format 2, the parts as byte
//! planes left to gzip, gave 337 / 716 KB, and format 1, the token bytes in rank order, 429 /
//! 994 KB (GNU gzip). Kind 3 is never written for the shipped vocabularies (BPE builds every
//! token); it keeps the format total.
//!
//! [`read`] visits the ranks in one pass at first use (each pair's parts entropy-decoded);
//! [`decode`] rebuilds the token bytes from them (tests and tools).
//!
//! The files are written from tiktoken-rs by `CTXGUARD_WRITE_VOCAB=1 cargo test --test
//! vocab_data`, and the same test (without the variable) fails when a committed file differs from
//! what tiktoken-rs produces. tiktoken-rs itself is not called by the library, so its base64
//! assets are not linked into the `.wasm`.

pub(crate) use super::merge::Part;
use super::merge::{Builder, Merges};
use super::rans;
use super::Encoding;

/// First bytes of a vocabulary file.
pub const MAGIC: &[u8; 4] = b"CTXV";
/// Format version written after the magic: 4, each pair a token's canonical pair ([`write`]).
pub const VERSION: u8 = 4;
/// Format 3: the same layout, each pair any split of the token into two earlier ones
/// ([`write_splits`]; the token bytes of SentencePiece's vocabulary inside `spm_file.rs`).
pub const VERSION_SPLITS: u8 = 3;
/// Version of the character-class file.
pub const CLASS_VERSION: u8 = 1;
/// Length of the header (magic, version, count).
pub const HEADER_LEN: usize = 9;
/// Ranks are stored in 18 bits.
const RANK_BITS: u32 = 18;

const KIND_NONE: u8 = 0;
const KIND_BYTE: u8 = 1;
const KIND_PAIR: u8 = 2;
const KIND_LITERAL: u8 = 3;

/// The committed file of `encoding`, or `None` when this build leaves the encoding out (Cargo
/// features `o200k` / `cl100k`).
pub fn file(encoding: Encoding) -> Option<&'static [u8]> {
    match encoding {
        #[cfg(feature = "o200k")]
        Encoding::O200kBase => Some(include_bytes!("data/o200k_base.bin")),
        #[cfg(feature = "cl100k")]
        Encoding::Cl100kBase => Some(include_bytes!("data/cl100k_base.bin")),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// Token bytes in rank order, decoded from a vocabulary file.
#[derive(Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The tokens concatenated in rank order.
    pub bytes: Vec<u8>,
    /// One entry per rank plus a final one: rank `r` is `bytes[starts[r]..starts[r + 1]]` (empty
    /// for ranks that are not ordinary tokens).
    pub starts: Vec<u32>,
}

/// Reads consecutive sections of a file, failing (never panicking) when one runs past the end.
struct Sections<'a> {
    rest: &'a [u8],
}

impl<'a> Sections<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.rest.len() < n {
            return Err(format!("vocabulary file truncated ({what})"));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }
}

/// Reads a vocabulary file: checks the header, that every pair names two earlier ranks, and that
/// nothing is left over; calls `visit(rank, part)` for every rank in order. Returns the number of
/// ranks.
pub(crate) fn read(file: &[u8], visit: &mut impl FnMut(u32, Part<'_>) -> Result<(), String>) -> Result<usize, String> {
    read_of(file, VERSION, visit)
}

fn read_of(
    file: &[u8],
    version: u8,
    visit: &mut impl FnMut(u32, Part<'_>) -> Result<(), String>,
) -> Result<usize, String> {
    let (count, mut r) = reader_of(file, version)?;
    // In chunks of ranks, so that an engine that compiles WebAssembly in tiers (V8: a baseline
    // compiler first, the optimizing one for functions called often) runs optimized code for most
    // of the vocabulary.
    let mut rank = 0;
    while rank < count {
        let end = (rank + DECODE_CHUNK).min(count);
        r.ranks(rank, end, visit)?;
        rank = end;
    }
    if !r.pairs.finished() {
        return Err("vocabulary file: the pair section does not end where it should".to_string());
    }
    Ok(count)
}

/// How many ranks a file has, and how many of them are pairs (for sizing tables).
pub(crate) fn counts(file: &[u8]) -> Result<(usize, usize), String> {
    let (count, r) = reader(file)?;
    Ok((count, r.pair_count))
}

fn reader(file: &[u8]) -> Result<(usize, Ranks<'_>), String> {
    reader_of(file, VERSION)
}

/// [`reader`] of a file of format `version`.
fn reader_of(file: &[u8], want: u8) -> Result<(usize, Ranks<'_>), String> {
    let header = file.get(..HEADER_LEN).ok_or("vocabulary file too short")?;
    let (magic, rest) = header.split_at(4);
    if magic != MAGIC {
        return Err("not a vocabulary file (bad magic)".to_string());
    }
    let (version, count) = rest.split_at(1);
    if version != [want] {
        return Err(format!("vocabulary file version {version:?}, expected {want}"));
    }
    let count: [u8; 4] = count.try_into().map_err(|_| "bad header")?;
    let count = u32::from_le_bytes(count) as usize;
    if count > 1 << RANK_BITS {
        return Err("vocabulary file: too many ranks".to_string());
    }
    let mut s = Sections { rest: file.get(HEADER_LEN..).unwrap_or_default() };
    let kinds = s.take(count, "kinds")?;
    // How many ranks of each kind, counted in chunks (see `read`).
    let mut tally = [0usize; 4];
    for chunk in kinds.chunks(DECODE_CHUNK) {
        tally_kinds(chunk, &mut tally);
    }
    let tally = |k: u8| tally.get(k as usize).copied().unwrap_or(0);
    let singles = s.take(tally(KIND_BYTE), "single bytes")?;
    let literal_count = tally(KIND_LITERAL);
    let mut literals = Vec::with_capacity(literal_count);
    for _ in 0..literal_count {
        let len = *s.take(1, "literals")?.first().unwrap_or(&0) as usize;
        literals.push(s.take(len, "literals")?);
    }
    let pairs = rans::Reader::new(s.rest)?;
    Ok((
        count,
        Ranks { kinds, singles: singles.iter(), literals: literals.into_iter(), pairs, pair_count: tally(KIND_PAIR) },
    ))
}

/// Decodes a vocabulary file into the token bytes of every rank (tests and tools; the tokenizer
/// itself reads the pairs, `merge.rs`).
pub fn decode(file: &[u8]) -> Result<Decoded, String> {
    decode_of(file, VERSION)
}

/// [`decode`] of a file of format 3 ([`write_splits`]).
pub fn decode_splits(file: &[u8]) -> Result<Decoded, String> {
    decode_of(file, VERSION_SPLITS)
}

fn decode_of(file: &[u8], version: u8) -> Result<Decoded, String> {
    let mut bytes: Vec<u8> = Vec::new();
    let mut starts: Vec<u32> = vec![0];
    read_of(file, version, &mut |rank, part| {
        match part {
            Part::None => {}
            Part::Byte(b) => bytes.push(b),
            Part::Literal(l) => bytes.extend_from_slice(l),
            Part::Pair(a, b) => {
                for part in [a, b] {
                    match (starts.get(part as usize), starts.get(part as usize + 1)) {
                        (Some(&x), Some(&y)) if y > x => bytes.extend_from_within(x as usize..y as usize),
                        _ => return Err(format!("rank {rank}: part {part} is not an earlier token")),
                    }
                }
            }
        }
        starts.push(u32::try_from(bytes.len()).map_err(|_| "vocabulary too large")?);
        Ok(())
    })?;
    bytes.shrink_to_fit();
    Ok(Decoded { bytes, starts })
}

/// Ranks decoded per call of [`Ranks::ranks`].
const DECODE_CHUNK: usize = 2048;

/// Adds the number of ranks of each kind in `kinds` to `tally` (kinds above 3 are not counted;
/// [`Ranks::ranks`] rejects them).
#[inline(never)]
fn tally_kinds(kinds: &[u8], tally: &mut [usize; 4]) {
    for &k in kinds {
        if let Some(n) = tally.get_mut(k as usize) {
            *n += 1;
        }
    }
}

/// Where [`read`] is in the file's sections.
struct Ranks<'a> {
    kinds: &'a [u8],
    singles: std::slice::Iter<'a, u8>,
    literals: std::vec::IntoIter<&'a [u8]>,
    pairs: rans::Reader<'a>,
    pair_count: usize,
}

impl<'a> Ranks<'a> {
    /// Visits ranks `from..to`.
    #[inline(never)]
    fn ranks(
        &mut self,
        from: usize,
        to: usize,
        visit: &mut impl FnMut(u32, Part<'a>) -> Result<(), String>,
    ) -> Result<(), String> {
        for (rank, &kind) in (from..to).zip(self.kinds.get(from..to).unwrap_or_default()) {
            let part = match kind {
                KIND_NONE => Part::None,
                KIND_BYTE => Part::Byte(*self.singles.next().ok_or("bad single bytes")?),
                KIND_LITERAL => Part::Literal(self.literals.next().ok_or("bad literals")?),
                KIND_PAIR => {
                    let (a, b) = (self.pairs.next(0)?, self.pairs.next(1)?);
                    if a >= rank || b >= rank {
                        return Err(format!("rank {rank}: a part is not an earlier rank"));
                    }
                    Part::Pair(a as u32, b as u32)
                }
                other => return Err(format!("rank {rank}: unknown kind {other}")),
            };
            visit(rank as u32, part)?;
        }
        Ok(())
    }
}

/// Writes a vocabulary file from the token bytes of each rank (empty for ranks that are not
/// ordinary tokens). A token of two or more bytes is written as its canonical pair — the last
/// merge of BPE on its own bytes over the earlier ranks (`merge.rs`) — or as literal bytes when
/// BPE does not build it. Fails on more than 2^18 ranks or a literal longer than 255 bytes.
pub fn write(tokens: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    if tokens.len() > 1 << RANK_BITS {
        return Err(format!("{} ranks (at most 2^{RANK_BITS})", tokens.len()));
    }
    let (mut kinds, mut singles, mut literals) = (Vec::new(), Vec::new(), Vec::new());
    let (mut left, mut right) = (Vec::new(), Vec::new());
    crate::tokens::merge::canonical(tokens.iter().map(Vec::as_slice), &mut |_, part| {
        match part {
            Part::None => kinds.push(KIND_NONE),
            Part::Byte(b) => {
                kinds.push(KIND_BYTE);
                singles.push(b);
            }
            Part::Pair(a, b) => {
                kinds.push(KIND_PAIR);
                left.push(a);
                right.push(b);
            }
            Part::Literal(t) => {
                kinds.push(KIND_LITERAL);
                literals.push(
                    u8::try_from(t.len()).map_err(|_| format!("literal token of {} bytes (at most 255)", t.len()))?,
                );
                literals.extend_from_slice(t);
            }
        }
        Ok(())
    })?;
    write_parts(&kinds, &singles, &literals, &left, &right)
}

/// Writes a file of format 3 from the token bytes of each rank: a token of two or more bytes is
/// written as the split into two earlier tokens with the smallest sum of ranks (of those tried,
/// the split that compressed best), or as literal bytes when it has none. For vocabularies whose
/// tokens are not byte-pair merges (SentencePiece's, `spm_file.rs`). Fails on more than 2^18
/// ranks or a literal longer than 255 bytes.
pub fn write_splits(tokens: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    if tokens.len() > 1 << RANK_BITS {
        return Err(format!("{} ranks (at most 2^{RANK_BITS})", tokens.len()));
    }
    let mut rank_of: std::collections::HashMap<&[u8], u32> = std::collections::HashMap::with_capacity(tokens.len());
    let (mut kinds, mut singles, mut literals) = (Vec::new(), Vec::new(), Vec::new());
    let (mut left, mut right) = (Vec::new(), Vec::new());
    for (rank, t) in (0u32..).zip(tokens) {
        let split = (1..t.len())
            .filter_map(|k| {
                let (a, b) = t.split_at(k);
                Some((*rank_of.get(a)?, *rank_of.get(b)?))
            })
            .min_by_key(|&(a, b)| a + b);
        match (t.as_slice(), split) {
            ([], _) => kinds.push(KIND_NONE),
            ([b], _) => {
                kinds.push(KIND_BYTE);
                singles.push(*b);
            }
            (_, Some((a, b))) => {
                kinds.push(KIND_PAIR);
                left.push(a);
                right.push(b);
            }
            (_, None) => {
                kinds.push(KIND_LITERAL);
                literals.push(
                    u8::try_from(t.len()).map_err(|_| format!("literal token of {} bytes (at most 255)", t.len()))?,
                );
                literals.extend_from_slice(t);
            }
        }
        if !t.is_empty() {
            rank_of.entry(t).or_insert(rank);
        }
    }
    let mut out = write_parts(&kinds, &singles, &literals, &left, &right)?;
    if let Some(v) = out.get_mut(4) {
        *v = VERSION_SPLITS;
    }
    Ok(out)
}

/// Writes a vocabulary file from its sections as they are (no check that they describe a
/// vocabulary: [`decode`] does that; tests forge files with it).
#[doc(hidden)]
pub fn write_parts(
    kinds: &[u8],
    singles: &[u8],
    literals: &[u8],
    left: &[u32],
    right: &[u32],
) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(HEADER_LEN + kinds.len() * 5);
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&(kinds.len() as u32).to_le_bytes());
    out.extend_from_slice(kinds);
    out.extend_from_slice(singles);
    out.extend_from_slice(literals);
    rans::write(&mut out, left, right)?;
    Ok(out)
}

/// The regexes that define the character-class bits of the pre-tokenizer, in bit order (bit 0:
/// `\p{L}`, 1: `\p{N}`, 2: `\s`, 3: o200k's upper class, 4: o200k's lower class, 5: `\p{P}`,
/// 6: `\p{S}`, 7: `\p{M}` — the last three for DeepSeek V3's pattern). `classes.bin` is computed
/// from them with tiktoken-rs's regex engine (tests/tokens/vocab_data.rs).
pub const CLASS_PATTERNS: [&str; 8] = [
    r"\p{L}+",
    r"\p{N}+",
    r"\s+",
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+",
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    r"\p{P}+",
    r"\p{S}+",
    r"\p{M}+",
];

/// Number of 256-code-point blocks of Unicode.
pub const CLASS_BLOCKS: usize = 0x110000 >> 8;

/// First bytes of the character-class file.
pub const CLASS_MAGIC: &[u8; 4] = b"CTXC";

/// The character-class file: class bits of every code point, 256 code points per block, equal
/// blocks stored once:
///
/// ```text
/// "CTXC"            4 bytes, magic
/// version           1 byte, 1
/// unique blocks     u16 little-endian: `u`
/// index             `CLASS_BLOCKS` u16 little-endian: the unique block of each block
/// blocks            `u` × 256 bytes of class bits
/// ```
pub fn class_file() -> &'static [u8] {
    include_bytes!("data/classes.bin")
}

/// Index and blocks of a character-class file; checks that every index entry names a block.
pub fn parse_classes(file: &[u8]) -> Result<(&[u8], &[u8]), String> {
    let header = file.get(..7).ok_or("class file too short")?;
    let (magic, rest) = header.split_at(4);
    if magic != CLASS_MAGIC || rest.first() != Some(&CLASS_VERSION) {
        return Err("not a character-class file (bad magic or version)".to_string());
    }
    let unique = rest.get(1..3).and_then(|b| b.try_into().ok()).map(u16::from_le_bytes).ok_or("bad header")? as usize;
    let body = file.get(7..).unwrap_or_default();
    if body.len() != 2 * CLASS_BLOCKS + 256 * unique {
        return Err("class file has the wrong length".to_string());
    }
    let (index, blocks) = body.split_at(2 * CLASS_BLOCKS);
    if index.chunks_exact(2).any(|c| matches!(c, &[lo, hi] if u16::from_le_bytes([lo, hi]) as usize >= unique)) {
        return Err("class file index out of range".to_string());
    }
    Ok((index, blocks))
}

/// Writes a character-class file from the class bits of every block.
pub fn write_classes(blocks: &[[u8; 256]]) -> Result<Vec<u8>, String> {
    if blocks.len() != CLASS_BLOCKS {
        return Err(format!("{} blocks, expected {CLASS_BLOCKS}", blocks.len()));
    }
    let mut unique: Vec<&[u8; 256]> = Vec::new();
    let mut index = Vec::with_capacity(2 * CLASS_BLOCKS);
    for b in blocks {
        let id = match unique.iter().position(|u| *u == b) {
            Some(id) => id,
            None => {
                unique.push(b);
                unique.len() - 1
            }
        };
        index.extend_from_slice(&u16::try_from(id).map_err(|_| "too many distinct blocks")?.to_le_bytes());
    }
    let mut out = Vec::with_capacity(7 + index.len() + 256 * unique.len());
    out.extend_from_slice(CLASS_MAGIC);
    out.push(CLASS_VERSION);
    out.extend_from_slice(&(unique.len() as u16).to_le_bytes());
    out.extend_from_slice(&index);
    for u in unique {
        out.extend_from_slice(u);
    }
    Ok(out)
}

/// The merge table of a vocabulary file (format 4: each token as its canonical pair).
pub(crate) fn merges(file: &[u8]) -> Result<Merges, String> {
    let (ranks, pairs) = counts(file)?;
    let mut b = Builder::new(ranks, pairs)?;
    read(file, &mut |_, part| b.add(&part))?;
    b.finish()
}
