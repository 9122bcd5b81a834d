//! Property tests (proptest): pipeline invariants, tool outputs by age, forgery and prompt
//! injection, and the deterministic reproducers of what they found. `make test` fixes the seed
//! (`PROPTEST_RNG_SEED`); `PROPTEST_CASES=2000 cargo test --release --test props pipeline::`
//! explores more. Seeds of past failures are kept next to each file
//! (`<file>.proptest-regressions`, see `support::proptest_config`) and run first.
#![cfg(test)] // always true here; it tells clippy the whole binary is test code (clippy.toml)
#![cfg(not(target_arch = "wasm32"))] // proptest is a native-only dev-dependency

#[path = "../support/mod.rs"]
mod support;

mod pipeline;
mod recency;
mod regressions;
mod security;
