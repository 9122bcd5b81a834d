//! What crosses the wasm boundary, run in Node.js by `cargo test --target wasm32-unknown-unknown
//! --test wasm_node` through wasm-bindgen-test-runner (scripts/test.sh sets the runner).
//! The cases live in `wasm/cases.rs` and run in headless Chromium too (`wasm_browser.rs`).
#![cfg(target_arch = "wasm32")]

#[path = "wasm/cases.rs"]
mod cases;

// The binding itself, called through its Rust signatures (see wasm/boundary.rs).
#[path = "wasm/boundary.rs"]
mod boundary;
