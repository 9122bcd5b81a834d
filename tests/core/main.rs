//! The core's scenarios, natively: formats, counting, sources, the guard and its pipeline,
//! checkpoints, calibration, provider errors and whole conversations. One binary: each file
//! below is a module (`cargo test --test core pipeline::` runs one of them); what several files
//! need lives in `tests/support/`.
#![cfg(test)] // always true here; it tells clippy the whole binary is test code (clippy.toml)

#[path = "../support/mod.rs"]
mod support;

mod artifacts;
mod calibration;
mod checkpoint;
mod count_breakdown;
mod count_images;
mod count_openai_reference;
mod detect_format;
mod edits;
mod format_ai_sdk;
mod format_ai_sdk_ui;
mod format_anthropic;
mod format_gemini;
mod format_image_header;
mod format_mutations;
mod format_openai;
mod format_responses;
mod guard_measure;
mod list_attachments;
mod memory;
mod message_places;
mod overflow;
mod overflow_counts;
mod pipeline;
mod pricing;
mod sources_pass;
mod sources_tool_output;
mod store;
