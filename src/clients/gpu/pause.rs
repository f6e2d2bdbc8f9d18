//! Waiting between polls on the run's clock: a virtual clock jumps to the twin's next event,
//! a real one sleeps a little.

use std::time::Duration;

use crate::clock::Clock;

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
