//! A circuit breaker per price source, so a source that is down is not
//! asked again on every read.
//!
//! Closed, it counts consecutive failures; at the configured number it
//! opens for a cool-down, during which every call fails at once without a
//! request. When the cool-down has passed it is half-open: one call (the
//! probe) goes out, and its answer closes the breaker again or reopens it
//! for another cool-down. Calls made while the probe is out fail fast too;
//! a probe that never reports (its caller went away) is replaced by the
//! next call once a further cool-down has passed.
//!
//! State is in process memory (each worker process learns for itself) and
//! time is passed in as a value, so tests move a clock instead of sleeping.
//! It is written here rather than taken from a crate: `failsafe`, the
//! established one, reads `Instant::now()` itself, so a test could not move
//! its time; the clock-agnostic ones are new single-author releases; and
//! the whole state machine is the few lines below. docs/prices.md says how
//! it behaves.

use std::sync::Mutex;

use crate::clock::UnixMillis;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Closed {
        failures: u32,
    },
    Open {
        until: UnixMillis,
    },
    /// The probe went out at `since`.
    HalfOpen {
        since: UnixMillis,
    },
}

/// One source's breaker.
#[derive(Debug)]
pub struct Breaker {
    threshold: u32,
    cool_down_ms: i64,
    /// The state, and how many times it has opened (each a new rest).
    state: Mutex<(State, u64)>,
}

impl Breaker {
    /// Opens after `threshold` consecutive failures (at least 1) for
    /// `cool_down_ms`.
    pub fn new(threshold: u32, cool_down_ms: i64) -> Self {
        Self {
            threshold: threshold.max(1),
            cool_down_ms: cool_down_ms.max(0),
            state: Mutex::new((State::Closed { failures: 0 }, 0)),
        }
    }

    /// How long it stays open once opened.
    pub fn cool_down_ms(&self) -> i64 {
        self.cool_down_ms
    }

    fn state(&self) -> std::sync::MutexGuard<'_, (State, u64)> {
        // A panic while holding this lock leaves a valid state behind.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// May a call go out now? Taking the half-open probe is part of asking.
    pub fn admit(&self, now: UnixMillis) -> bool {
        let mut guard = self.state();
        let state = &mut guard.0;
        match *state {
            State::Closed { .. } => true,
            State::Open { until } if now < until => false,
            State::HalfOpen { since } if now < since + self.cool_down_ms => false,
            State::Open { .. } | State::HalfOpen { .. } => {
                *state = State::HalfOpen { since: now };
                true
            }
        }
    }

    /// Whether calls fail fast now, without taking the probe.
    pub fn is_open(&self, now: UnixMillis) -> bool {
        self.rest(now).is_some()
    }

    /// While calls fail fast: which rest this is (a number that changes
    /// each time the breaker opens, the probe's failure included), so
    /// what was learnt during one rest can be told from the next.
    pub fn rest(&self, now: UnixMillis) -> Option<u64> {
        let (state, openings) = *self.state();
        let open = match state {
            State::Closed { .. } => false,
            State::Open { until } => now < until,
            State::HalfOpen { since } => now < since + self.cool_down_ms,
        };
        open.then_some(openings)
    }

    /// An admitted call answered.
    pub fn succeeded(&self) {
        self.state().0 = State::Closed { failures: 0 };
    }

    /// An admitted call failed. True when this failure opened the breaker
    /// for a new cool-down (the threshold reached, or the probe failed):
    /// the one moment worth a warning. A call admitted before the breaker
    /// opened and failing after only pushes the cool-down's end.
    pub fn failed(&self, now: UnixMillis) -> bool {
        let mut guard = self.state();
        let (state, openings) = &mut *guard;
        let (failures, was_open) = match *state {
            State::Closed { failures } => (failures.saturating_add(1), false),
            // The probe failed: open again from now, a new cool-down.
            State::HalfOpen { .. } => (self.threshold, false),
            // A call admitted before the breaker opened: open from now.
            State::Open { .. } => (self.threshold, true),
        };
        *state = if failures >= self.threshold {
            State::Open {
                until: now + self.cool_down_ms,
            }
        } else {
            State::Closed { failures }
        };
        let opened = failures >= self.threshold && !was_open;
        if opened {
            *openings += 1;
        }
        opened
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_the_threshold_and_probes_once_after_the_cool_down() {
        let b = Breaker::new(3, 1_000);
        for _ in 0..2 {
            assert!(b.admit(0));
            b.failed(0);
        }
        assert!(!b.is_open(0), "two failures of three: still closed");
        assert!(b.admit(0));
        b.failed(0);
        assert!(b.is_open(0));
        assert!(!b.admit(999), "open: fail fast");
        assert!(b.admit(1_000), "cool-down over: the probe goes out");
        assert!(!b.admit(1_000), "one probe at a time");
        b.failed(1_000);
        assert!(!b.admit(1_999), "the probe failed: open again");
        assert!(b.admit(2_000));
        b.succeeded();
        assert!(b.admit(2_000) && b.admit(2_000), "closed again");
    }

    #[test]
    fn only_the_failure_that_opens_it_says_so_once_per_cool_down() {
        let b = Breaker::new(2, 1_000);
        // Three calls admitted while closed, all failing (as concurrent
        // requests do): the second opens it, the third only pushes the end.
        for _ in 0..3 {
            assert!(b.admit(0));
        }
        assert!(!b.failed(0), "one failure of two: still closed");
        assert!(b.failed(0), "the threshold: opened");
        assert!(!b.failed(10), "already open: not a new cool-down");
        assert!(!b.admit(500));
        assert!(b.admit(1_010), "the probe");
        assert!(b.failed(1_010), "the probe failed: a new cool-down");
        assert!(b.admit(2_010));
        b.succeeded();
        assert!(!b.failed(2_010), "closed again: one failure of two");
    }

    #[test]
    fn each_opening_is_a_rest_of_its_own() {
        let b = Breaker::new(1, 1_000);
        assert_eq!(b.rest(0), None, "closed");
        assert!(b.admit(0) && b.admit(0));
        b.failed(0);
        let first = b.rest(0).unwrap();
        b.failed(10);
        assert_eq!(b.rest(500), Some(first), "a late failure is the same rest");
        assert!(b.admit(1_010), "the probe");
        assert_eq!(b.rest(1_010), Some(first), "still resting while it is out");
        b.failed(1_010);
        let second = b.rest(1_010).unwrap();
        assert_ne!(second, first, "the failed probe starts another rest");
        assert_eq!(b.rest(2_010), None, "over");
    }

    #[test]
    fn a_success_resets_the_count() {
        let b = Breaker::new(2, 1_000);
        b.failed(0);
        b.succeeded();
        b.failed(0);
        assert!(!b.is_open(0));
    }

    #[test]
    fn a_probe_that_never_reports_is_replaced_after_a_cool_down() {
        let b = Breaker::new(1, 1_000);
        b.failed(0);
        assert!(b.admit(1_000));
        assert!(!b.admit(1_500));
        assert!(b.admit(2_000));
    }
}
