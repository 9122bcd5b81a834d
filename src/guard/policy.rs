//! The guard's compaction policy from its config: the strategy, summaries made ahead of time
//! (and from which share of the usable limit), the recent tail a compaction keeps.

use crate::base::error::{Error, Result};

use super::config::{GuardConfig, Strategy, DEFAULT_AHEAD_RATIO};

#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub strategy: Strategy,
    /// `ahead` and `aheadRatio` of the config.
    pub ahead: bool,
    pub ahead_ratio: f64,
    pub recent_tail_tokens: Option<u32>,
}

impl Policy {
    /// The policy of `config` under a budget whose trigger is at `trigger` of the usable limit.
    pub fn new(config: &GuardConfig, trigger: f64) -> Result<Policy> {
        // Summaries start ahead of time below the trigger, or they are never ahead of it: a
        // given ratio must be under `triggerRatio`; the default stays under a low trigger too.
        let ahead_ratio = config.ahead_ratio.unwrap_or(DEFAULT_AHEAD_RATIO.min(trigger * 0.8));
        if !(ahead_ratio > 0.0 && ahead_ratio < trigger) {
            return Err(Error::options(format!(
                "aheadRatio must be above 0 and below triggerRatio ({trigger}), got {ahead_ratio}"
            )));
        }
        Ok(Policy {
            strategy: config.strategy.unwrap_or_default(),
            ahead: config.ahead.unwrap_or(false),
            ahead_ratio,
            recent_tail_tokens: config.recent_tail_tokens,
        })
    }
}
