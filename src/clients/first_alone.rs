//! The first request to an endpoint goes alone; the rest wait until its answer starts (or it
//! fails). By then its connection is in the pool, and an HTTP/2 one carries them all: without
//! the wait, requests started at once each open a connection before any has said it speaks
//! HTTP/2. The Kubernetes transport and the AWS SDK's client both hold their requests to one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// Open once the first request has its answer (or is given up).
#[derive(Debug, Default)]
pub(crate) struct Gate {
    taken: AtomicBool,
    open: AtomicBool,
    opened: Notify,
}

impl Gate {
    pub(crate) fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    /// True for the one caller that goes first; it must hold an [`OpenOnDrop`] meanwhile.
    pub(crate) fn take_first(&self) -> bool {
        !self.taken.swap(true, Ordering::AcqRel)
    }

    fn open(&self) {
        self.open.store(true, Ordering::Release);
        self.opened.notify_waiters();
    }

    /// Resolves once the gate is open.
    pub(crate) async fn wait(&self) {
        loop {
            let opened = self.opened.notified();
            if self.is_open() {
                return;
            }
            opened.await;
        }
    }
}

/// Opens the gate however the first request ends, a dropped one included.
pub(crate) struct OpenOnDrop(Arc<Gate>);

impl OpenOnDrop {
    pub(crate) fn new(gate: Arc<Gate>) -> Self {
        Self(gate)
    }
}

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}
