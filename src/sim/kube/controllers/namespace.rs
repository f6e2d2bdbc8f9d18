//! The namespace controller: a deleted namespace is Terminating until everything in it is
//! gone, then it goes too. Until then the API server refuses new content in it (403).

use serde_json::json;

use crate::sim::kube::storage::state::{KubeState, store_key};
use crate::sim::timestamps::rfc3339;

/// Removes every namespaced object of `name`, then the namespace itself.
pub(super) fn finalize(state: &mut KubeState, name: &str) {
    let namespaced: Vec<_> = state
        .registry
        .all()
        .iter()
        .filter(|r| r.namespaced)
        .cloned()
        .collect();
    for resource in namespaced {
        let key = store_key(&resource);
        let names: Vec<String> = state
            .store
            .list(&key, Some(name))
            .map(|o| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        for object in names {
            state.store.remove(&key, name, &object);
            if resource.plural == "pods" {
                state.forget_logs(name, &object);
            }
        }
    }
    let namespaces = store_key(&state.built_in("namespaces"));
    if let Some(mut namespace) = state.store.get(&namespaces, "", name).cloned() {
        // The finalizer the API server's namespace lifecycle removes before the delete.
        namespace["spec"]["finalizers"] = json!([]);
        namespace["status"]["conditions"] = json!([{
            "type": "NamespaceContentRemaining", "status": "False",
            "lastTransitionTime": rfc3339(state.now), "reason": "ContentRemoved",
            "message": "All content successfully removed",
        }]);
        state.store.update(&namespaces, namespace);
        state.store.remove(&namespaces, "", name);
    }
}
