//! ctxguard: context budgeting for LLM chat clients.
//!
//! The core (everything outside `wasm/`) is plain Rust with serde types and no wasm-bindgen;
//! `wasm/` is the thin binding layer compiled only for `wasm32`.

pub mod budget;
pub mod count;
pub mod error;
pub mod format;
pub mod message;
pub mod metrics;
pub mod models;
pub mod tokens;

#[cfg(target_arch = "wasm32")]
mod wasm;

pub use error::{Error, ErrorCode, Result};
pub use message::{Content, Message, Part, Role, ToolCall};
pub use tokens::Encoding;
