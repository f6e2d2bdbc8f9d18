//! Which kinds of request the twin has served, with how often each came: the RBAC attributes of
//! Kubernetes requests (`GET /twin/audit` on its API), the IAM actions of AWS calls (the same
//! path on its AWS endpoint). A test holds a Role or an IAM policy to exactly what a runbook
//! asked for with them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Off until [`Audit::enable`]: `lab serve` keeps one for its clients to read; the embedded
/// twin of a run has no reader and does not pay for it (about 8 µs a request).
pub(crate) struct Audit<K> {
    enabled: AtomicBool,
    seen: Mutex<BTreeMap<K, u64>>,
}

impl<K> Default for Audit<K> {
    fn default() -> Self {
        Self {
            enabled: AtomicBool::new(false),
            seen: Mutex::new(BTreeMap::new()),
        }
    }
}

impl<K: Ord + Clone> Audit<K> {
    fn seen(&self) -> MutexGuard<'_, BTreeMap<K, u64>> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn enable(&self) {
        self.enabled.store(true, Ordering::Relaxed);
    }

    pub(crate) fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    pub(crate) fn record(&self, key: K) {
        if self.is_enabled() {
            *self.seen().entry(key).or_default() += 1;
        }
    }

    /// Every kind of request so far, in a stable order, with its count.
    pub(crate) fn entries(&self) -> Vec<(K, u64)> {
        self.seen().iter().map(|(k, n)| (k.clone(), *n)).collect()
    }

    /// Forgets what was served so far (`POST /twin/audit?reset`): a test audits one run.
    pub(crate) fn clear(&self) {
        self.seen().clear();
    }
}
