//! The hooks the crash-safety tests steer a run with. They are compiled in only with the
//! `test-hooks` feature (the tests turn it on): a release binary has no code for them, not even
//! their names, so an inherited environment can never crash a run on purpose. The app reads
//! them from the environment and hands them to the host's builder.

/// What the tests asked of this run; nothing in a build without `test-hooks`.
#[derive(Debug, Default, Clone, Copy)]
pub struct TestHooks {
    /// The process exits right after this many mutating calls have been answered (before the
    /// journal hears of it), as a run killed with SIGKILL would.
    #[cfg(feature = "test-hooks")]
    crash_after: Option<u64>,
    /// A stand-in for a bug: a panic right after this many mutating calls have been answered,
    /// to prove the cleanups still run.
    #[cfg(feature = "test-hooks")]
    panic_after: Option<u64>,
}

#[cfg(feature = "test-hooks")]
impl TestHooks {
    /// Exit after `crash_after` answered mutating calls, or panic after `panic_after`.
    pub fn new(crash_after: Option<u64>, panic_after: Option<u64>) -> Self {
        Self {
            crash_after,
            panic_after,
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
    pub(crate) fn after_answer(&self, _calls: u64) {}
}
