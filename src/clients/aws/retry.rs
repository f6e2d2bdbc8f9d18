//! How AWS calls ride through throttling and server errors, in one place: the SDK's retry
//! strategy with the run's attempt budget and its backoff slept on the run's clock; past the
//! SDK's attempts, [`until_deadline`] tries a call again on the run's clock until a deadline
//! (a cleanup's, which must not give up on a busy API; a node group's update in flight).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_sdk_eks::config::{AsyncSleep, Sleep};

use super::error::AwsError;
use crate::clock::{Clock, VirtualClock};

/// Attempts per call (the first and its retries) unless `--aws-max-attempts` says otherwise.
/// The SDK's own default (3) gives up on the throttling a real account shows under load;
/// Terraform's AWS provider allows 25. 15 with backoff capped at 20 s rides out about four
/// minutes of a throttled API per call.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 15;

/// The longest single backoff.
const MAX_BACKOFF: Duration = Duration::from_secs(20);

/// What the AWS clients do when a call is throttled or fails on the server side.
#[derive(Clone)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    /// The run's clock when it is virtual: backoffs then move virtual time instead of waiting,
    /// and have no jitter, so a run under faults repeats exactly.
    pub virtual_clock: Option<Arc<VirtualClock>>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            virtual_clock: None,
        }
    }
}

impl fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("max_attempts", &self.max_attempts)
            .field("virtual", &self.virtual_clock.is_some())
            .finish()
    }
}

impl RetryPolicy {
    /// Standard retries on a virtual clock (deterministic, and the adaptive rate limiter reads
    /// the wall clock); adaptive ones against a real endpoint, where its client-side rate
    /// limiting is what keeps a throttled account from being hammered.
    pub(super) fn retry_config(&self) -> RetryConfig {
        let config = if self.virtual_clock.is_some() {
            RetryConfig::standard().with_use_static_exponential_base(true)
        } else {
            RetryConfig::adaptive()
        };
        config
            .with_max_attempts(self.max_attempts.max(1))
            .with_max_backoff(MAX_BACKOFF)
    }

    pub(super) fn sleep(&self) -> Option<ClockSleep> {
        self.virtual_clock.clone().map(ClockSleep)
    }
}

/// The SDK's sleeps on the run's virtual clock. The clock moves when the sleep is first
/// polled, not when it is made: the SDK also makes sleeps it races against work that is
/// already done (an identity load's timeout), and those must not move time.
pub(super) struct ClockSleep(Arc<VirtualClock>);

impl fmt::Debug for ClockSleep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClockSleep")
    }
}

impl AsyncSleep for ClockSleep {
    fn sleep(&self, duration: Duration) -> Sleep {
        let clock = self.0.clone();
        Sleep::new(async move { clock.advance(duration) })
    }
}

/// The pauses between tries of [`until_deadline`]: the first, doubling up to the longest.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    pub first: Duration,
    pub longest: Duration,
}

impl Backoff {
    /// A cleanup's calls after the SDK gave up: 2 s, doubling to 30 s.
    pub const CLEANUP: Backoff = Backoff {
        first: Duration::from_secs(2),
        longest: Duration::from_secs(30),
    };
    /// Every 5 s: EKS's updates take minutes, its describe is cheap.
    pub const EVERY_5S: Backoff = Backoff {
        first: Duration::from_secs(5),
        longest: Duration::from_secs(5),
    };
}

/// Calls `make` until it answers, fails with an error `retryable` does not take, or the next
/// pause would end past `deadline` on `clock` (no deadline: one try). `on_retry` hears each
/// error that is tried again, with the pause before the next try.
pub async fn until_deadline<T, F, Fut>(
    clock: &dyn Clock,
    deadline: Option<Duration>,
    backoff: Backoff,
    retryable: impl Fn(&AwsError) -> bool,
    mut on_retry: impl FnMut(&AwsError, Duration),
    make: F,
) -> Result<T, AwsError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, AwsError>>,
{
    let mut pause = backoff.first;
    loop {
        match make().await {
            Err(error)
                if retryable(&error)
                    && deadline.is_some_and(|deadline| clock.now() + pause <= deadline) =>
            {
                on_retry(&error, pause);
                clock.sleep(pause).await;
                pause = (pause * 2).min(backoff.longest);
            }
            outcome => return outcome,
        }
    }
}

