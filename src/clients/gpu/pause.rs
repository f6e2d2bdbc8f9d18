//! Waiting between polls on the run's clock: a virtual clock jumps to the twin's next event,
//! a real one sleeps a little.

use std::time::Duration;

use crate::clock::Clock;

/// How many waits may run at once: one on a virtual clock, where a branch that idles would
/// jump time past what another branch has in flight (and the outcome would depend on polling
/// order); `limit` on a real one.
pub(super) fn concurrency(limit: usize, clock: &dyn Clock) -> usize {
    if clock.is_virtual() { 1 } else { limit.max(1) }
}

pub(super) async fn pause(clock: &dyn Clock, deadline: Duration) {
    if clock.is_virtual() {
        clock.idle_until(deadline).await;
    } else {
        clock
            .sleep(
                deadline
                    .saturating_sub(clock.now())
                    .min(Duration::from_secs(2)),
            )
            .await;
    }
}
