//! What crosses the wasm boundary, run in Node.js by `wasm-pack test --node -- --test wasm_node`.
//! The cases live in `wasm/cases.rs` and run in headless Chromium too (`wasm_browser.rs`).
#![cfg(target_arch = "wasm32")]

#[path = "wasm/cases.rs"]
mod cases;

// The binding itself, called through its Rust signatures (see wasm/boundary.rs).
#[path = "wasm/boundary.rs"]
mod boundary;
