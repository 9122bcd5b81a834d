//! What crosses the wasm boundary, run in headless Chromium by
//! `cargo test --target wasm32-unknown-unknown --test wasm_browser` through wasm-bindgen-test-runner
//! with `WASM_BINDGEN_TEST_ONLY_WEB=1` and `CHROMEDRIVER` (scripts/test.sh).
//! Without `run_in_browser` the runner skips this file and still exits 0, so scripts/test.sh
//! also requires a non-zero count of passed tests.
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[path = "wasm/cases.rs"]
mod cases;

// The binding itself, called through its Rust signatures (see wasm/boundary.rs).
#[path = "wasm/boundary.rs"]
mod boundary;
