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

/// Llama 3's pre-tokenizer regex (its `tokenizer.json`, docs/vocabularies.md): cl100k's alternatives
/// without possessive quantifiers, and `\s*[\r\n]+` where cl100k has `\s++$|\s*[\r\n]`. The two
/// split alike except at the end of the text: after a run of whitespace with a line break in it,
/// cl100k keeps the trailing spaces with the break, Llama 3 makes them a piece of their own
/// (`"a\n "`: `"\n "` against `"\n"`, `" "`).
pub const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Qwen 2 / 2.5 / 3's: Llama 3's with one digit per piece (`\p{N}`).
pub const QWEN2_PATTERN: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Mistral's Tekken (`tekken_*.json`'s `pattern`): o200k's without the contractions and with one
/// digit per piece.
pub const TEKKEN_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
    "|",
    r"\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
);

/// DeepSeek V3 / R1's: three splits applied in sequence, each to every piece of the one before;
/// a split keeps both its matches and the text between them as pieces (Hugging Face's `Split`
/// with `Isolated`): digits in threes, runs of CJK ideographs and kana (U+4E00–U+9FA5,
/// U+3040–U+309F, U+30A0–U+30FF), then a punctuation-led pattern.
pub const DEEPSEEK_V3_PATTERNS: [&str; 3] = [
    r"\p{N}{1,3}",
    "[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+",
    r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"##,
];

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
/// `\p{P}`
const P: u8 = 32;
/// `\p{S}`
const S: u8 = 64;
/// `\p{M}`
const M: u8 = 128;

/// Class bits of an ASCII character (equal to block 0 of the class file; asserted in the tests).
const fn ascii_class_of(b: u8) -> u8 {
    match b {
        b'A'..=b'Z' => L | UP,
        b'a'..=b'z' => L | LO,
        b'0'..=b'9' => N,
        b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ' => WS,
        b'$' | b'+' | b'<' | b'=' | b'>' | b'^' | b'`' | b'|' | b'~' => S,
        0x21..=0x7E => P,
        _ => 0,
    }
}

#[allow(clippy::indexing_slicing)] // a constant: b < 128 < 256
const fn ascii_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = ascii_class_of(b as u8);
        b += 1;
    }
    t
}

/// Class bits of each ASCII byte (0 for the bytes of multi-byte characters).
static ASCII: [u8; 256] = ascii_table();

