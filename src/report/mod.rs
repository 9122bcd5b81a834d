//! What the guard reports: one trace schema for every protection (`trace.rs`) and the metrics
//! snapshot for the UI (`metrics.rs`).

pub mod metrics;
pub mod trace;
