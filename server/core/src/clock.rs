//! Time as a value passed in. Domain code asks the [`Clock`] it was given,
//! never the system, so expiry and TTL tests move time instead of sleeping.

use std::sync::{
    Arc,
    atomic::{AtomicI64, Ordering},
};

/// Milliseconds since the Unix epoch.
pub type UnixMillis = i64;

pub trait Clock: Send + Sync + 'static {
    fn now_ms(&self) -> UnixMillis;
}

/// The real clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> UnixMillis {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
    }
}

/// A clock tests set and advance by hand.
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    pub fn new(start: UnixMillis) -> Self {
        Self(Arc::new(AtomicI64::new(start)))
    }

    pub fn advance_ms(&self, by: i64) {
        self.0.fetch_add(by, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> UnixMillis {
        self.0.load(Ordering::SeqCst)
    }
}
