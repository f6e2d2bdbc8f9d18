//! The top-level error: owns exit codes and renders the "caused by" chain.

use std::path::PathBuf;

/// How `runbook` ends, as the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Passed = 0,
    Failed = 1,
    ScriptError = 2,
    /// A cleanup failed or did not finish: something may be left behind. Wins over every
    /// other ending, so a leak is never hidden behind "interrupted" or "failed". Also a run
    /// that runbook itself broke off (a bug, caught): its cleanups ran, but what the run had
    /// under way when it broke cannot be vouched for.
    CleanupFailed = 3,
    /// Stopped by SIGHUP (128 + 1), cleanups done.
    HungUp = 129,
    Interrupted = 130,
    /// Stopped by SIGTERM (128 + 15), cleanups done.
    Terminated = 143,
}

impl Exit {
    pub fn code(self) -> i32 {
        self as i32
    }
}

impl From<&crate::report::Report> for Exit {
    fn from(report: &crate::report::Report) -> Self {
        if report.left_behind().is_empty() {
            Exit::from(report.status)
        } else {
            Exit::CleanupFailed
        }
    }
}

impl From<crate::report::RunStatus> for Exit {
    fn from(status: crate::report::RunStatus) -> Self {
        use crate::report::RunStatus;
        match status {
            RunStatus::Passed => Exit::Passed,
            RunStatus::Failed => Exit::Failed,
            RunStatus::Error => Exit::ScriptError,
            RunStatus::Interrupted => Exit::Interrupted,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),
    #[error("cannot read {what} from {path}")]
    Read {
        path: PathBuf,
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {what}")]
    ReadRefused {
        what: String,
        #[source]
        source: crate::sandbox::SandboxError,
    },
    #[error("cannot write {what} to {path}")]
    Write {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("the run journal")]
    Journal(#[source] crate::journal::JournalError),
    #[error(transparent)]
    History(crate::history::HistoryError),
    /// The target's Lease: held by another run, or not to be read or written.
    #[error(transparent)]
    Lease(Box<crate::lock::LeaseError>),
    /// The shared store (`--state postgres://`): not reached, refused, or newer than runbook.
    #[error(transparent)]
    Store(crate::store::StoreError),
    #[error(transparent)]
    Push(crate::clients::pushgateway::PushError),
    #[error("cannot capture the lab")]
    Capture(#[source] crate::capture::CaptureError),
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
    #[error("the run stopped unexpectedly: {0}")]
    Crashed(String),
}

impl Error {
    pub fn exit(&self) -> Exit {
        match self {
            Error::Crashed(_) => Exit::Failed,
            _ => Exit::ScriptError,
        }
    }

    /// `error: message`, then one `caused by:` line per source.
    pub fn render(&self) -> String {
        let mut out = format!("error: {self}\n");
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            out.push_str(&format!("  caused by: {cause}\n"));
            source = cause.source();
        }
        crate::script::elide_long_lines(&out)
    }
}
