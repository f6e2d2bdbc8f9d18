//! Steps inside the branches of `parallel(..)`: each branch runs on its own thread with a step
//! stack of its own, below the step that started it, so nested names stay right however the
//! branches interleave; their records join the parent in branch order, so reports are stable.

use std::cell::RefCell;

use super::{Host, OpenStep};
use crate::report::{SnapshotRecord, StepRecord};

/// The step stack of the branch this thread runs.
pub(super) struct Branch {
    /// The names of the steps open where `parallel` was called.
    prefix: Vec<String>,
    pub(super) open: Vec<OpenStep>,
    done: Vec<StepRecord>,
    pub(super) snapshots: Vec<SnapshotRecord>,
}

/// What a finished branch recorded, to be filed where `parallel` was called.
#[derive(Default)]
pub(crate) struct BranchRecords {
    steps: Vec<StepRecord>,
    snapshots: Vec<SnapshotRecord>,
}

thread_local! {
    static BRANCH: RefCell<Option<Branch>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's branch, if it runs one.
pub(super) fn with_branch<R>(f: impl FnOnce(&mut Branch) -> R) -> Option<R> {
    BRANCH.with(|branch| branch.borrow_mut().as_mut().map(f))
}

impl Branch {
    pub(super) fn path(&self) -> Vec<String> {
        self.prefix
            .iter()
            .cloned()
            .chain(self.open.iter().map(|s| s.name.clone()))
            .collect()
    }

    /// Files a finished step under its parent in this branch.
    pub(super) fn file(&mut self, record: StepRecord) {
        match self.open.last_mut() {
            Some(parent) => parent.children.push(record),
            None => self.done.push(record),
        }
    }
}

impl Host {
    /// The names of the steps open here: where a `parallel` call's branches will sit.
    pub(crate) fn open_path(&self) -> Vec<String> {
        with_branch(|b| b.path())
            .unwrap_or_else(|| self.state().open.iter().map(|s| s.name.clone()).collect())
    }

    /// Runs `work` as a branch below `prefix` on this (new) thread; returns what it returned
    /// and the steps it recorded.
    pub(crate) fn run_branch<R>(
        &self,
        prefix: Vec<String>,
        work: impl FnOnce() -> R,
    ) -> (R, BranchRecords) {
        BRANCH.with(|branch| {
            *branch.borrow_mut() = Some(Branch {
                prefix,
                open: Vec::new(),
                done: Vec::new(),
                snapshots: Vec::new(),
            });
        });
        let result = work();
        let finished = BRANCH.with(|branch| branch.borrow_mut().take());
        let records = finished
            .map(|b| BranchRecords {
                steps: b.done,
                snapshots: b.snapshots,
            })
            .unwrap_or_default();
        (result, records)
    }

    /// Files the steps of finished branches under the step that ran `parallel`.
    pub(crate) fn adopt(&self, records: BranchRecords) {
        let BranchRecords { steps, snapshots } = records;
        let mut pending = Some((steps, snapshots));
        with_branch(|b| {
            if let Some((steps, snapshots)) = pending.take() {
                for record in steps {
                    b.file(record);
                }
                b.snapshots.extend(snapshots);
            }
        });
        if let Some((steps, snapshots)) = pending {
            let mut state = self.state();
            match state.open.last_mut() {
                Some(parent) => parent.children.extend(steps),
                None => state.steps.extend(steps),
            }
            state.snapshots.extend(snapshots);
        }
    }
}
