//! Ctrl-C as the script host sees it: the first asks the run to stop, the second aborts.

use std::sync::Arc;

use tokio::sync::watch;

#[derive(Clone)]
pub struct Interrupt {
    signals: Arc<watch::Sender<u32>>,
}

impl Interrupt {
    pub fn new() -> Self {
        Self {
            signals: Arc::new(watch::channel(0).0),
        }
    }

    /// Records one more Ctrl-C and returns how many there have been.
    pub fn raise(&self) -> u32 {
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
