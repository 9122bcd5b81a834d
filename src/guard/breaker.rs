//! The summarizer's circuit breaker (docs/design.md, "No waiting, no storms"): after a number of
//! consecutive failed compactions the guard stops asking the summarizer for a cool-down and goes
//! straight to the mechanical fallback, so a summarizer that is down costs one breaker's worth
//! of attempts, not three attempts on every send. After the cool-down one compaction asks again
//! with a single attempt (half open): a success closes the breaker, a failure opens it again.
//! Claude Code stops auto-compaction after 3 consecutive failures; that is the default here.

use serde::Deserialize;

use crate::base::error::{Error, Result};
use crate::report::metrics::{BreakerMetrics, BreakerState};

/// Consecutive failed compactions that open the breaker, by default.
pub const DEFAULT_FAILURES: u32 = 3;
/// How long it stays open, by default (milliseconds of the guard's clock).
pub const DEFAULT_COOLDOWN_MS: f64 = 300_000.0;

/// `breaker` in the guard's config.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BreakerConfig {
    /// Consecutive failed compactions that open it (default 3; 0 turns the breaker off).
    pub failures: Option<u32>,
    /// It closes after this many milliseconds (default 300000)...
    pub cooldown_ms: Option<f64>,
    /// ...or after this many `prepare` calls, whichever comes first (default: no call limit).
    pub cooldown_calls: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Breaker {
    threshold: u32,
    cooldown_ms: f64,
    cooldown_calls: Option<u32>,
    failures: u32,
    /// When it opened: the clock and the call count then.
    opened: Option<(f64, u64)>,
    calls: u64,
    last_now: f64,
}

impl Breaker {
    pub fn new(c: Option<&BreakerConfig>) -> Result<Breaker> {
        let c = c.cloned().unwrap_or_default();
        let cooldown_ms = c.cooldown_ms.unwrap_or(DEFAULT_COOLDOWN_MS);
        if !cooldown_ms.is_finite() || cooldown_ms < 0.0 {
            return Err(Error::options(format!("breaker.cooldownMs must be a number >= 0, got {cooldown_ms}")));
        }
        Ok(Breaker {
            threshold: c.failures.unwrap_or(DEFAULT_FAILURES),
            cooldown_ms,
            cooldown_calls: c.cooldown_calls,
            failures: 0,
            opened: None,
            calls: 0,
            last_now: 0.0,
        })
    }

    /// A `prepare` call starts at `now`.
    pub fn tick(&mut self, now: f64) {
        self.calls += 1;
        if now.is_finite() {
            self.last_now = now;
        }
    }

    pub fn state(&self) -> BreakerState {
        match self.opened {
            None => BreakerState::Closed,
            Some((at, call)) => {
                let by_time = self.last_now - at >= self.cooldown_ms;
                let by_calls = self.cooldown_calls.is_some_and(|n| self.calls.saturating_sub(call) >= u64::from(n));
                if by_time || by_calls {
                    BreakerState::HalfOpen
                } else {
                    BreakerState::Open
                }
            }
        }
    }

    /// Attempts a compaction may make now: 0 while open, 1 half open, `max` closed.
    pub fn attempts(&self, max: u32) -> u32 {
        match self.state() {
            BreakerState::Closed => max,
            BreakerState::HalfOpen => 1.min(max),
            BreakerState::Open => 0,
        }
    }

    /// A compaction's summary was written.
    pub fn success(&mut self) {
        self.failures = 0;
        self.opened = None;
    }

    /// A compaction's summarizer failed (every attempt it made).
    pub fn failure(&mut self) {
        self.failures = self.failures.saturating_add(1);
        let reopen = self.state() == BreakerState::HalfOpen;
        if reopen || (self.threshold > 0 && self.failures >= self.threshold) {
            self.opened = Some((self.last_now, self.calls));
        }
    }

    /// `guard.resetBreaker()`.
    pub fn reset(&mut self) {
        self.success();
    }

    pub fn metrics(&self) -> BreakerMetrics {
        let state = self.state();
        let (closes_in_ms, closes_after_calls) = match (state, self.opened) {
            (BreakerState::Open, Some((at, call))) => (
                Some((at + self.cooldown_ms - self.last_now).max(0.0)),
                self.cooldown_calls
                    .map(|n| u32::try_from((call + u64::from(n)).saturating_sub(self.calls)).unwrap_or(u32::MAX)),
            ),
            _ => (None, None),
        };
        BreakerMetrics { state, failures: self.failures, closes_in_ms, closes_after_calls }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_three_failures_and_half_opens_after_the_cooldown() {
        let mut b = Breaker::new(None).unwrap();
        b.tick(0.0);
        assert_eq!(b.attempts(3), 3);
        b.failure();
        b.failure();
        assert_eq!(b.state(), BreakerState::Closed);
        b.failure();
        assert_eq!((b.state(), b.attempts(3)), (BreakerState::Open, 0));
        assert_eq!(b.metrics().closes_in_ms, Some(300_000.0));
        b.tick(299_999.0);
        assert_eq!(b.state(), BreakerState::Open);
        b.tick(300_000.0);
        assert_eq!((b.state(), b.attempts(3)), (BreakerState::HalfOpen, 1));
        // A failure half open opens it again for a whole cool-down.
        b.failure();
        assert_eq!(b.state(), BreakerState::Open);
        b.tick(600_000.0);
        assert_eq!(b.state(), BreakerState::HalfOpen);
        b.success();
        assert_eq!((b.state(), b.metrics().failures), (BreakerState::Closed, 0));
    }

    #[test]
    fn a_call_limit_closes_it_too_and_reset_closes_it_at_once() {
        let mut b =
            Breaker::new(Some(&BreakerConfig { failures: Some(1), cooldown_calls: Some(2), ..Default::default() }))
                .unwrap();
        b.tick(0.0);
        b.failure();
        assert_eq!(b.metrics().closes_after_calls, Some(2));
        b.tick(1.0);
        assert_eq!(b.state(), BreakerState::Open);
        b.tick(2.0);
        assert_eq!(b.state(), BreakerState::HalfOpen);
        b.failure();
        b.reset();
        assert_eq!(b.state(), BreakerState::Closed);
        let off = Breaker::new(Some(&BreakerConfig { failures: Some(0), ..Default::default() })).unwrap();
        let mut off = off;
        for _ in 0..10 {
            off.failure();
        }
        assert_eq!(off.state(), BreakerState::Closed, "failures: 0 turns it off");
        assert!(Breaker::new(Some(&BreakerConfig { cooldown_ms: Some(-1.0), ..Default::default() })).is_err());
    }
}
