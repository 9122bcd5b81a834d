//! SentencePiece vocabularies as binary data prepared at build time: Gemma 3's, built in
//! (`data/gemma3.bin`; docs/gemini-tokenizer.md), and Mistral's v3 and v7, loaded at run time
//! (pkg/vocab/mistral-v3.bin, mistral-v7.bin; docs/vocabularies.md).
//!
//! A SentencePiece model lists pieces by id: control pieces (`<pad>`, `<eos>`, `<bos>`), `<unk>`,
//! user-defined symbols (`<start_of_turn>`, runs of `\n`, `\t` and spaces, HTML tags...), 256
//! byte-fallback pieces `<0x00>`..`<0xFF>` and the ordinary pieces, whose merge priority is their
//! id (the model's scores fall strictly with the id; `tests/gemini/vocab_data.rs` checks). Pieces
//! are stored with U+2581 (the model's escaped space) turned back into a space, which the
//! encoder matches against the text directly (`spm.rs`).
//!
//! ```text
//! "CTXS"            4 bytes, magic
//! version           1 byte, 1 or 2
//! (version 2 only:)
//! flags             1 byte: bit 0 the normalizer puts a space in front of the text (dummy prefix)
//! name              u8 length, UTF-8 (`mistral-v3`, ...)
//! source            u16 length, UTF-8 (package, file and sha256 it was converted from)
//! lowest            u32 `k`, then `k` × id u32: ordinary pieces tied at the lowest score, merged
//!                   after every other, leftmost first (the others merge in id order)
//! (both:)
//! count             u32 little-endian: number of ids
//! unk               u32: the id of `<unk>`
//! byte base         u32: the id of `<0x00>` (`<0xXX>` is byte base + XX)
//! ranges            1 byte `r`, then `r` × (start u32, end u32): the ids of the ordinary pieces
//!                   in storage order
//! user-defined      u32 `k`, then `k` × (id u32, length u8, bytes)
//! body              a vocabulary file of format 3 (`data.rs`) holding the ordinary pieces in
//!                   storage order
//! ```
//!
//! Storage order puts the single-character pieces first (they have the highest ids of the
//! ordinary pieces: the trainer adds characters last) so that every longer piece is a pair of
//! earlier ones and the body needs no literal; in Gemma 3 that is two ranges. The files are
//! written from the models (`spm_model`): Gemma 3's by `CTXGUARD_WRITE_VOCAB=1 cargo test
//! --features gemini --test gemini vocab_data::` (version 1: it needs nothing of version 2),
//! Mistral's by `examples/vocab` at build time.

use super::vocab_file;

/// First bytes of the file.
pub const MAGIC: &[u8; 4] = b"CTXS";
/// Format version written after the magic.
pub const VERSION: u8 = 2;

const FLAG_DUMMY_PREFIX: u8 = 1;

/// Whether `bytes` start like a SentencePiece vocabulary file (then [`decode`] decides whether it
/// is a valid one).
pub fn is_spm(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// The committed file, or `None` when this build leaves the vocabulary out (Cargo feature
/// `gemini`).
pub fn file() -> Option<&'static [u8]> {
    #[cfg(feature = "gemini")]
    {
        Some(include_bytes!("data/gemma3.bin"))
    }
    #[cfg(not(feature = "gemini"))]
    {
        None
    }
}

/// What a SentencePiece BPE model's encoder needs, by id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Number of ids.
    pub count: u32,
    pub unk: u32,
    /// Id of `<0x00>`.
    pub byte_base: u32,
    /// Ordinary pieces: `(id, bytes)`, spaces as spaces.
    pub normal: Vec<(u32, Vec<u8>)>,
    /// User-defined symbols: `(id, bytes)`, spaces as spaces.
    pub user_defined: Vec<(u32, Vec<u8>)>,
    /// A space goes in front of the text (SentencePiece's `add_dummy_prefix`).
    pub dummy_prefix: bool,
    /// Ordinary pieces tied at the lowest score: merged after all others, leftmost first.
    pub lowest: Vec<u32>,
    /// Name and source of a loadable vocabulary (empty for the built-in one).
    pub name: String,
    pub source: String,
}

