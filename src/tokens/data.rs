//! The vocabularies as binary data prepared at build time (issue 7).
//!
//! `data/<encoding>.bin` holds the bytes of every ordinary token of the encoding, in rank order:
//!
//! ```text
//! "CTXV"            4 bytes, magic
//! version           1 byte, 1
//! count             u32 little-endian: number of ranks (the highest ordinary rank plus one)
//! lengths           `count` bytes: token length in bytes of each rank (0: not an ordinary token)
//! token bytes       the tokens concatenated in rank order (sum of the lengths)
//! ```
//!
//! Lengths and bytes are kept apart because each compresses better on its own (gzip takes the
//! cl100k file from 744 KB to 424 KB, o200k from 1.60 MB to 989 KB). Loading is one pass over
//! the lengths (a prefix sum); the token bytes are used in place, never copied.
//!
//! The files are written from tiktoken-rs by `CTXGUARD_WRITE_VOCAB=1 cargo test --test
//! vocab_data`, and the same test (without the variable) fails when a committed file differs from
//! what tiktoken-rs produces. tiktoken-rs itself is not called by the library any more, so its
//! base64 assets are not linked into the `.wasm`.

use super::Encoding;

/// First bytes of a vocabulary file.
pub const MAGIC: &[u8; 4] = b"CTXV";
/// Format version written after the magic.
pub const VERSION: u8 = 1;
/// Length of the header (magic, version, count).
pub const HEADER_LEN: usize = 9;

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

/// Token lengths and token bytes of a vocabulary file; checks the header and that the lengths add
/// up to the bytes that follow.
pub fn parse(file: &[u8]) -> Result<(&[u8], &[u8]), String> {
    let header = file.get(..HEADER_LEN).ok_or("vocabulary file too short")?;
    let (magic, rest) = header.split_at(4);
    if magic != MAGIC {
        return Err("not a vocabulary file (bad magic)".to_string());
    }
    let (version, count) = rest.split_at(1);
    if version != [VERSION] {
        return Err(format!("vocabulary file version {version:?}, expected {VERSION}"));
    }
    let count: [u8; 4] = count.try_into().map_err(|_| "bad header")?;
    let count = u32::from_le_bytes(count) as usize;
    let body = file.get(HEADER_LEN..).unwrap_or_default();
    if body.len() < count {
        return Err("vocabulary file truncated (lengths)".to_string());
    }
    let (lengths, bytes) = body.split_at(count);
    let total: usize = lengths.iter().map(|&l| l as usize).sum();
    if total != bytes.len() {
        return Err(format!("vocabulary file: lengths add up to {total} bytes, {} follow", bytes.len()));
    }
    Ok((lengths, bytes))
}

/// Writes a vocabulary file from the token bytes of each rank (empty for ranks that are not
/// ordinary tokens). Fails if a token is longer than 255 bytes or there are more than 2^32 ranks.
pub fn write(tokens: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    let count = u32::try_from(tokens.len()).map_err(|_| "too many ranks")?;
    let total: usize = tokens.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(HEADER_LEN + tokens.len() + total);
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&count.to_le_bytes());
    for t in tokens {
        out.push(u8::try_from(t.len()).map_err(|_| format!("token of {} bytes (at most 255)", t.len()))?);
    }
    for t in tokens {
        out.extend_from_slice(t);
    }
    Ok(out)
}

/// The regexes that define the character-class bits of the pre-tokenizer, in bit order (bit 0:
/// `\p{L}`, 1: `\p{N}`, 2: `\s`, 3: o200k's upper class, 4: o200k's lower class). `classes.bin`
/// is computed from them with tiktoken-rs's regex engine (tests/vocab_data.rs).
pub const CLASS_PATTERNS: [&str; 5] =
    [r"\p{L}+", r"\p{N}+", r"\s+", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"];

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
    if magic != CLASS_MAGIC || rest.first() != Some(&VERSION) {
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
    out.push(VERSION);
    out.extend_from_slice(&(unique.len() as u16).to_le_bytes());
    out.extend_from_slice(&index);
    for u in unique {
        out.extend_from_slice(u);
    }
    Ok(out)
}
