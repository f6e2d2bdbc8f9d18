//! The locks a command that changes a target holds for as long as it runs (`run`, `recover`):
//! named by what the target is (its identity), not how its address was spelt. The local file
//! lock (one machine's state folder) or, with a shared store, its advisory lock (every runner of
//! the store meets it, for a target with no cluster yet too) and, where the cluster answers, a
//! Lease in the cluster, which every runner meets whatever machine and state folder it has.
//! Given back after the cleanups; a Lease lost to another run closes the run's mutations.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::error::Error;
use crate::journal;
use crate::lock::{Acquired, Gone, HeldLease, LeaseHolder, LeaseSettings, LostLease, Say};
use crate::script::Host;
use crate::store::{LockTaken, SharedStore, StoreHolder};
use crate::target::{TargetClients, TargetIdentity};

/// Where the lock beside the Lease is held: one machine's state folder, or the shared store.
pub(crate) enum Beside<'a> {
    Folder(&'a Path),
    Store(&'a Arc<SharedStore>),
}

/// The shared store's lock on a target, given back when dropped (or with its session).
struct StoreLock {
    store: Arc<SharedStore>,
    target: String,
    run_id: String,
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        if let Err(error) = self.store.unlock(&self.target, &self.run_id) {
            eprintln!(
                "warning: could not give back the target's lock in the shared store (it goes with this process's connection): {error}"
            );
        }
    }
}

/// How often a run waiting for the shared store's lock asks again.
const STORE_LOCK_RETRY: Duration = Duration::from_secs(1);

fn store_lock(
    store: &Arc<SharedStore>,
    target: &str,
    taker: &Taker<'_>,
    wait: Duration,
) -> Result<StoreLock, Error> {
    let me = StoreHolder {
        run_id: taker.run_id.to_string(),
        runbook: taker.runbook.to_string(),
        host: crate::lock::this_host(),
        pid: i64::from(std::process::id()),
    };
    let deadline = std::time::Instant::now() + wait;
    let mut said = false;
    loop {
        let holder = match store.try_lock(target, &me).map_err(Error::Store)? {
            LockTaken::Taken => {
                return Ok(StoreLock {
                    store: store.clone(),
                    target: target.to_string(),
                    run_id: taker.run_id.to_string(),
                });
            }
            LockTaken::HeldBy(Some(holder)) => holder.to_string(),
            LockTaken::HeldBy(None) => "another run (it is writing its name)".to_string(),
        };
        if std::time::Instant::now() >= deadline {
            return Err(Error::Usage(format!(
                "{target} is in use by {holder}, as the shared store {} says; wait for it, or pass --wait-lock DURATION",
                store.shown()
            )));
        }
        if !said {
            eprintln!("waiting for {holder} to let go of the target (the shared store's lock)");
            said = true;
        }
        std::thread::sleep(STORE_LOCK_RETRY.min(deadline - std::time::Instant::now()));
    }
}

/// What a recover's holder name starts with, before the id of the run it recovers.
pub(crate) const RECOVER_OF: &str = "recover-of-";

/// Who is taking the locks, as the messages of a refused runner name it.
pub(crate) struct Taker<'a> {
    pub(crate) run_id: &'a str,
    pub(crate) runbook: &'a str,
}

pub(crate) struct TargetLocks {
    _file: Option<journal::TargetLock>,
    _store: Option<StoreLock>,
    lease: Arc<Mutex<Option<HeldLease>>>,
    handle: tokio::runtime::Handle,
}

impl TargetLocks {
    /// The file lock or the shared store's, then the Lease when the cluster answers (a target
    /// with no cluster yet is held by the first alone); together they wait up to `wait` for
    /// holders to let go.
    pub(crate) fn take(
        runtime: &tokio::runtime::Runtime,
        clients: &TargetClients,
        identity: &TargetIdentity,
        beside: &Beside<'_>,
        taker: &Taker<'_>,
        wait: Duration,
    ) -> Result<Self, Error> {
        let started = std::time::Instant::now();
        let (file, store) = match beside {
            Beside::Folder(state_dir) => (Some(file_lock(state_dir, identity, taker, wait)?), None),
            Beside::Store(store) => (None, Some(store_lock(store, &identity.key(), taker, wait)?)),
        };
        let lease = match identity.cluster_uid {
            Some(_) => {
                let shared = matches!(beside, Beside::Store(_));
                let left = wait.saturating_sub(started.elapsed());
                Some(runtime.block_on(lease(clients, taker, left, shared))?)
            }
            None => None,
        };
        Ok(Self {
            _file: file,
            _store: store,
            lease: Arc::new(Mutex::new(lease)),
            handle: runtime.handle().clone(),
        })
    }

