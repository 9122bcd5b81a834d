//! Unicode Normalization Form C, for the vocabularies whose tokenizer normalizes text first
//! (Qwen 2/3: `"normalizer": {"type": "NFC"}`; docs/vocabularies.md).
//!
//! The library carries no Unicode table of its own: the tables come with the vocabulary file that
//! needs them (written at build time from the `unicode-normalization` crate, see
//! `examples/vocab.rs`), so the `.wasm` does not grow. They hold, for every code point that needs
//! an entry:
//!
//! ```text
//! "CTXN"           4 bytes, magic
//! version          1 byte, 1
//! ccc              u32 count, then per code point: u32 (code point << 8 | canonical combining class)
//! decompositions   u32 count, then per code point: u32 code point, u8 length, the full canonical
//!                  decomposition (u32 each; Hangul syllables are decomposed by the algorithm)
//! compositions     u32 count, then per pair: u32 first, u32 second, u32 composite (primary
//!                  composites only: composition exclusions are left out)
//! not in NFC       u32 count, then u32 code points whose NFC is not themselves (NFC_QC = No)
//! ```
//!
//! The algorithm is the standard one (UAX #15): the text is cut before every character that
//! nothing before it can interact with (a starter that has no decomposition starting with a
//! non-starter and is not the second half of a composition); a chunk whose characters are all
//! NFC_QC = Yes and in canonical order is kept as it is, the others are decomposed, reordered and
//! recomposed. Text below U+0300 never changes, so ordinary text costs one scan. Tests:
//! `tests/vocab_nfc.rs` (against the `unicode-normalization` crate on every code point and in
//! context) and tests/js (against Node's `String.prototype.normalize`).

use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};

/// First bytes of a table file.
pub const MAGIC: &[u8; 4] = b"CTXN";
/// Table format version.
pub const VERSION: u8 = 1;

// Hangul syllables (UAX #15, "Hangul").
const S_BASE: u32 = 0xAC00;
const L_BASE: u32 = 0x1100;
const V_BASE: u32 = 0x1161;
const T_BASE: u32 = 0x11A7;
const L_COUNT: u32 = 19;
const V_COUNT: u32 = 21;
const T_COUNT: u32 = 28;
const N_COUNT: u32 = V_COUNT * T_COUNT;
const S_COUNT: u32 = L_COUNT * N_COUNT;

/// NFC tables, read from a vocabulary file.
pub struct Nfc {
    ccc: FxHashMap<u32, u8>,
    /// Code point -> range in `chars`.
    decomposition: FxHashMap<u32, (u32, u8)>,
    chars: Vec<char>,
    composition: FxHashMap<u64, char>,
    /// Second halves of compositions (NFC_QC = Maybe, with the Hangul vowels and trailing consonants).
    second: FxHashSet<u32>,
    /// NFC_QC = No.
    not_nfc: FxHashSet<u32>,
}

/// The tables' parts, as [`write`] takes them and the tests build them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tables {
    pub ccc: Vec<(u32, u8)>,
    pub decompositions: Vec<(u32, Vec<u32>)>,
    pub compositions: Vec<(u32, u32, u32)>,
    pub not_nfc: Vec<u32>,
}

/// Writes a table file.
pub fn write(t: &Tables) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    let u32s = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    u32s(&mut out, t.ccc.len() as u32);
    for &(cp, c) in &t.ccc {
        u32s(&mut out, cp << 8 | u32::from(c));
    }
    u32s(&mut out, t.decompositions.len() as u32);
    for (cp, d) in &t.decompositions {
        u32s(&mut out, *cp);
        out.push(d.len() as u8);
        for &x in d {
            u32s(&mut out, x);
        }
    }
    u32s(&mut out, t.compositions.len() as u32);
    for &(a, b, c) in &t.compositions {
        for v in [a, b, c] {
            u32s(&mut out, v);
        }
    }
    u32s(&mut out, t.not_nfc.len() as u32);
    for &cp in &t.not_nfc {
        u32s(&mut out, cp);
    }
    out
}

