//! ClusterRole aggregation: a ClusterRole with an `aggregationRule` holds the rules of every
//! ClusterRole its selectors match, kept current as those change (how `admin`, `edit` and
//! `view` grow when a CRD's chart adds a role labelled `aggregate-to-view`).

use serde_json::{Value, json};

use super::dirty::Dirty;
use crate::sim::kube::auth::rbac::authorizer::CLUSTER_ROLES;
use crate::sim::kube::storage::selectors::LabelSelector;
use crate::sim::kube::storage::state::KubeState;

fn touched(dirty: &Dirty) -> bool {
    dirty.all || dirty.deleted || dirty.changed.iter().any(|(key, _, _)| key == CLUSTER_ROLES)
}

/// The rules `role` aggregates from `roles`: theirs, in name order, each once.
fn gathered(role: &Value, roles: &[Value]) -> Vec<Value> {
    let selectors: Vec<LabelSelector> = role["aggregationRule"]["clusterRoleSelectors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(LabelSelector::from_object)
        .filter(|s| !s.is_empty())
        .collect();
    let mut rules: Vec<Value> = Vec::new();
    for other in roles {
        if other["metadata"]["name"] == role["metadata"]["name"]
            || !selectors
                .iter()
                .any(|s| s.matches(&other["metadata"]["labels"]))
        {
            continue;
        }
        for rule in other["rules"].as_array().into_iter().flatten() {
            if !rules.contains(rule) {
                rules.push(rule.clone());
            }
        }
    }
    rules
}

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    if !touched(dirty) {
        return;
    }
    let roles: Vec<Value> = state.store.list(CLUSTER_ROLES, None).cloned().collect();
    for role in roles.iter().filter(|r| r["aggregationRule"].is_object()) {
        let rules = gathered(role, &roles);
        if role["rules"].as_array() != Some(&rules) {
            let mut updated = role.clone();
            updated["rules"] = json!(rules);
            state.store.update(CLUSTER_ROLES, updated);
        }
    }
}
