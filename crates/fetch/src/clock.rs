//! Time, injected: policy code asks a [`Clock`], tests use a [`FakeClock`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Where the current time comes from.
pub trait Clock: Send + Sync {
    fn now(&self) -> SystemTime;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that only moves when told to. Clones share the same time.
#[derive(Debug, Clone)]
pub struct FakeClock(Arc<Mutex<SystemTime>>);

impl FakeClock {
    pub fn new(start: SystemTime) -> Self {
        FakeClock(Arc::new(Mutex::new(start)))
    }

    /// Moves time forward.
    pub fn advance(&self, by: Duration) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *t += by;
    }

    pub fn set(&self, to: SystemTime) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = to;
    }
}

impl Clock for FakeClock {
    fn now(&self) -> SystemTime {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}
