//! The object store: every object by resource, namespace and name, with resource versions, a
//! bounded event history for watches (records in `changes.rs`), and a broadcast of changes.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast;

pub(crate) use super::changes::{Change, ChangeType};
use super::changes::{Past, Touch};
use crate::sim::timestamps::rfc3339;

/// How many past changes a watch can resume from before it gets 410 Gone.
const HISTORY: usize = 5_000;

/// How many past changes the controllers can look back on (a few fields each): more than one
/// pass of a 256-node cluster makes, so they need not fall back to looking at everything.
const TOUCHES: usize = 200_000;

/// A stored object and its JSON, serialized once when written: lists are mostly reads.
struct Entry {
    /// Shared with the change that wrote it: a write copies the object once, not twice.
    value: Arc<Value>,
    json: bytes::Bytes,
}

pub(crate) struct Store {
    resource_version: u64,
    next_uid: u64,
    objects: HashMap<String, BTreeMap<(String, String), Entry>>,
    history: VecDeque<Past>,
    touches: VecDeque<Touch>,
    changes: broadcast::Sender<Change>,
    /// Owner uid -> the keys of the objects that name it in their ownerReferences, so that
    /// controllers find a ReplicaSet's pods without scanning every pod.
    owned: HashMap<String, std::collections::BTreeSet<(String, String, String)>>,
    /// Node name -> the keys of the pods bound to it, as the apiserver indexes
    /// `spec.nodeName`: a kubelet (or a fan-out over nodes) lists one node's pods without a scan
    /// of every pod.
    pods_on_node: HashMap<String, std::collections::BTreeSet<(String, String)>>,
    /// Node name -> the count of pod writes (see `node_writes`) at the last write to a pod
    /// bound to it, so that what a node runs can be cached until one of its pods changes.
    node_pods_written: HashMap<String, u64>,
    node_writes: u64,
    /// Uid -> the key of the object it names, so the garbage collector can tell whether an
    /// owner still exists, and controllers find what changed, without listing everything.
    uids: HashMap<String, (String, String, String)>,
}

/// The store key of pods.
const PODS: &str = "/pods";

impl Default for Store {
    fn default() -> Self {
        Self {
            resource_version: 1000,
            next_uid: 1,
            objects: HashMap::new(),
            history: VecDeque::new(),
            touches: VecDeque::new(),
            changes: broadcast::channel(8192).0,
            owned: HashMap::new(),
            pods_on_node: HashMap::new(),
            uids: HashMap::new(),
            node_pods_written: HashMap::new(),
            node_writes: 0,
        }
    }
}

pub(crate) fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn uid_of(object: &Value) -> &str {
    object["metadata"]["uid"].as_str().unwrap_or_default()
}

pub(crate) fn namespace_of(object: &Value) -> &str {
    object["metadata"]["namespace"].as_str().unwrap_or_default()
}

impl Store {
    pub(crate) fn resource_version(&self) -> u64 {
        self.resource_version
    }

    pub(crate) fn get(&self, resource: &str, namespace: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(resource)?
            .get(&(namespace.to_string(), name.to_string()))
            .map(|e| &*e.value)
    }

