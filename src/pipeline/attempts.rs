//! The summarizer's attempts as a state machine, without I/O: the binding asks it what to do
//! next (call the summarizer, pause, or stop), does it, and reports what happened. The policy
//! lives here, tested natively: up to `max` attempts; after an error or a timeout a pause
//! (`retry_pause_ms`: doubling, with jitter), after an answer that failed validation none; an
//! abort ends the attempts at once, during a call or during a pause.

use super::types::FailureReason;

/// Attempts at the summarizer before the mechanical fallback.
pub const MAX_ATTEMPTS: u32 = 3;
/// Pause before the second attempt after an error or a timeout, in milliseconds (doubled for each
/// later one, with jitter: see [`retry_pause_ms`]).
pub const DEFAULT_RETRY_DELAY_MS: f64 = 500.0;

/// The pause after failed attempt `attempt` (1-based) before the next one, or `None` when the
/// next one starts at once: only errors and timeouts wait (a rate-limited or overloaded endpoint
/// asked again at once fails again, and many clients retrying in step make it worse), an answer
/// that failed validation is asked again at once, and there is no pause after the last attempt.
/// `delay_ms` doubles per attempt; `unit` (a uniform random number in [0, 1)) spreads it over
/// [half, all] of that, so clients that failed together do not retry together.
pub fn retry_pause_ms(reason: FailureReason, attempt: u32, delay_ms: f64, unit: f64) -> Option<f64> {
    let waits = matches!(reason, FailureReason::CallbackError | FailureReason::Timeout);
    if !waits || attempt >= MAX_ATTEMPTS || !delay_ms.is_finite() || delay_ms <= 0.0 {
        return None;
    }
    let doubled = delay_ms * f64::from(1_u32 << attempt.saturating_sub(1).min(16));
    let unit = if unit.is_finite() { unit.clamp(0.0, 1.0) } else { 0.5 };
    Some(doubled * (0.5 + unit / 2.0))
}

/// What the binding does next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// Call the summarizer (attempt number, from 1).
    Ask(u32),
    /// Wait this many milliseconds (heartbeats go on), then report `waited`.
    Pause { ms: f64, before: u32 },
    /// No more attempts.
    Stop,
}

#[derive(Debug, Clone)]
pub struct Attempts {
    max: u32,
    delay_ms: f64,
    made: u32,
    /// The outcome so far: the last failure (`NoCallback` before any attempt).
    last: FailureReason,
    done: bool,
}

impl Attempts {
    /// `max` attempts (0: none at all), pausing `delay_ms` (doubled per attempt) after errors.
    pub fn new(max: u32, delay_ms: f64) -> Attempts {
        Attempts { max, delay_ms, made: 0, last: FailureReason::NoCallback, done: max == 0 }
    }

    /// The first thing to do.
    pub fn start(&mut self) -> Next {
        if self.done {
            return Next::Stop;
        }
        self.made = 1;
        Next::Ask(1)
    }

    /// The attempt that just ended failed for `reason` (`unit`: a uniform random number in
    /// [0, 1) for the jitter).
    pub fn failed(&mut self, reason: FailureReason, unit: f64) -> Next {
        self.last = reason;
        if reason == FailureReason::Aborted || self.made >= self.max {
            self.done = true;
            return Next::Stop;
        }
        match retry_pause_ms(reason, self.made, self.delay_ms, unit) {
            Some(ms) => Next::Pause { ms, before: self.made + 1 },
            None => self.next(),
        }
    }

    /// The pause ended: `waited` false when the signal aborted it.
    pub fn paused(&mut self, waited: bool) -> Next {
        if !waited {
            self.last = FailureReason::Aborted;
            self.done = true;
            return Next::Stop;
        }
        self.next()
    }

    /// The attempt that just ended succeeded.
    pub fn succeeded(&mut self) {
        self.done = true;
    }

    fn next(&mut self) -> Next {
        self.made += 1;
        Next::Ask(self.made)
    }

    /// Attempts made so far.
    pub fn made(&self) -> u32 {
        self.made
    }

    /// The last failure (what a compaction that ends without an answer reports).
    pub fn last_failure(&self) -> FailureReason {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_attempts_with_pauses_after_errors_only() {
        let mut a = Attempts::new(3, 500.0);
        assert_eq!(a.start(), Next::Ask(1));
        assert_eq!(a.failed(FailureReason::Timeout, 0.0), Next::Pause { ms: 250.0, before: 2 });
        assert_eq!(a.paused(true), Next::Ask(2));
        // An answer that failed validation is asked again at once.
        assert_eq!(a.failed(FailureReason::InvalidOutput, 0.0), Next::Ask(3));
        assert_eq!(a.failed(FailureReason::CallbackError, 0.0), Next::Stop);
        assert_eq!((a.made(), a.last_failure()), (3, FailureReason::CallbackError));
    }

    #[test]
    fn an_abort_ends_the_attempts_during_a_call_or_a_pause() {
        let mut a = Attempts::new(3, 500.0);
        a.start();
        assert_eq!(a.failed(FailureReason::Aborted, 0.5), Next::Stop);
        let mut b = Attempts::new(3, 500.0);
        b.start();
        assert!(matches!(b.failed(FailureReason::CallbackError, 0.99), Next::Pause { .. }));
        assert_eq!(b.paused(false), Next::Stop);
        assert_eq!((b.made(), b.last_failure()), (1, FailureReason::Aborted));
    }

    #[test]
    fn one_attempt_half_open_and_none_when_open() {
        let mut a = Attempts::new(1, 500.0);
        a.start();
        assert_eq!(a.failed(FailureReason::Timeout, 0.0), Next::Stop);
        let mut none = Attempts::new(0, 500.0);
        assert_eq!(none.start(), Next::Stop);
        assert_eq!(none.made(), 0);
        let mut ok = Attempts::new(3, 0.0);
        ok.start();
        assert_eq!(ok.failed(FailureReason::Timeout, 0.0), Next::Ask(2), "retryDelayMs 0: no pause");
        ok.succeeded();
        assert_eq!(ok.made(), 2);
    }
}