    /// From now on, a Lease lost to another run (or not renewed for its whole duration) stops
    /// the run's mutations: the run that holds the target now decides what happens to it.
    pub(crate) fn close_mutations_when_lost(&self, host: &Arc<Host>) {
        let Some(mut lost) = self.held().as_ref().map(HeldLease::lost) else {
            return;
        };
        let host = host.clone();
        self.handle.spawn(async move {
            if lost.wait_for(Option::is_some).await.is_err() {
                return;
            }
            let Some(LostLease { why }) = lost.borrow().clone() else {
                return;
            };
            eprintln!(
                "warning: this run no longer holds the target: {why}; it changes nothing more"
            );
            host.close_mutations(&format!("the run no longer holds the target ({why})"));
        });
    }

    /// Gives the Lease back (the file lock goes when this is dropped), saying so if it cannot.
    pub(crate) fn release(self) {
        self.giver()();
    }

    /// What gives the Lease back from anywhere, once: the end of the run, or a stop signal's
    /// abort, which exits the process without unwinding.
    pub(crate) fn giver(&self) -> impl Fn() + Send + Sync + 'static {
        let lease = self.lease.clone();
        let handle = self.handle.clone();
        move || {
            let Some(held) = lease.lock().unwrap_or_else(PoisonError::into_inner).take() else {
                return;
            };
            let release = held.release();
            // On a runtime thread (an abort), this thread may block while others run the
            // release; elsewhere the runtime runs it here.
            let released = match tokio::runtime::Handle::try_current() {
                Ok(_) => tokio::task::block_in_place(|| handle.block_on(release)),
                Err(_) => handle.block_on(release),
            };
            if let Err(error) = released {
                eprintln!(
                    "warning: could not give back the target's lock (its Lease expires on its own within {}s): {error}",
                    LeaseSettings::default().duration.as_secs()
                );
            }
        }
    }

    fn held(&self) -> MutexGuard<'_, Option<HeldLease>> {
        self.lease.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for TargetLocks {
    /// A run that ends on an error gives the Lease back as one that ends well does.
    fn drop(&mut self) {
        self.giver()();
    }
}

fn file_lock(
    state_dir: &Path,
    identity: &TargetIdentity,
    taker: &Taker<'_>,
    wait: Duration,
) -> Result<journal::TargetLock, Error> {
    let file = journal::acquire(
        state_dir,
        &journal::Holder {
            pid: std::process::id(),
            run_id: taker.run_id.to_string(),
            runbook: taker.runbook.to_string(),
            target: identity.key(),
        },
        wait,
    )
    .map_err(|e| Error::Usage(e.to_string()))?;
    if let Some(note) = &file.taken_over {
        eprintln!("note: {note}");
    }
    Ok(file)
}

/// The Lease; `shared`: the run's journals are in a shared store (a taken-over run is
/// recovered from there, on any machine).
async fn lease(
    clients: &TargetClients,
    taker: &Taker<'_>,
    wait: Duration,
    shared: bool,
) -> Result<HeldLease, Error> {
    let me = LeaseHolder {
        run_id: taker.run_id.to_string(),
        runbook: taker.runbook.to_string(),
        host: crate::lock::this_host(),
        pid: std::process::id(),
        started: jiff::Timestamp::now().to_string(),
        process_space: crate::lock::process_space(),
    };
    let say: Say = Arc::new(|line| eprintln!("{line}"));
    let (held, how) = crate::lock::acquire(
        clients.kube.clone(),
        me,
        LeaseSettings::default(),
        wait,
        say,
    )
    .await
    .map_err(|e| Error::Lease(Box::new(e)))?;
    // A recover taking over from the run it recovers has nothing to add.
    let recovering = taker.run_id.strip_prefix(RECOVER_OF);
    if let Acquired::TakenOver { previous, because } = how
        && recovering != Some(previous.run_id.as_str())
    {
        let why = match because {
            Gone::Expired => "which stopped renewing it (killed or lost)",
            Gone::ProcessEnded => "whose process has ended",
        };
        let from = if shared {
            "with the same --state, from any machine,"
        } else {
            "with its state folder"
        };
        eprintln!(
            "note: took over the target's lock from {previous}, {why}; \
             if it changed anything, `runbook recover {}` {from} puts it back",
            previous.run_id
        );
    }
    Ok(held)
}
