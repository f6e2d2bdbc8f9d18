//! How the scheduler ranks and filters nodes beyond "does it fit": pod topology spread
//! constraints (`DoNotSchedule` filters, `ScheduleAnyway` prefers) and preferred node affinity
//! (the weights of the terms a node matches).

use std::collections::HashMap;

use serde_json::Value;

use super::shared;
use crate::sim::kube::storage::selectors::LabelSelector;
use crate::sim::kube::storage::state::{KubeState, built_in_key};

/// One spread constraint with the matching pods counted per domain.
struct Constraint {
    key: String,
    max_skew: usize,
    min_domains: usize,
    /// `DoNotSchedule`: a node over the skew is filtered out; `ScheduleAnyway`: it ranks lower.
    hard: bool,
    /// Domain value -> matching pods there, for every domain of an eligible node.
    counts: HashMap<String, usize>,
}

/// A pod's spread constraints, counted once for the pod's placement.
pub(super) struct Spread {
    constraints: Vec<Constraint>,
}

impl Spread {
    /// Counts what the pod's constraints need, over the nodes it could go to (those matching
    /// its node selector and required affinity, as the scheduler's default `nodeAffinityPolicy:
    /// Honor` does). None when the pod has no constraint.
    pub(super) fn observe<'a>(
        state: &KubeState,
        pod: &Value,
        nodes: impl Iterator<Item = &'a Value>,
    ) -> Option<Self> {
        let list = pod["spec"]["topologySpreadConstraints"].as_array()?;
        if list.is_empty() {
            return None;
        }
        let spec = &pod["spec"];
        let eligible: Vec<&Value> = nodes.filter(|n| shared::node_matches(spec, n)).collect();
        let namespace = shared::namespace(pod);
        let peers: Vec<Value> = state
            .store
            .list(&built_in_key("pods"), Some(namespace))
            .filter(|p| !shared::is_terminal(p) && !shared::is_terminating(p))
            .filter(|p| p["spec"]["nodeName"].is_string())
            .cloned()
            .collect();
        let node_labels: HashMap<&str, &Value> = eligible
            .iter()
            .map(|n| (shared::name(n), &n["metadata"]["labels"]))
            .collect();
        let constraints = list
            .iter()
            .map(|c| {
                let key = c["topologyKey"].as_str().unwrap_or_default().to_string();
                let selector = LabelSelector::from_object(&c["labelSelector"]);
                let mut counts: HashMap<String, usize> = eligible
                    .iter()
                    .filter_map(|n| n["metadata"]["labels"][key.as_str()].as_str())
                    .map(|d| (d.to_string(), 0))
                    .collect();
                for peer in &peers {
                    if !selector.matches(&peer["metadata"]["labels"]) {
                        continue;
                    }
                    let node = peer["spec"]["nodeName"].as_str().unwrap_or_default();
                    if let Some(domain) = node_labels
                        .get(node)
                        .and_then(|labels| labels[key.as_str()].as_str())
                        && let Some(count) = counts.get_mut(domain)
                    {
                        *count += 1;
                    }
                }
                Constraint {
                    max_skew: c["maxSkew"].as_u64().unwrap_or(1) as usize,
                    min_domains: c["minDomains"].as_u64().unwrap_or(1) as usize,
                    hard: c["whenUnsatisfiable"] != "ScheduleAnyway",
                    key,
                    counts,
                }
            })
            .collect();
        Some(Self { constraints })
    }

    /// Whether placing the pod on `node` keeps every `DoNotSchedule` constraint.
    pub(super) fn allows(&self, node: &Value) -> bool {
        self.constraints.iter().filter(|c| c.hard).all(|c| {
            let Some(domain) = node["metadata"]["labels"][c.key.as_str()].as_str() else {
                return false;
            };
            // Fewer domains than minDomains: the global minimum counts as 0.
            let min = if c.counts.len() < c.min_domains {
                0
            } else {
                c.counts.values().copied().min().unwrap_or(0)
            };
            let here = c.counts.get(domain).copied().unwrap_or(0);
            here + 1 - min <= c.max_skew
        })
    }

    /// Matching pods already in the node's domains: lower is better.
    pub(super) fn crowding(&self, node: &Value) -> usize {
        self.constraints
            .iter()
            .map(|c| {
                node["metadata"]["labels"][c.key.as_str()]
                    .as_str()
                    .and_then(|d| c.counts.get(d).copied())
                    .unwrap_or(0)
            })
            .sum()
    }
}

/// The summed weights of the pod's preferred node-affinity terms that `node` matches.
pub(super) fn preference(spec: &Value, node: &Value) -> i64 {
    spec["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|term| shared::term_matches(&term["preference"], &node["metadata"]["labels"]))
        .map(|term| term["weight"].as_i64().unwrap_or(0))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str, location: &str) -> Value {
        json!({"metadata": {"name": name, "labels": {"example.com/location": location}}})
    }

    #[test]
    fn preferred_terms_add_their_weights() {
        let spec = json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "preference": {"matchExpressions": [{"key": "example.com/location", "operator": "In", "values": ["onprem"]}]}}
        ]}}});
        assert_eq!(preference(&spec, &node("a", "onprem")), 100);
        assert_eq!(preference(&spec, &node("b", "cloud")), 0);
        assert_eq!(preference(&json!({}), &node("b", "cloud")), 0);
    }

    #[test]
    fn min_domains_holds_the_second_replica_for_the_missing_domain() {
        let spread = Spread {
            constraints: vec![Constraint {
                key: "example.com/location".into(),
                max_skew: 1,
                min_domains: 2,
                hard: true,
                counts: HashMap::from([("cloud".to_string(), 1)]),
            }],
        };
        // Only the cloud domain is eligible: with minDomains 2 the minimum is 0, so a second
        // replica there would make the skew 2.
        assert!(!spread.allows(&node("a", "cloud")));
        assert!(!spread.allows(&json!({"metadata": {"labels": {}}})));
        let both = Spread {
            constraints: vec![Constraint {
                counts: HashMap::from([("cloud".to_string(), 1), ("onprem".to_string(), 0)]),
                ..spread.constraints.into_iter().next().unwrap()
            }],
        };
        assert!(both.allows(&node("b", "onprem")));
        assert!(!both.allows(&node("a", "cloud")));
    }
}
