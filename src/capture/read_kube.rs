//! The Kubernetes half of a capture: the kinds the runbooks and the twin's controllers touch,
//! with list calls only. Secrets are listed as metadata, so their data never leaves the
//! server.

use serde_json::Value;

use super::error::CaptureError;
use super::fields::text;
use crate::clients::kube::{KubeClient, ListOptions};
use crate::lab_state::{KubernetesState, SecretName};

/// What is captured, owners before what they own (`apiVersion`, `kind`, plural).
pub(super) const KINDS: [(&str, &str, &str); 10] = [
    ("v1", "Namespace", "namespaces"),
    ("v1", "Node", "nodes"),
    ("v1", "ServiceAccount", "serviceaccounts"),
    ("v1", "ConfigMap", "configmaps"),
    ("v1", "Service", "services"),
    ("apps/v1", "DaemonSet", "daemonsets"),
    ("apps/v1", "Deployment", "deployments"),
    ("apps/v1", "ReplicaSet", "replicasets"),
    ("batch/v1", "Job", "jobs"),
    ("v1", "Pod", "pods"),
];

pub(super) async fn read(kube: &KubeClient) -> Result<KubernetesState, CaptureError> {
    let lists = futures::future::try_join_all(KINDS.iter().map(|(api_version, kind, plural)| {
        let plural = match group_of(api_version) {
            "" => (*plural).to_string(),
            group => format!("{plural}.{group}"),
        };
        async move {
            kube.list(&plural, &ListOptions::default())
                .await
                .map(|items| (*api_version, *kind, items))
                .map_err(CaptureError::kube(format!("the {kind}s")))
        }
    }))
    .await?;
    let mut objects = Vec::new();
    for (api_version, kind, items) in lists {
        let mut items: Vec<Value> = items
            .into_iter()
            .map(|item| portable(item, api_version, kind))
            .collect();
        items.sort_by_key(key);
        objects.extend(items);
    }
    let mut secrets: Vec<SecretName> = kube
        .list_metadata("secrets", None)
        .await
        .map_err(CaptureError::kube("the names of the Secrets"))?
        .iter()
        .map(|s| SecretName {
            namespace: text(&s["metadata"]["namespace"]),
            name: text(&s["metadata"]["name"]),
        })
        .collect();
    secrets.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Ok(KubernetesState { objects, secrets })
}

/// `apps/v1` -> `apps`; the core group is empty, which names the built-in kind.
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

fn key(object: &Value) -> (String, String) {
    (
        text(&object["metadata"]["namespace"]),
        text(&object["metadata"]["name"]),
    )
}

/// An item as a file keeps it: its kind named (lists leave it out), less what only the
/// server it came from understands (`resourceVersion`, `managedFields`).
fn portable(mut item: Value, api_version: &str, kind: &str) -> Value {
    if let Some(metadata) = item["metadata"].as_object_mut() {
        metadata.remove("resourceVersion");
        metadata.remove("managedFields");
    }
    let mut object = serde_json::Map::new();
    object.insert("apiVersion".into(), Value::from(api_version));
    object.insert("kind".into(), Value::from(kind));
    if let Value::Object(fields) = item {
        for (field, value) in fields {
            if field != "apiVersion" && field != "kind" {
                object.insert(field, value);
            }
        }
    }
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn portable_items_name_their_kind_and_drop_the_servers_counters() {
        let item = json!({"metadata": {"name": "a", "resourceVersion": "7", "managedFields": [], "uid": "u"}, "spec": {}});
        let object = portable(item, "apps/v1", "DaemonSet");
        assert_eq!(object["kind"], "DaemonSet");
        assert_eq!(object["apiVersion"], "apps/v1");
        assert_eq!(object["metadata"], json!({"name": "a", "uid": "u"}));
    }
}
