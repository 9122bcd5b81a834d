//! What the integration test binaries share (`#[path = "../support/mod.rs"] mod support;` in a
//! binary's main.rs): the clock, guards built from a config, the five formats' fixtures, the
//! proptest configuration. Put a helper here once a second file needs it, not a copy.
#![allow(dead_code)] // each binary uses a part

pub mod fixtures;

use ctxguard::guard::{Guard, GuardConfig};
use serde_json::Value;

/// The clock the pipeline reads (`now_ms`): always 0, so that no test depends on the time it runs
/// at; the pauses and deadlines the pipeline chooses are asserted as values.
pub fn clock() -> f64 {
    0.0
}

/// A guard from a config written as the JS side writes it (`{"model": "gpt-4o", "contextWindow":
/// 10_000, ...}`, camelCase as in `GuardConfig`).
pub fn guard(cfg: Value) -> Guard {
    Guard::new(&serde_json::from_value::<GuardConfig>(cfg).unwrap()).unwrap()
}

/// A guard for `model` with every other setting at its default.
pub fn model_guard(model: &str) -> Guard {
    Guard::new(&GuardConfig { model: Some(model.into()), ..Default::default() }).unwrap()
}

/// JSON as indented text: two values compared through it show a readable diff and key order.
pub fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap()
}

/// `words` words, `{seed}{n}`, separated by spaces: a document of a known size that does not
/// repeat within 1,000 words.
pub fn doc(words: usize, seed: &str) -> String {
    (0..words).map(|i| format!("{seed}{} ", i % 1000)).collect()
}

/// Standard base64 with padding.
pub fn base64_of(s: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// A proptest configuration of `cases` cases whose failures are saved beside the test's source
/// file (`tests/props/pipeline.rs` → `tests/props/pipeline.proptest-regressions`) and run first
/// on every later run. proptest's default would look for `tests/proptest-regressions/<file>.txt`
/// once the test file sits beside a `main.rs`, where two binaries' files of one name would share
/// one file.
#[cfg(not(target_arch = "wasm32"))]
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    use proptest::test_runner::{Config, FileFailurePersistence};
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..Config::default()
    }
}
