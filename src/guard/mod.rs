//! `ContextGuard`'s core as a struct of owned parts (`parts.rs` says which and where each lives).

pub mod breaker;
mod config;
pub mod counter;
pub mod ledger;
mod measure;
pub mod memory;
mod parts;
pub mod policy;
mod sources;
pub mod store;

pub use config::{resolve_model, GuardConfig, Strategy, DEFAULT_AHEAD_RATIO};
pub use counter::{Counted, Counter, ToolsFacts};
pub use parts::Guard;
pub use sources::{Sources, SourcesOutcome};
