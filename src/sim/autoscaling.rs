//! Between the twin's two worlds for the cluster's autoscaler: the instances its Karpenter asks
//! for are started (or refused) on the AWS side and the answers go back; an autoscaled
//! instance that has booted joins as a node with its NodePool's labels and taints.

use super::aws::autoscaled;
use super::aws::state::Instance;
use super::kube::controllers::karpenter;
use super::kube::storage::state::built_in_key;
use super::launch::{LaunchOutcome, LaunchRequest};
use super::scenario::{NodeSpec, node_object};
use super::twin::Twin;
use crate::lab;

impl Twin {
    /// Carries what the autoscaler asked for in the last Kubernetes change to EC2, then its
    /// answers back (which may ask for more: bounded; what is left waits for the next change).
    pub(super) fn carry_autoscaler_requests(
        &self,
        mut launches: Vec<LaunchRequest>,
        mut terminations: Vec<String>,
    ) {
        for _ in 0..10 {
            if launches.is_empty() && terminations.is_empty() {
                return;
            }
            let outcomes: Vec<LaunchOutcome> = self.aws(|state| {
                for instance in &terminations {
                    autoscaled::terminate(state, instance);
                }
                launches
                    .iter()
                    .map(|request| autoscaled::launch(state, request))
                    .collect()
            });
            ((), launches, terminations) = self.kube_without_carrying(|state| {
                for outcome in &outcomes {
                    karpenter::launched(state, outcome);
                }
            });
        }
        if !launches.is_empty() || !terminations.is_empty() {
            self.keep_for_next_change(launches, terminations);
        }
    }

    /// A booted autoscaled instance's node joins; false when the instance is not autoscaled.
    pub(super) fn autoscaled_node_joins(&self, instance: &str) -> bool {
        let joined = self.aws(|state| {
            let request = state.autoscaled.get(instance)?.clone();
            let record = state.instances.get_mut(instance)?;
            if record.state != "pending" {
                return None;
            }
            record.state = "running".into();
            Some((record.clone(), request))
        });
        let Some((instance, request)) = joined else {
            return false;
        };
        let node = node_of(&instance, &request);
        let name = node["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.kube(|state| {
            let now = state.now;
            state.store.create(&built_in_key("nodes"), node, now);
            karpenter::registered(state, &request.nodeclaim, &name);
        });
        true
    }
}

/// The node an autoscaled instance registers as: a node of its instance type, with the
/// NodePool's labels and taints instead of a node group's.
fn node_of(instance: &Instance, request: &LaunchRequest) -> serde_json::Value {
    let shape = lab::shape_of(&instance.instance_type);
    let taints: Vec<(&str, &str, &str)> = request
        .taints
        .iter()
        .map(|(k, v, e)| (k.as_str(), v.as_str(), e.as_str()))
        .collect();
    let mut node = node_object(&NodeSpec {
        nodegroup: "",
        instance_id: &instance.id,
        zone: &instance.zone,
        private_ip: &instance.private_ip,
        shape,
        ami: &instance.ami,
        labels: &[],
        taints: &taints,
        ready: true,
    });
    let labels = &mut node["metadata"]["labels"];
    for (key, value) in crate::sim::twin::network_labels(instance) {
        labels[key] = serde_json::json!(value);
    }
    if let Some(map) = labels.as_object_mut() {
        for key in [
            "eks.amazonaws.com/nodegroup",
            "eks.amazonaws.com/nodegroup-image",
            "eks.amazonaws.com/capacityType",
        ] {
            map.remove(key);
        }
    }
    for (key, value) in &request.labels {
        labels[key] = serde_json::json!(value);
    }
    labels["karpenter.sh/registered"] = serde_json::json!("true");
    labels["karpenter.sh/initialized"] = serde_json::json!("true");
    node
}