/// Error codes that say "try again later" rather than "this is wrong": throttling, server
/// errors and a connection that did not get through, as each service spells them.
pub fn is_transient(code: &str) -> bool {
    matches!(
        code,
        "ThrottlingException"
            | "Throttling"
            | "ThrottledException"
            | "RequestLimitExceeded"
            | "TooManyRequestsException"
            | "RequestThrottled"
            | "SlowDown"
            | "ServerException"
            | "ServiceException"
            | "InternalError"
            | "InternalFailure"
            | "ServiceFailure"
            | "ServiceUnavailable"
            | "ServiceUnavailableException"
            | "Unavailable"
            | "ConnectionError"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttling_and_server_errors_are_transient_and_bad_input_is_not() {
        for code in [
            "ThrottlingException",
            "RequestLimitExceeded",
            "Throttling",
            "ServerException",
            "InternalError",
            "ServiceFailure",
            "ConnectionError",
        ] {
            assert!(is_transient(code), "{code}");
        }
        for code in [
            "ResourceNotFoundException",
            "InvalidParameterException",
            "InvalidPermission.NotFound",
            "ResourceInUseException",
        ] {
            assert!(!is_transient(code), "{code}");
        }
    }

    #[test]
    fn until_a_deadline_tries_again_with_doubling_pauses_and_stops_before_it() {
        let clock = Arc::new(VirtualClock::new());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let tries = std::sync::atomic::AtomicU32::new(0);
        let mut pauses = Vec::new();
        let outcome: Result<(), AwsError> = runtime.block_on(until_deadline(
            clock.as_ref(),
            Some(Duration::from_secs(60)),
            Backoff::CLEANUP,
            |e| is_transient(&e.code),
            |_, pause| pauses.push(pause.as_secs()),
            || {
                tries.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async {
                    Err(AwsError::new(
                        "DescribeNodegroup",
                        "ThrottlingException",
                        "slow down",
                    ))
                }
            },
        ));
        assert_eq!(outcome.unwrap_err().code, "ThrottlingException");
        // 2 + 4 + 8 + 16 = 30 s; 30 more would end at 60 s, which is still within it.
        assert_eq!(pauses, [2, 4, 8, 16, 30]);
        assert_eq!(tries.load(std::sync::atomic::Ordering::SeqCst), 6);
        assert_eq!(clock.now(), Duration::from_secs(60));
        // Without a deadline, or for an error that is not transient: one try.
        let once: Result<(), AwsError> = runtime.block_on(until_deadline(
            clock.as_ref(),
            None,
            Backoff::CLEANUP,
            |_| true,
            |_, _| panic!("no retry"),
            || async { Err(AwsError::new("X", "ThrottlingException", "")) },
        ));
        assert!(once.is_err());
    }

    #[test]
    fn a_virtual_sleep_moves_time_only_when_polled() {
        let clock = Arc::new(VirtualClock::new());
        let sleep = ClockSleep(clock.clone());
        let made = sleep.sleep(Duration::from_secs(5));
        assert_eq!(clock.now(), Duration::ZERO, "making a sleep moves nothing");
        drop(made);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        runtime.block_on(sleep.sleep(Duration::from_secs(5)));
        assert_eq!(clock.now(), Duration::from_secs(5));
    }

    #[test]
    fn the_attempt_budget_reaches_the_sdk() {
        let policy = RetryPolicy {
            max_attempts: 7,
            virtual_clock: None,
        };
        assert_eq!(policy.retry_config().max_attempts(), 7);
        assert_eq!(
            policy.retry_config().mode(),
            aws_config::retry::RetryMode::Adaptive
        );
        let virtual_policy = RetryPolicy {
            max_attempts: 0,
            virtual_clock: Some(Arc::new(VirtualClock::new())),
        };
        let config = virtual_policy.retry_config();
        assert_eq!(config.max_attempts(), 1, "at least the first attempt");
        assert!(config.use_static_exponential_base());
    }
}
