//! ctxguard: context budgeting for LLM chat clients.
//!
//! The core (everything outside `wasm/`) is plain Rust with serde types and no wasm-bindgen;
//! `wasm/` is the thin binding layer compiled only for `wasm32`.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing))]

pub mod budget;
pub mod cache;
pub mod calibration;
pub mod checkpoint;
pub mod count;
pub mod error;
pub mod format;
pub mod guard;
pub mod json_text;
pub mod message;
pub mod metrics;
pub mod models;
pub mod overflow;
pub mod packed;
pub mod pipeline;
pub mod pricing;
pub mod scan;
pub mod sort;
pub mod sources;
pub mod text;
pub mod tokens;
pub mod trace;

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod wasm;

pub use error::{Error, ErrorCode, Result};
pub use message::{Content, Message, Part, Role, ToolCall};
pub use text::Text;
pub use tokens::Encoding;

/// Serialize a derived figure (a product of table constants) without binary noise: rounded to
/// nine decimals, so `1.05 × 1.1` reads `1.155`, not `1.1550000000000002`.
pub(crate) fn ser_round<S: serde::Serializer>(v: &f64, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(if v.is_finite() { (v * 1e9).round() / 1e9 } else { *v })
}

/// [`ser_round`] for an optional figure.
pub(crate) fn ser_round_opt<S: serde::Serializer>(v: &Option<f64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match v {
        Some(x) => ser_round(x, s),
        None => s.serialize_none(),
    }
}

/// Apply an estimate factor to a raw count, rounding up, saturating at u32::MAX.
pub fn count_scale(raw: usize, factor: f64) -> u32 {
    let scaled = (raw as f64 * factor).ceil();
    if scaled >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        scaled as u32
    }
}
