//! The host made whole before a run starts: what the run is about, its clock, output and stop
//! signals, and what the app decided it keeps (journal, guards, history, test hooks).

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{GpuRecord, Host, HostConfig, MetricHistory, RunState, TestHooks};
use crate::clock::Clock;
use crate::journal::Journal;
use crate::report::{Secrets, Sink};
use crate::script::interrupt::Interrupt;
use crate::script::sources::SourceMap;

/// A [`Host`] made whole before the run starts: what it is about, its clock, output and
/// stop signals, and what the app decided it keeps (journal, guards, history, test hooks).
pub struct HostBuilder {
    config: HostConfig,
    clock: Arc<dyn Clock>,
    sink: Arc<dyn Sink>,
    interrupt: Interrupt,
    runtime: tokio::runtime::Handle,
    journal: Option<Arc<Journal>>,
    guards: Option<crate::guard::Guards>,
    metric_history: Option<Arc<dyn MetricHistory>>,
    gpu_record: Option<Arc<dyn GpuRecord>>,
    hooks: TestHooks,
}

impl HostBuilder {
    /// Every mutation is journaled here before it is sent.
    pub fn journal(mut self, journal: Option<Arc<Journal>>) -> Self {
        self.journal = journal;
        self
    }

    /// Every mutation is held to these before it is sent.
    pub fn guards(mut self, guards: crate::guard::Guards) -> Self {
        self.guards = Some(guards);
        self
    }

    /// Metric baselines and GPU verdicts read the run history.
    pub fn history(mut self, metrics: Arc<dyn MetricHistory>, gpus: Arc<dyn GpuRecord>) -> Self {
        self.metric_history = Some(metrics);
        self.gpu_record = Some(gpus);
        self
    }

    /// What the crash-safety tests asked of this run (see [`TestHooks`]).
    pub fn test_hooks(mut self, hooks: TestHooks) -> Self {
        self.hooks = hooks;
        self
    }

    pub fn build(self) -> Arc<Host> {
        let virtual_start = self.clock.now();
        Arc::new(Host {
            clock: self.clock,
            runtime: self.runtime,
            interrupt: self.interrupt,
            sources: SourceMap::default(),
            config: self.config,
            sink: self.sink,
            secrets: Mutex::new(Secrets::default()),
            journal: self.journal,
            guards: self.guards,
            spend: Mutex::new(crate::guard::Spend::default()),
            metric_history: self.metric_history,
            gpu_record: self.gpu_record,
            hooks: self.hooks,
            answered_calls: std::sync::atomic::AtomicU64::new(0),
            cleaning_up: AtomicBool::new(false),
            closed: std::sync::OnceLock::new(),
            wall_start: Instant::now(),
            virtual_start,
            state: Mutex::new(RunState::default()),
        })
    }
}

impl Host {
    /// A host for a run of `config` on `clock`, output to `sink`, stopped by `interrupt`;
    /// [`HostBuilder::build`] makes it.
    pub fn builder(
        config: HostConfig,
        clock: Arc<dyn Clock>,
        sink: Arc<dyn Sink>,
        interrupt: Interrupt,
        runtime: tokio::runtime::Handle,
    ) -> HostBuilder {
        HostBuilder {
            config,
            clock,
            sink,
            interrupt,
            runtime,
            journal: None,
            guards: None,
            metric_history: None,
            gpu_record: None,
            hooks: TestHooks::default(),
        }
    }
}
