//! EKS node auto repair in the twin, across both worlds: when the monitoring agent reports a
//! watched condition False on a node of a managed node group with repair enabled, repair waits
//! the condition's time (policy.rs), then, unless the node recovered, the group is over its
//! unhealthy threshold or already repairing as many nodes as it may, cordons and drains the
//! node and replaces its instance (terminated; a new one launched into the group) or reboots
//! it. A held or queued repair looks again a minute later (the twin's interval; EKS states
//! none). Nothing here sends an Event of EKS's own: AWS documents none; what kubectl shows
//! are the kubelet's and the agent's (sim/kube/controllers/node_maintenance.rs).

use std::time::Duration;

use serde_json::Value;

use crate::repair::policy::{self, Action};
use crate::sim::aws::nodegroups::{launch, terminate_instance};
use crate::sim::aws::state::{AwsState, AwsTimer, NodeRepair, join_delay};
use crate::sim::kube::controllers::node_maintenance;
use crate::sim::kube::storage::state::built_in_key;
use crate::sim::timestamps::parse_rfc3339;
use crate::sim::twin::Twin;

/// How soon a held or queued repair looks again.
const RECHECK: Duration = Duration::from_secs(60);

/// The node group label EKS puts on a managed node group's nodes.
const NODEGROUP_LABEL: &str = "eks.amazonaws.com/nodegroup";

/// The first watched condition that is False on `node`: `(type, reason, since)`.
fn failing_condition(node: &Value) -> Option<(String, String, Duration)> {
    let conditions = node["status"]["conditions"].as_array()?;
    policy::WATCHED.iter().find_map(|(kind, _)| {
        let c = conditions
            .iter()
            .find(|c| c["type"] == *kind && c["status"] == "False")?;
        Some((
            (*kind).to_string(),
            c["reason"].as_str().unwrap_or_default().to_string(),
            c["lastTransitionTime"]
                .as_str()
                .and_then(parse_rfc3339)
                .unwrap_or_default(),
        ))
    })
}

/// Whether a node counts as unhealthy for the group's threshold: a watched condition False or
/// not Ready.
fn unhealthy(node: &Value) -> bool {
    let ready = node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    !ready || failing_condition(node).is_some()
}

fn instance_of(node: &Value) -> Option<String> {
    node["spec"]["providerID"]
        .as_str()?
        .rsplit('/')
        .next()
        .map(str::to_string)
}

fn config_of(state: &AwsState, cluster: &str, nodegroup: &str) -> Option<Value> {
    state
        .nodegroups
        .get(&(cluster.to_string(), nodegroup.to_string()))
        .and_then(|ng| ng.node_repair.clone())
}

impl Twin {
    /// The agent reported on `node`: a watched condition newly False starts a repair's wait;
    /// a node that recovered before its repair began is no longer watched.
    pub(crate) fn repair_watch(&self, node: &str) {
        let Some(object) = self.read_kube(|s| s.object("nodes", "", node)) else {
            return;
        };
        let (Some(instance), Some(nodegroup)) = (
            instance_of(&object),
            object["metadata"]["labels"][NODEGROUP_LABEL]
                .as_str()
                .map(str::to_string),
        ) else {
            return;
        };
        let failing = failing_condition(&object);
        self.aws(|state| {
            let Some(failing) = failing else {
                if state
                    .repairs
                    .get(&instance)
                    .is_some_and(|r| r.acting.is_none())
                {
                    state.repairs.remove(&instance);
                }
                return;
            };
            if state.repairs.contains_key(&instance) {
                return;
            }
            let Some((cluster, config)) = state
                .nodegroups
                .iter()
                .find(|((_, name), _)| *name == nodegroup)
                .map(|((cluster, _), ng)| (cluster.clone(), ng.node_repair.clone()))
            else {
                return;
            };
            let Some(config) = config.filter(|c| policy::enabled(Some(c))) else {
                return;
            };
            let (condition, reason, since) = failing;
            let due_at = since + policy::wait(&config, &condition, &reason);
            let due = due_at.saturating_sub(state.now);
            state.repairs.insert(
                instance.clone(),
                NodeRepair {
                    node: node.to_string(),
                    cluster,
                    nodegroup,
                    condition,
                    reason,
                    due: due_at,
                    acting: None,
                    replacement: None,
                },
            );
            state.schedule(due, AwsTimer::RepairDue { instance });
        });
    }

