//! Starting states of the twin: `empty` (nothing exists yet) and `deployed` (the lab right
//! after its Terraform apply).

mod addons;
mod aws;
mod kube_system;
mod nodes;

pub use addons::{install as install_addon, uninstall as uninstall_addon};
pub use kube_system::clear_cluster;
pub use nodes::{NodeSpec, node_object};

use std::str::FromStr;
use std::time::Duration;

use super::twin::Twin;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    Empty,
    Deployed,
}

impl FromStr for Scenario {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "empty" => Ok(Self::Empty),
            "deployed" => Ok(Self::Deployed),
            other => Err(format!(
                "unknown scenario `{other}`; choose `deployed` or `empty`"
            )),
        }
    }
}

/// How long the deployed lab has been running when a run starts: long enough for every pod to
/// be Ready (the seed's `kubectl get nodes` shows AGE 87s).
pub const SETTLE: Duration = Duration::from_secs(90);

/// Puts the scenario's objects into the twin and lets it settle on the virtual clock.
pub fn load(twin: &Twin, scenario: Scenario) {
    twin.kube(kube_system::namespaces);
    if scenario == Scenario::Deployed {
        twin.aws(aws::deployed);
        twin.kube(kube_system::deployed);
        twin.clock.advance(SETTLE);
    }
}
