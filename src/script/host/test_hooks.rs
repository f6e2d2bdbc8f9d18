//! The hooks the crash-safety tests steer a run with, read from the environment. They are
//! compiled in only with the `test-hooks` feature (the tests turn it on): a release binary
//! ignores the variables, so an inherited environment can never crash a run on purpose.

/// What the tests asked of this run; all off in a build without `test-hooks`.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TestHooks {
    /// The process exits right after this many mutating calls have been answered (before the
    /// journal hears of it), as a run killed with SIGKILL would
    /// (`RUNBOOK_CRASH_AFTER_MUTATION`).
    pub(crate) crash_after: Option<u64>,
    /// A stand-in for a bug: a panic right after this many mutating calls have been answered
    /// (`RUNBOOK_PANIC_AFTER_MUTATION`), to prove the cleanups still run.
    pub(crate) panic_after: Option<u64>,
}

impl TestHooks {
    #[cfg(feature = "test-hooks")]
    pub(crate) fn from_env() -> Self {
        let number = |name: &str| std::env::var(name).ok().and_then(|n| n.parse().ok());
        Self {
            crash_after: number("RUNBOOK_CRASH_AFTER_MUTATION"),
            panic_after: number("RUNBOOK_PANIC_AFTER_MUTATION"),
        }
    }

    #[cfg(not(feature = "test-hooks"))]
    pub(crate) fn from_env() -> Self {
        Self::default()
    }
}

/// Whether this run goes without a journal (`RUNBOOK_JOURNAL=off`, the benchmarks' baseline
/// in scripts/bench-lab.py, built with `--features test-hooks`): a run nothing can recover.
#[cfg(feature = "test-hooks")]
pub(crate) fn journal_off() -> bool {
    std::env::var("RUNBOOK_JOURNAL").as_deref() == Ok("off")
}

/// A release build always journals.
#[cfg(not(feature = "test-hooks"))]
pub(crate) fn journal_off() -> bool {
    false
}
