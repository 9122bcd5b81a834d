//! Rules of the house checked over the repository's own files: the layers of `src/`
//! (docs/architecture.md), the shape of `src/`, and no test asserting on wall-clock time.
#![cfg(test)] // always true here; it tells clippy the whole binary is test code (clippy.toml)

mod layers;
mod shape;
mod wall_clock;
