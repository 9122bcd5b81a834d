//! Source-level guards (SPEC §6 layer 1): synchronous, no LLM.

pub mod attachment;
mod cut;
pub mod memo;
pub mod reader;
pub mod sources;
pub mod tool_output;
pub mod trace;

pub use sources::{guard_sources, SourceOptions};
pub use trace::{u32_of as trace_u32, Operation, Status, Trace};
