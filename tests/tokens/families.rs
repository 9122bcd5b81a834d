//! The open-weight families' pre-tokenizers against their regexes run by fancy-regex (every code
//! point in context, as `exact.rs` does for o200k and cl100k); the regexes are the ones the
//! vocabulary reader recognizes in tokenizer files (`hf.rs`).

use ctxguard::tokens::{self, hf, Pattern};
use fancy_regex::Regex;

use crate::common::*;

/// The pre-tokenizers of the families loaded at run time.
const FAMILIES: [Pattern; 4] = [Pattern::Llama3, Pattern::Qwen2, Pattern::DeepseekV3, Pattern::Tekken];

/// Hugging Face's `Split` with `Isolated`: every match of `re` in `text`, and the text between
/// matches, as pieces (offsets from `base`).
fn hf_split(re: &Regex, text: &str, base: usize, out: &mut Vec<(usize, usize)>) {
    let mut at = 0;
    for m in re.find_iter(text) {
        let m = m.unwrap();
        if m.start() > at {
            out.push((base + at, base + m.start()));
        }
        if m.end() > m.start() {
            out.push((base + m.start(), base + m.end()));
        }
        at = m.end();
    }
    if at < text.len() {
        out.push((base + at, base + text.len()));
    }
}

/// The reference split of `pattern`: its regexes applied in sequence, each to every piece of the
/// one before.
struct Reference(Vec<Regex>);

impl Reference {
    fn new(pattern: Pattern) -> Self {
        Reference(pattern.regexes().iter().map(|p| Regex::new(p).unwrap()).collect())
    }

    fn pieces(&self, text: &str) -> Vec<(usize, usize)> {
        let mut pieces = vec![(0, text.len())];
        for re in &self.0 {
            let mut next = Vec::new();
            for (a, b) in pieces {
                hf_split(re, &text[a..b], a, &mut next);
            }
            pieces = next;
        }
        pieces.retain(|(a, b)| b > a);
        pieces
    }
}

fn check_split(pattern: Pattern, reference: &Reference, text: &str) {
    let got = tokens::split(pattern, text).unwrap();
    let want = reference.pieces(text);
    if got != want {
        let g: Vec<&str> = got.iter().map(|&(a, b)| &text[a..b]).collect();
        let w: Vec<&str> = want.iter().map(|&(a, b)| &text[a..b]).collect();
        panic!("{pattern:?}: pieces differ for {text:?}\n ours {g:?}\n  ref {w:?}");
    }
}

#[test]
fn family_patterns_equal_their_regexes_on_samples() {
    for pattern in FAMILIES {
        let reference = Reference::new(pattern);
        for text in BASIC_SAMPLES.into_iter().chain([
            "don't DON'T I'LL we've they'RE x'ſ",
            "1 12 123 1234 12345 123456 ١٢٣٤٥",
            " 3.14 and 2024-07-26; price: $1,234.56.",
            "foo.bar(baz) _x .café",
            "a\n ",
            "a\n\n  ",
            "trailing spaces   ",
            "x \n y \n\n z\r\n",
            "\u{3000}漢字かなカナ・ー々",
            "你好，世界！今天是2024年7月26日。",
            "こんにちは、世界。カタカナとひらがな。",
            "👨\u{200D}👩\u{200D}👧 family 🎉🎉",
            "x\u{200D}y \u{301}A e\u{301}\u{301}",
            "Cafe\u{301} re\u{301}sume\u{301}",
            "a    b\n\n\n   c\t\td  ",
            "<|im_start|>user\nhi<|im_end|><|eot_id|><｜User｜>",
        ]) {
            check_split(pattern, &reference, text);
        }
    }
}

#[test]
fn family_patterns_equal_their_regexes_on_random_text() {
    let cases = if cfg!(debug_assertions) { 2_000 } else { 30_000 };
    for pattern in FAMILIES {
        let reference = Reference::new(pattern);
        let mut rng = Rng::new(0xFA_0000 ^ pattern as u64);
        for i in 0..cases {
            check_split(pattern, &reference, &case(&mut rng, i));
        }
        for len in [100, 1_000, 10_000, 100_000] {
            check_split(pattern, &reference, &mixed(&mut rng, len));
        }
    }
}

/// Every code point in contexts that probe each class boundary (those of `exact.rs`
/// and DeepSeek's: punctuation before ASCII letters, digits, CJK and kana next to other letters).
#[test]
#[cfg_attr(debug_assertions, ignore = "slow in debug builds; run with --release")]
fn family_patterns_on_every_code_point_in_context() {
    let templates: &[&str] = &[
        "a#", "#a", "A#a", " #", "##1", "x'#", "x'r#", "x'l#", "'v#", "\n#", "# ", "#\u{301}", "#'s", "# x", "A#",
        "1#", "x'#e", "x'#l", "'#e", "'#l", ".#", "#b", "中#", "#か", "1#2", "#\n", " #!",
    ];
    for pattern in FAMILIES {
        let reference = Reference::new(pattern);
        for text in code_point_texts(templates) {
            check_split(pattern, &reference, &text);
        }
    }
}

#[test]
fn llama3_differs_from_cl100k_only_at_the_end_of_the_text() {
    // Llama 3's `\s*[\r\n]+` where cl100k has `\s++$|\s*[\r\n]`: trailing spaces after a line
    // break at the very end are a piece of their own.
    let text = "a\n ";
    let cl = tokens::split(Pattern::Cl100k, text).unwrap();
    let llama = tokens::split(Pattern::Llama3, text).unwrap();
    assert_eq!(cl, vec![(0, 1), (1, 3)]);
    assert_eq!(llama, vec![(0, 1), (1, 2), (2, 3)]);
    // Anywhere else they agree.
    let mut rng = Rng::new(3);
    for i in 0..5_000 {
        let text = case(&mut rng, i) + "x";
        assert_eq!(
            tokens::split(Pattern::Cl100k, &text).unwrap(),
            tokens::split(Pattern::Llama3, &text).unwrap(),
            "{text:?}"
        );
    }
}

#[test]
fn family_patterns_are_the_regexes_tokenizer_files_name() {
    assert_eq!(Pattern::Llama3.regexes(), [hf::LLAMA3_REGEX]);
    assert_eq!(Pattern::Qwen2.regexes(), [hf::QWEN2_REGEX]);
    // DeepSeek's file has literal CR and LF in its classes where the engine's constant escapes them.
    let file_form: Vec<String> =
        hf::DEEPSEEK_V3_REGEXES.iter().map(|r| r.replace('\r', "\\r").replace('\n', "\\n")).collect();
    assert_eq!(Pattern::DeepseekV3.regexes(), file_form);
    assert_eq!(Pattern::Tekken.regexes(), [hf::TEKKEN_REGEX]);
}