struct Reader<'a> {
    rest: &'a [u8],
}

impl Reader<'_> {
    fn u32(&mut self) -> Result<u32, String> {
        let (head, rest) = self.rest.split_at_checked(4).ok_or("NFC tables truncated")?;
        self.rest = rest;
        Ok(u32::from_le_bytes(head.try_into().map_err(|_| "NFC tables truncated")?))
    }

    fn u8(&mut self) -> Result<u8, String> {
        let (&b, rest) = self.rest.split_first().ok_or("NFC tables truncated")?;
        self.rest = rest;
        Ok(b)
    }

    fn char(&mut self) -> Result<char, String> {
        let v = self.u32()?;
        char::from_u32(v).ok_or_else(|| format!("NFC tables: {v:#x} is not a character"))
    }

    /// A count of entries of at least `size` bytes each, checked against what is left.
    fn count(&mut self, size: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n.saturating_mul(size) > self.rest.len() {
            return Err("NFC tables truncated".to_string());
        }
        Ok(n)
    }
}

impl Nfc {
    /// Reads a table file (see the module doc).
    pub fn read(bytes: &[u8]) -> Result<Nfc, String> {
        let body = bytes
            .strip_prefix(MAGIC.as_slice())
            .and_then(|b| b.strip_prefix(&[VERSION]))
            .ok_or("not NFC tables (bad magic or version)")?;
        let mut r = Reader { rest: body };
        let mut nfc = Nfc {
            ccc: FxHashMap::default(),
            decomposition: FxHashMap::default(),
            chars: Vec::new(),
            composition: FxHashMap::default(),
            second: FxHashSet::default(),
            not_nfc: FxHashSet::default(),
        };
        for _ in 0..r.count(4)? {
            let v = r.u32()?;
            nfc.ccc.insert(v >> 8, v as u8);
        }
        for _ in 0..r.count(5)? {
            let cp = r.u32()?;
            let len = r.u8()?;
            let start = nfc.chars.len() as u32;
            for _ in 0..len {
                let c = r.char()?;
                nfc.chars.push(c);
            }
            nfc.decomposition.insert(cp, (start, len));
        }
        for _ in 0..r.count(12)? {
            let (a, b, c) = (r.u32()?, r.u32()?, r.char()?);
            nfc.composition.insert(u64::from(a) << 32 | u64::from(b), c);
            nfc.second.insert(b);
        }
        for _ in 0..r.count(4)? {
            let cp = r.u32()?;
            nfc.not_nfc.insert(cp);
        }
        if !r.rest.is_empty() {
            return Err("NFC tables: bytes left over".to_string());
        }
        Ok(nfc)
    }

    /// Bytes held by the tables.
    pub fn heap_bytes(&self) -> usize {
        16 * (self.ccc.capacity() + self.decomposition.capacity() + self.composition.capacity())
            + 8 * (self.second.capacity() + self.not_nfc.capacity())
            + 4 * self.chars.capacity()
    }

    #[inline]
    fn ccc(&self, c: char) -> u8 {
        if (c as u32) < 0x300 {
            return 0;
        }
        self.ccc.get(&(c as u32)).copied().unwrap_or(0)
    }

    /// Whether `c` is a second half of a composition (a Hangul vowel or trailing consonant too).
    fn composes_backward(&self, c: char) -> bool {
        let cp = c as u32;
        (V_BASE..V_BASE + V_COUNT).contains(&cp)
            || (T_BASE + 1..T_BASE + T_COUNT).contains(&cp)
            || self.second.contains(&cp)
    }

    /// Whether nothing before `c` can change when the text is normalized: a starter that is not
    /// the second half of a composition and whose decomposition (if any) starts with such a one.
    fn boundary_before(&self, c: char) -> bool {
        if (c as u32) < 0x300 {
            return true;
        }
        if self.ccc(c) != 0 || self.composes_backward(c) {
            return false;
        }
        match self.decomposition.get(&(c as u32)) {
            None => true,
            Some(&(start, _)) => self
                .chars
                .get(start as usize)
                .is_some_and(|&first| self.ccc(first) == 0 && !self.composes_backward(first)),
        }
    }

