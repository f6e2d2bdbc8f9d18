//! The limits a run was given on what it may change, checked before each mutating call.

use serde::Serialize;

use super::change::Change;
use super::pattern::ResourcePattern;

#[derive(Debug, Clone, Default, Serialize)]
pub struct Guards {
    /// Every mutating call fails before it is sent (verify-only drills).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
    /// No GPU node group may be sized above this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_gpu_nodes: Option<i64>,
    /// No GPU node group may hold more GPUs than this (nodes times GPUs per node).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_gpus: Option<i64>,
    /// When any are given, only resources that match one may change.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "as_text")]
    pub allow: Vec<ResourcePattern>,
    /// What the run may disrupt on purpose (a fault drill's injection): a disrupting change
    /// outside the embedded twin must match one.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "as_text")]
    pub disrupt: Vec<ResourcePattern>,
    /// Dollars the resources the run starts may cost; past it the run stops and its cleanups
    /// run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// The worlds of the target that are the embedded lab twin (its Kubernetes side, and its
    /// AWS side unless --aws-endpoint names an emulator): a drill may break them without
    /// --disrupt.
    #[serde(skip)]
    pub embedded: Vec<super::World>,
}

/// `$1.25`; small amounts keep four places (`$0.0012`), so a small budget reads sensibly.
fn dollars(usd: f64) -> String {
    // A float sum of nothing can be -0.0: it reads as $0.
    let usd = usd.max(0.0);
    if usd < 0.1 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

fn as_text<S: serde::Serializer>(
    patterns: &[ResourcePattern],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(patterns.iter().map(ToString::to_string))
}

/// EC2's minimum charge for a Linux on-demand instance (billed per second after it).
const MINIMUM_BILLED_SECONDS: u32 = 60;

/// What starting `count` of `kind` commits at the least: EC2 instance types (`p5.48xlarge`)
/// their minimum billed time; other kinds (a control plane, a NAT gateway) nothing up front.
fn minimum_charge(kind: &str, count: i64) -> f64 {
    if !kind.contains('.') {
        return 0.0;
    }
    crate::lab::cost::price(kind).map_or(0.0, |p| {
        p.usd_per_hour * count as f64 * f64::from(MINIMUM_BILLED_SECONDS) / 3600.0
    })
}

/// A call a guard stopped: which guard and why, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{action} was not sent: {reason}")]
pub struct GuardRefusal {
    pub action: String,
    pub guard: &'static str,
    pub reason: String,
}

impl Guards {
    /// The same guards for a target whose `embedded` worlds are the embedded lab twin, which a
    /// drill may break without --disrupt: it dies with the process.
    #[must_use]
    pub fn on_embedded_twin(mut self, embedded: Vec<super::World>) -> Self {
        self.embedded = embedded;
        self
    }

    pub fn is_empty(&self) -> bool {
        !self.read_only
            && self.max_gpu_nodes.is_none()
            && self.max_gpus.is_none()
            && self.allow.is_empty()
            && self.disrupt.is_empty()
            && self.max_cost_usd.is_none()
    }

    /// `--max-cost-usd` for a change made when the run has spent `spent` dollars: none once the
    /// budget is spent, and none that starts what the price table cannot price.
    pub fn check_spend(
        &self,
        change: &Change,
        spent: f64,
        running: &str,
    ) -> Result<(), GuardRefusal> {
        let Some(max) = self.max_cost_usd else {
            return Ok(());
        };
        let refuse = |reason: String| GuardRefusal {
            action: change.action.clone(),
            guard: "--max-cost-usd",
            reason,
        };
        if spent >= max {
            return Err(refuse(format!(
                "the run has spent {} of --max-cost-usd {max} in what it started ({running})",
                dollars(spent)
            )));
        }
        match &change.runs {
            Some(runs) if runs.count > runs.before && !super::Spend::prices(&runs.kind) => {
                Err(refuse(format!(
                    "it starts {} x {}, which the price table has no price for, so --max-cost-usd cannot hold it",
                    runs.count - runs.before,
                    runs.kind
                )))
            }
            Some(runs) if runs.count > runs.before => {
                // EC2 bills Linux instances by the second with a 60 s minimum: starting them
                // commits at least that much, so a budget it would pass stops the call here,
                // before any instance runs.
                let started = runs.count - runs.before;
                let committed = minimum_charge(&runs.kind, started);
                if committed > 0.0 && spent + committed > max {
                    return Err(refuse(format!(
                        "it starts {started} x {}, billed for at least {MINIMUM_BILLED_SECONDS} s each ({} together); with {} spent that passes --max-cost-usd {max}",
                        runs.kind,
                        dollars(committed),
                        dollars(spent)
                    )));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The message a run stops with when its spend passes `--max-cost-usd`.
    pub fn over_budget(&self, spent: f64, running: &str) -> Option<String> {
        let max = self.max_cost_usd?;
        (spent >= max).then(|| {
            format!(
                "stopped by --max-cost-usd {max}: the run has spent {} in what it started ({running}); its cleanups run",
                dollars(spent)
            )
        })
    }

    /// `--read-only` for a call that is no change to a resource but can make one: a command run
    /// in a pod (`k8s::exec`, with `argv`), a lab twin fault (`twin::fault`, no `argv`). Only the
    /// GPU probes' own queries run in a read-only run.
    pub fn check_read_only(
        &self,
        action: &str,
        argv: Option<&[String]>,
    ) -> Result<(), GuardRefusal> {
        if !self.read_only || argv.is_some_and(super::reads_only) {
            return Ok(());
        }
        let reason = match argv {
            Some(_) => format!(
                "the run is --read-only and a command in a pod can change anything the pod reaches; only the GPU probes' queries run ({})",
                super::exec::READ_ONLY_COMMANDS_TEXT
            ),
            None => "the run is --read-only, and a lab twin fault changes the lab for every client until it is switched off".into(),
        };
        Err(GuardRefusal {
            action: action.to_string(),
            guard: "--read-only",
            reason,
        })
    }

    pub fn check(&self, change: &Change) -> Result<(), GuardRefusal> {
        let refuse = |guard: &'static str, reason: String| GuardRefusal {
            action: change.action.clone(),
            guard,
            reason,
        };
        if self.read_only {
            return Err(refuse(
                "--read-only",
                "the run is --read-only, which stops every change before it is sent".into(),
            ));
        }
        if let (Some(max), Some(nodes)) = (self.max_gpu_nodes, change.gpu_nodes)
            && nodes > max
        {
            return Err(refuse(
                "--max-gpu-nodes",
                format!(
                    "it asks for {nodes} GPU nodes and --max-gpu-nodes is {max}: raise the limit if that many are meant"
                ),
            ));
        }
        if let (Some(max), Some(gpus)) = (self.max_gpus, change.gpus)
            && gpus > max
        {
            return Err(refuse(
                "--max-gpus",
                format!(
                    "it asks for {gpus} GPUs ({} nodes) and --max-gpus is {max}: raise the limit if that many are meant",
                    change.gpu_nodes.unwrap_or_default()
                ),
            ));
        }
        if let Some(world) = change.disrupts
            && !self.embedded.contains(&world)
        {
            let resource = change.resource.as_deref().unwrap_or_default();
            if !self.disrupt.iter().any(|p| p.matches(resource)) {
                return Err(refuse(
                    "--disrupt",
                    format!(
                        "it disrupts {resource} on purpose, outside the lab twin: pass --disrupt {resource} (or a pattern such as '{}*') if that is meant",
                        resource
                            .split_once('/')
                            .map_or(resource, |(kind, _)| kind)
                            .to_string()
                            + "/"
                    ),
                ));
            }
        }
        if !self.allow.is_empty() {
            let allowed = change
                .resource
                .as_deref()
                .is_some_and(|r| self.allow.iter().any(|p| p.matches(r)));
            if !allowed {
                let patterns: Vec<String> = self.allow.iter().map(ToString::to_string).collect();
                return Err(refuse(
                    "--allow",
                    match &change.resource {
                        Some(resource) => format!(
                            "{resource} matches no --allow pattern ({}): add --allow {resource} if it may change",
                            patterns.join(", ")
                        ),
                        None => format!(
                            "it names no resource an --allow pattern could match ({}), so it is outside them",
                            patterns.join(", ")
                        ),
                    },
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scale(nodes: i64) -> Change {
        Change::new(format!("eks::scale_nodegroup myeks5w gpu to {nodes}"))
            .on("nodegroup/myeks5w/gpu")
            .sizing_gpus(nodes)
    }

    #[test]
    fn a_disruption_outside_the_twin_needs_its_own_flag() {
        let inject = Change::new("nvml::inject_xid 79 on ip-a")
            .on("gpu-fault/ip-a")
            .disrupting(crate::guard::World::Kubernetes);
        let none = Guards::default();
        let refused = none.check(&inject).unwrap_err().to_string();
        assert!(
            refused.contains("pass --disrupt gpu-fault/ip-a (or a pattern such as 'gpu-fault/*')"),
            "{refused}"
        );
        let named = Guards {
            disrupt: vec!["gpu-fault/ip-*".parse().unwrap()],
            ..Guards::default()
        };
        assert!(named.check(&inject).is_ok());
        let twin = Guards::default().on_embedded_twin(vec![crate::guard::World::Kubernetes]);
        assert!(twin.check(&inject).is_ok());
        let emulated_aws =
            Guards::default().on_embedded_twin(vec![crate::guard::World::Kubernetes]);
        let reboot = Change::new("ec2::reboot i-1")
            .on("instance/i-1")
            .disrupting(crate::guard::World::Aws);
        assert!(emulated_aws.check(&reboot).is_err());
    }

    #[test]
    fn max_gpus_counts_the_gpus_of_the_nodes_asked_for() {
        let guards = Guards {
            max_gpus: Some(8),
            ..Guards::default()
        };
        let p5 = |nodes: i64| scale(nodes).holding_gpus(nodes * 8);
        assert!(guards.check(&p5(1)).is_ok());
        let refused = guards.check(&p5(2)).unwrap_err();
        assert_eq!(refused.guard, "--max-gpus");
        assert!(
            refused
                .reason
                .contains("it asks for 16 GPUs (2 nodes) and --max-gpus is 8"),
            "{}",
            refused.reason
        );
        assert!(!guards.is_empty());
    }

    #[test]
    fn no_guards_let_everything_through() {
        assert!(Guards::default().check(&scale(64)).is_ok());
        assert!(Guards::default().is_empty());
    }

    #[test]
    fn read_only_stops_every_change() {
        let guards = Guards {
            read_only: true,
            ..Guards::default()
        };
        let refused = guards
            .check(&Change::new("ec2::revoke sg-1 ingress"))
            .unwrap_err();
        assert_eq!(refused.guard, "--read-only");
        assert_eq!(
            refused.to_string(),
            "ec2::revoke sg-1 ingress was not sent: the run is --read-only, which stops every change before it is sent"
        );
    }

    #[test]
    fn max_gpu_nodes_stops_a_larger_gpu_group_only() {
        let guards = Guards {
            max_gpu_nodes: Some(1),
            ..Guards::default()
        };
        assert!(guards.check(&scale(1)).is_ok());
        assert!(guards.check(&scale(0)).is_ok());
        let refused = guards.check(&scale(2)).unwrap_err();
        assert_eq!(refused.guard, "--max-gpu-nodes");
        assert!(
            refused
                .reason
                .contains("asks for 2 GPU nodes and --max-gpu-nodes is 1")
        );
        let cpu = Change::new("eks::scale_nodegroup myeks5w cpu to 5").on("nodegroup/myeks5w/cpu");
        assert!(guards.check(&cpu).is_ok());
    }

    #[test]
    fn allow_lets_only_matching_resources_change() {
        let guards = Guards {
            allow: vec!["nodegroup/myeks5w/*".parse().unwrap()],
            ..Guards::default()
        };
        assert!(guards.check(&scale(2)).is_ok());
        let sg = Change::new("ec2::revoke sg-1 ingress").on("sg/sg-1");
        let refused = guards.check(&sg).unwrap_err();
        assert_eq!(
            refused.reason,
            "sg/sg-1 matches no --allow pattern (nodegroup/myeks5w/*): add --allow sg/sg-1 if it may change"
        );
        let unnamed = guards
            .check(&Change::new("eks::create_cluster"))
            .unwrap_err();
        assert!(unnamed.reason.contains("names no resource"));
    }

    #[test]
    fn max_cost_stops_changes_once_spent_and_what_it_cannot_price() {
        let guards = Guards {
            max_cost_usd: Some(0.5),
            ..Guards::default()
        };
        let up = scale(2).running("g5.xlarge", 2, 0);
        assert!(guards.check_spend(&up, 0.1, "").is_ok());
        let refused = guards.check_spend(&up, 0.6, "2 x g5.xlarge").unwrap_err();
        assert_eq!(refused.guard, "--max-cost-usd");
        assert_eq!(
            refused.reason,
            "the run has spent $0.60 of --max-cost-usd 0.5 in what it started (2 x g5.xlarge)"
        );
        // Every GPU type of the catalog is priced; the one with no price in any source is not.
        let roomy = Guards {
            max_cost_usd: Some(100.0),
            ..Guards::default()
        };
        assert!(
            roomy
                .check_spend(&scale(2).running("p5.48xlarge", 2, 0), 0.0, "")
                .is_ok()
        );
        let unpriced = scale(2).running("p5e.48xlarge", 2, 0);
        assert!(
            guards
                .check_spend(&unpriced, 0.0, "")
                .unwrap_err()
                .reason
                .contains("2 x p5e.48xlarge, which the price table has no price for")
        );
        // Scaling down what it cannot price costs nothing more.
        assert!(
            guards
                .check_spend(&scale(0).running("p5e.48xlarge", 0, 2), 0.0, "")
                .is_ok()
        );
        // Two p5s commit 60 s each ($1.83 at $55.04/h) before they run: a $1 budget refuses
        // the scale-up before it is sent; two g5s ($0.03) fit.
        let tight = Guards {
            max_cost_usd: Some(1.0),
            ..Guards::default()
        };
        let p5 = tight
            .check_spend(&scale(2).running("p5.48xlarge", 2, 0), 0.05, "")
            .unwrap_err();
        assert!(
            p5.reason
                .starts_with("it starts 2 x p5.48xlarge, billed for at least 60 s each ($1.8"),
            "{}",
            p5.reason
        );
        assert!(
            p5.reason
                .ends_with("with $0.0500 spent that passes --max-cost-usd 1")
        );
        assert!(tight.check_spend(&up, 0.05, "").is_ok());
        assert_eq!(guards.over_budget(0.2, ""), None);
        assert_eq!(
            guards.over_budget(0.0012 + 0.5, "x").as_deref(),
            Some(
                "stopped by --max-cost-usd 0.5: the run has spent $0.50 in what it started (x); its cleanups run"
            )
        );
        assert_eq!(dollars(0.0012), "$0.0012");
        assert!(Guards::default().check_spend(&up, 100.0, "").is_ok());
    }
}
