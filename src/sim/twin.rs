//! The twin as one object: the virtual clock and the world it drives. Every change runs the
//! controllers to rest and arms the timers they asked for on the clock.

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::clock::{Clock, VirtualClock};

use super::kube::controllers::{fire_timer, reconcile};
use super::kube::state::{KubeState, Timer};

pub struct Twin {
    pub clock: Arc<VirtualClock>,
    kube: Mutex<KubeState>,
    this: Weak<Twin>,
}

impl Twin {
    pub fn new(clock: Arc<VirtualClock>) -> Arc<Self> {
        Arc::new_cyclic(|this| Self {
            clock,
            kube: Mutex::new(KubeState::default()),
            this: this.clone(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, KubeState> {
        self.kube
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Changes the Kubernetes world, then lets the controllers react.
    pub fn kube<R>(&self, change: impl FnOnce(&mut KubeState) -> R) -> R {
        let (result, timers) = {
            let mut state = self.lock();
            state.now = self.clock.now();
            let result = change(&mut state);
            reconcile(&mut state);
            (result, std::mem::take(&mut state.timers))
        };
        self.arm(timers);
        result
    }

    /// Reads the Kubernetes world as it is now.
    pub fn read_kube<R>(&self, read: impl FnOnce(&KubeState) -> R) -> R {
        let mut state = self.lock();
        state.now = self.clock.now();
        read(&state)
    }

    /// Virtual time now.
    pub fn clock_now(&self) -> std::time::Duration {
        self.clock.now()
    }

    fn arm(&self, timers: Vec<(std::time::Duration, Timer)>) {
        for (at, timer) in timers {
            let this = self.this.clone();
            self.clock.schedule_at(at, move |_| {
                if let Some(twin) = this.upgrade() {
                    twin.kube(|state| fire_timer(state, &timer));
                }
            });
        }
    }
}