/// A decoded file: the ordinary pieces as an arena in id order (as `vocab_file::Decoded`: `starts` has
/// `count + 1` entries, empty ranges for ids that are not ordinary pieces) and the rest of the
/// header.
#[derive(Debug, PartialEq, Eq)]
pub struct Decoded {
    pub arena: vocab_file::Decoded,
    pub unk: u32,
    pub byte_base: u32,
    pub user_defined: Vec<(u32, Vec<u8>)>,
    pub dummy_prefix: bool,
    pub lowest: Vec<u32>,
    pub name: String,
    pub source: String,
}

/// Cursor over the file's sections; fails (never panics) past the end.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.rest.len() < n {
            return Err(format!("SentencePiece vocabulary file truncated ({what})"));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?.first().copied().unwrap_or(0))
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let b: [u8; 4] = self.take(4, what)?.try_into().map_err(|_| format!("bad {what}"))?;
        Ok(u32::from_le_bytes(b))
    }
}

/// Decodes the file: checks the header, that the ranges, the byte pieces and the user-defined
/// ids are disjoint and within `count`, and that the body holds one piece per id of the ranges.
pub fn decode(file: &[u8]) -> Result<Decoded, String> {
    let mut r = Reader { rest: file };
    if r.take(4, "magic")? != MAGIC {
        return Err("not a SentencePiece vocabulary file (bad magic)".to_string());
    }
    let version = r.u8("version")?;
    if version != 1 && version != VERSION {
        return Err(format!("SentencePiece vocabulary file version {version}, expected 1 or {VERSION}"));
    }
    let (mut dummy_prefix, mut name, mut source, mut lowest) = (false, String::new(), String::new(), Vec::new());
    if version == 2 {
        dummy_prefix = r.u8("flags")? & FLAG_DUMMY_PREFIX != 0;
        let text = |b: &[u8], what: &str| String::from_utf8(b.to_vec()).map_err(|_| format!("{what} is not UTF-8"));
        let n = r.u8("name")? as usize;
        name = text(r.take(n, "name")?, "name")?;
        let n = u16::from_le_bytes([r.u8("source")?, r.u8("source")?]) as usize;
        source = text(r.take(n, "source")?, "source")?;
        let k = r.u32("lowest")?;
        for _ in 0..k.min(1 << 20) {
            lowest.push(r.u32("lowest")?);
        }
    }
    let count = r.u32("count")?;
    if count > 1 << 20 {
        return Err("SentencePiece vocabulary file: too many ids".to_string());
    }
    let unk = r.u32("unk")?;
    let byte_base = r.u32("byte base")?;
    let mut used = vec![false; count as usize];
    let mut claim = |id: u32, what: &str| -> Result<(), String> {
        match used.get_mut(id as usize) {
            Some(u) if !*u => {
                *u = true;
                Ok(())
            }
            _ => Err(format!("SentencePiece vocabulary file: {what} id {id} out of range or used twice")),
        }
    };
    claim(unk, "unk")?;
    for b in 0..256u32 {
        claim(byte_base.checked_add(b).ok_or("byte base out of range")?, "byte")?;
    }
    let mut order: Vec<u32> = Vec::new();
    for _ in 0..r.u8("ranges")? {
        let (start, end) = (r.u32("ranges")?, r.u32("ranges")?);
        if start > end || end > count {
            return Err("SentencePiece vocabulary file: bad range".to_string());
        }
        for id in start..end {
            claim(id, "ordinary")?;
            order.push(id);
        }
    }
    let k = r.u32("user-defined")?;
    let mut user_defined = Vec::with_capacity((k as usize).min(count as usize));
    for _ in 0..k {
        let id = r.u32("user-defined")?;
        claim(id, "user-defined")?;
        let len = r.u8("user-defined")? as usize;
        let bytes = r.take(len, "user-defined")?;
        if bytes.is_empty() {
            return Err("SentencePiece vocabulary file: empty user-defined symbol".to_string());
        }
        user_defined.push((id, bytes.to_vec()));
    }
    let stored = vocab_file::decode_splits(r.rest)?;
    if stored.starts.len() != order.len() + 1 {
        return Err("SentencePiece vocabulary file: the body does not hold one piece per id".to_string());
    }
    // Rebuild the arena in id order.
    let mut slot: Vec<Option<(u32, u32)>> = vec![None; count as usize];
    for (rank, &id) in order.iter().enumerate() {
        let (Some(&a), Some(&b)) = (stored.starts.get(rank), stored.starts.get(rank + 1)) else {
            return Err("SentencePiece vocabulary file: bad body".to_string());
        };
        if a == b {
            return Err(format!("SentencePiece vocabulary file: empty piece for id {id}"));
        }
        if let Some(s) = slot.get_mut(id as usize) {
            *s = Some((a, b));
        }
    }
    let mut bytes = Vec::with_capacity(stored.bytes.len());
    let mut starts = Vec::with_capacity(count as usize + 1);
    starts.push(0u32);
    for s in &slot {
        if let Some((a, b)) = *s {
            bytes.extend_from_slice(stored.bytes.get(a as usize..b as usize).ok_or("bad body offsets")?);
        }
        starts.push(u32::try_from(bytes.len()).map_err(|_| "vocabulary too large")?);
    }
    if lowest.iter().any(|&id| slot.get(id as usize).is_none_or(Option::is_none)) {
        return Err("SentencePiece vocabulary file: a lowest-score id is no ordinary piece".to_string());
    }
    Ok(Decoded {
        arena: vocab_file::Decoded { bytes, starts },
        unk,
        byte_base,
        user_defined,
        dummy_prefix,
        lowest,
        name,
        source,
    })
}

