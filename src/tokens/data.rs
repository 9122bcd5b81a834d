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
