//! Gemini's SentencePiece vocabulary (`gemma3`, Cargo feature `gemini`, not in the default
//! build): `cargo test --features gemini --test gemini`. Without the feature only `count` runs
//! (what a build without the vocabulary does for Google models). The reference data is beside
//! this file (`corpus.json`, `reference.json`).
#![cfg(test)] // always true here; it tells clippy the whole binary is test code (clippy.toml)

mod count;
mod linear;
mod reference;
mod vocab_data;