/// Writes the file for `spec` (storage order: single-character pieces first, each group by id);
/// version 1 when the spec needs nothing of version 2 (Gemma 3's).
pub fn write(spec: &Spec) -> Result<Vec<u8>, String> {
    let single_char = |b: &[u8]| std::str::from_utf8(b).is_ok_and(|s| s.chars().count() == 1);
    let mut normal: Vec<&(u32, Vec<u8>)> = spec.normal.iter().collect();
    normal.sort_by_key(|(id, b)| (!single_char(b), *id));
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &(id, _) in &normal {
        match ranges.last_mut() {
            Some((_, end)) if *end == *id => *end += 1,
            _ => ranges.push((*id, id + 1)),
        }
    }
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    if !spec.dummy_prefix && spec.lowest.is_empty() && spec.name.is_empty() && spec.source.is_empty() {
        out.push(1);
    } else {
        out.push(VERSION);
        out.push(if spec.dummy_prefix { FLAG_DUMMY_PREFIX } else { 0 });
        out.push(u8::try_from(spec.name.len()).map_err(|_| "name too long")?);
        out.extend_from_slice(spec.name.as_bytes());
        out.extend_from_slice(&u16::try_from(spec.source.len()).map_err(|_| "source too long")?.to_le_bytes());
        out.extend_from_slice(spec.source.as_bytes());
        out.extend_from_slice(&u32::try_from(spec.lowest.len()).map_err(|_| "too many lowest pieces")?.to_le_bytes());
        for id in &spec.lowest {
            out.extend_from_slice(&id.to_le_bytes());
        }
    }
    for v in [spec.count, spec.unk, spec.byte_base] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.push(u8::try_from(ranges.len()).map_err(|_| "too many ranges of ordinary ids")?);
    for (a, b) in &ranges {
        out.extend_from_slice(&a.to_le_bytes());
        out.extend_from_slice(&b.to_le_bytes());
    }
    out.extend_from_slice(&(spec.user_defined.len() as u32).to_le_bytes());
    for (id, bytes) in &spec.user_defined {
        out.extend_from_slice(&id.to_le_bytes());
        out.push(u8::try_from(bytes.len()).map_err(|_| "user-defined symbol over 255 bytes")?);
        out.extend_from_slice(bytes);
    }
    let tokens: Vec<Vec<u8>> = normal.iter().map(|(_, b)| b.clone()).collect();
    out.extend_from_slice(&vocab_file::write_splits(&tokens)?);
    Ok(out)
}
