//! Ctrl-C (and SIGTERM, SIGHUP) as the script host sees it: the first asks the run to stop,
//! the second aborts. The first signal's number decides the exit code (130, 143, 129).

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use tokio::sync::watch;

pub const SIGHUP: i32 = 1;
pub const SIGINT: i32 = 2;
pub const SIGTERM: i32 = 15;

#[derive(Clone)]
pub struct Interrupt {
    signals: Arc<watch::Sender<u32>>,
    /// The first signal's number (SIGINT 2, SIGTERM 15, SIGHUP 1); 0 before any.
    first: Arc<AtomicI32>,
}

impl Interrupt {
    pub fn new() -> Self {
        Self {
            signals: Arc::new(watch::channel(0).0),
            first: Arc::new(AtomicI32::new(0)),
        }
    }

    /// Records one more Ctrl-C and returns how many there have been.
    pub fn raise(&self) -> u32 {
        self.raise_signal(SIGINT)
    }

    /// Records one more stop request by signal `number`; returns how many there have been.
    pub fn raise_signal(&self, number: i32) -> u32 {
        let _ = self
            .first
            .compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst);
        let mut count = 0;
        self.signals.send_modify(|n| {
            *n += 1;
            count = *n;
        });
        count
    }

    /// Forgets earlier interrupts (the REPL: Ctrl-C stopped one evaluation, not the session).
    pub fn reset(&self) {
        self.signals.send_replace(0);
        self.first.store(0, Ordering::SeqCst);
    }

    /// The number of the first signal that asked the run to stop, if any.
    pub fn first_signal(&self) -> Option<i32> {
        Some(self.first.load(Ordering::SeqCst)).filter(|n| *n != 0)
    }

    /// How the first stop request came, as a message names it: "Ctrl-C", "SIGTERM", "SIGHUP".
    pub fn first_signal_name(&self) -> &'static str {
        match self.first_signal() {
            Some(SIGTERM) => "SIGTERM",
            Some(SIGHUP) => "SIGHUP",
            _ => "Ctrl-C",
        }
    }

    pub fn count(&self) -> u32 {
        *self.signals.borrow()
    }

    /// Resolves once at least `count` interrupts have been raised.
    pub async fn reached(&self, count: u32) {
        let mut rx = self.signals.subscribe();
        // The sender lives as long as self, so the channel cannot close under us.
        let _ = rx.wait_for(|n| *n >= count).await;
    }
}

impl Default for Interrupt {
    fn default() -> Self {
        Self::new()
    }
}
