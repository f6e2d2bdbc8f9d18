//! The discrete-event clock: time moves only when the runbook waits, jumping from event to event.
//!
//! The lab twin schedules what its world will do (a cluster turning ACTIVE at +9m24s, a node
//! joining at +2m). When the runbook blocks (a sleep, a poll interval, a waiter), the clock runs
//! every event due before the wait's deadline, in time order, and lands on the deadline. So a
//! 14-minute deploy costs no wall time, and the same runbook always sees the same history.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
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
    /// Tasks of the twin waiting for a moment of virtual time (a long command's end).
    parked: Arc<AtomicUsize>,
}

/// One parked wait's place in the count: given back once, when its moment comes or when the
/// wait is dropped before (a watchdog whose command answered first).
struct Parked {
    parked: Arc<AtomicUsize>,
    counted: Arc<AtomicBool>,
}

impl Parked {
    fn leave(parked: &AtomicUsize, counted: &AtomicBool) {
        if counted.swap(false, Ordering::SeqCst) {
            parked.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        Self::leave(&self.parked, &self.counted);
    }
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

    /// Waits until virtual time reaches `at`, counted among the parked tasks meanwhile: what
    /// the twin does while a long command runs (`dcgmi diag -r 3`), so that a client waiting
    /// for several of them at once knows when all are waiting on the clock and only time can
    /// move them ([`Clock::parked`]).
    pub fn park_until(&self, at: Duration) -> Sleep {
        let (done, wait) = tokio::sync::oneshot::channel::<()>();
        self.parked.fetch_add(1, Ordering::SeqCst);
        let place = Parked {
            parked: self.parked.clone(),
            counted: Arc::new(AtomicBool::new(true)),
        };
        let (parked, counted) = (place.parked.clone(), place.counted.clone());
        self.schedule_at(at, move |_| {
            // Counted out as the event runs, before the waiter wakes: a client never sees a
            // task both done and parked.
            Parked::leave(&parked, &counted);
            let _ = done.send(());
        });
        Box::pin(async move {
            let _place = place;
            let _ = wait.await;
        })
    }

    /// Counted among the parked tasks for as long as the returned future lives, which never
    /// completes: a command that hangs (a DCGM that never answers) waits on nothing time can
    /// bring, so a client's own watchdog is what ends the wait.
    pub fn park_forever(&self) -> Sleep {
        self.parked.fetch_add(1, Ordering::SeqCst);
        let place = Parked {
            parked: self.parked.clone(),
            counted: Arc::new(AtomicBool::new(true)),
        };
        Box::pin(async move {
            let _place = place;
            std::future::pending::<()>().await;
        })
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

    fn parked(&self) -> usize {
        self.parked.load(Ordering::SeqCst)
    }

    fn wake_at(&self, at: Duration) -> Sleep {
        let (done, wait) = tokio::sync::oneshot::channel::<()>();
        self.schedule_at(at, move |_| {
            let _ = done.send(());
        });
        Box::pin(async move {
            let _ = wait.await;
        })
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

    #[tokio::test]
    async fn a_parked_task_is_counted_until_time_reaches_its_moment() {
        let clock = VirtualClock::new();
        let waiting = clock.park_until(Duration::from_secs(900));
        assert_eq!(clock.parked(), 1);
        clock.advance(Duration::from_secs(899));
        assert_eq!(clock.parked(), 1);
        clock.advance(Duration::from_secs(1));
        assert_eq!(clock.parked(), 0);
        waiting.await;
        // A wait given up before its moment leaves the count at once.
        let given_up = clock.park_until(Duration::from_secs(2000));
        assert_eq!(clock.parked(), 1);
        drop(given_up);
        assert_eq!(clock.parked(), 0);
        clock.advance(Duration::from_secs(2000));
        assert_eq!(clock.parked(), 0);
    }

    #[test]
    fn time_never_moves_backwards() {
        let clock = VirtualClock::new();
        clock.advance(Duration::from_secs(100));
        clock.advance_to(Duration::from_secs(50));
        assert_eq!(clock.now(), Duration::from_secs(100));
    }
}
