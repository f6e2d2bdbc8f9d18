//! Finding what makes a collective across a fleet fall short, in a number of runs that grows
//! with the log of the fleet, not its square: adaptive group testing along AWS's network.
//!
//! Two faults show only in collectives and behave differently, which the search uses: a
//! straggler node (a slow NIC, an EFA interface down) slows every ring it is in, so it shows in
//! any group holding it; a slow network node (its uplinks) slows only rings that leave it, so a
//! block tested alone passes and the block shows only beside other blocks. The search:
//! 1. the whole fleet (one run; passing ends it);
//! 2. each network block alone (the last of its instance's network nodes): a failing block
//!    holds a straggler, found by binary splitting (Hwang's generalized binary splitting: a
//!    failing group is halved, a passing half clears its nodes and puts the fault in the other
//!    half without a run, a lone suspect is run with a node already cleared), about log2 of the
//!    block's size runs per straggler;
//! 3. two cleared nodes of every block together: failing, the blocks are split the same way,
//!    a lone block run beside a cleared one, so a slow network node is named as a block;
//! 4. the fleet without what was found, which must pass: the culprits explain the failure.
//!
//! NVIDIA's Cluster Readiness Engine localises the same way (hierarchical groups, bisection,
//! confirmation); pairwise sweeps need n/2 runs for a ring and miss slow blocks whose pairs sit
//! inside them.

use std::collections::BTreeMap;

use serde::Serialize;

use super::trials::{Collective, Judge, Trial, Trials};

/// The algorithm in a line, for the report.
pub const ALGORITHM: &str = "adaptive group testing along the network: the fleet, each block alone, binary splitting inside a failing block, blocks' cleared nodes together split the same way, then the fleet without the culprits";

/// A node of the fleet and the network node its instance hangs from (its block); nodes
/// without a topology are each a block of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetNode {
    pub name: String,
    pub block: Option<String>,
}

/// Something the search found: a node (a straggler) or a block (its network node's uplinks).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Culprit {
    /// `node` or `block`.
    pub kind: &'static str,
    pub name: String,
    /// A run with known-good nodes failed with it in (not only inferred from halves).
    pub confirmed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Localisation {
    pub algorithm: &'static str,
    pub culprits: Vec<Culprit>,
    /// Whether the fleet without the culprits passed (None when the fleet passed at once).
    pub rest_passed: Option<bool>,
    /// Why the search stopped before naming anything, when it did.
    pub stopped: Option<String>,
    pub trials: Vec<Trial>,
}

/// What the splitting works over: one node, or a block by two of its cleared nodes.
#[derive(Debug, Clone)]
struct Item {
    name: String,
    nodes: Vec<String>,
}

/// Finds the culprits of a fleet's collective; `collective` runs each group, `judge` sets each
/// group's floor by its node count.
pub fn localise(
    fleet: &[FleetNode],
    collective: &mut dyn Collective,
    judge: &Judge<'_>,
) -> Localisation {
    let mut trials = Trials::new(collective, judge);
    let all: Vec<String> = fleet.iter().map(|n| n.name.clone()).collect();
    if all.len() < 2 || trials.run(format!("the whole fleet ({} nodes)", all.len()), &all) {
        return Localisation {
            algorithm: ALGORITHM,
            culprits: Vec::new(),
            rest_passed: None,
            stopped: None,
            trials: trials.made,
        };
    }
    let blocks = by_block(fleet);
    let mut culprits = Vec::new();
    let mut cleared: BTreeMap<String, Vec<String>> = BTreeMap::new();
    trials.deeper(|t| {
        for (block, nodes) in &blocks {
            let (bad, good) = stragglers(t, block, nodes);
            culprits.extend(bad);
            cleared.insert(block.clone(), good);
        }
    });
    culprits.extend(trials.deeper(|t| slow_blocks(t, &cleared)));
    if let Some(why) = trials.stopped.take() {
        return Localisation {
            algorithm: ALGORITHM,
            culprits: Vec::new(),
            rest_passed: None,
            stopped: Some(why),
            trials: trials.made,
        };
    }
    let rest: Vec<String> = fleet
        .iter()
        .filter(|n| {
            !culprits
                .iter()
                .any(|c| c.name == n.name || Some(&c.name) == n.block.as_ref())
        })
        .map(|n| n.name.clone())
        .collect();
    let rest_passed = (rest.len() >= 2).then(|| {
        trials.run(
            format!("the fleet without the {} culprit(s)", culprits.len()),
            &rest,
        )
    });
    Localisation {
        algorithm: ALGORITHM,
        culprits,
        rest_passed,
        stopped: None,
        trials: trials.made,
    }
}

/// Nodes by block, blocks in name order; a node without one is a block named after itself.
fn by_block(fleet: &[FleetNode]) -> BTreeMap<String, Vec<String>> {
    let mut blocks: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for node in fleet {
        let block = node.block.clone().unwrap_or_else(|| node.name.clone());
        blocks.entry(block).or_default().push(node.name.clone());
    }
    for nodes in blocks.values_mut() {
        nodes.sort();
    }
    blocks
}

