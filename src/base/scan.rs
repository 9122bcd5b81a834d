//! Substring search for the short markers ctxguard looks for in every message (`<attachment`,
//! `[ctxguard:…]`). `str::find` uses the Two-Way algorithm, which in WebAssembly (no SIMD) ran at
//! ~1.5 GB/s and was a tenth of `measure`'s time on a 5 MB conversation; looking for the needle's
//! rarest byte eight bytes at a time (SWAR) and checking the needle where it occurs is several
//! times faster on text, where `[` and `<` are rare.

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Position of the first `byte` in `hay[from..]`, as an index into `hay`.
fn memchr(byte: u8, hay: &[u8], from: usize) -> Option<usize> {
    let rest = hay.get(from..)?;
    let pattern = LO.wrapping_mul(u64::from(byte));
    let mut chunks = rest.chunks_exact(8);
    let mut at = from;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ pattern;
        let found = x.wrapping_sub(LO) & !x & HI;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks.remainder().iter().position(|&b| b == byte).map(|i| at + i)
}

/// Byte offset of the first `needle` in `hay` (like `str::find` for a non-empty ASCII-led needle).
pub fn find(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let first = *n.first()?;
    let mut from = 0;
    while let Some(i) = memchr(first, h, from) {
        if h.get(i..i + n.len()) == Some(n) {
            return Some(i);
        }
        from = i + 1;
    }
    None
}

/// Does `hay` contain any of `needles` (all starting with the same byte)?
pub fn contains_any(hay: &str, needles: &[&str]) -> bool {
    let h = hay.as_bytes();
    let Some(first) = needles.first().and_then(|n| n.as_bytes().first().copied()) else { return false };
    let mut from = 0;
    while let Some(i) = memchr(first, h, from) {
        if needles.iter().any(|n| h.get(i..i + n.len()) == Some(n.as_bytes())) {
            return true;
        }
        from = i + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_str_find() {
        let texts = [
            "",
            "<",
            "<attachment",
            "x<attachment>",
            "<<attachment",
            "é<attachmen<attachment",
            "abcdefgh<attachment",
            "abcdefg<attachment",
            "a[ctxguard:x] [ctxguard:compacted-tool-output]",
            "日本語<attachment name=\"a\">",
            "\u{80}\u{80}<a",
        ];
        for t in texts {
            for n in ["<attachment", "[ctxguard:compacted-tool-output]", "<", "é"] {
                assert_eq!(find(t, n), t.find(n), "{t:?} {n:?}");
            }
            assert_eq!(
                contains_any(t, &["[ctxguard:compacted-tool-output]", "[ctxguard:attachment-preview]"]),
                t.contains("[ctxguard:compacted-tool-output]")
            );
        }
        let long = format!("{}<attachment{}", "x".repeat(1001), "y".repeat(13));
        assert_eq!(find(&long, "<attachment"), Some(1001));
        assert_eq!(find(&long[1..], "<attachment"), Some(1000));
    }
}
