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
    /// How many of the embedded twin's tasks wait for a moment of this clock's time (a long
    /// command's end); none on a real clock.
    fn parked(&self) -> usize {
        0
    }
    /// Wakes when this clock reads `at` (a watchdog's deadline): a real clock sleeps until
    /// then; a virtual one wakes when something else moves time that far, and does not
    /// count as parked.
    fn wake_at(&self, at: Duration) -> Sleep {
        self.sleep(at.saturating_sub(self.now()))
    }
    /// Unix seconds now: the wall clock, or for virtual time its instant on the calendar
    /// (time zero is 2026-01-01T00:00:00Z), so timestamps written into a twin agree with it.
    fn unix_seconds(&self) -> i64;
}