    /// Objects of a resource, in one namespace or all, ordered by namespace then name.
    pub(crate) fn list<'a>(
        &'a self,
        resource: &str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Value> + 'a {
        self.entries(resource, namespace).map(|e| &*e.value)
    }

    /// Like [`Store::list`], each object shared rather than borrowed: a controller can keep
    /// it while it changes the store.
    pub(crate) fn list_shared<'a>(
        &'a self,
        resource: &str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = Arc<Value>> + 'a {
        self.entries(resource, namespace).map(|e| e.value.clone())
    }

    /// Like [`Store::list`], with each object's JSON as stored.
    pub(crate) fn list_with_json<'a>(
        &'a self,
        resource: &str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a Value, &'a bytes::Bytes)> + 'a {
        self.entries(resource, namespace)
            .map(|e| (&*e.value, &e.json))
    }

    /// The entries of a resource; one namespace is a range of the ordered map, not a scan.
    fn entries<'a>(
        &'a self,
        resource: &str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Entry> + 'a {
        let objects = self.objects.get(resource);
        let (all, one) = match namespace {
            None => (objects.map(|m| m.iter()), None),
            Some(want) => (
                None,
                objects.map(|m| {
                    m.range((want.to_string(), String::new())..)
                        .take_while(move |((ns, _), _)| ns == want)
                }),
            ),
        };
        all.into_iter()
            .flatten()
            .chain(one.into_iter().flatten())
            .map(|(_, e)| e)
    }

    /// Pods bound to `node`, in one namespace or all, ordered like [`Store::list_with_json`].
    pub(crate) fn pods_on_node_with_json<'a>(
        &'a self,
        node: &str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a Value, &'a bytes::Bytes)> + 'a {
        let pods = self.objects.get(PODS);
        self.pods_on_node
            .get(node)
            .into_iter()
            .flatten()
            .filter(move |(ns, _)| namespace.is_none_or(|want| ns == want))
            .filter_map(move |key| pods?.get(key))
            .map(|e| (&*e.value, &e.json))
    }

    fn index_node(&mut self, resource: &str, object: &Value, add: bool) {
        let Some(node) = object["spec"]["nodeName"]
            .as_str()
            .filter(|_| resource == PODS)
        else {
            return;
        };
        let key = (
            namespace_of(object).to_string(),
            name_of(object).to_string(),
        );
        self.node_writes += 1;
        self.node_pods_written
            .insert(node.to_string(), self.node_writes);
        if add {
            self.pods_on_node
                .entry(node.to_string())
                .or_default()
                .insert(key);
        } else if let Some(set) = self.pods_on_node.get_mut(node) {
            set.remove(&key);
            if set.is_empty() {
                self.pods_on_node.remove(node);
            }
        }
    }

    /// Every stored object's `(resource, namespace, name)`.
    pub(crate) fn keys(&self) -> Vec<(String, String, String)> {
        self.objects
            .iter()
            .flat_map(|(resource, objects)| {
                objects
                    .keys()
                    .map(move |(ns, name)| (resource.clone(), ns.clone(), name.clone()))
            })
            .collect()
    }

    /// Whether an object with this uid is stored.
    pub(crate) fn has_uid(&self, uid: &str) -> bool {
        self.uids.contains_key(uid)
    }

    /// The object of `resource` with this uid, found without a scan.
    pub(crate) fn by_uid(&self, resource: &str, uid: &str) -> Option<&Value> {
        let (stored, namespace, name) = self.uids.get(uid)?;
        (stored == resource).then(|| self.get(resource, namespace, name))?
    }

    /// `(resource, namespace, name)` of every object that lists `owner_uid` among its owners.
    pub(crate) fn dependents_of(&self, owner_uid: &str) -> Vec<(String, String, String)> {
        self.owned
            .get(owner_uid)
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }

    /// Changes whenever a pod bound to `node` is written or removed (0: none yet).
    pub(crate) fn node_pods_written(&self, node: &str) -> u64 {
        self.node_pods_written.get(node).copied().unwrap_or(0)
    }

    /// `(namespace, name)` of the pods bound to `node`.
    pub(crate) fn pod_keys_on_node(&self, node: &str) -> Vec<(String, String)> {
        self.pods_on_node
            .get(node)
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }

    /// Objects of `resource` that list `owner_uid` among their owners.
    pub(crate) fn owned_by<'a>(
        &'a self,
        resource: &'a str,
        owner_uid: &str,
    ) -> impl Iterator<Item = &'a Value> + 'a {
        self.owned
            .get(owner_uid)
            .into_iter()
            .flatten()
            .filter(move |(r, _, _)| r == resource)
            .filter_map(move |(r, ns, name)| self.get(r, ns, name))
    }

    fn index_owners(&mut self, resource: &str, object: &Value, add: bool) {
        let key = (
            resource.to_string(),
            namespace_of(object).to_string(),
            name_of(object).to_string(),
        );
        for owner in object["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let Some(uid) = owner["uid"].as_str() else {
                continue;
            };
            if add {
                self.owned
                    .entry(uid.to_string())
                    .or_default()
                    .insert(key.clone());
            } else if let Some(set) = self.owned.get_mut(uid) {
                set.remove(&key);
                if set.is_empty() {
                    self.owned.remove(uid);
                }
            }
        }
    }

    fn bump(&mut self) -> u64 {
        self.resource_version += 1;
        self.resource_version
    }

    /// A deterministic uid: the same run always names things the same.
    pub(crate) fn uid(&mut self) -> String {
        loop {
            let n = self.next_uid;
            self.next_uid += 1;
            let uid = format!(
                "{:08x}-0000-4000-8000-{:012x}",
                n,
                n.wrapping_mul(0x9e37_79b9) & 0xffff_ffff_ffff
            );
            // A twin started from a capture of a twin holds uids of this sequence already.
            if !self.uids.contains_key(&uid) {
                return uid;
            }
        }
    }

    /// Stores an object read from another server as it was (uid, creationTimestamp,
    /// generation and status kept); only the resourceVersion is this store's.
    pub(crate) fn restore(&mut self, resource: &str, mut object: Value) {
        let rv = self.bump();
        object["metadata"]["resourceVersion"] = json!(rv.to_string());
        if object["metadata"]["uid"].as_str().is_none_or(str::is_empty) {
            object["metadata"]["uid"] = json!(self.uid());
        }
        self.put(resource, object, ChangeType::Added, rv);
    }

    /// Stores a new object: uid, resourceVersion, generation and creationTimestamp are set here.
    pub(crate) fn create(&mut self, resource: &str, mut object: Value, now: Duration) -> Value {
        let rv = self.bump();
        let uid = match object["metadata"]["uid"].as_str() {
            Some(uid) if !uid.is_empty() => uid.to_string(),
            _ => self.uid(),
        };
        let metadata = object["metadata"]
            .as_object_mut()
            .expect("objects are validated before storing");
        metadata.insert("uid".into(), json!(uid));
        metadata.insert("resourceVersion".into(), json!(rv.to_string()));
        metadata.insert("creationTimestamp".into(), json!(rfc3339(now)));
        if object.get("spec").is_some() {
            object["metadata"]["generation"] = json!(1);
        }
        self.put(resource, object.clone(), ChangeType::Added, rv);
        object
    }

    /// Replaces a stored object, keeping what the server owns; bumps `generation` when the spec
    /// changed.
    pub(crate) fn update(&mut self, resource: &str, mut object: Value) -> Value {
        let key = (
            namespace_of(&object).to_string(),
            name_of(&object).to_string(),
        );
        static ABSENT: Value = Value::Null;
        let old = self
            .objects
            .get(resource)
            .and_then(|m| m.get(&key))
            .map_or(&ABSENT, |e| &*e.value);
        for field in ["uid", "creationTimestamp"] {
            if !old["metadata"][field].is_null() {
                object["metadata"][field] = old["metadata"][field].clone();
            }
        }
        let generation = old["metadata"]["generation"].as_i64().unwrap_or(0);
        if object.get("spec").is_some() {
            let next = if old["spec"] != object["spec"] {
                generation + 1
            } else {
                generation.max(1)
            };
            object["metadata"]["generation"] = json!(next);
        }
        if *old == object {
            return object;
        }
        let rv = self.bump();
        object["metadata"]["resourceVersion"] = json!(rv.to_string());
        self.put(resource, object.clone(), ChangeType::Modified, rv);
        object
    }

    pub(crate) fn remove(&mut self, resource: &str, namespace: &str, name: &str) -> Option<Value> {
        let entry = self
            .objects
            .get_mut(resource)?
            .remove(&(namespace.to_string(), name.to_string()))?;
        let mut object = Arc::unwrap_or_clone(entry.value);
        self.uids.remove(uid_of(&object));
        self.index_owners(resource, &object, false);
        self.index_node(resource, &object, false);
        let rv = self.bump();
        object["metadata"]["resourceVersion"] = json!(rv.to_string());
        let json = bytes::Bytes::from(serde_json::to_vec(&object).unwrap_or_default());
        self.record(
            Change {
                resource_version: rv,
                change: ChangeType::Deleted,
                resource: resource.to_string(),
                namespace: namespace.to_string(),
                object: Arc::new(object.clone()),
            },
            json,
        );
        Some(object)
    }

    fn put(&mut self, resource: &str, object: Value, change: ChangeType, rv: u64) {
        let key = (
            namespace_of(&object).to_string(),
            name_of(&object).to_string(),
        );
        let json = bytes::Bytes::from(serde_json::to_vec(&object).unwrap_or_default());
        let object = Arc::new(object);
        let previous = self
            .objects
            .entry(resource.to_string())
            .or_default()
            .insert(
                key.clone(),
                Entry {
                    value: object.clone(),
                    json: json.clone(),
                },
            );
        if let Some(previous) = previous {
            self.index_owners(resource, &previous.value, false);
            self.index_node(resource, &previous.value, false);
        }
        self.index_owners(resource, &object, true);
        self.index_node(resource, &object, true);
        self.uids.insert(
            uid_of(&object).to_string(),
            (resource.to_string(), key.0.clone(), key.1.clone()),
        );
        self.record(
            Change {
                resource_version: rv,
                change,
                resource: resource.to_string(),
                namespace: key.0,
                object,
            },
            json,
        );
    }

    fn record(&mut self, change: Change, json: bytes::Bytes) {
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        if self.touches.len() == TOUCHES {
            self.touches.pop_front();
        }
        self.touches.push_back(Touch::of(&change));
        self.history.push_back(Past {
            resource_version: change.resource_version,
            change: change.change,
            resource: change.resource.clone(),
            namespace: change.namespace.clone(),
            json,
        });
        // No receivers is fine: nobody watches right now.
        let _ = self.changes.send(change);
    }

    /// What changed after `resource_version`, oldest first; None when the record no longer
    /// reaches back that far.
    pub(crate) fn changes_since(
        &self,
        resource_version: u64,
    ) -> Option<impl Iterator<Item = &Touch>> {
        let oldest = self
            .touches
            .front()
            .map_or(self.resource_version, |c| c.resource_version - 1);
        let start = self
            .touches
            .partition_point(|c| c.resource_version <= resource_version);
        (resource_version >= oldest).then(|| self.touches.range(start..))
    }

    /// Changes after `resource_version`, and a receiver for those that follow, taken together so
    /// that none falls between. Err when history no longer reaches back that far.
    pub(crate) fn watch_from(
        &self,
        resource_version: u64,
    ) -> Result<(Vec<Change>, broadcast::Receiver<Change>), u64> {
        let oldest = self
            .history
            .front()
            .map_or(self.resource_version, |c| c.resource_version - 1);
        if resource_version < oldest {
            return Err(oldest);
        }
        let past = self
            .history
            .iter()
            .filter(|c| c.resource_version > resource_version)
            .map(|c| Change {
                resource_version: c.resource_version,
                change: c.change,
                resource: c.resource.clone(),
                namespace: c.namespace.clone(),
                object: Arc::new(serde_json::from_slice(&c.json).unwrap_or_default()),
            })
            .collect();
        Ok((past, self.changes.subscribe()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, node: Option<&str>) -> Value {
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": {}});
        if let Some(node) = node {
            pod["spec"]["nodeName"] = json!(node);
        }
        pod
    }

    fn on_node(store: &Store, node: &str) -> Vec<String> {
        store
            .pods_on_node_with_json(node, None)
            .map(|(pod, _)| name_of(pod).to_string())
            .collect()
    }

    #[test]
    fn pods_are_indexed_by_the_node_they_are_bound_to() {
        let mut store = Store::default();
        store.create(PODS, pod("b", Some("n1")), Duration::ZERO);
        store.create(PODS, pod("a", Some("n1")), Duration::ZERO);
        store.create(PODS, pod("pending", None), Duration::ZERO);
        store.create(
            "apps/deployments",
            pod("not-a-pod", Some("n1")),
            Duration::ZERO,
        );
        assert_eq!(on_node(&store, "n1"), ["a", "b"]);
        // Bound by the scheduler, moved, deleted.
        store.update(PODS, pod("pending", Some("n2")));
        store.update(PODS, pod("a", Some("n2")));
        assert_eq!(on_node(&store, "n1"), ["b"]);
        assert_eq!(on_node(&store, "n2"), ["a", "pending"]);
        store.remove(PODS, "default", "b");
        assert!(on_node(&store, "n1").is_empty());
        assert!(
            store
                .pods_on_node_with_json("n2", Some("kube-system"))
                .next()
                .is_none()
        );
    }

    /// A watch resuming from the past gets each version as it was written, deletes included,
    /// and 410 once the history no longer reaches back.
    #[test]
    fn a_watch_resumes_from_the_versions_as_they_were_written() {
        let mut store = Store::default();
        let start = store.resource_version();
        store.create(PODS, pod("a", None), Duration::ZERO);
        store.update(PODS, pod("a", Some("n1")));
        store.remove(PODS, "default", "a");
        let (past, _) = store.watch_from(start).expect("within the history");
        let seen: Vec<(&str, Value)> = past
            .iter()
            .map(|c| (c.change.as_str(), c.object["spec"]["nodeName"].clone()))
            .collect();
        assert_eq!(
            seen,
            [
                ("ADDED", Value::Null),
                ("MODIFIED", json!("n1")),
                ("DELETED", json!("n1"))
            ]
        );
        assert_eq!(
            past[1].object["metadata"]["resourceVersion"],
            json!((start + 2).to_string())
        );
        for i in 0..HISTORY {
            store.create(PODS, pod(&format!("p{i}"), None), Duration::ZERO);
        }
        assert!(store.watch_from(start).is_err());
    }
}
