//! Source-level guards (layer 1 of the pipeline, see docs/design.md): synchronous, no LLM.
//! Tool outputs over their limit become a stable compact form, attachments a bounded preview.

pub mod attachment;
pub mod clearing;
mod cut;
pub mod found;
pub mod listed;
pub mod pass;
pub mod reader;
pub mod remembered;
pub mod stub;
pub mod tool_output;

pub use pass::{guard_sources, SourceOptions};
