//! Source-level guards (SPEC §6 layer 1): synchronous, no LLM.

pub mod tool_output;
