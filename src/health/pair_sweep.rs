//! Finding the bad node from NCCL runs on node pairs: which pairs to run (a ring, or every
//! pair), which of them failed (no result, values out of bounds, or a bus bandwidth under the
//! floor), and the node common to the failures. A bad node drags down every pair it is in and
//! no other, so with a ring it is the one node whose both pairs failed.

use std::collections::BTreeMap;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pairs {
    /// Each node with the next in name order, the last with the first: n pairs, two per node.
    Ring,
    /// Every two nodes: n(n-1)/2 pairs.
    All,
}

impl Pairs {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "ring" => Some(Self::Ring),
            "all" => Some(Self::All),
            _ => None,
        }
    }
}

/// The pairs to run over `nodes` (sorted first, so a sweep is the same whatever order the
/// nodes came in).
pub fn pairs_to_run(nodes: &[String], pairs: Pairs) -> Vec<(String, String)> {
    let mut nodes = nodes.to_vec();
    nodes.sort();
    nodes.dedup();
    let n = nodes.len();
    if n < 2 {
        return Vec::new();
    }
    match pairs {
        Pairs::Ring if n == 2 => vec![(nodes[0].clone(), nodes[1].clone())],
        Pairs::Ring => (0..n)
            .map(|i| (nodes[i].clone(), nodes[(i + 1) % n].clone()))
            .collect(),
        Pairs::All => (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .map(|(i, j)| (nodes[i].clone(), nodes[j].clone()))
            .collect(),
    }
}

/// What one pair's run gave.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairRun {
    pub nodes: [String; 2],
    /// `ok`, `hang` or `error`, as nccl::all_reduce says.
    pub status: String,
    pub peak_busbw: Option<f64>,
    /// nccl-tests' `Out of bounds values`.
    pub out_of_bounds: Option<u64>,
    pub summary: String,
    /// How long the pair's run took (on the run's clock).
    pub seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairVerdict {
    pub nodes: [String; 2],
    pub ok: bool,
    /// Why it failed, in words; empty when it passed.
    pub reason: String,
    pub peak_busbw: Option<f64>,
    pub summary: String,
    pub seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suspect {
    pub node: String,
    pub failed_pairs: usize,
    pub pairs: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepFindings {
    pub ok: bool,
    /// The floor the pairs were held to (GB/s), if any.
    pub floor_busbw: Option<f64>,
    pub pairs: Vec<PairVerdict>,
    /// Nodes all of whose pairs failed, most failures first.
    pub suspects: Vec<Suspect>,
    /// The one node every failing pair has in common, when the failures name exactly one.
    pub common: Option<String>,
    pub summary: String,
    /// The pairs' run times added up (what the sweep costs in node time, halved).
    pub seconds: f64,
}

fn judge_pair(run: &PairRun, floor: Option<f64>) -> PairVerdict {
    let reason = if run.status != "ok" {
        if run.summary.starts_with(&run.status) {
            run.summary.clone()
        } else {
            format!("{}: {}", run.status, run.summary)
        }
    } else if run.out_of_bounds.is_some_and(|n| n > 0) {
        format!(
            "{} values out of bounds (data came back wrong)",
            run.out_of_bounds.unwrap_or(0)
        )
    } else {
        match (run.peak_busbw, floor) {
            (Some(peak), Some(floor)) if peak < floor => {
                format!("peak bus bandwidth {peak:.2} GB/s is under the {floor:.2} GB/s floor")
            }
            (None, Some(floor)) => format!("no bus bandwidth measured (floor {floor:.2} GB/s)"),
            _ => String::new(),
        }
    };
    PairVerdict {
        nodes: run.nodes.clone(),
        ok: reason.is_empty(),
        reason,
        peak_busbw: run.peak_busbw,
        summary: run.summary.clone(),
        seconds: run.seconds,
    }
}

/// Judges every pair against `floor` (GB/s of peak bus bandwidth) and names the suspects.
pub fn findings(runs: &[PairRun], floor: Option<f64>) -> SweepFindings {
    let pairs: Vec<PairVerdict> = runs.iter().map(|r| judge_pair(r, floor)).collect();
    let mut tally: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for pair in &pairs {
        for node in &pair.nodes {
            let entry = tally.entry(node.as_str()).or_default();
            entry.1 += 1;
            if !pair.ok {
                entry.0 += 1;
            }
        }
    }
    let mut suspects: Vec<Suspect> = tally
        .iter()
        .filter(|(_, (failed, total))| *failed > 0 && failed == total)
        .map(|(node, (failed, total))| Suspect {
            node: (*node).to_string(),
            failed_pairs: *failed,
            pairs: *total,
        })
        .collect();
    suspects.sort_by(|a, b| {
        b.failed_pairs
            .cmp(&a.failed_pairs)
            .then(a.node.cmp(&b.node))
    });
    let failing: Vec<&PairVerdict> = pairs.iter().filter(|p| !p.ok).collect();
    let in_every_failure: Vec<&String> = failing
        .first()
        .map(|first| {
            first
                .nodes
                .iter()
                .filter(|n| failing.iter().all(|p| p.nodes.contains(n)))
                .collect()
        })
        .unwrap_or_default();
    // One failing pair names two nodes equally: that is not an answer.
    let common = match in_every_failure.as_slice() {
        [only] => Some((*only).clone()),
        _ => None,
    };
    let summary = if failing.is_empty() {
        format!("{} pairs, all ok", pairs.len())
    } else {
        let named = match (&common, suspects.as_slice()) {
            (Some(node), _) => format!("the node common to them is {node}"),
            (None, []) => "no node is common to them".to_string(),
            (None, many) => format!(
                "no one node explains them; suspects: {}",
                many.iter()
                    .map(|s| s.node.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        format!("{} of {} pairs failed; {named}", failing.len(), pairs.len())
    };
    let seconds = pairs.iter().map(|p| p.seconds).sum();
    SweepFindings {
        seconds,
        ok: failing.is_empty(),
        floor_busbw: floor,
        pairs,
        suspects,
        common,
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("node-{i}")).collect()
    }

    fn run(a: &str, b: &str, peak: f64) -> PairRun {
        PairRun {
            nodes: [a.to_string(), b.to_string()],
            status: "ok".into(),
            peak_busbw: Some(peak),
            out_of_bounds: Some(0),
            summary: format!("ok {peak}"),
            seconds: 30.0,
        }
    }

    #[test]
    fn a_ring_has_one_pair_per_node_and_all_has_every_pair() {
        assert_eq!(pairs_to_run(&names(4), Pairs::Ring).len(), 4);
        assert_eq!(pairs_to_run(&names(2), Pairs::Ring).len(), 1);
        assert_eq!(pairs_to_run(&names(1), Pairs::Ring).len(), 0);
        assert_eq!(pairs_to_run(&names(5), Pairs::All).len(), 10);
        let mut shuffled = names(3);
        shuffled.reverse();
        assert_eq!(
            pairs_to_run(&shuffled, Pairs::Ring),
            pairs_to_run(&names(3), Pairs::Ring)
        );
    }

    #[test]
    fn the_slow_node_is_the_one_in_both_slow_pairs() {
        let runs: Vec<PairRun> = pairs_to_run(&names(4), Pairs::Ring)
            .iter()
            .map(|(a, b)| {
                let slow = a == "node-2" || b == "node-2";
                run(a, b, if slow { 0.33 } else { 1.1 })
            })
            .collect();
        let found = findings(&runs, Some(0.5));
        assert!(!found.ok);
        assert_eq!(found.common.as_deref(), Some("node-2"));
        assert_eq!(found.suspects.len(), 1);
        assert!(
            found.summary.contains("2 of 4 pairs failed"),
            "{}",
            found.summary
        );
    }

    #[test]
    fn wrong_values_and_hangs_fail_a_pair_and_one_pair_names_nobody() {
        let mut bad = run("node-0", "node-1", 1.1);
        bad.out_of_bounds = Some(12);
        let found = findings(&[bad.clone()], Some(0.5));
        assert!(found.pairs[0].reason.contains("12 values out of bounds"));
        assert_eq!(found.common, None);
        assert_eq!(found.suspects.len(), 2);
        bad.status = "hang".into();
        assert!(judge_pair(&bad, None).reason.starts_with("hang"));
        assert!(
            findings(&[run("a", "b", 0.1)], None).ok,
            "no floor, no bandwidth verdict"
        );
    }
}
