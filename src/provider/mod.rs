//! What ctxguard knows of each provider and model: the model table (`models.rs`), prices
//! (`pricing.rs`), the budget from a model's limits (`budget.rs`), the overflow errors providers
//! send (`overflow.rs`, `overflow_counts.rs`) and what reported usage and overflows teach the
//! estimate (`calibration.rs`, `calibration_overflow.rs`).

pub mod budget;
pub mod cache;
pub mod calibration;
pub mod calibration_overflow;
pub mod models;
pub mod overflow;
mod overflow_counts;
pub mod pricing;
