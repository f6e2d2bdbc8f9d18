//! Garbage collection: objects whose owner is gone go too (background cascade), and pods bound
//! to a node that no longer exists are removed.

use std::collections::HashSet;

use serde_json::Value;

use super::dirty::Dirty;
use super::shared;
use crate::sim::kube::storage::state::{KubeState, built_in_key, store_key};

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    if dirty.all {
        collect_everything(state);
        return;
    }
    // Only the dependents of what was deleted can have lost their last owner, and only pods
    // that changed or sat on a deleted node can be stranded: the store's indexes find both.
    let mut orphans = Vec::new();
    for uid in &dirty.deleted_uids {
        for (resource, namespace, name) in state.store.dependents_of(uid) {
            let Some(object) = state.store.get(&resource, &namespace, &name) else {
                continue;
            };
            if all_owners_gone(object, |uid| state.store.has_uid(uid)) {
                orphans.push((resource, namespace, name));
            }
        }
    }
    let pods = built_in_key("pods");
    let node_exists = |name: &str| state.store.get(&built_in_key("nodes"), "", name).is_some();
    for node in &dirty.deleted_nodes {
        for (namespace, name) in state.store.pod_keys_on_node(node) {
            orphans.push((pods.clone(), namespace, name));
        }
    }
    for (resource, namespace, name) in dirty.changed.iter().filter(|(r, _, _)| *r == pods) {
        let stranded = state
            .store
            .get(resource, namespace, name)
            .and_then(|p| p["spec"]["nodeName"].as_str())
            .is_some_and(|node| !node_exists(node));
        if stranded {
            orphans.push((resource.clone(), namespace.clone(), name.clone()));
        }
    }
    orphans.sort();
    orphans.dedup();
    for (resource, namespace, name) in orphans {
        remove(state, &resource, &namespace, &name);
    }
}

fn all_owners_gone(object: &Value, exists: impl Fn(&str) -> bool) -> bool {
    object["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| {
            !refs.is_empty()
                && refs
                    .iter()
                    .all(|r| !exists(r["uid"].as_str().unwrap_or_default()))
        })
}

fn remove(state: &mut KubeState, resource: &str, namespace: &str, name: &str) {
    if state.store.remove(resource, namespace, name).is_some() && resource == built_in_key("pods") {
        state.forget_logs(namespace, name);
    }
}

/// The full sweep, for when the change history no longer reaches back to the last rest.
fn collect_everything(state: &mut KubeState) {
    let mut uids: HashSet<String> = HashSet::new();
    let resources: Vec<_> = state.registry.all().to_vec();
    for resource in &resources {
        uids.extend(
            state
                .store
                .list(&store_key(resource), None)
                .map(|o| shared::uid(o).to_string()),
        );
    }
    for resource in &resources {
        let key = store_key(resource);
        let orphans: Vec<(String, String)> = state
            .store
            .list(&key, None)
            .filter(|o| all_owners_gone(o, |uid| uids.contains(uid)))
            .map(|o| {
                (
                    shared::namespace(o).to_string(),
                    shared::name(o).to_string(),
                )
            })
            .collect();
        for (namespace, name) in orphans {
            remove(state, &key, &namespace, &name);
        }
    }
    let nodes: HashSet<String> = state
        .store
        .list(&built_in_key("nodes"), None)
        .map(|n| shared::name(n).to_string())
        .collect();
    let stranded: Vec<Value> = state.objects_where("pods", None, |p| {
        p["spec"]["nodeName"]
            .as_str()
            .is_some_and(|n| !nodes.contains(n))
    });
    for pod in stranded {
        shared::remove(state, "pods", &pod);
    }
}
