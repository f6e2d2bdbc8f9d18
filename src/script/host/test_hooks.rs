//! The hooks the crash-safety tests steer a run with, read from the environment. They are
//! compiled in only with the `test-hooks` feature (the tests turn it on): a release binary
//! has no code for them, not even their names, so an inherited environment can never crash a
//! run on purpose or switch its journal off.

/// What the tests asked of this run; nothing in a build without `test-hooks`.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TestHooks {
    /// The process exits right after this many mutating calls have been answered (before the
    /// journal hears of it), as a run killed with SIGKILL would
    /// (`RUNBOOK_CRASH_AFTER_MUTATION`).
    #[cfg(feature = "test-hooks")]
    crash_after: Option<u64>,
    /// A stand-in for a bug: a panic right after this many mutating calls have been answered
    /// (`RUNBOOK_PANIC_AFTER_MUTATION`), to prove the cleanups still run.
    #[cfg(feature = "test-hooks")]
    panic_after: Option<u64>,
}

#[cfg(feature = "test-hooks")]
impl TestHooks {
    pub(crate) fn from_env() -> Self {
        let number = |name: &str| std::env::var(name).ok().and_then(|n| n.parse().ok());
        Self {
            crash_after: number("RUNBOOK_CRASH_AFTER_MUTATION"),
            panic_after: number("RUNBOOK_PANIC_AFTER_MUTATION"),
        }
    }

    /// What the tests asked for once `calls` mutating calls have been answered.
    pub(crate) fn after_answer(&self, calls: u64) {
        if self.crash_after.is_some_and(|n| calls >= n) {
            // Gone without a word, cleanups and all, like SIGKILL.
            std::process::exit(137);
        }
        if self.panic_after == Some(calls) {
            panic!("the RUNBOOK_PANIC_AFTER_MUTATION test hook, after mutation {calls}");
        }
    }
}

#[cfg(not(feature = "test-hooks"))]
impl TestHooks {
    pub(crate) fn from_env() -> Self {
        Self::default()
    }

    pub(crate) fn after_answer(&self, _calls: u64) {}
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
