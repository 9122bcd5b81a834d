//! The NFC tables ctxguard's qwen3 vocabulary file carries (`src/tokens/nfc.rs`), computed from
//! the `unicode-normalization` crate (a dev-dependency; its Unicode version is
//! `unicode_normalization::UNICODE_VERSION`). Shared by `examples/vocab` (which writes them) and
//! `tests/vocab_nfc.rs` (which checks the normalizer built from them against the crate).

use std::collections::HashMap;

use ctxguard::tokens::nfc::Tables;
use unicode_normalization::char::{canonical_combining_class, compose, decompose_canonical};
use unicode_normalization::UnicodeNormalization;

const HANGUL: std::ops::Range<u32> = 0xAC00..0xAC00 + 11172;

pub fn tables() -> Tables {
    let mut t = Tables::default();
    let mut by_decomposition: HashMap<Vec<char>, Vec<char>> = HashMap::new();
    let mut decomposed: Vec<(char, Vec<char>)> = Vec::new();
    for cp in 0..=0x10FFFFu32 {
        let Some(c) = char::from_u32(cp) else { continue };
        let ccc = canonical_combining_class(c);
        if ccc != 0 {
            t.ccc.push((cp, ccc));
        }
        if HANGUL.contains(&cp) {
            continue;
        }
        let mut d = Vec::new();
        decompose_canonical(c, |x| d.push(x));
        if d != [c] {
            t.decompositions.push((cp, d.iter().map(|&x| x as u32).collect()));
            by_decomposition.entry(d.clone()).or_default().push(c);
            decomposed.push((c, d));
        }
        if c.to_string().nfc().collect::<String>() != c.to_string() {
            t.not_nfc.push(cp);
        }
    }
    // Primary composites: c = compose(first, second) where second is the last character of c's
    // full decomposition and first is a character whose full decomposition is the rest.
    for (c, d) in &decomposed {
        let Some((&second, rest)) = d.split_last() else { continue };
        let mut firsts: Vec<char> = by_decomposition.get(rest).cloned().unwrap_or_default();
        if let [single] = rest {
            firsts.push(*single);
        }
        for first in firsts {
            if compose(first, second) == Some(*c) {
                t.compositions.push((first as u32, second as u32, *c as u32));
            }
        }
    }
    t.compositions.sort_unstable();
    t.compositions.dedup();
    t
}
