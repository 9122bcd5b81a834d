//! ctxguard: context budgeting for LLM chat clients.
//!
//! The core (everything outside `wasm/`) is plain Rust with serde types and no wasm-bindgen;
//! `wasm/` is the thin binding layer compiled only for `wasm32`.

// The layers, lowest first (docs/architecture.md; `tests/house/layers.rs` reads them from these paths).
pub mod base;
pub mod binding;
pub mod count;
pub mod format;
pub mod guard;
pub mod message;
pub mod pipeline;
pub mod provider;
pub mod report;
pub mod sources;
pub mod tokens;

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod wasm;

pub use base::error::{Error, ErrorCode, Result};
pub use base::round::count_scale;
pub use base::text::Text;
pub use message::{Content, Message, Part, Role, ToolCall};
pub use tokens::Encoding;
