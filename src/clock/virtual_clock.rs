//! The discrete-event clock: time moves only when the runbook waits, jumping from event to event.
//!
//! The lab twin schedules what its world will do (a cluster turning ACTIVE at +9m24s, a node
//! joining at +2m). When the runbook blocks (a sleep, a poll interval, a waiter), the clock runs
//! every event due before the wait's deadline, in time order, and lands on the deadline. So a
//! 14-minute deploy costs no wall time, and the same runbook always sees the same history.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Mutex;
use std::time::Duration;

use super::{Clock, Sleep};

type Action = Box<dyn FnOnce(Duration) + Send>;

struct Scheduled {
    at: Duration,
    seq: u64,
    action: Action,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

#[derive(Default)]
struct State {
    now: Duration,
    next_seq: u64,
    queue: BinaryHeap<Reverse<Scheduled>>,
}

/// Virtual time with a queue of scheduled events.
#[derive(Default)]
pub struct VirtualClock {
    state: Mutex<State>,
}

impl VirtualClock {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic inside an event action must not wedge the clock for everyone else.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `action` when virtual time reaches `at` (at once on the next advance if `at` is past).
    /// The action receives the time it was due.
    pub fn schedule_at(&self, at: Duration, action: impl FnOnce(Duration) + Send + 'static) {
        let mut state = self.lock();
        let seq = state.next_seq;
        state.next_seq += 1;
        state.queue.push(Reverse(Scheduled {
            at,
            seq,
            action: Box::new(action),
        }));
    }

    /// Runs `action` after `delay` of virtual time.
    pub fn schedule_in(&self, delay: Duration, action: impl FnOnce(Duration) + Send + 'static) {
        let at = self.now() + delay;
        self.schedule_at(at, action);
    }

    /// When the next scheduled event is due, if any.
    pub fn next_event_at(&self) -> Option<Duration> {
        self.lock().queue.peek().map(|Reverse(s)| s.at)
    }

    /// Moves time to `target`, running every event due until then in order. Events scheduled by
    /// those actions run too if they fall before `target`. Time never moves backwards.
    pub fn advance_to(&self, target: Duration) {
        loop {
            let due = {
                let mut state = self.lock();
                match state.queue.peek() {
                    Some(Reverse(next)) if next.at <= target => {
                        let Reverse(event) = state.queue.pop().expect("peeked just now");
                        state.now = state.now.max(event.at);
                        Some(event)
                    }
                    _ => {
                        state.now = state.now.max(target);
                        None
                    }
                }
            };
            // The lock is released while the action runs: actions schedule further events.
            match due {
                Some(event) => (event.action)(event.at),
                None => return,
            }
        }
    }

    /// Moves time on by `delta`.
    pub fn advance(&self, delta: Duration) {
        let target = self.now() + delta;
        self.advance_to(target);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        self.lock().now
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        self.advance(duration);
        Box::pin(std::future::ready(()))
    }

    fn idle_until(&self, deadline: Duration) -> Sleep {
        let target = self
            .next_event_at()
            .map_or(deadline, |next| next.min(deadline));
        self.advance_to(target.max(self.now()));
        Box::pin(std::future::ready(()))
    }

    fn is_virtual(&self) -> bool {
        true
    }

    fn unix_seconds(&self) -> i64 {
        super::dates::VIRTUAL_EPOCH_UNIX_SECONDS + i64::try_from(self.now().as_secs()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn events_run_in_time_order_and_time_lands_on_the_target() {
        let clock = Arc::new(VirtualClock::new());
        let seen = Arc::new(Mutex::new(Vec::new()));
        for (secs, label) in [(30, "b"), (10, "a"), (90, "late")] {
            let seen = seen.clone();
            clock.schedule_at(Duration::from_secs(secs), move |at| {
                seen.lock().unwrap().push((label, at.as_secs()));
            });
        }
        clock.advance(Duration::from_secs(60));
        assert_eq!(*seen.lock().unwrap(), vec![("a", 10), ("b", 30)]);
        assert_eq!(clock.now(), Duration::from_secs(60));
        assert_eq!(clock.next_event_at(), Some(Duration::from_secs(90)));
    }

    #[test]
    fn an_event_can_schedule_a_follow_up_inside_the_same_advance() {
        let clock = Arc::new(VirtualClock::new());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (c, s) = (clock.clone(), seen.clone());
        clock.schedule_at(Duration::from_secs(5), move |_| {
            let s2 = s.clone();
            c.schedule_in(Duration::from_secs(5), move |at| {
                s2.lock().unwrap().push(at)
            });
        });
        clock.advance(Duration::from_secs(20));
        assert_eq!(*seen.lock().unwrap(), vec![Duration::from_secs(10)]);
    }

    #[test]
    fn time_never_moves_backwards() {
        let clock = VirtualClock::new();
        clock.advance(Duration::from_secs(100));
        clock.advance_to(Duration::from_secs(50));
        assert_eq!(clock.now(), Duration::from_secs(100));
    }
}
