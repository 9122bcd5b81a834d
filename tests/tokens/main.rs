//! The tokenizers against their references, tiktoken-rs and its regex (dev-dependencies only this
//! binary links): ids and pieces, offsets, long pieces, linear work, and the committed
//! vocabularies (`CTXGUARD_WRITE_VOCAB=1 cargo test --release --test tokens vocab_data::`
//! regenerates them). `common.rs` holds the references and the corpus generators.
#![cfg(test)] // always true here; it tells clippy the whole binary is test code (clippy.toml)

mod common;

mod exact;
mod families;
mod linear;
mod long;
mod offsets;
mod vocab_data;
mod vocab_loaded;
mod vocab_spm;
