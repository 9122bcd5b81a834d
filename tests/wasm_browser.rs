//! What crosses the wasm boundary, run in headless Chromium by
//! `wasm-pack test --headless --chrome -- --test wasm_browser`.
//! Without `run_in_browser` the runner skips this file and still exits 0, so scripts/test.sh
//! also requires a non-zero count of passed tests.
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[path = "wasm/cases.rs"]
mod cases;

// The binding itself, called through its Rust signatures (see wasm/boundary.rs).
#[path = "wasm/boundary.rs"]
mod boundary;
