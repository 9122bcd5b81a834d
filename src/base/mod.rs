//! The lowest layer: errors, shared text, substring search, the one pair sort, JSON text from JS,
//! rounding of the figures JS sees, decoding errors in JS terms. Nothing here knows about tokens or messages.

pub mod error;
pub mod explain;
pub mod json_text;
pub mod round;
pub mod scan;
pub mod sort;
pub mod text;
