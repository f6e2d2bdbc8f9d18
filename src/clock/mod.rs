//! Time for runbooks: real wall time, or the lab twin's virtual discrete-event clock.

pub mod dates;
mod duration;
mod real;
mod virtual_clock;

pub use duration::{DurationError, format_duration, parse_duration};
pub use real::RealClock;
pub use virtual_clock::VirtualClock;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// A future returned by [`Clock::sleep`].
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// The one source of time for every wait, sleep and timeout in a run.
pub trait Clock: Send + Sync {
    /// Time elapsed since the clock's epoch (the start of the run).
    fn now(&self) -> Duration;
    /// Waits `duration` on this clock. A virtual clock returns at once, having moved time on.
    fn sleep(&self, duration: Duration) -> Sleep;
    /// Waits for the world to change, at most until `deadline` (time since the epoch). A virtual
    /// clock jumps to its next scheduled event or to the deadline, whichever comes first.
    fn idle_until(&self, deadline: Duration) -> Sleep {
        self.sleep(deadline.saturating_sub(self.now()))
    }
    /// Whether time here is virtual (reports then show virtual durations as the primary ones).
    fn is_virtual(&self) -> bool;
    /// Unix seconds now: the wall clock, or for virtual time its instant on the calendar
    /// (time zero is 2026-01-01T00:00:00Z), so timestamps written into a twin agree with it.
    fn unix_seconds(&self) -> i64;
}