#[inline]
fn ascii_class(b: u8) -> u8 {
    ASCII.get(b as usize).copied().unwrap_or(0)
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `x` outside `lo..=hi` (both below 0x80; bytes of 0x80 and above
/// are outside) — exact for the lowest such byte, which is all the runs below read (a borrow or
/// carry can only flag bytes above a true one).
#[inline(always)]
fn outside(x: u64, lo: u8, hi: u8) -> u64 {
    let less = x.wrapping_sub(ONES * lo as u64) & !x & HIGHS;
    let more = (x.wrapping_add(ONES * (127 - hi) as u64) | x) & HIGHS;
    less | more
}

/// End of the run of bytes in `lo..=hi` from `i`, eight bytes at a time (`fold` is ORed into each
/// byte first: 0x20 folds ASCII capitals onto lowercase).
#[inline(always)]
fn byte_run(bytes: &[u8], mut i: usize, lo: u8, hi: u8, fold: u8) -> usize {
    while let Some(w) = bytes.get(i..i + 8) {
        let x = u64::from_le_bytes(w.try_into().unwrap_or_default()) | (ONES * fold as u64);
        let m = outside(x, lo, hi);
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        let b = b | fold;
        if b < lo || b > hi {
            break;
        }
        i += 1;
    }
    i
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

/// A pre-tokenizer: which split regex the text is cut with before merging (each reproduced by
/// hand, linear in the text; `tests/tokens_exact.rs` and `tests/tokens_families.rs` check them
/// against the regexes on every code point in context).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// [`O200K_PATTERN`]: o200k_base (and gpt-oss, whose tokenizer is o200k_base).
    O200k,
    /// [`CL100K_PATTERN`]: cl100k_base.
    Cl100k,
    /// [`LLAMA3_PATTERN`]: Llama 3, 3.1, 3.2, 3.3.
    Llama3,
    /// [`QWEN2_PATTERN`]: Qwen 2, 2.5, 3.
    Qwen2,
    /// [`DEEPSEEK_V3_PATTERNS`]: DeepSeek V3, R1.
    DeepseekV3,
    /// [`TEKKEN_PATTERN`]: Mistral's Tekken.
    Tekken,
}

impl Pattern {
    /// The regexes this pre-tokenizer reproduces (three for DeepSeek V3, applied in sequence).
    pub fn regexes(self) -> &'static [&'static str] {
        match self {
            Pattern::O200k => &[O200K_PATTERN],
            Pattern::Cl100k => &[CL100K_PATTERN],
            Pattern::Llama3 => &[LLAMA3_PATTERN],
            Pattern::Qwen2 => &[QWEN2_PATTERN],
            Pattern::DeepseekV3 => &DEEPSEEK_V3_PATTERNS,
            Pattern::Tekken => &[TEKKEN_PATTERN],
        }
    }

    /// Digits per piece at most (`\p{N}{1,3}` or `\p{N}`).
    fn digits(self) -> usize {
        match self {
            Pattern::Qwen2 | Pattern::Tekken => 1,
            _ => 3,
        }
    }
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
    /// Characters (and ASCII bytes) looked at so far (debug builds only), for linearity tests.
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

    #[inline]
    fn seen(&self, _n: u64) {
        #[cfg(debug_assertions)]
        self.examined.set(self.examined.get() + _n);
    }

    /// Iterates over `(start, end)` byte ranges of the pieces, in order, covering the whole text.
    pub(crate) fn pieces(self) -> Pieces<'t> {
        Pieces { splitter: self, pos: 0, segment_end: 0 }
    }

    #[inline]
    fn byte(&self, i: usize) -> Option<u8> {
        self.text.as_bytes().get(i).copied()
    }

    #[inline]
    fn at(&self, i: usize) -> Option<Ch> {
        self.seen(1);
        let b = self.byte(i)?;
        if b < 0x80 {
            return Some(Ch { c: b as char, class: ascii_class(b), len: 1 });
        }
        let c = self.text.get(i..)?.chars().next()?;
        Some(Ch { c, class: self.classes.of(c), len: c.len_utf8() })
    }

    /// The character at `i` if it starts before `end`.
    #[inline]
    fn at_before(&self, i: usize, end: usize) -> Option<Ch> {
        if i < end {
            self.at(i)
        } else {
            None
        }
    }

    /// End of the run of characters whose class intersects `mask`, starting at `i` (up to `end`).
    #[inline]
    fn run(&self, mut i: usize, mask: u8, end: usize) -> usize {
        while i < end {
            match self.byte(i) {
                Some(b) if b < 0x80 => {
                    self.seen(1);
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
        i
    }

    /// End of the run of characters none of whose class bits are in `mask`, from `i`.
    #[inline]
    fn run_not(&self, mut i: usize, mask: u8, end: usize) -> usize {
        while let Some(ch) = self.at_before(i, end) {
            if ch.class & mask != 0 {
                break;
            }
            i += ch.len;
        }
        i
    }

    /// Skips up to `max` `\p{N}` characters.
    fn digits(&self, mut i: usize, max: usize, end: usize) -> usize {
        for _ in 0..max {
            match self.at_before(i, end) {
                Some(ch) if ch.class & N != 0 => i += ch.len,
                _ => break,
            }
        }
        i
    }

    /// Skips characters of the given ASCII set.
    fn ascii_set_run(&self, mut i: usize, set: &[u8], end: usize) -> usize {
        while i < end {
            let Some(b) = self.byte(i) else { break };
            self.seen(1);
            if !set.contains(&b) {
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
        if self.byte(i) != Some(b'\'') {
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

    /// The contraction after an apostrophe at `i` when the pattern has them, else `end`.
    #[inline]
    fn maybe_contraction(&self, end: usize) -> usize {
        if self.pattern == Pattern::Tekken {
            return end;
        }
        self.contraction(end).unwrap_or(end)
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
        let len = self.text.len();
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
            Some(ch) if ch.class & LO != 0 => self.run(i, LO, len),
            _ => after_last_lo?,
        };
        Some(self.maybe_contraction(end))
    }

    /// o200k alternative 2 from `p` (after the optional prefix):
    /// `[UP]+[LO]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` — all greedy, nothing after it can fail, so
    /// the first path is the answer as soon as `[UP]+` matches at least one character.
    fn o200k_alt2(&self, p: usize) -> Option<usize> {
        let len = self.text.len();
        let q = self.run(p, UP, len);
        if q == p {
            return None;
        }
        let end = self.run(q, LO, len);
        Some(self.maybe_contraction(end))
    }

    /// Facts about the `\s` run starting at `pos` (which must be whitespace), up to `end`.
    fn ws_run(&self, pos: usize, end: usize) -> WsRun {
        let mut i = pos;
        let mut chars = 0usize;
        let mut last_start = pos;
        let mut after_last_crlf = None;
        while let Some(ch) = self.at_before(i, end) {
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

    /// Where a whitespace run starting at `pos` ends its piece, for the patterns whose whitespace
    /// alternatives are `\s*[\r\n]+|\s+(?!\S)|\s+` (o200k, Tekken, Llama 3, Qwen 2, and DeepSeek's
    /// third split), `end` being the end of the text (or of the piece being split):
    /// - `\s*[\r\n]+`: `\s*` takes the run and gives back until `[\r\n]+` matches: that is at the
    ///   last CR/LF of the run, and `[\r\n]+` cannot extend past it;
    /// - `\s+(?!\S)`: the look-ahead holds at the end, or one character before the run's end;
    /// - `\s+`: a single character.
    fn ws_end(run: &WsRun, end: usize) -> usize {
        if let Some(e) = run.after_last_crlf {
            return e;
        }
        if run.end == end || run.chars == 1 {
            return run.end;
        }
        run.last_start
    }

    /// End of the o200k-like piece that starts at `pos` (o200k, Tekken). The alternatives, in
    /// order (Tekken: without the contractions, `\p{N}` for 3.):
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
            return Some(self.digits(pos, self.pattern.digits(), text_len));
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
            let e = self.run_not(start, WS | L | N, text_len);
            return Some(self.ascii_set_run(e, b"\r\n/", text_len));
        }
        // Only whitespace is left.
        Some(Self::ws_end(&self.ws_run(pos, text_len), text_len))
    }

    /// End of the cl100k-like piece that starts at `pos` (cl100k, Llama 3, Qwen 2). The
    /// alternatives, in order (Qwen 2: `\p{N}` for 3.; Llama 3 and Qwen 2: 5. and 6. are
    /// `\s*[\r\n]+`, see [`LLAMA3_PATTERN`]):
    ///
    /// 1. `'(?i:[sdmt]|ll|ve|re)`
    /// 2. `[^\r\n\p{L}\p{N}]?+\p{L}++`
    /// 3. `\p{N}{1,3}+`
    /// 4. ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
    /// 5. `\s++$`
    /// 6. `\s*[\r\n]`
    /// 7. `\s+(?!\S)`
    /// 8. `\s`
    ///
    /// Possessive or not, 2.–4. match alike: nothing after a possessive part can fail in them,
    /// and a prefix without a letter after it fails both ways.
    fn cl100k_end(&self, pos: usize, c0: Ch) -> Option<usize> {
        let text_len = self.text.len();
        let after0 = pos + c0.len;
        // 1.
        if let Some(e) = self.contraction(pos) {
            return Some(e);
        }
        // 2. The prefix is taken whenever it can be and never given back.
        let prefixable = c0.c != '\r' && c0.c != '\n' && c0.class & (L | N) == 0;
        if prefixable {
            if let Some(c1) = self.at(after0) {
                if c1.class & L != 0 {
                    return Some(self.run(after0, L, text_len));
                }
            }
        } else if c0.class & L != 0 {
            return Some(self.run(pos, L, text_len));
        }
        // 3.
        if c0.class & N != 0 {
            return Some(self.digits(pos, self.pattern.digits(), text_len));
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
            let e = self.run_not(start, WS | L | N, text_len);
            return Some(self.ascii_set_run(e, b"\r\n", text_len));
        }
        // Only whitespace is left.
        let run = self.ws_run(pos, text_len);
        if self.pattern != Pattern::Cl100k {
            return Some(Self::ws_end(&run, text_len));
        }
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

    // ------------------------------------------------------------------ ASCII fast paths

    /// The o200k-like piece at `pos` (an ASCII byte `b0`) when its end is decided by ASCII bytes
    /// alone; `None` when a byte of a multi-byte character could change it (the general path then
    /// decides). The same alternatives as [`o200k_end`](Self::o200k_end), read off the bytes.
    #[inline(always)]
    fn o200k_ascii(&self, pos: usize, b0: u8) -> Option<usize> {
        let c0 = ascii_class(b0);
        if c0 & L != 0 {
            return self.o200k_letters_ascii(pos);
        }
        if c0 & N != 0 {
            return self.digits_ascii(pos);
        }
        let b1 = self.byte(pos + 1);
        if b1.is_some_and(|b| b >= 0x80) {
            return None;
        }
        let c1 = b1.map_or(0, ascii_class);
        // 1./2. with the prefix: any ASCII character but CR, LF, letters and digits.
        if c1 & L != 0 && b0 != b'\r' && b0 != b'\n' {
            self.seen(1);
            return self.o200k_letters_ascii(pos + 1);
        }
        // 4.
        self.punct_ascii(pos, b0, b1, b"\r\n/")
    }

    /// The cl100k-like piece at `pos` (an ASCII byte `b0`), as [`o200k_ascii`](Self::o200k_ascii).
    #[inline(always)]
    fn cl100k_ascii(&self, pos: usize, b0: u8) -> Option<usize> {
        let c0 = ascii_class(b0);
        let b1 = self.byte(pos + 1);
        if b0 == b'\'' {
            // 1. A contraction's letters are ASCII but for U+017F (folds to `s`).
            if b1.is_some_and(|b| b >= 0x80) {
                return None;
            }
            if let Some(e) = self.contraction(pos) {
                self.seen(1);
                return Some(e);
            }
        }
        if c0 & L != 0 {
            return self.letters_ascii(pos);
        }
        if c0 & N != 0 {
            return self.digits_ascii(pos);
        }
        if b1.is_some_and(|b| b >= 0x80) {
            return None;
        }
        let c1 = b1.map_or(0, ascii_class);
        if c1 & L != 0 && b0 != b'\r' && b0 != b'\n' {
            self.seen(1);
            return self.letters_ascii(pos + 1);
        }
        self.punct_ascii(pos, b0, b1, b"\r\n")
    }

    /// The punctuation alternative (` ?[^\s\p{L}\p{N}]+` then `tail` bytes) or whitespace at
    /// `pos` (an ASCII byte `b0`, followed by `b1`), shared by both ASCII paths.
    #[inline(always)]
    fn punct_ascii(&self, pos: usize, b0: u8, b1: Option<u8>, tail: &[u8]) -> Option<usize> {
        let (c0, c1) = (ascii_class(b0), b1.map_or(0, ascii_class));
        let other = WS | L | N;
        let start = if b0 == b' ' && b1.is_some() && c1 & other == 0 {
            pos + 1
        } else if c0 & WS == 0 {
            pos
        } else {
            return self.ws_ascii(pos);
        };
        let e = self.ascii_run(start, |c| c & other == 0)?;
        self.ascii_tail(e, tail)
    }

    /// End of the run of ASCII bytes from `i` whose class satisfies `keep`; `None` when the run
    /// stops at a byte of a multi-byte character.
    #[inline]
    fn ascii_run(&self, mut i: usize, keep: impl Fn(u8) -> bool) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let start = i;
        while let Some(&b) = bytes.get(i) {
            if b >= 0x80 {
                self.seen((i - start) as u64);
                return None;
            }
            if !keep(ascii_class(b)) {
                break;
            }
            i += 1;
        }
        self.seen((i - start + 1) as u64);
        Some(i)
    }

    /// `[\r\n]*` or `[\r\n/]*` from `i` (ASCII sets: any other byte ends it).
    #[inline]
    fn ascii_tail(&self, i: usize, set: &[u8]) -> Option<usize> {
        Some(self.ascii_set_run(i, set, self.text.len()))
    }

    /// `\p{L}+` from `p` (an ASCII letter) over ASCII letters; `None` if the run meets a
    /// multi-byte character (which may be a letter).
    #[inline(always)]
    fn letters_ascii(&self, p: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let end = byte_run(bytes, p, b'a', b'z', 0x20);
        self.seen((end - p + 1) as u64);
        if bytes.get(end).is_some_and(|&b| b >= 0x80) {
            return None;
        }
        Some(end)
    }

    /// Letters of o200k's alternatives 1 and 2 from `p` (an ASCII letter), and the contraction.
    #[inline(always)]
    fn o200k_letters_ascii(&self, p: usize) -> Option<usize> {
        // `[UP]*` over ASCII capitals, then `[LO]+` over lowercase letters if one follows (alt 1),
        // else the capitals alone (alt 2: ASCII capitals are not in LO).
        let bytes = self.text.as_bytes();
        let q = byte_run(bytes, p, b'A', b'Z', 0);
        let end = match bytes.get(q) {
            Some(&b) if b >= 0x80 => return None,
            Some(b'a'..=b'z') => byte_run(bytes, q, b'a', b'z', 0),
            _ => q,
        };
        self.seen((end - p + 1) as u64);
        if bytes.get(end).is_some_and(|&b| b >= 0x80) {
            return None;
        }
        if self.pattern == Pattern::Tekken || self.byte(end) != Some(b'\'') {
            return Some(end);
        }
        if self.byte(end + 1).is_some_and(|b| b >= 0x80) {
            return None;
        }
        Some(self.contraction(end).unwrap_or(end))
    }

    /// `\p{N}{1,3}` or `\p{N}` from `p` (an ASCII digit) over ASCII digits.
    #[inline]
    fn digits_ascii(&self, p: usize) -> Option<usize> {
        let max = self.pattern.digits();
        let mut i = p;
        while i < p + max {
            match self.byte(i) {
                Some(b) if b >= 0x80 => return None,
                Some(b) if ascii_class(b) & N != 0 => i += 1,
                _ => break,
            }
        }
        self.seen((i - p) as u64);
        Some(i)
    }

    /// A whitespace piece from `pos` over ASCII whitespace (`None` if the run meets a multi-byte
    /// character, which may be whitespace too).
    #[inline]
    fn ws_ascii(&self, pos: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let mut i = pos;
        let mut after_last_crlf = None;
        while let Some(&b) = bytes.get(i) {
            if b >= 0x80 {
                return None;
            }
            if ascii_class(b) & WS == 0 {
                break;
            }
            i += 1;
            if b == b'\r' || b == b'\n' {
                after_last_crlf = Some(i);
            }
        }
        self.seen((i - pos + 1) as u64);
        let len = self.text.len();
        let run = WsRun { end: i, chars: i - pos, last_start: i.saturating_sub(1), after_last_crlf };
        if self.pattern == Pattern::Cl100k {
            // `\s++$|\s*[\r\n]|\s+(?!\S)|\s`
            return Some(if run.end == len {
                run.end
            } else if let Some(e) = run.after_last_crlf {
                e
            } else if run.chars >= 2 {
                run.last_start
            } else {
                pos + 1
            });
        }
        Some(Self::ws_end(&run, len))
    }

    /// End of the piece starting at `pos` (always after `pos` while `pos < len`), for every
    /// pattern but DeepSeek V3's: the ASCII fast paths inline, the general path out of line.
    #[inline(always)]
    fn piece_end(&self, pos: usize) -> usize {
        let Some(b0) = self.byte(pos) else {
            return self.text.len();
        };
        if b0 < 0x80 {
            let fast = match self.pattern {
                Pattern::O200k | Pattern::Tekken => self.o200k_ascii(pos, b0),
                Pattern::Cl100k | Pattern::Llama3 | Pattern::Qwen2 => self.cl100k_ascii(pos, b0),
                Pattern::DeepseekV3 => None,
            };
            if let Some(e) = fast {
                return e;
            }
        }
        self.piece_end_general(pos)
    }

    /// [`piece_end`](Self::piece_end) by characters, for any text.
    #[inline(never)]
    fn piece_end_general(&self, pos: usize) -> usize {
        let Some(c0) = self.at(pos) else {
            return self.text.len();
        };
        let end = match self.pattern {
            Pattern::O200k | Pattern::Tekken => self.o200k_end(pos, c0),
            Pattern::Cl100k | Pattern::Llama3 | Pattern::Qwen2 => self.cl100k_end(pos, c0),
            Pattern::DeepseekV3 => Some(self.deepseek_end(pos, self.text.len())),
        };
        match end {
            // Every character is covered by some alternative, so `end` is always `Some` and after
            // `pos`; the guard only protects the loop from ever stalling.
            Some(e) if e > pos && e <= self.text.len() => e,
            _ => pos + c0.len,
        }
    }

    // ------------------------------------------------------------------ DeepSeek V3

    /// Is `c` in DeepSeek's second split, `[一-龥぀-ゟ゠-ヿ]`?
    #[inline]
    fn deepseek_cjk(c: char) -> bool {
        matches!(c, '\u{4E00}'..='\u{9FA5}' | '\u{3040}'..='\u{30FF}')
    }

    /// End of the piece of DeepSeek's first two splits that starts at `pos`: up to three `\p{N}`
    /// (split 1's match), or a run of split 2's characters, or a run of neither (split 2's text
    /// between matches). The third split then cuts that piece on its own.
    fn deepseek_segment(&self, pos: usize) -> usize {
        let len = self.text.len();
        let Some(c0) = self.at(pos) else { return len };
        if c0.class & N != 0 {
            return self.digits(pos, 3, len);
        }
        let cjk = Self::deepseek_cjk(c0.c);
        let mut i = pos + c0.len;
        while let Some(ch) = self.at_before(i, len) {
            if ch.class & N != 0 || Self::deepseek_cjk(ch.c) != cjk {
                break;
            }
            i += ch.len;
        }
        i
    }

    /// Does DeepSeek's third pattern match at `p` (before `end`)? Its end if so.
    ///
    /// 1. `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+` — ASCII only
    /// 2. `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`
    /// 3. ` ?[\p{P}\p{S}]+[\r\n]*`
    /// 4. `\s*[\r\n]+`
    /// 5. `\s+(?!\S)`
    /// 6. `\s+`
    fn deepseek_match(&self, p: usize, end: usize) -> Option<usize> {
        let c0 = self.at_before(p, end)?;
        let after0 = p + c0.len;
        let c1 = self.at_before(after0, end);
        // 1.
        if c0.c.is_ascii_punctuation() && c1.is_some_and(|c| c.c.is_ascii_alphabetic()) {
            let mut i = after0;
            while let Some(b) = self.byte(i).filter(|b| i < end && b.is_ascii_alphabetic()) {
                let _ = b;
                self.seen(1);
                i += 1;
            }
            return Some(i);
        }
        // 2. The greedy prefix first; without it c0 must itself be a letter or mark.
        let prefixable = c0.c != '\r' && c0.c != '\n' && c0.class & (L | P | S) == 0;
        if prefixable && c1.is_some_and(|c| c.class & (L | M) != 0) {
            return Some(self.run(after0, L | M, end));
        }
        if c0.class & (L | M) != 0 {
            return Some(self.run(p, L | M, end));
        }
        // 3.
        let ps_start = if c0.c == ' ' && c1.is_some_and(|c| c.class & (P | S) != 0) {
            Some(after0)
        } else if c0.class & (P | S) != 0 {
            Some(p)
        } else {
            None
        };
        if let Some(start) = ps_start {
            let e = self.run(start, P | S, end);
            return Some(self.ascii_set_run(e, b"\r\n", end));
        }
        // 4.–6.
        if c0.class & WS != 0 {
            return Some(Self::ws_end(&self.ws_run(p, end), end));
        }
        None
    }

    /// End of the next piece of DeepSeek's third split within a piece of the first two that
    /// ends at `end`: a match, or the text up to the next position where one starts (kept as a
    /// piece of its own, as `Split` keeps the text between matches).
    fn deepseek_end(&self, pos: usize, end: usize) -> usize {
        if let Some(e) = self.deepseek_match(pos, end) {
            return e;
        }
        let mut i = pos;
        while let Some(ch) = self.at_before(i, end) {
            if i > pos && self.deepseek_match(i, end).is_some() {
                break;
            }
            i += ch.len;
        }
        i
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
    /// DeepSeek V3: end of the piece of the first two splits `pos` is in.
    segment_end: usize,
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
        let start = self.pos;
        if start >= self.splitter.text.len() {
            return None;
        }
        let end = self.splitter.next_end(start, &mut self.segment_end);
        self.pos = end;
        Some((start, end))
    }
}

impl Splitter<'_> {
    /// End of the piece at `pos` (before the end of the text), always after `pos`.
    /// `segment_end` is the pieces' state for DeepSeek V3 (the end of the piece of its first two
    /// splits that `pos` is in; start at 0).
    #[inline(always)]
    pub(crate) fn next_end(&self, pos: usize, segment_end: &mut usize) -> usize {
        let len = self.text.len();
        let end = if self.pattern == Pattern::DeepseekV3 {
            if pos >= *segment_end {
                *segment_end = self.deepseek_segment(pos).clamp(pos + 1, len);
            }
            self.deepseek_end(pos, *segment_end)
        } else {
            self.piece_end(pos)
        };
        if end > pos && end <= len {
            return end;
        }
        // Every character is covered by some alternative: this only guards the loop.
        self.text.get(pos..).and_then(|t| t.chars().next()).map_or(len, |c| pos + c.len_utf8())
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
