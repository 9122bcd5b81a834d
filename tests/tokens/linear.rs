//! Linear behaviour on adversarial input, asserted structurally (work counters), never by time:
//! the same megabyte inputs are timed by `cargo bench --bench tokens -- adversarial`.

use crate::common::*;
use ctxguard::tokens::Encoding;

/// Adversarial inputs of about `n` bytes: single huge pieces, long runs of each class, inputs
/// that make a backtracking regex re-scan, and base64.
fn adversarial(n: usize) -> Vec<(&'static str, String)> {
    let mut rng = Rng::new(n as u64);
    let rep = |s: &str| s.repeat(n / s.len().max(1));
    vec![
        ("a", rep("a")),
        ("A", rep("A")),
        ("random letters", random_letters(&mut rng, n)),
        (
            "mixed case",
            (0..n)
                .map(
                    |i| {
                        if rng.below(2) == 0 {
                            (b'a' + (i % 26) as u8) as char
                        } else {
                            (b'A' + (i % 26) as u8) as char
                        }
                    },
                )
                .collect(),
        ),
        ("upper then lower", rep("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAb")),
        ("mark then upper", "\u{301}".to_string() + &rep("A")),
        ("marks", rep("\u{301}")),
        ("marks and upper", rep("\u{301}A")),
        ("titlecase", rep("ǅ")),
        ("modifier", rep("ʰ")),
        ("cjk", random_cjk(&mut rng, n / 3)),
        ("spaces", rep(" ")),
        ("spaces then x", rep(" ") + "x"),
        ("newline, spaces, x", "\n".to_string() + &rep(" ") + "x"),
        ("newlines", rep("\n")),
        ("crlf", rep("\r\n")),
        ("space newline", rep(" \n")),
        ("tabs", rep("\t")),
        ("nbsp", rep("\u{A0}")),
        ("ideographic space", rep("\u{3000}")),
        ("punctuation", rep("!")),
        ("slashes", rep("/")),
        ("punct newline slash", rep("!\n/")),
        ("apostrophes", rep("'")),
        ("contractions", rep("'s")),
        ("digits", rep("7")),
        ("arabic digits", rep("٣")),
        ("emoji", rep("😀")),
        ("zwj", rep("\u{200D}")),
        ("base64", random_base64(&mut rng, n)),
        ("data url", format!("data:image/png;base64,{}", random_base64(&mut rng, n))),
    ]
}

#[test]
fn work_is_linear_in_input() {
    // Debug builds count the characters the pre-tokenizer decodes; release builds only check
    // the merge heap (the character counter is compiled out).
    let n = if cfg!(debug_assertions) { 60_000 } else { 400_000 };
    for enc in ENCODINGS {
        let t = ours(enc);
        for (name, text) in adversarial(n) {
            let stats = t.count_with_stats(&text);
            let len = text.len() as u64;
            let chars = text.chars().count() as u64;
            // Every byte is merged once, or twice where two windows of a long piece overlap (a
            // quarter window per window, a bit more while a window grows); a text that repeats is
            // skipped over (`skipped_windows`) after a check of how far it repeats.
            assert!(
                stats.merged_bytes <= 2 * len + 4096,
                "{} {name}: {} bytes merged for {len}",
                enc.as_str(),
                stats.merged_bytes
            );
            assert!(stats.heap_ops <= 4 * len, "{} {name}: {} heap ops", enc.as_str(), stats.heap_ops);
            assert!(stats.period_bytes <= 2 * len, "{} {name}: {} bytes compared", enc.as_str(), stats.period_bytes);
            assert_eq!(stats.fallbacks, 0, "{} {name}: a long piece merged whole", enc.as_str());
            assert_eq!(stats.queue_ops + stats.tree_writes, 0, "{} {name}: SentencePiece's merge", enc.as_str());
            if cfg!(debug_assertions) {
                println!(
                    "{:12} {name:20} {:.2} chars examined per char, {:.2} bytes merged per byte, {} windows ({} skipped)",
                    enc.as_str(),
                    stats.chars_examined as f64 / chars as f64,
                    stats.merged_bytes as f64 / len as f64,
                    stats.windows,
                    stats.skipped_windows
                );
                // A backtracking scan could examine O(n²) characters; ours looks at each character
                // a small, constant number of times.
                assert!(
                    stats.chars_examined <= 8 * chars + 8,
                    "{} {name}: examined {} characters for {chars}",
                    enc.as_str(),
                    stats.chars_examined
                );
                assert!(
                    stats.chars_examined >= chars,
                    "{} {name}: examined {} of {chars}",
                    enc.as_str(),
                    stats.chars_examined
                );
            }
            assert_eq!(stats.tokens, t.count(&text));
        }
    }
}

