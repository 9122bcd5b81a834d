//! `gemma3` does linear work (n log n for the merge of one huge run) on adversarial input,
//! asserted with work counters, never by time (timings of megabyte inputs:
//! `cargo bench --features gemini --bench tokens -- adversarial`).
#![cfg(feature = "gemini")]

use ctxguard::tokens::{self, Encoding, Tokenizer, WorkStats};

fn gemma() -> &'static Tokenizer {
    tokens::tokenizer(Encoding::Gemma3).unwrap()
}

/// xorshift64*, enough to make random letters.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
    fn pick(&mut self, alphabet: &[&str], n: usize) -> String {
        let mut s = String::with_capacity(n + 4);
        while s.len() < n {
            s.push_str(alphabet[self.below(alphabet.len())]);
        }
        s
    }
}

/// About `n` bytes of each kind: huge runs without whitespace, runs of one character, runs the
/// user-defined-symbol matcher walks deep into without matching, base64, CJK, emoji.
fn adversarial(n: usize) -> Vec<(&'static str, String)> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ n as u64);
    let rep = |s: &str| s.repeat(n / s.len().max(1));
    let letters: Vec<String> = ('a'..='z').chain('A'..='Z').map(String::from).collect();
    let letters: Vec<&str> = letters.iter().map(String::as_str).collect();
    let b64: Vec<String> = ('a'..='z').chain('A'..='Z').chain('0'..='9').chain(['+', '/']).map(String::from).collect();
    let b64: Vec<&str> = b64.iter().map(String::as_str).collect();
    vec![
        ("a", rep("a")),
        ("ab", rep("ab")),
        ("random letters", rng.pick(&letters, n)),
        ("base64", rng.pick(&b64, n)),
        ("data url", format!("data:image/png;base64,{}", rng.pick(&b64, n))),
        ("digits", rep("7")),
        ("spaces", rep(" ")),
        ("spaces then x", rep(" ") + "x"),
        ("U+2581", rep("\u{2581}")),
        ("U+2581 and spaces", rep("\u{2581} ")),
        ("newlines", rep("\n")),
        ("tabs", rep("\t")),
        ("crlf", rep("\r\n")),
        ("almost a symbol", rep("<start_of_tur")),
        ("almost unused", rep("<unused12")),
        ("table cells", rep("<td>")),
        ("angle brackets", rep("<")),
        ("cjk", rep("中文")),
        ("emoji", rep("😀")),
        ("unknown characters", rep("\u{10FFFD}")),
        ("combining marks", rep("\u{301}")),
    ]
}

fn check(name: &str, text: &str, stats: &WorkStats) {
    let len = text.len() as u64;
    // One pop and three updates per merge, fewer merges than characters.
    assert!(stats.queue_ops <= 4 * len, "{name}: {} queue ops for {len} bytes", stats.queue_ops);
    let depth = (stats.longest_piece.max(2) as f64).log2().ceil() as u64 + 1;
    assert!(stats.tree_writes <= stats.queue_ops * depth, "{name}: {} tree writes", stats.tree_writes);
    // The short-segment scan is quadratic in a segment of fewer than 32 bytes: bounded per byte.
    assert!(stats.scan_lookups <= 32 * len + 32, "{name}: {} scan lookups", stats.scan_lookups);
    // The matcher follows at most one edge per byte of a symbol (31 characters at most) from
    // each start; in practice about one per byte.
    assert!(stats.matcher_steps <= 4 * len + 4, "{name}: {} matcher steps for {len} bytes", stats.matcher_steps);
    assert!(stats.tokens >= 1 && stats.tokens <= text.len(), "{name}: {} tokens", stats.tokens);
}

#[test]
fn work_is_linear_in_input() {
    let n = if cfg!(debug_assertions) { 60_000 } else { 400_000 };
    let t = gemma();
    for (name, text) in adversarial(n) {
        let stats = t.count_with_stats(&text);
        check(name, &text, &stats);
        assert_eq!(stats.tokens, t.count(&text), "{name}");
        println!(
            "{name:20} {:8} tokens, {:.2} queue ops, {:.2} scan lookups, {:.2} matcher steps per byte",
            stats.tokens,
            stats.queue_ops as f64 / text.len() as f64,
            stats.scan_lookups as f64 / text.len() as f64,
            stats.matcher_steps as f64 / text.len() as f64
        );
    }
}

#[test]
fn work_per_byte_does_not_grow_with_size() {
    let t = gemma();
    let work = |s: &WorkStats| (s.queue_ops + s.scan_lookups + s.matcher_steps) as f64;
    for ((name, a), (_, b)) in adversarial(20_000).iter().zip(adversarial(80_000).iter()) {
        let per_a = work(&t.count_with_stats(a)) / a.len() as f64;
        let per_b = work(&t.count_with_stats(b)) / b.len() as f64;
        assert!(per_b <= per_a * 1.05 + 0.01, "{name}: {per_a:.3} -> {per_b:.3} operations per byte");
    }
}

/// Limits and offsets stay exact and cheap on the same inputs.
#[test]
fn limits_and_offsets_on_adversarial_input() {
    let t = gemma();
    for (name, text) in adversarial(20_000) {
        let n = t.count(&text);
        assert_eq!(t.count_till_limit(&text, n), Some(n), "{name}");
        assert_eq!(t.count_till_limit(&text, n.saturating_sub(1)), None, "{name}");
        let k = n / 2;
        let head = t.fit_head(&text, k);
        assert!(t.count(&text[..head]) <= k, "{name}: head");
        let tail = t.fit_tail(&text, k);
        assert!(t.count(&text[tail..]) <= k, "{name}: tail");
    }
}

#[test]
#[cfg_attr(debug_assertions, ignore = "megabyte inputs; run with --release")]
fn megabyte_adversarial_inputs_complete() {
    let t = gemma();
    for (name, text) in adversarial(1 << 20).into_iter().chain([("5 MB base64 data URL", {
        let mut rng = Rng(7);
        let b64: Vec<String> = ('a'..='z').chain('0'..='9').map(String::from).collect();
        format!("data:image/png;base64,{}", rng.pick(&b64.iter().map(String::as_str).collect::<Vec<_>>(), 5 << 20))
    })]) {
        let stats = t.count_with_stats(&text);
        println!(
            "{name:22} {:>8} tokens {:>7} spans, longest {:>8} B",
            stats.tokens, stats.pieces, stats.longest_piece
        );
        check(name, &text, &stats);
    }
}
