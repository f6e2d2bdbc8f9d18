//! The environment variables the crash-safety tests steer a run with, read here for the
//! script host's builder. Compiled only with the `test-hooks` feature: a release binary ignores
//! them, and always journals.

use crate::script::TestHooks;

/// `RUNBOOK_CRASH_AFTER_MUTATION=N` (exit as SIGKILL would after N answered mutating calls) and
/// `RUNBOOK_PANIC_AFTER_MUTATION=N` (a panic there instead).
#[cfg(feature = "test-hooks")]
pub(crate) fn from_env() -> TestHooks {
    let number = |name: &str| std::env::var(name).ok().and_then(|n| n.parse().ok());
    TestHooks::new(
        number("RUNBOOK_CRASH_AFTER_MUTATION"),
        number("RUNBOOK_PANIC_AFTER_MUTATION"),
    )
}

#[cfg(not(feature = "test-hooks"))]
pub(crate) fn from_env() -> TestHooks {
    TestHooks::default()
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
