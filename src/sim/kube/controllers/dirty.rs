//! What changed since the controllers last came to rest: they look only at that, so a world of
//! thousands of pods costs a change, not a scan of everything, per request.

use std::collections::HashSet;

use serde_json::Value;

use crate::sim::kube::storage::state::KubeState;
use crate::sim::kube::storage::store::{name_of, namespace_of};

#[derive(Default)]
pub(super) struct Dirty {
    /// Everything may have changed (the history no longer reaches back): look at all.
    pub(super) all: bool,
    /// Uids of changed objects, and of the owners named by changed objects.
    uids: HashSet<String>,
    /// `(store key, namespace, name)` of changed objects that still exist.
    pub(super) changed: Vec<(String, String, String)>,
    pub(super) nodes_changed: bool,
    /// A pod was deleted or finished: capacity was freed.
    pub(super) capacity_freed: bool,
    pub(super) deleted: bool,
    /// Uids of deleted objects (their dependents may be orphans now).
    pub(super) deleted_uids: Vec<String>,
    /// Names of deleted nodes (their pods are stranded).
    pub(super) deleted_nodes: Vec<String>,
    /// `(namespace, name, node)` of deleted pods.
    pub(super) deleted_pods: Vec<(String, String, Option<String>)>,
}

impl Dirty {
    pub(super) fn since(state: &KubeState, resource_version: u64) -> Self {
        let Some(changes) = state.store.changes_since(resource_version) else {
            return Self {
                all: true,
                nodes_changed: true,
                capacity_freed: true,
                deleted: true,
                ..Self::default()
            };
        };
        let mut dirty = Self::default();
        for change in changes {
            if !change.uid.is_empty() {
                dirty.uids.insert(change.uid.clone());
            }
            for owner in &change.owners {
                dirty.uids.insert(owner.clone());
            }
            let deleted = change.change == crate::sim::kube::storage::store::ChangeType::Deleted;
            match change.resource.as_str() {
                "/nodes" => dirty.nodes_changed = true,
                "/pods"
                    if deleted
                        || matches!(change.phase.as_deref(), Some("Succeeded" | "Failed")) =>
                {
                    dirty.capacity_freed = true;
                }
                _ => {}
            }
            dirty.deleted |= deleted;
            if deleted {
                if !change.uid.is_empty() {
                    dirty.deleted_uids.push(change.uid.clone());
                }
                match change.resource.as_str() {
                    "/nodes" => dirty.deleted_nodes.push(change.name.clone()),
                    "/pods" => dirty.deleted_pods.push((
                        change.namespace.clone(),
                        change.name.clone(),
                        change.node.clone(),
                    )),
                    _ => {}
                }
            } else {
                dirty.changed.push((
                    change.resource.clone(),
                    change.namespace.clone(),
                    change.name.clone(),
                ));
            }
        }
        dirty.changed.sort();
        dirty.changed.dedup();
        dirty
    }

    pub(super) fn is_empty(&self) -> bool {
        !self.all && self.uids.is_empty() && self.changed.is_empty() && !self.deleted
    }

    /// The objects of one built-in resource that changed or whose owned objects changed, in
    /// the store's order, found by uid rather than by a scan of every object.
    pub(super) fn touched_objects(&self, state: &KubeState, plural: &str) -> Vec<Value> {
        if self.all {
            return state.objects(plural, None);
        }
        let key = crate::sim::kube::storage::state::built_in_key(plural);
        let mut found: Vec<&Value> = self
            .uids
            .iter()
            .filter_map(|uid| state.store.by_uid(&key, uid))
            .collect();
        found.sort_by_key(|o| (namespace_of(o), name_of(o)));
        found.into_iter().cloned().collect()
    }

    /// Whether any object of a resource (its store key, `nvidia.com/clusterpolicies`) was
    /// written, or anything was deleted.
    pub(super) fn touched(&self, key: &str) -> bool {
        self.all || self.deleted || self.changed.iter().any(|(resource, _, _)| resource == key)
    }

    /// The changed objects of one built-in resource, as they are now.
    pub(super) fn changed_objects(&self, state: &KubeState, plural: &str) -> Vec<Value> {
        let key = crate::sim::kube::storage::state::built_in_key(plural);
        if self.all {
            return state.objects(plural, None);
        }
        self.changed
            .iter()
            .filter(|(resource, _, _)| *resource == key)
            .filter_map(|(resource, namespace, name)| {
                state.store.get(resource, namespace, name).cloned()
            })
            .collect()
    }
}
