//! Pre-tokenizer: splits text into the pieces that tiktoken's regex would produce, without running
//! the regex.
//!
//! tiktoken splits text with a backtracking regex (`fancy_regex`) before byte-pair merging. This
//! module reproduces that split by hand for the two patterns we ship (`O200K_PATTERN` and
//! `CL100K_PATTERN` below, copied from tiktoken-rs 0.12.1). Every alternative is evaluated the way
//! a backtracking engine evaluates it (leftmost alternative first, greedy quantifiers giving back
//! one character at a time, possessive ones never), which is spelled out next to each branch. The
//! scanner only ever looks at the run of characters that the winning alternative consumes plus a
//! bounded look-ahead, so splitting is linear in the input whatever the input is.
//!
//! Character classes (`\p{L}`, `\p{N}`, `\s`, and o200k's upper/lower letter classes) are not
//! hand-written tables: they were computed at build time, 256 code points at a time, by running
//! the regex engine itself over each block (`vocab_file::CLASS_PATTERNS`), so they agree with
//! tiktoken-rs's regex by construction (same `regex` crate, same Unicode tables); the committed
//! `data/classes.bin` is checked against the regex by `tests/tokens/vocab_data.rs`. ASCII is a fixed
//! table (checked against that file in the tests).

use std::sync::OnceLock;

use crate::base::error::{Error, ErrorCode, Result};

use super::vocab_file;

/// tiktoken-rs 0.12.1's `O200K_BASE_PAT_STR`, copied (`tests/tokens/vocab_data.rs` checks that it is the
/// same string, so tiktoken-rs stays a dev-dependency).
pub const O200K_PATTERN: &str = concat!(
    r#"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"#,
    "|",
    r#"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"#,
    "|",
    r#"\p{N}{1,3}"#,
    "|",
    r#" ?[^\s\p{L}\p{N}]+[\r\n/]*"#,
    "|",
    r#"\s*[\r\n]+"#,
    "|",
    r#"\s+(?!\S)"#,
    "|",
    r#"\s+"#
);

/// The pattern tiktoken-rs 0.12.1 passes to `CoreBPE::new` in `cl100k_base()`.
pub const CL100K_PATTERN: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// `\p{L}`
const L: u8 = 1;
/// `\p{N}`
const N: u8 = 2;
/// `\s` (Unicode White_Space)
const WS: u8 = 4;
/// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`
const UP: u8 = 8;
/// o200k's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`
const LO: u8 = 16;

/// Class bits of ASCII characters (equal to block 0 of the class file; asserted in the tests).
fn ascii_class(b: u8) -> u8 {
    match b {
        b'A'..=b'Z' => L | UP,
        b'a'..=b'z' => L | LO,
        b'0'..=b'9' => N,
        b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ' => WS,
        _ => 0,
    }
}

/// Class bits of every code point, read in place from the embedded class file (`data`).
pub(crate) struct Classes {
    /// The unique block of each 256-code-point block, u16 little-endian.
    index: &'static [u8],
    /// Unique blocks of 256 class bytes.
    blocks: &'static [u8],
}

static CLASSES: OnceLock<Result<Classes>> = OnceLock::new();

impl Classes {
    /// The process-wide class table (checks the embedded file once; nothing is computed).
    pub(crate) fn get() -> Result<&'static Classes> {
        CLASSES.get_or_init(Classes::new).as_ref().map_err(Clone::clone)
    }

    fn new() -> Result<Classes> {
        let (index, blocks) = vocab_file::parse_classes(vocab_file::class_file())
            .map_err(|e| Error::new(ErrorCode::Internal, format!("cannot load the character classes: {e}")))?;
        Ok(Classes { index, blocks })
    }

    #[inline]
    fn of(&self, c: char) -> u8 {
        let cp = c as u32;
        if cp < 0x80 {
            return ascii_class(cp as u8);
        }
        let b = (cp >> 8) as usize * 2;
        let id = match self.index.get(b..b + 2) {
            Some(&[lo, hi]) => u16::from_le_bytes([lo, hi]) as usize,
            _ => return 0,
        };
        self.blocks.get(id * 256 + (cp & 0xFF) as usize).copied().unwrap_or(0)
    }
}

/// Which split pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pattern {
    O200k,
    Cl100k,
}

/// One character of the text.
#[derive(Clone, Copy)]
struct Ch {
    c: char,
    class: u8,
    len: usize,
}

