//! The lowest layer: errors, shared text, substring search, the one pair sort, JSON text from JS,
//! rounding of the figures JS sees. Nothing here knows about tokens or messages.

pub mod error;
pub mod json_text;
pub mod round;
pub mod scan;
pub mod sort;
pub mod text;