/// A block alone: its stragglers, and its nodes cleared.
fn stragglers(t: &mut Trials<'_>, block: &str, nodes: &[String]) -> (Vec<Culprit>, Vec<String>) {
    if nodes.len() < 2 || t.run(format!("block {block} alone"), nodes) {
        return (Vec::new(), nodes.to_vec());
    }
    let items: Vec<Item> = nodes
        .iter()
        .map(|n| Item {
            name: n.clone(),
            nodes: vec![n.clone()],
        })
        .collect();
    let mut good = Vec::new();
    let bad = t.deeper(|t| split(t, &items, &mut good));
    let good = good.into_iter().flat_map(|i| i.nodes).collect();
    (culprits("node", bad), good)
}

/// Every block's first two cleared nodes together; failing, the blocks are split.
fn slow_blocks(t: &mut Trials<'_>, cleared: &BTreeMap<String, Vec<String>>) -> Vec<Culprit> {
    let items: Vec<Item> = cleared
        .iter()
        .filter(|(_, nodes)| !nodes.is_empty())
        .map(|(block, nodes)| Item {
            name: block.clone(),
            nodes: nodes.iter().take(2).cloned().collect(),
        })
        .collect();
    if items.len() < 2 {
        return Vec::new();
    }
    let together: Vec<String> = items.iter().flat_map(|i| i.nodes.clone()).collect();
    if t.run(
        format!("{} blocks' cleared nodes together", items.len()),
        &together,
    ) {
        return Vec::new();
    }
    let mut good = Vec::new();
    culprits("block", t.deeper(|t| split(t, &items, &mut good)))
}

/// What splitting found, as culprits of one kind.
fn culprits(kind: &'static str, bad: Vec<(Item, bool)>) -> Vec<Culprit> {
    bad.into_iter()
        .map(|(item, confirmed)| Culprit {
            kind,
            name: item.name,
            confirmed,
        })
        .collect()
}

/// Binary splitting over items that failed together: the bad ones (and whether a run with
/// cleared items confirmed each); every item cleared on the way is added to `good`.
fn split(t: &mut Trials<'_>, failed: &[Item], good: &mut Vec<Item>) -> Vec<(Item, bool)> {
    if let [lone] = failed {
        return alone(t, lone, good);
    }
    let (first, second) = failed.split_at(failed.len() / 2);
    if first.len() >= 2 && t.run(purpose("half", first), &nodes_of(first)) {
        good.extend(first.iter().cloned());
        // The fault is in the other half: no run needed to know it.
        return under(t, second, good);
    }
    // The second half first: what it clears is what a lone suspect of the first is run beside.
    let second_passed =
        second.len() >= 2 && t.run(purpose("other half", second), &nodes_of(second));
    if second_passed {
        good.extend(second.iter().cloned());
    }
    let mut bad = under(t, first, good);
    if !second_passed {
        bad.extend(under(t, second, good));
    }
    bad
}

/// Splits a half that ran (one level deeper in the tree); a lone item's run sits beside it.
fn under(t: &mut Trials<'_>, half: &[Item], good: &mut Vec<Item>) -> Vec<(Item, bool)> {
    if half.len() < 2 {
        split(t, half, good)
    } else {
        t.deeper(|t| split(t, half, good))
    }
}

/// One suspect, run beside something already cleared; with nothing cleared yet it stays a
/// suspect, unconfirmed.
fn alone(t: &mut Trials<'_>, suspect: &Item, good: &mut Vec<Item>) -> Vec<(Item, bool)> {
    let Some(partner) = good.first().cloned() else {
        return vec![(suspect.clone(), false)];
    };
    let nodes: Vec<String> = suspect
        .nodes
        .iter()
        .chain(&partner.nodes)
        .cloned()
        .collect();
    let purpose = format!(
        "{} beside cleared {}",
        short(&suspect.name),
        short(&partner.name)
    );
    if t.run(purpose, &nodes) {
        good.push(suspect.clone());
        Vec::new()
    } else {
        vec![(suspect.clone(), true)]
    }
}

/// A node's name up to its first dot (`ip-192-168-13-122`), as the tree shows it.
fn short(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

fn nodes_of(items: &[Item]) -> Vec<String> {
    items.iter().flat_map(|i| i.nodes.clone()).collect()
}

/// `half: ip-a..ip-p (16)`.
fn purpose(which: &str, items: &[Item]) -> String {
    match (items.first(), items.last()) {
        (Some(first), Some(last)) => {
            format!(
                "{which}: {}..{} ({})",
                short(&first.name),
                short(&last.name),
                items.len()
            )
        }
        _ => which.to_string(),
    }
}

#[cfg(test)]
#[path = "localise_tests.rs"]
mod tests;
