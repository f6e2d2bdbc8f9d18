//! The controllers of the twin: they run after every change until the world is at rest, and
//! ask for timers for what happens later (a container starting, a program finishing).

mod daemonset;
mod deployment;
mod events;
mod gc;
mod job;
mod kubelet;
mod replicaset;
mod scheduler;
mod shared;

pub use gc::orphan_dependents;
pub use kubelet::fire_timer;

use super::state::KubeState;

/// Runs every controller until none changes anything (bounded, in case two disagree).
pub fn reconcile(state: &mut KubeState) {
    for _ in 0..20 {
        let before = state.store.resource_version();
        gc::run(state);
        deployment::run(state);
        replicaset::run(state);
        daemonset::run(state);
        job::run(state);
        scheduler::run(state);
        kubelet::run(state);
        if state.store.resource_version() == before {
            return;
        }
    }
}
