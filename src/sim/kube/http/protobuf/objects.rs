//! The objects kubectl's imperative commands send as protobuf (`kubectl create deployment`,
//! `create configmap`, `run`, `expose`, ...: client-go's default for built-in kinds):
//! Kubernetes' `k8s\0` envelope (runtime.Unknown: typeMeta = 1, raw = 2) around the object,
//! read into the JSON the rest of the twin handles.

use serde_json::{Value, json};

use super::to_json::decode;
use super::wire::message;

/// The protobuf package of a group's version: `apps`/`v1` -> `k8s.io.api.apps.v1`, the core
/// group -> `k8s.io.api.core.v1`, `rbac.authorization.k8s.io` -> `k8s.io.api.rbac.v1`.
fn package(api_version: &str) -> String {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let group = match group {
        "" => "core",
        group => group.split('.').next().unwrap_or(group),
    };
    format!("k8s.io.api.{group}.{version}")
}

/// The object in a protobuf body as JSON; None when the body is not one of the kinds the
/// definitions hold.
pub(crate) fn decode_object(body: &[u8]) -> Option<Value> {
    let unknown = body.strip_prefix(b"k8s\0")?;
    let type_meta = decode(
        "k8s.io.apimachinery.pkg.runtime.TypeMeta",
        message(unknown, 1)?,
    )?;
    let api_version = type_meta["apiVersion"].as_str()?;
    let kind = type_meta["kind"].as_str()?;
    let raw = message(unknown, 2).unwrap_or_default();
    let mut object = decode(&format!("{}.{kind}", package(api_version)), raw)?;
    let map = object.as_object_mut()?;
    map.insert("apiVersion".into(), json!(api_version));
    map.insert("kind".into(), json!(kind));
    Some(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![(number << 3) | 2, u8::try_from(bytes.len()).expect("short")];
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn a_config_map_reads_as_its_json() {
        let metadata = [field(1, b"settings"), field(3, b"default")].concat();
        let entry = [field(1, b"mode"), field(2, b"fast")].concat();
        let raw = [field(1, &metadata), field(2, &entry)].concat();
        let type_meta = [field(1, b"v1"), field(2, b"ConfigMap")].concat();
        let body = [b"k8s\0".to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        assert_eq!(
            decode_object(&body).expect("a ConfigMap"),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "settings", "namespace": "default"},
                   "data": {"mode": "fast"}})
        );
        assert_eq!(
            package("rbac.authorization.k8s.io/v1"),
            "k8s.io.api.rbac.v1"
        );
    }
}
