//! The internal message model (`model.rs`), the content keys every cache uses (`cache.rs`), and
//! sealed summaries, the checkpoint marker that survives reloads (`checkpoint.rs`).

pub mod cache;
pub mod checkpoint;
mod model;

pub use model::*;