#[test]
fn examined_characters_scale_linearly() {
    // Same input kinds at two sizes: the work per character must not grow with the size.
    if !cfg!(debug_assertions) {
        return; // the counter only exists in debug builds
    }
    for enc in ENCODINGS {
        let t = ours(enc);
        let small = adversarial(20_000);
        let large = adversarial(80_000);
        for ((name, a), (_, b)) in small.iter().zip(large.iter()) {
            let per_a = t.count_with_stats(a).chars_examined as f64 / a.chars().count() as f64;
            let per_b = t.count_with_stats(b).chars_examined as f64 / b.chars().count() as f64;
            assert!(
                per_b <= per_a * 1.05 + 0.01,
                "{} {name}: {per_a:.3} -> {per_b:.3} chars examined per char",
                enc.as_str()
            );
        }
    }
}

/// The inputs that freeze a tab with a quadratic tokenizer complete with linear work (their
/// timings: `cargo bench --bench tokens -- adversarial`).
#[test]
#[cfg_attr(debug_assertions, ignore = "megabyte inputs; run with --release")]
fn megabyte_adversarial_inputs_complete() {
    let mut rng = Rng::new(1);
    let inputs = vec![
        ("1 MB of 'a'", "a".repeat(1 << 20)),
        ("1 MB random letters", random_letters(&mut rng, 1 << 20)),
        ("1 MB random base64", random_base64(&mut rng, 1 << 20)),
        ("5 MB base64 data URL", format!("data:image/png;base64,{}", random_base64(&mut rng, 5 << 20))),
        ("1 MB of spaces", " ".repeat(1 << 20)),
        ("1 MB CJK, no spaces", random_cjk(&mut rng, (1 << 20) / 3)),
    ];
    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let t = ours(enc);
        for (name, text) in &inputs {
            let stats = t.count_with_stats(text);
            println!(
                "{:12} {name:24} {:>8} tokens {:>8} pieces, longest {:>8} B, {:>8} bytes merged, {:>6} windows ({} skipped)",
                enc.as_str(),
                stats.tokens,
                stats.pieces,
                stats.longest_piece,
                stats.merged_bytes,
                stats.windows,
                stats.skipped_windows,
            );
            assert!(stats.tokens > 0 && stats.tokens <= text.len());
            assert!(stats.merged_bytes <= 2 * text.len() as u64 + 4096);
            assert_eq!(stats.fallbacks, 0);
        }
    }
}

/// A text counted again is answered by the piece cache: the long pieces (CJK runs, a megabyte
/// without a space) by their hashes, not merged again (`src/tokens/cache.rs`). A tokenizer of its
/// own (not the shared one, whose cache another test may hold), checked against the shipped one.
#[test]
fn a_text_counted_again_is_not_merged_again() {
    use ctxguard::tokens::loaded::{self, Split};
    for (enc, split) in [(Encoding::O200kBase, Split::O200k), (Encoding::Cl100kBase, Split::Cl100k)] {
        let own = loaded::unregistered(&crate::vocab_loaded::built_in_as_loaded(enc, split, &[])).unwrap();
        let shipped = ours(enc);
        let mut rng = Rng::new(5);
        let texts = [
            random_cjk(&mut rng, 60_000),
            random_letters(&mut rng, 300_000),
            "a".repeat(100_000),
            mixed(&mut rng, 200_000),
        ];
        for text in &texts {
            let first = own.count_with_stats(text);
            let again = own.count_with_stats(text);
            assert_eq!(first.tokens, shipped.count(text), "{}", enc.as_str());
            assert_eq!(again.tokens, first.tokens);
            assert!(first.merged_bytes > 0);
            assert!(
                again.merged_bytes * 20 <= first.merged_bytes,
                "{}: merged {} bytes again after {}",
                enc.as_str(),
                again.merged_bytes,
                first.merged_bytes
            );
        }
    }
}