    /// `text` in NFC (borrowed when it already is).
    pub fn normalize<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self.normalize_mapped(text) {
            None => Cow::Borrowed(text),
            Some(n) => Cow::Owned(n.text),
        }
    }

    /// `text` in NFC with a map back to `text`, or `None` when `text` already is in NFC.
    pub fn normalize_mapped(&self, text: &str) -> Option<Normalized> {
        // Most text has nothing at or above U+0300.
        let first = text.char_indices().find(|&(_, c)| c as u32 >= 0x300)?.0;
        let mut out = Normalized { text: String::new(), segments: Vec::new() };
        let mut copied = 0usize; // bytes of `text` already in `out` (unchanged or normalized)
        let mut chunk = text.get(..first).map_or(0, |s| s.char_indices().last().map_or(0, |(i, _)| i));
        let offset = chunk;
        let mut iter = text.get(offset..).unwrap_or("").char_indices().map(move |(i, c)| (i + offset, c)).peekable();
        let mut buf: Vec<char> = Vec::new();
        // Walk chunk by chunk from the character before the first one at U+0300 or above.
        iter.next();
        loop {
            let end = loop {
                match iter.peek() {
                    Some(&(i, c)) if self.boundary_before(c) => break i,
                    Some(_) => {
                        iter.next();
                    }
                    None => break text.len(),
                }
            };
            let piece = text.get(chunk..end).unwrap_or("");
            if !self.is_normalized(piece) {
                buf.clear();
                self.decompose_into(piece, &mut buf);
                self.reorder(&mut buf);
                self.compose(&mut buf);
                let normalized: String = buf.iter().collect();
                if normalized != piece {
                    out.copy_unchanged(text, copied, chunk);
                    out.segments.push(Segment { norm: out.text.len() as u32, orig: chunk as u32, changed: true });
                    out.text.push_str(&normalized);
                    copied = end;
                }
            }
            if end >= text.len() {
                break;
            }
            chunk = end;
            iter.next();
        }
        if out.segments.is_empty() {
            return None;
        }
        out.copy_unchanged(text, copied, text.len());
        Some(out)
    }

    /// Quick check of one chunk: every character NFC_QC = Yes and the marks in canonical order.
    fn is_normalized(&self, piece: &str) -> bool {
        let mut last = 0u8;
        for c in piece.chars() {
            if (c as u32) < 0x300 {
                last = 0;
                continue;
            }
            let ccc = self.ccc(c);
            if (ccc != 0 && last > ccc) || self.not_nfc.contains(&(c as u32)) || self.composes_backward(c) {
                return false;
            }
            last = ccc;
        }
        true
    }

    fn decompose_into(&self, piece: &str, out: &mut Vec<char>) {
        for c in piece.chars() {
            let cp = c as u32;
            if (S_BASE..S_BASE + S_COUNT).contains(&cp) {
                let s = cp - S_BASE;
                let l = L_BASE + s / N_COUNT;
                let v = V_BASE + (s % N_COUNT) / T_COUNT;
                let t = T_BASE + s % T_COUNT;
                out.extend([l, v].into_iter().filter_map(char::from_u32));
                if t != T_BASE {
                    out.extend(char::from_u32(t));
                }
                continue;
            }
            match self.decomposition.get(&cp) {
                Some(&(start, len)) => {
                    out.extend_from_slice(self.chars.get(start as usize..start as usize + len as usize).unwrap_or(&[]))
                }
                None => out.push(c),
            }
        }
    }

    /// Canonical ordering: a stable sort by combining class of every run of non-starters.
    fn reorder(&self, chars: &mut [char]) {
        let mut i = 0;
        while i < chars.len() {
            let start = i;
            while chars.get(i).is_some_and(|&c| self.ccc(c) != 0) {
                i += 1;
            }
            if i - start > 1 {
                if let Some(run) = chars.get_mut(start..i) {
                    run.sort_by_key(|&c| self.ccc(c));
                }
            }
            i = i.max(start + 1);
        }
    }

    fn compose_pair(&self, a: char, b: char) -> Option<char> {
        let (a, b) = (a as u32, b as u32);
        if (L_BASE..L_BASE + L_COUNT).contains(&a) && (V_BASE..V_BASE + V_COUNT).contains(&b) {
            return char::from_u32(S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT);
        }
        if (S_BASE..S_BASE + S_COUNT).contains(&a)
            && (a - S_BASE) % T_COUNT == 0
            && (T_BASE + 1..T_BASE + T_COUNT).contains(&b)
        {
            return char::from_u32(a + (b - T_BASE));
        }
        self.composition.get(&(u64::from(a) << 32 | u64::from(b))).copied()
    }

    /// Canonical composition (UAX #15 D117) in place.
    fn compose(&self, chars: &mut Vec<char>) {
        let mut starter: Option<usize> = None;
        let mut last_ccc: i32 = -1;
        let mut out = 0usize;
        for i in 0..chars.len() {
            let Some(&c) = chars.get(i) else { break };
            let ccc = self.ccc(c);
            if let Some(s) = starter {
                // Not blocked: nothing since the starter, or only marks of a lower class.
                let blocked = last_ccc != -1 && (last_ccc == 0 || last_ccc >= i32::from(ccc));
                if !blocked {
                    if let Some(composite) = chars.get(s).and_then(|&a| self.compose_pair(a, c)) {
                        if let Some(slot) = chars.get_mut(s) {
                            *slot = composite;
                        }
                        continue;
                    }
                }
            }
            if ccc == 0 {
                starter = Some(out);
                last_ccc = -1;
            } else {
                last_ccc = i32::from(ccc);
            }
            if let Some(slot) = chars.get_mut(out) {
                *slot = c;
            }
            out += 1;
        }
        chars.truncate(out);
    }
}

