//! Exactness: our token ids, counts and pieces equal tiktoken-rs's `encode_ordinary` and its
//! pre-tokenizer regex, for both encodings, over a deterministic corpus.

use crate::common::*;
use ctxguard::tokens::{self, Encoding};

#[test]
fn fixed_samples() {
    for enc in ENCODINGS {
        let re = reference_regex(enc);
        for text in BASIC_SAMPLES.into_iter().chain([
            " ",
            "\n",
            "don't DON'T I'LL we've they'RE",
            "<|endoftext|> is ordinary text here",
            "trailing space ",
            "trailing spaces   ",
            "trailing newline\n",
            "trailing\n\n\n",
            "trailing\r\n",
            "  leading",
            "\n\nleading",
            "tabs\t\t\tand\t spaces \t",
            "a  b   c    d",
            "x \n y \n\n z",
            "1 12 123 1234 12345 123456",
            "١٢٣٤٥",
            "e\u{301}\u{301}",
            "\u{301}A",
            "\u{301}\u{301}AAA",
            " \u{301}",
            "AAAb",
            "ABCdef'S",
            "ǅungla",
            "ʰʰʰx",
            "👩‍💻 coding",
            "🏳️‍🌈🇫🇷",
            "//comment\n///doc\n",
            "!!!\n\n",
            " !?\r\n/",
            "'s's's",
            "x'ſ",
            "x'Ll",
            "''''",
            "a'",
            "'",
            "\u{85}\u{A0}x",
            "\r\r\n\n\r",
            "\u{3000}漢字",
        ]) {
            check_pieces(enc, &re, text);
            check(enc, &re, text);
        }
    }
}

#[test]
fn random_corpus() {
    // Thousands of generated cases per encoding (fewer in debug builds, where both tokenizers are
    // slow; the release run covers the full count).
    let cases = if cfg!(debug_assertions) { 3_000 } else { 40_000 };
    for enc in ENCODINGS {
        let re = reference_regex(enc);
        let mut rng = Rng::new(0xC0FFEE ^ enc as u64);
        for i in 0..cases {
            let text = case(&mut rng, i);
            check_pieces(enc, &re, &text);
            check(enc, &re, &text);
        }
    }
}

#[test]
fn mixed_documents() {
    for enc in ENCODINGS {
        let re = reference_regex(enc);
        let mut rng = Rng::new(7);
        for len in [100, 1_000, 10_000, 100_000] {
            let text = mixed(&mut rng, len);
            check_pieces(enc, &re, &text);
            check(enc, &re, &text);
        }
    }
}

/// Every code point in contexts that probe each class boundary and the case-insensitive
/// contractions, compared piece by piece with the regex. Release builds only (it runs the
/// reference regex over ~200 MB).
#[test]
#[cfg_attr(debug_assertions, ignore = "slow in debug builds; run with --release")]
fn every_code_point_in_context() {
    let templates: &[&str] = &[
        "a#", "#a", "A#a", " #", "##1", "x'#", "x'r#", "x'l#", "'v#", "\n#", "# ", "#\u{301}", "#'s", "# x", "A#",
        "1#", // A character folding to the first letter of a two-letter contraction.
        "x'#e", "x'#l", "'#e", "'#l",
    ];
    for enc in ENCODINGS {
        let re = reference_regex(enc);
        for text in code_point_texts(templates) {
            check_pieces(enc, &re, &text);
        }
    }
}

#[test]
fn long_pieces() {
    // Lengths at which tiktoken-rs itself finishes quickly (it is O(n log n) since 0.12).
    let scale = if cfg!(debug_assertions) { 10 } else { 1 };
    let mut rng = Rng::new(42);
    let texts = vec![
        "a".repeat(20_000 / scale),
        random_letters(&mut rng, 50_000 / scale),
        random_cjk(&mut rng, 30_000 / scale),
        random_base64(&mut rng, 100_000 / scale),
        " ".repeat(20_000 / scale),
        " ".repeat(20_000 / scale) + "x",
        "\n".repeat(20_000 / scale),
        "!".repeat(20_000 / scale),
        "7".repeat(20_000 / scale),
        "AB".repeat(10_000 / scale),
        "\u{301}".repeat(10_000 / scale),
        "😀".repeat(5_000 / scale),
        "ab".repeat(10_000 / scale) + &"AB".repeat(10_000 / scale),
    ];
    for enc in ENCODINGS {
        let re = reference_regex(enc);
        for text in &texts {
            check_pieces(enc, &re, text);
            check(enc, &re, text);
        }
    }
}

#[test]
fn count_till_limit_agrees() {
    let mut rng = Rng::new(99);
    for enc in ENCODINGS {
        let t = ours(enc);
        for i in 0..300 {
            let extra = rng.below(2_000);
            let text = case(&mut rng, i) + &mixed(&mut rng, extra);
            let n = t.count(&text);
            for limit in [0, n.saturating_sub(1), n, n + 1, n * 2] {
                let expected = if n <= limit { Some(n) } else { None };
                assert_eq!(t.count_till_limit(&text, limit), expected, "limit {limit} for {text:?}");
                assert_eq!(tokens::count_till_limit(enc, &text, limit), expected);
            }
        }
        // Early exit on a huge piece: the lower bound alone decides.
        let huge = "a".repeat(1_000_000);
        assert_eq!(t.count_till_limit(&huge, 10), None);
        assert_eq!(t.count_till_limit("", 0), Some(0));
    }
}

#[test]
fn encode_decode_round_trip() {
    let mut rng = Rng::new(5);
    for enc in ENCODINGS {
        let t = ours(enc);
        for i in 0..500 {
            let text = case(&mut rng, i);
            let ids = t.encode(&text);
            assert_eq!(t.decode(&ids), text);
            assert_eq!(tokens::decode(enc, &ids).unwrap(), text);
            assert_eq!(tokens::encode(enc, &text).unwrap(), ids);
            assert_eq!(t.decode_bytes(&ids), reference(enc).decode_bytes(&ids).unwrap());
        }
        // Unknown and special ids decode to U+FFFD instead of failing.
        let special = reference(enc).encode_with_special_tokens("<|endoftext|>");
        assert_eq!(t.decode(&special), "\u{FFFD}");
        assert_eq!(t.decode(&[u32::MAX]), "\u{FFFD}");
    }
}

#[test]
fn vocabulary_shape() {
    let o = ours(Encoding::O200kBase);
    let c = ours(Encoding::Cl100kBase);
    assert_eq!(o.encoding(), Encoding::O200kBase);
    assert_eq!(c.vocab_size(), 100_256);
    assert_eq!(o.vocab_size(), 199_998);
    assert!(o.max_token_bytes() >= 16 && c.max_token_bytes() >= 16);
    // Compact tables: a few MB per encoding (tiktoken-rs's CoreBPE holds ~33 MB).
    for t in [o, c] {
        println!("{}: {:.1} MB of tables", t.encoding().as_str(), t.memory_bytes() as f64 / 1e6);
        assert!(t.memory_bytes() < 8_000_000);
    }
    assert_eq!(tokens::try_count(Encoding::Cl100kBase, "hello world").unwrap(), 2);
    assert_eq!(tokens::count(Encoding::O200kBase, ""), 0);
}
