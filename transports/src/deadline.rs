//! A point in time by which an operation must finish, remembering the timeout it came from.

use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    pub(crate) at: Instant,
    /// The timeout the deadline was computed from, for error messages.
    pub(crate) timeout: Duration,
}

impl Deadline {
    /// `None` (no deadline) for `None` (no timeout).
    pub(crate) fn after(timeout: Option<Duration>) -> Option<Deadline> {
        timeout.map(|timeout| Deadline { at: Instant::now().checked_add(timeout).unwrap_or_else(far_future), timeout })
    }

    /// Time left, or `None` once the deadline has passed (never `Some(ZERO)`, which std's socket
    /// timeouts reject).
    pub(crate) fn remaining(&self) -> Option<Duration> {
        Some(self.at.saturating_duration_since(Instant::now())).filter(|d| !d.is_zero())
    }

    /// The earlier of two optional deadlines.
    pub(crate) fn earliest(a: Option<Deadline>, b: Option<Deadline>) -> Option<Deadline> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.at < a.at { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// An instant far enough ahead to stand for "never" when a huge timeout overflows `Instant`.
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600)
}
