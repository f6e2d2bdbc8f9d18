//! Waiting for an AWS resource to reach a state, on the run's clock: on the twin's virtual
//! clock the waiter wakes at each event (so a wait shows the seed's exact durations), on the
//! wall clock it polls from every second up to every 15 s, the aws CLI's waiters' pace.

use std::time::Duration;

use super::error::AwsError;
use crate::clock::{Clock, format_duration};

/// What one look at the resource found.
pub(super) enum Probe {
    /// The state waited for (its name, e.g. `ACTIVE`, or `deleted`).
    Done(String),
    /// A state it will not leave (`CREATE_FAILED`, `DEGRADED`, ...).
    Failed(String),
    /// Still on the way, in this state.
    Pending(String),
}

/// Polls on the wall clock start at 1 s and double up to 15 s: quick answers for quick
/// changes, the aws CLI's pace for slow ones.
const FIRST_POLL: Duration = Duration::from_secs(1);
const REAL_POLL: Duration = Duration::from_secs(15);

/// Probes until done, failed or `timeout`; `what` names the resource in errors
/// ("cluster myeks5w"), `wanted` the state waited for.
pub(super) async fn wait_for<F, Fut>(
    clock: &dyn Clock,
    timeout: Duration,
    operation: &str,
    what: &str,
    wanted: &str,
    mut probe: F,
) -> Result<String, AwsError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Probe, AwsError>>,
{
    let deadline = clock.now() + timeout;
    let mut poll = FIRST_POLL;
    loop {
        match probe().await? {
            Probe::Done(state) => return Ok(state),
            Probe::Failed(state) => {
                return Err(AwsError::new(
                    operation,
                    "WaiterFailed",
                    format!("{what} is {state}, so it will not become {wanted}"),
                ));
            }
            Probe::Pending(state) => {
                if clock.now() >= deadline {
                    return Err(AwsError::new(
                        operation,
                        "Timeout",
                        format!(
                            "{what} is still {state} after {}; it did not become {wanted}",
                            format_duration(timeout)
                        ),
                    ));
                }
            }
        }
        if clock.is_virtual() {
            clock.idle_until(deadline).await;
        } else {
            clock
                .sleep(deadline.saturating_sub(clock.now()).min(poll))
                .await;
            poll = (poll * 2).min(REAL_POLL);
        }
    }
}

/// A status string against the states that end a wait.
pub(super) fn classify(status: &str, done: &[&str], failed: &[&str]) -> Probe {
    // A status may carry why after it (`CREATE_FAILED (code: message)`).
    let word = status.split(' ').next().unwrap_or(status);
    if done.contains(&word) {
        Probe::Done(status.into())
    } else if failed.contains(&word) {
        Probe::Failed(status.into())
    } else {
        Probe::Pending(status.into())
    }
}
