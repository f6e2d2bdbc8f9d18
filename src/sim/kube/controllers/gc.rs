//! Garbage collection: objects whose owner is gone go too (background cascade), and pods bound
//! to a node that no longer exists are removed.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::shared;
use crate::sim::kube::state::{KubeState, store_key};

pub(super) fn run(state: &mut KubeState) {
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
        let orphans: Vec<Value> = state
            .store
            .list(&key, None)
            .filter(|o| {
                let owners = o["metadata"]["ownerReferences"].as_array();
                owners.is_some_and(|refs| {
                    !refs.is_empty()
                        && refs
                            .iter()
                            .all(|r| !uids.contains(r["uid"].as_str().unwrap_or_default()))
                })
            })
            .cloned()
            .collect();
        for orphan in orphans {
            state
                .store
                .remove(&key, shared::namespace(&orphan), shared::name(&orphan));
        }
    }
    let nodes: HashSet<String> = state
        .objects("nodes", None)
        .iter()
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

/// `propagationPolicy: Orphan`: dependents lose their owner reference and stay.
pub fn orphan_dependents(state: &mut KubeState, owner_uid: &str) {
    let resources: Vec<_> = state.registry.all().to_vec();
    for resource in resources {
        let key = store_key(&resource);
        let owned: Vec<Value> = state
            .store
            .list(&key, None)
            .filter(|o| shared::is_owned_by(o, owner_uid))
            .cloned()
            .collect();
        for mut object in owned {
            let refs: Vec<Value> = object["metadata"]["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|r| r["uid"] != owner_uid)
                .cloned()
                .collect();
            object["metadata"]["ownerReferences"] = json!(refs);
            state.store.update(&key, object);
        }
    }
}