    /// A node group's repair configuration changed: each of its nodes is looked at as the
    /// agent last reported it (a node already failing starts its wait from its condition's
    /// transition, as EKS, which watches continuously, would count it).
    pub(crate) fn repair_scan(&self, nodegroup: &str) {
        let nodes: Vec<String> = self.read_kube(|s| {
            s.store
                .list(&built_in_key("nodes"), None)
                .filter(|n| n["metadata"]["labels"][NODEGROUP_LABEL] == nodegroup)
                .filter_map(|n| n["metadata"]["name"].as_str().map(str::to_string))
                .collect()
        });
        for node in nodes {
            self.repair_watch(&node);
        }
    }

    /// A watched node's wait is over: repair acts, holds or queues.
    pub(crate) fn repair_due(&self, instance: &str) {
        let now = self.clock_now();
        let Some(repair) = self.read_aws(|s| {
            s.repairs
                .get(instance)
                .filter(|r| r.acting.is_none() && now >= r.due)
                .cloned()
        }) else {
            return;
        };
        let (node, group) = self.read_kube(|s| {
            let node = s.object("nodes", "", &repair.node);
            let group: Vec<Value> = s
                .store
                .list(&built_in_key("nodes"), None)
                .filter(|n| n["metadata"]["labels"][NODEGROUP_LABEL] == repair.nodegroup.as_str())
                .cloned()
                .collect();
            (node, group)
        });
        let still = node
            .as_ref()
            .and_then(failing_condition)
            .is_some_and(|(c, r, _)| c == repair.condition && r == repair.reason);
        let config = self.read_aws(|s| config_of(s, &repair.cluster, &repair.nodegroup));
        let Some(config) = config.filter(|c| still && policy::enabled(Some(c))) else {
            self.aws(|s| s.repairs.remove(instance));
            return;
        };
        let unhealthy_nodes = group.iter().filter(|n| unhealthy(n)).count();
        let acting = self.read_aws(|s| {
            s.repairs
                .values()
                .filter(|r| r.nodegroup == repair.nodegroup && r.acting.is_some())
                .count()
        });
        if policy::held(&config, group.len(), unhealthy_nodes).is_some()
            || acting >= policy::parallel(&config, unhealthy_nodes)
        {
            self.aws(|s| {
                s.schedule(
                    RECHECK,
                    AwsTimer::RepairDue {
                        instance: instance.to_string(),
                    },
                );
            });
            return;
        }
        match policy::action(&config, &repair.condition, &repair.reason) {
            Action::NoAction => {}
            action => self.repair_act(instance, &repair, action),
        }
    }

    fn repair_act(&self, instance: &str, repair: &NodeRepair, action: Action) {
        self.kube(|s| node_maintenance::cordon_and_drain(s, &repair.node));
        match action {
            Action::Replace => {
                let replacement = self.aws(|s| {
                    let nodegroup = s
                        .nodegroups
                        .get(&(repair.cluster.clone(), repair.nodegroup.clone()))
                        .cloned()?;
                    terminate_instance(s, instance);
                    let live = s.live_instances(&nodegroup.name).len();
                    launch(s, &nodegroup, live, live + 1);
                    s.live_instances(&nodegroup.name)
                        .into_iter()
                        .max_by_key(|i| (i.launched_at, i.id.clone()))
                        .map(|i| i.id.clone())
                });
                self.aws(|s| {
                    if let Some(r) = s.repairs.get_mut(instance) {
                        r.acting = Some(action.word());
                        r.replacement = replacement;
                    }
                });
            }
            Action::Reboot => {
                let takes = self.aws(|s| {
                    if let Some(r) = s.repairs.get_mut(instance) {
                        r.acting = Some(action.word());
                    }
                    s.instances
                        .get(instance)
                        .map_or(Duration::from_secs(150), |i| join_delay(&i.instance_type))
                });
                self.kube(|s| node_maintenance::reboot(s, &repair.node, takes));
            }
            Action::NoAction => {}
        }
    }

    /// A repair's replacement instance has joined, or its rebooted node is back: done; a node
    /// a repair rebooted is schedulable again.
    pub(crate) fn repair_finished(&self, instance_or_node: &str) {
        let rebooted = self.aws(|s| {
            let done: Vec<String> = s
                .repairs
                .iter()
                .filter(|(id, r)| {
                    r.acting.is_some()
                        && (r.replacement.as_deref() == Some(instance_or_node)
                            || (r.replacement.is_none()
                                && (r.node == instance_or_node || *id == instance_or_node)))
                })
                .map(|(id, _)| id.clone())
                .collect();
            done.iter()
                .filter_map(|id| s.repairs.remove(id))
                .filter(|r| r.acting == Some(Action::Reboot.word()))
                .map(|r| r.node)
                .collect::<Vec<_>>()
        });
        for node in rebooted {
            self.kube(|s| node_maintenance::set_schedulable(s, &node, true));
        }
    }
}