/// Splits one text into pieces.
pub(crate) struct Splitter<'t> {
    text: &'t str,
    classes: &'static Classes,
    pattern: Pattern,
    /// Characters decoded so far (debug builds only), for linearity tests.
    #[cfg(debug_assertions)]
    examined: std::cell::Cell<u64>,
}

impl<'t> Splitter<'t> {
    pub(crate) fn new(text: &'t str, classes: &'static Classes, pattern: Pattern) -> Self {
        Splitter {
            text,
            classes,
            pattern,
            #[cfg(debug_assertions)]
            examined: std::cell::Cell::new(0),
        }
    }

    /// Characters decoded so far (0 in release builds).
    pub(crate) fn chars_examined(&self) -> u64 {
        #[cfg(debug_assertions)]
        {
            self.examined.get()
        }
        #[cfg(not(debug_assertions))]
        {
            0
        }
    }

    /// Iterates over `(start, end)` byte ranges of the pieces, in order, covering the whole text.
    pub(crate) fn pieces(self) -> Pieces<'t> {
        Pieces { splitter: self, pos: 0 }
    }

    #[inline]
    fn at(&self, i: usize) -> Option<Ch> {
        #[cfg(debug_assertions)]
        self.examined.set(self.examined.get() + 1);
        let b = *self.text.as_bytes().get(i)?;
        if b < 0x80 {
            return Some(Ch { c: b as char, class: ascii_class(b), len: 1 });
        }
        let c = self.text.get(i..)?.chars().next()?;
        Some(Ch { c, class: self.classes.of(c), len: c.len_utf8() })
    }

    /// End of the run of characters whose class intersects `mask`, starting at `i`.
    #[inline]
    fn run(&self, mut i: usize, mask: u8) -> usize {
        let bytes = self.text.as_bytes();
        loop {
            match bytes.get(i) {
                Some(&b) if b < 0x80 => {
                    #[cfg(debug_assertions)]
                    self.examined.set(self.examined.get() + 1);
                    if ascii_class(b) & mask == 0 {
                        return i;
                    }
                    i += 1;
                }
                Some(_) => match self.at(i) {
                    Some(ch) if ch.class & mask != 0 => i += ch.len,
                    _ => return i,
                },
                None => return i,
            }
        }
    }

    /// End of the run of characters that are not `\s`, `\p{L}` or `\p{N}`, starting at `i`.
    #[inline]
    fn other_run(&self, mut i: usize) -> usize {
        while let Some(ch) = self.at(i) {
            if ch.class & (WS | L | N) != 0 {
                break;
            }
            i += ch.len;
        }
        i
    }

    /// Skips up to three `\p{N}` characters (`\p{N}{1,3}`, greedy or possessive alike).
    fn digits(&self, mut i: usize) -> usize {
        for _ in 0..3 {
            match self.at(i) {
                Some(ch) if ch.class & N != 0 => i += ch.len,
                _ => break,
            }
        }
        i
    }

    /// Skips characters of the given ASCII set.
    fn ascii_set_run(&self, mut i: usize, set: &[u8]) -> usize {
        while let Some(b) = self.text.as_bytes().get(i) {
            #[cfg(debug_assertions)]
            self.examined.set(self.examined.get() + 1);
            if !set.contains(b) {
                break;
            }
            i += 1;
        }
        i
    }

    /// Does `c` match the letter `lower` (an ASCII lowercase letter) under `(?i:...)`?
    /// Unicode simple case folding adds U+017F LATIN SMALL LETTER LONG S to `s`; no other
    /// non-ASCII character folds to one of the letters used in the contraction alternatives
    /// (`s t r e v m l d`), which the tests check for every code point.
    #[inline]
    fn folds_to(c: char, lower: u8) -> bool {
        c.to_ascii_lowercase() == lower as char || (lower == b's' && c == '\u{17F}')
    }

    /// After an apostrophe at `i`: length of a match of `(?i:s|t|re|ve|m|ll|d)` (o200k order) or
    /// `(?i:[sdmt]|ll|ve|re)` (cl100k; same language, alternatives are disjoint), or `None`.
    fn contraction(&self, i: usize) -> Option<usize> {
        if self.text.as_bytes().get(i) != Some(&b'\'') {
            return None;
        }
        let c1 = self.at(i + 1)?;
        let after1 = i + 1 + c1.len;
        for single in [b's', b't', b'm', b'd'] {
            if Self::folds_to(c1.c, single) {
                return Some(after1);
            }
        }
        for (first, second) in [(b'r', b'e'), (b'v', b'e'), (b'l', b'l')] {
            if Self::folds_to(c1.c, first) {
                let c2 = self.at(after1)?;
                if Self::folds_to(c2.c, second) {
                    return Some(after1 + c2.len);
                }
                return None;
            }
        }
        None
    }

    /// o200k alternative 1 from `p` (after the optional prefix):
    /// `[UP]*[LO]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`.
    ///
    /// Backtracking: `[UP]*` first takes the whole run `p..q`, then gives back one character at a
    /// time until `[LO]+` can start, i.e. `[LO]+` starts at the rightmost position `k` in `p..=q`
    /// whose character is in LO. If that is `q` (the character after the run, which then is a pure
    /// lowercase letter) `[LO]+` takes the whole LO run from there; otherwise the character after
    /// `k` is not in LO and `[LO]+` takes exactly one character. The optional contraction is tried
    /// and the match succeeds either way.
    fn o200k_alt1(&self, p: usize) -> Option<usize> {
        let mut i = p;
        let mut after_last_lo = None;
        while let Some(ch) = self.at(i) {
            if ch.class & UP == 0 {
                break;
            }
            i += ch.len;
            if ch.class & LO != 0 {
                after_last_lo = Some(i);
            }
        }
        let end = match self.at(i) {
            Some(ch) if ch.class & LO != 0 => self.run(i, LO),
            _ => after_last_lo?,
        };
        Some(self.contraction(end).unwrap_or(end))
    }

    /// o200k alternative 2 from `p` (after the optional prefix):
    /// `[UP]+[LO]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` — all greedy, nothing after it can fail, so
    /// the first path is the answer as soon as `[UP]+` matches at least one character.
    fn o200k_alt2(&self, p: usize) -> Option<usize> {
        let q = self.run(p, UP);
        if q == p {
            return None;
        }
        let end = self.run(q, LO);
        Some(self.contraction(end).unwrap_or(end))
    }

    /// Facts about the `\s` run starting at `pos` (which must be whitespace).
    fn ws_run(&self, pos: usize) -> WsRun {
        let mut i = pos;
        let mut chars = 0usize;
        let mut last_start = pos;
        let mut after_last_crlf = None;
        while let Some(ch) = self.at(i) {
            if ch.class & WS == 0 {
                break;
            }
            last_start = i;
            i += ch.len;
            chars += 1;
            if ch.c == '\r' || ch.c == '\n' {
                after_last_crlf = Some(i);
            }
        }
        WsRun { end: i, chars, last_start, after_last_crlf }
    }

    /// End of the o200k piece that starts at `pos`. The alternatives, in order:
    ///
    /// 1. `[^\r\n\p{L}\p{N}]?[UP]*[LO]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
    /// 2. `[^\r\n\p{L}\p{N}]?[UP]+[LO]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
    /// 3. `\p{N}{1,3}`
    /// 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    /// 5. `\s*[\r\n]+`
    /// 6. `\s+(?!\S)`
    /// 7. `\s+`
    fn o200k_end(&self, pos: usize, c0: Ch) -> Option<usize> {
        let text_len = self.text.len();
        let after0 = pos + c0.len;
        // The greedy optional prefix is tried first, then (backtracking) no prefix. Without the
        // prefix, alternatives 1 and 2 can only match when c0 is in UP or LO.
        let prefixable = c0.c != '\r' && c0.c != '\n' && c0.class & (L | N) == 0;
        if prefixable {
            if let Some(e) = self.o200k_alt1(after0) {
                return Some(e);
            }
        }
        if let Some(e) = self.o200k_alt1(pos) {
            return Some(e);
        }
        if prefixable {
            if let Some(e) = self.o200k_alt2(after0) {
                return Some(e);
            }
        }
        if let Some(e) = self.o200k_alt2(pos) {
            return Some(e);
        }
        // 3.
        if c0.class & N != 0 {
            return Some(self.digits(pos));
        }
        // 4. The optional space is greedy; without it c0 itself must be "other".
        let other_start = if c0.c == ' ' {
            match self.at(after0) {
                Some(c1) if c1.class & (WS | L | N) == 0 => Some(after0),
                _ => None,
            }
        } else if c0.class & (WS | L | N) == 0 {
            Some(pos)
        } else {
            None
        };
        if let Some(start) = other_start {
            let e = self.other_run(start);
            return Some(self.ascii_set_run(e, b"\r\n/"));
        }
        // Only whitespace is left.
        let run = self.ws_run(pos);
        // 5. `\s*` takes the run and gives back until `[\r\n]+` matches: that is at the last CR/LF
        // of the run, and `[\r\n]+` cannot extend past it.
        if let Some(e) = run.after_last_crlf {
            return Some(e);
        }
        // 6. The look-ahead holds at the end of the text, or one character before the run's end.
        if run.end == text_len || run.chars == 1 {
            // 6 at the end of the text, or 7 for a single character.
            return Some(run.end);
        }
        Some(run.last_start)
    }

    /// End of the cl100k piece that starts at `pos`. The alternatives, in order:
    ///
    /// 1. `'(?i:[sdmt]|ll|ve|re)`
    /// 2. `[^\r\n\p{L}\p{N}]?+\p{L}++`
    /// 3. `\p{N}{1,3}+`
    /// 4. ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
    /// 5. `\s++$`
    /// 6. `\s*[\r\n]`
    /// 7. `\s+(?!\S)`
    /// 8. `\s`
    fn cl100k_end(&self, pos: usize, c0: Ch) -> Option<usize> {
        let text_len = self.text.len();
        let after0 = pos + c0.len;
        // 1.
        if let Some(e) = self.contraction(pos) {
            return Some(e);
        }
        // 2. The possessive prefix is taken whenever it can be and never given back.
        let prefixable = c0.c != '\r' && c0.c != '\n' && c0.class & (L | N) == 0;
        if prefixable {
            if let Some(c1) = self.at(after0) {
                if c1.class & L != 0 {
                    return Some(self.run(after0, L));
                }
            }
        } else if c0.class & L != 0 {
            return Some(self.run(pos, L));
        }
        // 3.
        if c0.class & N != 0 {
            return Some(self.digits(pos));
        }
        // 4. ` ?` is greedy (not possessive); without the space c0 itself must be "other".
        let other_start = if c0.c == ' ' {
            match self.at(after0) {
                Some(c1) if c1.class & (WS | L | N) == 0 => Some(after0),
                _ => None,
            }
        } else if c0.class & (WS | L | N) == 0 {
            Some(pos)
        } else {
            None
        };
        if let Some(start) = other_start {
            let e = self.other_run(start);
            return Some(self.ascii_set_run(e, b"\r\n"));
        }
        // Only whitespace is left.
        let run = self.ws_run(pos);
        // 5.
        if run.end == text_len {
            return Some(run.end);
        }
        // 6. Up to and including the last CR/LF of the run.
        if let Some(e) = run.after_last_crlf {
            return Some(e);
        }
        // 7. Not at the end of the text, so the look-ahead needs one character given back.
        if run.chars >= 2 {
            return Some(run.last_start);
        }
        // 8.
        Some(after0)
    }

    /// End of the piece starting at `pos` (always after `pos` while `pos < len`).
    #[inline]
    fn piece_end(&self, pos: usize) -> usize {
        let Some(c0) = self.at(pos) else {
            return self.text.len();
        };
        let end = match self.pattern {
            Pattern::O200k => self.o200k_end(pos, c0),
            Pattern::Cl100k => self.cl100k_end(pos, c0),
        };
        match end {
            // Every character is covered by some alternative, so `end` is always `Some` and after
            // `pos`; the guard only protects the loop from ever stalling.
            Some(e) if e > pos && e <= self.text.len() => e,
            _ => pos + c0.len,
        }
    }
}

struct WsRun {
    /// End of the run.
    end: usize,
    /// Number of characters in the run.
    chars: usize,
    /// Start of the last character of the run.
    last_start: usize,
    /// End of the last CR or LF in the run.
    after_last_crlf: Option<usize>,
}

/// Iterator over piece ranges.
pub(crate) struct Pieces<'t> {
    splitter: Splitter<'t>,
    pos: usize,
}

impl Pieces<'_> {
    /// Characters decoded so far (0 in release builds).
    pub(crate) fn chars_examined(&self) -> u64 {
        self.splitter.chars_examined()
    }
}

impl Iterator for Pieces<'_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        if self.pos >= self.splitter.text.len() {
            return None;
        }
        let start = self.pos;
        let end = self.splitter.piece_end(start);
        self.pos = end;
        Some((start, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_table_matches_class_file() {
        let (index, blocks) = vocab_file::parse_classes(vocab_file::class_file()).unwrap();
        let block0 = u16::from_le_bytes([index[0], index[1]]) as usize * 256;
        for b in 0u8..0x80 {
            assert_eq!(ascii_class(b), blocks[block0 + b as usize], "byte {b:#x}");
        }
    }
}
