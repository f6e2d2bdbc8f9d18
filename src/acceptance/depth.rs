//! How deep an acceptance goes in the time it is given: the deepest per-node checks whose
//! planned time, with the collective at scale, fits the budget, and what that costs in
//! GPU-hours. A stage runs on every node at once, `concurrency` nodes at a time.

use serde::Serialize;

/// The DCGM diagnostic's run levels and how long each is planned to take. NVIDIA's dcgmi-diag
/// reference: "1: quick deployment checks, normally lasting seconds; 2: medium validation,
/// normally lasting approximately two minutes; 3: long hardware diagnostics, normally lasting
/// approximately 15 minutes; 4: extended, longer-running hardware diagnostics"
/// (docs.nvidia.com/datacenter/dcgm/latest/reference/command-line-reference/dcgmi/dcgmi-diag.html).
/// Level 1's "seconds" is planned as a minute, the probe pod's start included. Level 4 is level
/// 3 plus memtest (its `test_duration` defaults to 600 s) and the pulse test
/// (NVIDIA/DCGM nvvs/src/NvidiaValidationSuite.cpp, FillTestVectors; memtest's default in
/// nvvs/plugin_src/memtest), and EUD where it is installed; NVIDIA gives it no length, the
/// platforms that run it 45 minutes to 2 hours. It is planned at 2 hours: an acceptance that
/// overruns its window costs more than one a level shallower.
pub const DCGM_LEVELS: [(u32, f64); 4] = [(1, 60.0), (2, 120.0), (3, 900.0), (4, 7200.0)];

/// What a node's NCCL run over NVLink alone is planned to take: nccl-tests' all_reduce_perf
/// from 1 to 8 GiB with its default 5 warm-up and 20 timed iterations moves about 25 x 8 GiB
/// x 2(n-1)/n at ~480 GB/s bus bandwidth on 8 H100s (under a second per size), so the Job's
/// start dominates: planned as a minute.
pub const IN_NODE_NCCL_S: f64 = 60.0;

/// What a node's EFA loopback checks are planned to take: `fi_info` once, then `fi_pingpong`
/// on each device in turn (up to 32 on a p5), a few seconds each with its server's start:
/// planned as two minutes.
pub const EFA_LOOPBACK_S: f64 = 120.0;

/// One collective across the fleet (a Job on every node, 1 to 8 GiB): planned as two minutes;
/// when it falls short, the search adds runs of its own (at most about 40 for 256 nodes).
pub const COLLECTIVE_S: f64 = 120.0;

/// The checks an acceptance runs on each node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Checks {
    /// The DCGM run level; 0 runs none.
    pub level: u32,
    pub in_node: bool,
    pub efa_loopback: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedStage {
    pub stage: String,
    pub seconds: f64,
}

/// The depth chosen and its plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Depth {
    pub checks: Checks,
    pub stages: Vec<PlannedStage>,
    pub planned_seconds: f64,
    /// Every GPU of every node, for the planned time.
    pub gpu_hours: f64,
    /// The deeper choices that did not fit, in words.
    pub left_out: Vec<String>,
}

/// The fleet being accepted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fleet {
    pub nodes: usize,
    pub gpus_per_node: u32,
    /// Nodes checked at once.
    pub concurrency: usize,
    /// Whether its type has EFA (no loopback to check without it).
    pub efa: bool,
}

/// From the deepest down: the DCGM levels with NCCL inside the node and the EFA loopback,
/// then level 1 with fewer checks, then the counts alone.
fn choices(efa: bool) -> Vec<Checks> {
    let mut all: Vec<Checks> = DCGM_LEVELS
        .iter()
        .rev()
        .map(|(level, _)| Checks {
            level: *level,
            in_node: true,
            efa_loopback: efa,
        })
        .collect();
    if efa {
        all.push(Checks {
            level: 1,
            in_node: true,
            efa_loopback: false,
        });
    }
    all.push(Checks {
        level: 1,
        in_node: false,
        efa_loopback: false,
    });
    all.push(Checks {
        level: 0,
        in_node: false,
        efa_loopback: false,
    });
    all
}

/// The plan of `checks` on `fleet`.
pub fn plan(checks: Checks, fleet: Fleet) -> Depth {
    let waves = fleet.nodes.div_ceil(fleet.concurrency.max(1)) as f64;
    let mut stages = Vec::new();
    if let Some((_, seconds)) = DCGM_LEVELS.iter().find(|(l, _)| *l == checks.level) {
        stages.push(PlannedStage {
            stage: format!("DCGM level {}", checks.level),
            seconds: seconds * waves,
        });
    }
    if checks.in_node {
        stages.push(PlannedStage {
            stage: "NCCL inside each node".into(),
            seconds: IN_NODE_NCCL_S * waves,
        });
    }
    if checks.efa_loopback {
        stages.push(PlannedStage {
            stage: "EFA loopback".into(),
            seconds: EFA_LOOPBACK_S * waves,
        });
    }
    stages.push(PlannedStage {
        stage: "one collective at scale".into(),
        seconds: COLLECTIVE_S,
    });
    let planned_seconds: f64 = stages.iter().map(|s| s.seconds).sum();
    let gpus = fleet.nodes as f64 * f64::from(fleet.gpus_per_node);
    Depth {
        checks,
        stages,
        planned_seconds,
        gpu_hours: gpus * planned_seconds / 3600.0,
        left_out: Vec::new(),
    }
}

