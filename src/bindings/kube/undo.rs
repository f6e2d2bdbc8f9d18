//! What undoes a Kubernetes mutation, read before it is sent: an object that was not there is
//! deleted again, one that was is put back as it was (without the fields the server owns).

use rhai::Position;
use serde_json::Value;

use crate::bindings::shared::args::kube_error;
use crate::clients::kube::KubeClient;
use crate::journal::Undo;
use crate::script::Host;

type Result<T> = std::result::Result<T, Box<rhai::EvalAltResult>>;

/// The undo for a change to `kind` `name` in `namespace` (None: the kind's default).
pub(crate) fn undo_of(
    host: &Host,
    client: &KubeClient,
    kind: &str,
    name: &str,
    namespace: Option<&str>,
    position: Position,
) -> Result<Option<Undo>> {
    // Without a journal nobody reads the undo: spare the extra GET.
    if host.journal().is_none() {
        return Ok(None);
    }
    let before = match host.block_on(position, client.get_opt(kind, name, namespace))? {
        Ok(before) => before,
        // A custom resource whose definition comes with the same install: not there yet.
        Err(error) if error.reason() == "UnknownKind" => None,
        Err(error) => return Err(kube_error(error, position)),
    };
    Ok(Some(match before {
        None => Undo::DeleteObject {
            kind: kind.to_string(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        },
        Some(object) => Undo::RestoreObject {
            object: as_applied(object),
        },
    }))
}

/// The object as one would apply it: no status, no server-owned metadata.
fn as_applied(mut object: Value) -> Value {
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
    }
    if let Some(metadata) = object["metadata"].as_object_mut() {
        for key in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "managedFields",
            "generation",
            "selfLink",
            "deletionTimestamp",
        ] {
            metadata.remove(key);
        }
    }
    object
}

/// `apiVersion/kind`, namespace and name of an object to apply.
pub(crate) fn identity(
    object: &Value,
    namespace: Option<&str>,
) -> (String, Option<String>, String) {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let ns = object["metadata"]["namespace"]
        .as_str()
        .or(namespace)
        .map(str::to_string);
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    (format!("{api_version}/{kind}"), ns, name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_is_put_back_without_what_the_server_owns() {
        let object = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "x", "uid": "u", "resourceVersion": "7", "labels": {"k": "v"}},
            "data": {"a": "1"}, "status": {"phase": "x"}
        });
        assert_eq!(
            as_applied(object),
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "x", "labels": {"k": "v"}}, "data": {"a": "1"}})
        );
    }
}
