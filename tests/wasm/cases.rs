//! Test cases shared by `tests/wasm_node.rs` and `tests/wasm_browser.rs`: the same crate, compiled
//! to wasm32, run in each JS engine.

use ctxguard::tokens::{count, Encoding};
use ctxguard::ErrorCode;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

/// (text, cl100k_base, o200k_base), as tiktoken counts them.
const FIGURES: &[(&str, usize, usize)] = &[
    ("", 0, 0),
    ("hello world", 2, 2),
    ("tiktoken is great!", 6, 6),
    ("Hello, world!", 4, 4),
    ("antidisestablishmentarianism", 6, 6),
    ("こんにちは世界", 4, 2),
    ("🦀🦀🦀 rust crab", 11, 11),
    ("The quick brown fox jumps over the lazy dog.", 10, 10),
    // Special-token text is ordinary text in message content.
    ("<|endoftext|>", 7, 7),
];

#[wasm_bindgen_test]
fn counts_in_wasm_equal_tiktoken() {
    for &(text, cl100k, o200k) in FIGURES {
        assert_eq!(count(Encoding::Cl100kBase, text), cl100k, "cl100k_base {text:?}");
        assert_eq!(count(Encoding::O200kBase, text), o200k, "o200k_base {text:?}");
    }
}

/// A string built by the JS engine (UTF-16 with surrogate pairs) counts like the Rust literal.
#[wasm_bindgen_test]
fn js_strings_decode_and_count_like_rust_strings() {
    let from_js =
        js_sys::JSON::parse(r#""\ud83e\udd80\ud83e\udd80\ud83e\udd80 rust crab""#).ok().and_then(|v| v.as_string());
    assert_eq!(from_js.as_deref(), Some("🦀🦀🦀 rust crab"));
    assert_eq!(count(Encoding::O200kBase, from_js.as_deref().unwrap_or_default()), 11);
}

/// A lone surrogate (invalid UTF-16, legal in a JS string) arrives as U+FFFD and never traps.
#[wasm_bindgen_test]
fn lone_surrogates_from_js_do_not_trap() {
    let value = js_sys::JSON::parse(r#""abc\ud800def""#).unwrap_or(JsValue::NULL);
    let text = value.as_string().unwrap_or_default();
    assert_eq!(text, "abc\u{FFFD}def");
    assert_eq!(count(Encoding::Cl100kBase, &text), count(Encoding::Cl100kBase, "abc\u{FFFD}def"));
}

#[wasm_bindgen_test]
fn unknown_encoding_is_a_typed_error() {
    let err = Encoding::from_name("p50k_base").err();
    assert_eq!(err.map(|e| e.code), Some(ErrorCode::UnknownEncoding));
    assert_eq!(Encoding::from_name("o200k_base").ok(), Some(Encoding::O200kBase));
}

/// A long piece without whitespace counts without trapping.
#[wasm_bindgen_test]
fn long_piece_without_whitespace_counts() {
    let text = "a".repeat(2_000);
    let n = count(Encoding::O200kBase, &text);
    assert!(n > 0 && n <= 2_000, "{n}");
}
