//! The collective runs a search makes, each judged against the figure expected for its node
//! count, and what they cost: runs, GPU-hours and the search drawn as a tree.

use serde::Serialize;

/// What one collective run over some nodes gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Bus bandwidth, GB/s; None when the run failed or hung.
    pub busbw: Option<f64>,
    /// How long the run took (on the run's clock).
    pub seconds: f64,
    /// What the run said of itself when it fell short (nccl::all_reduce's summary).
    pub note: Option<String>,
}

/// Runs one collective over the named nodes (at least two).
pub trait Collective {
    fn run(&mut self, nodes: &[String]) -> Measured;
}

/// How a run is judged: it passes at `1 - tolerance` of the figure expected for its node count.
pub struct Judge<'a> {
    pub expected: &'a dyn Fn(usize) -> f64,
    pub tolerance: f64,
}

impl Judge<'_> {
    pub fn floor(&self, nodes: usize) -> f64 {
        (self.expected)(nodes) * (1.0 - self.tolerance)
    }
}

/// One run of the search: why it was made, over what, what it gave, and where it sits in the
/// search's tree (`depth`, its parent's index).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trial {
    pub purpose: String,
    pub nodes: Vec<String>,
    pub busbw: Option<f64>,
    pub floor: f64,
    pub passed: bool,
    pub seconds: f64,
    pub depth: usize,
    pub note: Option<String>,
}

/// Runs in a row without a result, none passing before, that make a fault common to the
/// whole fleet (its security group, the image, a plugin) likelier than one node's: a single
/// dead node gives at most three (the fleet, its block, the half holding it).
const SYSTEMIC_AFTER: usize = 4;

/// The runs of a search, made through a [`Collective`] and judged as they come.
pub struct Trials<'a> {
    collective: &'a mut dyn Collective,
    judge: &'a Judge<'a>,
    pub made: Vec<Trial>,
    depth: usize,
    /// Why the search stopped early, once it has.
    pub stopped: Option<String>,
}

impl<'a> Trials<'a> {
    pub fn new(collective: &'a mut dyn Collective, judge: &'a Judge<'a>) -> Self {
        Self {
            collective,
            judge,
            made: Vec::new(),
            depth: 0,
            stopped: None,
        }
    }

    /// Runs the collective over `nodes` and says whether it passed.
    pub fn run(&mut self, purpose: String, nodes: &[String]) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        let measured = self.collective.run(nodes);
        let floor = self.judge.floor(nodes.len());
        let passed = measured.busbw.is_some_and(|b| b >= floor);
        self.made.push(Trial {
            purpose,
            nodes: nodes.to_vec(),
            busbw: measured.busbw,
            floor,
            passed,
            seconds: measured.seconds,
            depth: self.depth,
            note: measured.note.filter(|_| !passed),
        });
        self.stop_if_systemic();
        passed
    }

    fn stop_if_systemic(&mut self) {
        let empty = self
            .made
            .iter()
            .rev()
            .take_while(|t| t.busbw.is_none())
            .count();
        if empty >= SYSTEMIC_AFTER && self.made.iter().all(|t| !t.passed) {
            let first = self.made.first().and_then(|t| t.note.clone());
            self.stopped = Some(format!(
                "{empty} runs in a row gave no result and none passed: a fault every run meets (the security group, the image, a device plugin), not one node's{}",
                first.map_or_else(String::new, |n| format!("; the first run said: {n}"))
            ));
        }
    }

    /// Runs `search` one level deeper in the tree.
    pub fn deeper<T>(&mut self, search: impl FnOnce(&mut Self) -> T) -> T {
        self.depth += 1;
        let found = search(self);
        self.depth -= 1;
        found
    }
}

/// The GPU-hours of the runs, with `gpus_per_node` GPUs on each node of each run.
pub fn gpu_hours(trials: &[Trial], gpus_per_node: u32) -> f64 {
    trials
        .iter()
        .map(|t| t.nodes.len() as f64 * f64::from(gpus_per_node) * t.seconds / 3600.0)
        .sum()
}

/// The search as an indented tree, a line per run: `PASS 412.3 >= 321.0 GB/s  8 blocks' ...`.
pub fn tree(trials: &[Trial]) -> String {
    trials
        .iter()
        .map(|t| {
            let verdict = if t.passed { "pass" } else { "FAIL" };
            let busbw = t
                .busbw
                .map_or_else(|| "no result".to_string(), |b| format!("{b:.1} GB/s"));
            format!(
                "{}{verdict} {} ({} nodes, {busbw}, floor {:.1})\n",
                "  ".repeat(t.depth),
                t.purpose,
                t.nodes.len(),
                t.floor
            )
        })
        .collect()
}
