//! The guard pipeline (docs/design.md, "Pipeline"), sans-IO, as functions over a guard.
//! `prepare_start` (`start.rs`) applies what the guard remembers (a summary it made or restored,
//! one made ahead of time once the trigger is crossed), runs layer 1 (tool outputs by age and by
//! size, attachment previews) and decides whether a summary is needed. When it is, the caller
//! (the binding, or a host driving the call itself) asks the summarizer with `Pending::request`
//! — as many attempts as `attempts.rs` says —, checks each answer with `Pending::validate`, and
//! hands the result to `prepare_finish` (`finish.rs`), which remembers the summary and builds
//! the checkpoint (or the mechanical fallback), then runs the emergency layer and sanitizes tool
//! pairs. Summaries made ahead of time go through `ahead_finish`.

pub mod artifacts;
pub mod attempts;
pub mod evidence;
mod finish;
mod plan;
mod restore;
pub mod sanitize;
pub mod session_state;
pub mod settle;
mod start;
mod summary;
mod thinking;
mod types;

pub use crate::guard::{Strategy, DEFAULT_AHEAD_RATIO};
pub use attempts::{retry_pause_ms, DEFAULT_RETRY_DELAY_MS, MAX_ATTEMPTS};
pub use finish::{ahead_finish, prepare_finish};
pub use plan::{trim_newest, DEFAULT_TAIL_SHARE};
pub use restore::{model_visible, model_visible_for, restore};
pub use start::{prepare_start, CHECKPOINT_MISMATCH};
pub use types::*;
