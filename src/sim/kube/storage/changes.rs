//! What the store records of each write: the change a watch delivers, the JSON the watch
//! history keeps of past versions, and the few fields the controllers look back on.

use std::sync::Arc;

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeType {
    Added,
    Modified,
    Deleted,
}

impl ChangeType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ChangeType::Added => "ADDED",
            ChangeType::Modified => "MODIFIED",
            ChangeType::Deleted => "DELETED",
        }
    }
}

/// One change, as watches deliver it.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub(crate) resource_version: u64,
    pub(crate) change: ChangeType,
    /// `group/plural` (`/pods`, `apps/deployments`).
    pub(crate) resource: String,
    pub(crate) namespace: String,
    pub(crate) object: Arc<Value>,
}

/// A past change as the watch history keeps it: the object's JSON (shared with the store's
/// entry while that version is current), not its parsed tree, several times larger: old
/// versions were the bulk of the twin's memory on a big cluster, and only a watch resuming
/// from the past reads them.
pub(crate) struct Past {
    pub(crate) resource_version: u64,
    pub(crate) change: ChangeType,
    pub(crate) resource: String,
    pub(crate) namespace: String,
    pub(crate) json: bytes::Bytes,
}

/// What the controllers need to know of one change, without the object.
#[derive(Debug, Clone)]
pub(crate) struct Touch {
    pub(crate) resource_version: u64,
    pub(crate) change: ChangeType,
    /// `group/plural`, as in [`Change`].
    pub(crate) resource: String,
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) uid: String,
    /// Uids of its owners.
    pub(crate) owners: Vec<String>,
    /// A pod's `spec.nodeName`.
    pub(crate) node: Option<String>,
    /// A pod's `status.phase`.
    pub(crate) phase: Option<String>,
}

impl Touch {
    pub(crate) fn of(change: &Change) -> Self {
        let object = &change.object;
        let metadata = &object["metadata"];
        let text = |v: &Value| v.as_str().map(str::to_string);
        Self {
            resource_version: change.resource_version,
            change: change.change,
            resource: change.resource.clone(),
            namespace: change.namespace.clone(),
            name: text(&metadata["name"]).unwrap_or_default(),
            uid: text(&metadata["uid"]).unwrap_or_default(),
            owners: metadata["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| text(&r["uid"]))
                .collect(),
            node: text(&object["spec"]["nodeName"]),
            phase: text(&object["status"]["phase"]),
        }
    }
}
