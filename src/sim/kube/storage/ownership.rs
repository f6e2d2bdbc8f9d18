//! Owner references: whether an object is owned by another, and the orphaning a delete with
//! `propagationPolicy: Orphan` does (the API layer's part of garbage collection; the
//! collector itself is a controller).

use serde_json::{Value, json};

use super::state::{KubeState, store_key};

pub(crate) fn is_owned_by(object: &Value, owner_uid: &str) -> bool {
    object["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| r["uid"] == owner_uid)
}

/// `propagationPolicy: Orphan`: dependents lose their owner reference and stay.
pub(crate) fn orphan_dependents(state: &mut KubeState, owner_uid: &str) {
    let resources: Vec<_> = state.registry.all().to_vec();
    for resource in resources {
        let key = store_key(&resource);
        let owned: Vec<Value> = state
            .store
            .list(&key, None)
            .filter(|o| is_owned_by(o, owner_uid))
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
