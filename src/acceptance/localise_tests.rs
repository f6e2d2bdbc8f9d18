//! The search on simulated fleets: p5 figures by node count, stragglers and slow blocks.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::acceptance::trials::{Measured, gpu_hours, tree};
use crate::lab::nccl_scale::{Collective as Kind, expected};

/// A fleet of `blocks` x `per_block` nodes (`n000`.. in block order) that measures each run as
/// the published figure for its size, slowed by its slowest straggler and any slow block it
/// leaves.
struct Simulated {
    block_of: BTreeMap<String, String>,
    stragglers: BTreeMap<String, f64>,
    slow_blocks: BTreeMap<String, f64>,
    /// Nodes no run with them in gives a result.
    dead: BTreeSet<String>,
    runs: usize,
}

impl Simulated {
    fn new(blocks: usize, per_block: usize) -> Self {
        let block_of = (0..blocks * per_block)
            .map(|i| (format!("n{i:03}"), format!("nn-{}", i / per_block)))
            .collect();
        Self {
            block_of,
            stragglers: BTreeMap::new(),
            slow_blocks: BTreeMap::new(),
            dead: BTreeSet::new(),
            runs: 0,
        }
    }

    fn fleet(&self) -> Vec<FleetNode> {
        self.block_of
            .iter()
            .map(|(name, block)| FleetNode {
                name: name.clone(),
                block: Some(block.clone()),
            })
            .collect()
    }
}

fn figure(nodes: usize) -> f64 {
    expected(
        "p5.48xlarge",
        Kind::AllReduce,
        u32::try_from(nodes).unwrap(),
    )
    .map_or(0.0, |f| f.0)
}

impl Collective for Simulated {
    fn run(&mut self, nodes: &[String]) -> Measured {
        self.runs += 1;
        let mut share: f64 = nodes
            .iter()
            .map(|n| self.stragglers.get(n).copied().unwrap_or(1.0))
            .fold(1.0, f64::min);
        let blocks: BTreeSet<&String> = nodes.iter().map(|n| &self.block_of[n]).collect();
        if blocks.len() > 1 {
            for block in blocks {
                share = share.min(self.slow_blocks.get(block).copied().unwrap_or(1.0));
            }
        }
        if nodes.iter().any(|n| self.dead.contains(n)) {
            return Measured {
                busbw: None,
                seconds: 30.0,
                note: Some("error: the launcher failed".into()),
            };
        }
        Measured {
            busbw: Some(figure(nodes.len()) * share),
            seconds: 30.0,
            note: None,
        }
    }
}

fn judge() -> Judge<'static> {
    Judge {
        expected: &figure,
        tolerance: 0.1,
    }
}

fn names(found: &Localisation) -> Vec<(&str, &str, bool)> {
    found
        .culprits
        .iter()
        .map(|c| (c.kind, c.name.as_str(), c.confirmed))
        .collect()
}

#[test]
fn a_healthy_fleet_passes_in_one_run() {
    let mut fleet = Simulated::new(8, 32);
    let found = localise(&fleet.fleet(), &mut fleet, &judge());
    assert!(found.culprits.is_empty());
    assert_eq!((found.trials.len(), found.rest_passed), (1, None));
}

#[test]
fn a_straggler_and_a_slow_block_among_256_nodes_are_named_in_under_40_runs() {
    let mut fleet = Simulated::new(8, 32);
    fleet.stragglers.insert("n077".into(), 0.5);
    fleet.slow_blocks.insert("nn-6".into(), 0.4);
    let found = localise(&fleet.fleet(), &mut fleet, &judge());
    assert_eq!(
        names(&found),
        [("node", "n077", true), ("block", "nn-6", true)],
        "{}",
        tree(&found.trials)
    );
    assert_eq!(found.rest_passed, Some(true));
    assert!(found.trials.len() <= 40, "{} runs", found.trials.len());
    assert_eq!(found.trials.len(), fleet.runs);
    // The pair sweep's ring on the same fleet is 256 runs of 2 nodes.
    let hours = gpu_hours(&found.trials, 8);
    assert!(hours > 0.0);
}

#[test]
fn two_stragglers_in_one_block_and_none_elsewhere_are_both_found() {
    let mut fleet = Simulated::new(4, 32);
    fleet.stragglers.insert("n003".into(), 0.6);
    fleet.stragglers.insert("n029".into(), 0.6);
    let found = localise(&fleet.fleet(), &mut fleet, &judge());
    assert_eq!(
        names(&found),
        [("node", "n003", true), ("node", "n029", true)],
        "{}",
        tree(&found.trials)
    );
    assert_eq!(found.rest_passed, Some(true));
}

#[test]
fn the_tree_shows_each_run_under_the_one_that_led_to_it() {
    let mut fleet = Simulated::new(2, 4);
    fleet.stragglers.insert("n001".into(), 0.5);
    let found = localise(&fleet.fleet(), &mut fleet, &judge());
    let drawn = tree(&found.trials);
    assert!(
        drawn.starts_with("FAIL the whole fleet (8 nodes"),
        "{drawn}"
    );
    assert!(drawn.contains("\n  FAIL block nn-0 alone"), "{drawn}");
    assert!(drawn.contains("\n    "), "splitting is deeper: {drawn}");
    assert_eq!(names(&found), [("node", "n001", true)], "{drawn}");
}

#[test]
fn a_dead_node_is_found_but_a_fleet_where_nothing_runs_stops_the_search() {
    let mut fleet = Simulated::new(4, 32);
    fleet.dead.insert("n040".into());
    let found = localise(&fleet.fleet(), &mut fleet, &judge());
    assert_eq!(
        names(&found),
        [("node", "n040", true)],
        "{}",
        tree(&found.trials)
    );
    assert_eq!(found.stopped, None);
    let mut fleet = Simulated::new(4, 32);
    fleet.dead = fleet.block_of.keys().cloned().collect();
    let found = localise(&fleet.fleet(), &mut fleet, &judge());
    assert!(found.culprits.is_empty());
    assert_eq!(found.trials.len(), 4, "{}", tree(&found.trials));
    let why = found.stopped.expect("stopped");
    assert!(
        why.contains("the first run said: error: the launcher failed"),
        "{why}"
    );
}
