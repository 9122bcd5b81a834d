//! ctxguard's file of a loadable vocabulary (pkg/vocab/<name>.bin; docs/vocabularies.md):
//! the ranks as the built-in vocabularies store them (`vocab_file`, format 3: each token as the
//! two lower ranks it merges from, entropy-coded), plus what the tokenizer needs besides them.
//!
//! ```text
//! "CTXB"            4 bytes, magic
//! version           1 byte, 1
//! split             1 byte: the pre-tokenizer (`vocabulary::Split`)
//! flags             1 byte: bit 0 added tokens in text are one token each, bit 1 NFC first
//! name              u8 length, UTF-8 (`llama3`, `qwen3`, ...)
//! source            u16 length, UTF-8 (package, file and sha256 it was converted from)
//! ranks             u32 length, a vocabulary file of format 3 (`vocab_file`)
//! added tokens      u32 count, then per token: u32 id, u8 flags (bit 0 special), u16 length, UTF-8
//! NFC tables        u32 length (0: none), the tables (`nfc.rs`)
//! ```
//!
//! Written by `examples/vocab.rs` at build time (scripts/build-pkg.sh), read by `loadVocabulary`.

use super::vocab_file;
use super::vocabulary::{Added, Split, Vocabulary};

/// First bytes of a vocabulary bundle.
pub const MAGIC: &[u8; 4] = b"CTXB";
/// Format version.
pub const VERSION: u8 = 1;

const FLAG_MATCH_ADDED: u8 = 1;
const FLAG_NFC: u8 = 2;

/// Whether `bytes` start like a bundle (then [`read`] decides whether it is a valid one).
pub fn is_bundle(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Writes a bundle.
pub fn write(v: &Vocabulary) -> Result<Vec<u8>, String> {
    let ranks = vocab_file::write(&v.tokens())?;
    let mut out = Vec::with_capacity(ranks.len() + 64);
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.push(v.split as u8);
    out.push(if v.match_added { FLAG_MATCH_ADDED } else { 0 } | if v.nfc { FLAG_NFC } else { 0 });
    out.push(u8::try_from(v.name.len()).map_err(|_| "name too long")?);
    out.extend_from_slice(v.name.as_bytes());
    out.extend_from_slice(&u16::try_from(v.source.len()).map_err(|_| "source too long")?.to_le_bytes());
    out.extend_from_slice(v.source.as_bytes());
    out.extend_from_slice(&u32::try_from(ranks.len()).map_err(|_| "ranks too large")?.to_le_bytes());
    out.extend_from_slice(&ranks);
    out.extend_from_slice(&(v.added.len() as u32).to_le_bytes());
    for a in &v.added {
        out.extend_from_slice(&a.id.to_le_bytes());
        out.push(u8::from(a.special));
        out.extend_from_slice(&u16::try_from(a.content.len()).map_err(|_| "added token too long")?.to_le_bytes());
        out.extend_from_slice(a.content.as_bytes());
    }
    let nfc = v.nfc_tables.as_deref().unwrap_or_default();
    out.extend_from_slice(&(nfc.len() as u32).to_le_bytes());
    out.extend_from_slice(nfc);
    Ok(out)
}

struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let (head, rest) = self.rest.split_at_checked(n).ok_or("vocabulary bundle truncated")?;
        self.rest = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?.first().copied().unwrap_or(0))
    }

    fn u16(&mut self) -> Result<u16, String> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes(b.try_into().map_err(|_| "truncated")?))
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(b.try_into().map_err(|_| "truncated")?))
    }

    fn text(&mut self, n: usize) -> Result<String, String> {
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "vocabulary bundle: text is not UTF-8".to_string())
    }
}

/// Reads a bundle; checks every section (the ranks as `vocab_file::decode` does).
pub fn read(bytes: &[u8]) -> Result<Vocabulary, String> {
    let mut r = Reader { rest: bytes };
    if r.take(4)? != MAGIC {
        return Err("not a ctxguard vocabulary (bad magic)".to_string());
    }
    let version = r.u8()?;
    if version != VERSION {
        return Err(format!("vocabulary bundle version {version}, this ctxguard reads {VERSION}"));
    }
    let split_id = r.u8()?;
    let split = Split::from_id(split_id).ok_or_else(|| format!("unknown pre-tokenizer split {split_id}"))?;
    let flags = r.u8()?;
    let name_len = r.u8()? as usize;
    let name = r.text(name_len)?;
    let source_len = r.u16()? as usize;
    let source = r.text(source_len)?;
    let ranks_len = r.u32()? as usize;
    let vocab_file::Decoded { bytes, starts } = vocab_file::decode(r.take(ranks_len)?)?;
    let added_count = r.u32()? as usize;
    if added_count > r.rest.len() / 7 {
        return Err("vocabulary bundle truncated (added tokens)".to_string());
    }
    let mut added = Vec::with_capacity(added_count);
    for _ in 0..added_count {
        let id = r.u32()?;
        let special = r.u8()? & 1 != 0;
        let len = r.u16()? as usize;
        let content = r.text(len)?;
        added.push(Added { id, content, special });
    }
    let nfc_len = r.u32()? as usize;
    let nfc_tables = if nfc_len > 0 { Some(r.take(nfc_len)?.to_vec()) } else { None };
    if !r.rest.is_empty() {
        return Err("vocabulary bundle: bytes left over".to_string());
    }
    Ok(Vocabulary {
        name,
        split,
        bytes,
        starts,
        added,
        match_added: flags & FLAG_MATCH_ADDED != 0,
        nfc: flags & FLAG_NFC != 0,
        nfc_tables,
        source,
    })
}