/// Normalized text and where its parts come from.
pub struct Normalized {
    pub text: String,
    /// From the first change on, in order: where each stretch starts in the normalized and the
    /// original text, and whether it was rewritten (else copied as it was).
    segments: Vec<Segment>,
}

#[derive(Clone, Copy)]
struct Segment {
    norm: u32,
    orig: u32,
    changed: bool,
}

impl Normalized {
    /// `prefix` put in front of `text` (SentencePiece's dummy prefix): offsets inside the prefix
    /// map to 0.
    pub fn prefixed(prefix: &str, text: &str) -> Normalized {
        let at = prefix.len() as u32;
        Normalized {
            text: format!("{prefix}{text}"),
            segments: vec![Segment { norm: 0, orig: 0, changed: true }, Segment { norm: at, orig: 0, changed: false }],
        }
    }

    fn copy_unchanged(&mut self, text: &str, from: usize, to: usize) {
        if to <= from {
            return;
        }
        self.segments.push(Segment { norm: self.text.len() as u32, orig: from as u32, changed: false });
        self.text.push_str(text.get(from..to).unwrap_or(""));
    }

    /// The offset in the original text for offset `i` of the normalized text: exact outside
    /// rewritten stretches, the start of the stretch inside one (`ceil`: its end).
    pub fn original(&self, i: usize, ceil: bool, original_len: usize) -> usize {
        let i = i as u32;
        let at = self.segments.partition_point(|s| s.norm <= i);
        let Some(seg) = at.checked_sub(1).and_then(|k| self.segments.get(k)) else {
            // Before the first change the text is copied as it was.
            return i as usize;
        };
        if !seg.changed {
            return (seg.orig + (i - seg.norm)) as usize;
        }
        if i == seg.norm || !ceil {
            return seg.orig as usize;
        }
        self.segments.get(at).map_or(original_len, |next| next.orig as usize)
    }
}
