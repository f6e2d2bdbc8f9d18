//! Starting states of the twin: `empty` (nothing exists yet), `deployed` (the lab right
//! after its Terraform apply), or a lab captured from a live account (`@lab-state.json`).

mod addon_settings;
mod addons;
mod aws;
mod captured;
mod hybrid;
mod kube_system;
mod nodes;

pub(crate) use addon_settings::apply as configure_addon;
pub(crate) use addons::{install as install_addon, uninstall as uninstall_addon};
pub(crate) use kube_system::clear_cluster;
pub(crate) use nodes::{NodeSpec, node_object};

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::lab_state::LabState;

use super::twin::Twin;

#[derive(Debug, Clone)]
pub(crate) enum Scenario {
    Empty,
    Deployed,
    /// The deployed lab as an EKS Hybrid Nodes cluster (seed 004).
    Hybrid,
    /// A lab read by `runbook state capture`.
    Captured(Arc<LabState>),
}

impl FromStr for Scenario {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "empty" => Ok(Self::Empty),
            "deployed" => Ok(Self::Deployed),
            "hybrid" => Ok(Self::Hybrid),
            other => Err(format!(
                "unknown scenario `{other}`; choose `deployed`, `hybrid`, `empty`, or `@FILE` (a lab-state file from `runbook state capture`)"
            )),
        }
    }
}

/// How long the deployed lab has been running when a run starts: long enough for every pod to
/// be Ready (the seed's `kubectl get nodes` shows AGE 87s).
pub(crate) const SETTLE: Duration = Duration::from_secs(90);

/// Puts the scenario's objects into the twin and lets it settle on the virtual clock. Returns
/// the kinds of captured objects the twin does not serve (left out).
pub(crate) fn load(twin: &Twin, scenario: &Scenario) -> Vec<String> {
    match scenario {
        Scenario::Empty => twin.kube(kube_system::namespaces),
        Scenario::Deployed => {
            twin.kube(kube_system::namespaces);
            twin.aws(aws::deployed);
            twin.kube(kube_system::deployed);
            twin.clock.advance(SETTLE);
        }
        Scenario::Hybrid => {
            twin.kube(kube_system::namespaces);
            twin.aws(|state| {
                aws::deployed(state);
                hybrid::extend_account(state);
            });
            twin.kube(|state| {
                kube_system::deployed(state);
                hybrid::extend_cluster(state);
            });
            twin.clock.advance(SETTLE);
        }
        Scenario::Captured(capture) => return captured::load(twin, capture),
    }
    Vec::new()
}
