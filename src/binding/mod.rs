//! The binding's side of the boundary that is plain Rust, so that it is tested natively: the
//! packed transfer of messages from JS (`packed.rs`). `src/wasm/` builds on it.

pub mod packed;