fn words(checks: Checks) -> String {
    let mut parts = vec![if checks.level == 0 {
        "no DCGM".to_string()
    } else {
        format!("DCGM level {}", checks.level)
    }];
    if checks.in_node {
        parts.push("NCCL inside the node".into());
    }
    if checks.efa_loopback {
        parts.push("EFA loopback".into());
    }
    parts.join(" + ")
}

/// The deepest checks whose plan fits `budget_seconds`; an error naming the least it needs when
/// even the counts alone do not fit.
pub fn choose(budget_seconds: f64, fleet: Fleet) -> Result<Depth, String> {
    let mut left_out = Vec::new();
    for checks in choices(fleet.efa) {
        let depth = plan(checks, fleet);
        if depth.planned_seconds <= budget_seconds {
            return Ok(Depth { left_out, ..depth });
        }
        left_out.push(format!(
            "{} ({:.0} min planned)",
            words(checks),
            depth.planned_seconds / 60.0
        ));
    }
    let least = plan(
        Checks {
            level: 0,
            in_node: false,
            efa_loopback: false,
        },
        fleet,
    );
    Err(format!(
        "a budget of {:.0} min is shorter than the shallowest acceptance of {} nodes ({:.0} min planned: one collective at scale); give at least {:.0}m",
        budget_seconds / 60.0,
        fleet.nodes,
        least.planned_seconds / 60.0,
        (least.planned_seconds / 60.0).ceil()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const P5_FLEET: Fleet = Fleet {
        nodes: 256,
        gpus_per_node: 8,
        concurrency: 256,
        efa: true,
    };

    #[test]
    fn thirty_minutes_takes_level_3_on_a_fleet_checked_all_at_once() {
        let depth = choose(1800.0, P5_FLEET).unwrap();
        assert_eq!(
            depth.checks,
            Checks {
                level: 3,
                in_node: true,
                efa_loopback: true
            }
        );
        assert_eq!(depth.planned_seconds, 900.0 + 60.0 + 120.0 + 120.0);
        assert!(depth.planned_seconds <= 1800.0);
        assert!((depth.gpu_hours - 2048.0 * 1200.0 / 3600.0).abs() < 1e-9);
    }

    #[test]
    fn fewer_at_once_means_waves_and_a_shallower_level() {
        let fleet = Fleet {
            concurrency: 64,
            ..P5_FLEET
        };
        let depth = choose(1800.0, fleet).unwrap();
        // 4 waves: level 3 would plan 4 x 900 s alone; level 2 plans 4 x (120 + 60 + 120) + 120.
        assert_eq!(depth.checks.level, 2);
        assert_eq!(depth.planned_seconds, 1320.0);
        assert_eq!(
            depth.left_out,
            [
                "DCGM level 4 + NCCL inside the node + EFA loopback (494 min planned)",
                "DCGM level 3 + NCCL inside the node + EFA loopback (74 min planned)"
            ]
        );
    }

    #[test]
    fn a_budget_too_short_for_anything_says_what_it_needs() {
        let error = choose(60.0, P5_FLEET).unwrap_err();
        assert!(error.contains("give at least 2m"), "{error}");
        let depth = choose(150.0, P5_FLEET).unwrap();
        assert_eq!(
            depth.checks,
            Checks {
                level: 0,
                in_node: false,
                efa_loopback: false
            }
        );
    }

    #[test]
    fn a_window_of_hours_takes_level_4_and_thirty_minutes_leaves_it_out() {
        let depth = choose(3.0 * 3600.0, P5_FLEET).unwrap();
        assert_eq!(depth.checks.level, 4);
        assert_eq!(depth.planned_seconds, 7200.0 + 60.0 + 120.0 + 120.0);
        assert!(depth.left_out.is_empty());
        let depth = choose(1800.0, P5_FLEET).unwrap();
        assert_eq!(
            depth.left_out,
            ["DCGM level 4 + NCCL inside the node + EFA loopback (125 min planned)"]
        );
    }

    #[test]
    fn a_type_without_efa_plans_no_loopback() {
        let fleet = Fleet {
            nodes: 4,
            gpus_per_node: 1,
            concurrency: 16,
            efa: false,
        };
        assert!(!choose(1800.0, fleet).unwrap().checks.efa_loopback);
    }
}
