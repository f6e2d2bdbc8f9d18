//! A protobuf message as the JSON the API server would have read: field names from the
//! definitions, times as RFC 3339, quantities and int-or-strings as their JSON forms, bytes
//! as base64, raw extensions as the JSON they carry, Go's inline structs flattened into their
//! parent. Go's zero values (Kubernetes' marshaller writes every non-pointer field) are left
//! out as its JSON leaves them out, but for the pointer fields where zero differs from unset.

use base64::Engine;
use serde_json::{Map, Value, json};

use super::descriptors::{FieldDescriptor, Kind, message};
use super::wire::{Field, fields, varint};
use crate::sim::timestamps::rfc3339_unix as rfc3339;

/// Fields that are Go structs embedded `json:",inline"`: their fields belong to the parent in
/// JSON (a volume's `emptyDir`, an ingress rule's `http`, a key selector's `name`).
const INLINE: [&str; 15] = [
    "k8s.io.api.core.v1.Volume.volumeSource",
    "k8s.io.api.core.v1.PersistentVolumeSpec.persistentVolumeSource",
    "k8s.io.api.core.v1.Probe.handler",
    "k8s.io.api.core.v1.EphemeralContainer.ephemeralContainerCommon",
    "k8s.io.api.core.v1.ConfigMapEnvSource.localObjectReference",
    "k8s.io.api.core.v1.ConfigMapKeySelector.localObjectReference",
    "k8s.io.api.core.v1.ConfigMapProjection.localObjectReference",
    "k8s.io.api.core.v1.ConfigMapVolumeSource.localObjectReference",
    "k8s.io.api.core.v1.SecretEnvSource.localObjectReference",
    "k8s.io.api.core.v1.SecretKeySelector.localObjectReference",
    "k8s.io.api.core.v1.SecretProjection.localObjectReference",
    "k8s.io.api.networking.v1.IngressRule.ingressRuleValue",
    "k8s.io.api.admissionregistration.v1.RuleWithOperations.rule",
    "k8s.io.api.admissionregistration.v1.NamedRuleWithOperations.ruleWithOperations",
    "k8s.io.api.resource.v1.DeviceClaimConfiguration.deviceConfiguration",
];

/// Pointer fields (`*int32`, `*bool`) whose zero is a value, not "unset": a Deployment of 0
/// replicas, a pod that does not mount its token, a suspended CronJob's `false`.
const ZERO_MEANS_SOMETHING: [&str; 30] = [
    "replicas",
    "revisionHistoryLimit",
    "progressDeadlineSeconds",
    "parallelism",
    "completions",
    "backoffLimit",
    "backoffLimitPerIndex",
    "maxFailedIndexes",
    "activeDeadlineSeconds",
    "ttlSecondsAfterFinished",
    "successfulJobsHistoryLimit",
    "failedJobsHistoryLimit",
    "startingDeadlineSeconds",
    "terminationGracePeriodSeconds",
    "deletionGracePeriodSeconds",
    "tolerationSeconds",
    "priority",
    "partition",
    "runAsUser",
    "runAsGroup",
    "fsGroup",
    "defaultMode",
    "mode",
    "expirationSeconds",
    "automountServiceAccountToken",
    "suspend",
    "runAsNonRoot",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
];

fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

fn scalar(kind: &str, field: &Field<'_>) -> Value {
    match (kind, field) {
        ("string", Field::Bytes(_, b)) => json!(String::from_utf8_lossy(b)),
        ("bytes", Field::Bytes(_, b)) => json!(base64::engine::general_purpose::STANDARD.encode(b)),
        ("bool", Field::Varint(_, v)) => json!(*v != 0),
        // Negative int32s are written sign-extended to 64 bits.
        ("int32" | "int64", Field::Varint(_, v)) => json!(*v as i64),
        ("uint32" | "uint64", Field::Varint(_, v)) => json!(v),
        ("sint32" | "sint64", Field::Varint(_, v)) => {
            json!(((*v >> 1) as i64) ^ -((*v & 1) as i64))
        }
        ("double", Field::Fixed64(_, v)) => json!(f64::from_bits(*v)),
        ("float", Field::Fixed32(_, v)) => json!(f32::from_bits(*v)),
        ("fixed64" | "sfixed64", Field::Fixed64(_, v)) => json!(v),
        ("fixed32" | "sfixed32", Field::Fixed32(_, v)) => json!(v),
        _ => Value::Null,
    }
}

/// A packed repeated scalar (one length-delimited run of varints).
fn packed(kind: &str, bytes: &[u8]) -> Vec<Value> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < bytes.len() {
        let Some(v) = varint(bytes, &mut at) else {
            break;
        };
        out.push(scalar(kind, &Field::Varint(0, v)));
    }
    out
}

/// Go's `time.Duration` as its `String()` writes it (`1h0m0s`, `30s`, `1.5s`, `500ms`).
fn go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    if n < 1_000_000_000 {
        let (value, unit) = match n {
            n if n < 1_000 => (n as f64, "ns"),
            n if n < 1_000_000 => (n as f64 / 1e3, "µs"),
            n => (n as f64 / 1e6, "ms"),
        };
        return format!("{sign}{value}{unit}");
    }
    let (hours, rest) = (n / 3_600_000_000_000, n % 3_600_000_000_000);
    let (minutes, rest) = (rest / 60_000_000_000, rest % 60_000_000_000);
    let seconds = rest as f64 / 1e9;
    match (hours, minutes) {
        (0, 0) => format!("{sign}{seconds}s"),
        (0, m) => format!("{sign}{m}m{seconds}s"),
        (h, m) => format!("{sign}{h}h{m}m{seconds}s"),
    }
}

/// The JSON of a message Kubernetes gives a JSON form of its own.
fn special(name: &str, object: &Map<String, Value>) -> Option<Value> {
    let int = |key: &str| object.get(key).and_then(Value::as_i64).unwrap_or(0);
    Some(match name.strip_prefix("k8s.io.apimachinery.") {
        Some("pkg.apis.meta.v1.Time") => {
            if int("seconds") == 0 && int("nanos") == 0 {
                return Some(Value::Null);
            }
            json!(rfc3339(int("seconds")))
        }
        Some("pkg.apis.meta.v1.MicroTime") => {
            let whole = rfc3339(int("seconds"));
            json!(format!(
                "{}.{:06}Z",
                whole.trim_end_matches('Z'),
                int("nanos") / 1000
            ))
        }
        Some("pkg.apis.meta.v1.Duration") => json!(go_duration(int("duration"))),
        Some("pkg.util.intstr.IntOrString") => {
            if int("type") == 1 {
                object.get("strVal").cloned().unwrap_or_else(|| json!(""))
            } else {
                json!(int("intVal"))
            }
        }
        Some("pkg.api.resource.Quantity") => object.get("string").cloned().unwrap_or(json!("0")),
        Some("pkg.runtime.RawExtension") | Some("pkg.apis.meta.v1.FieldsV1") => {
            let raw = object.get("raw").or_else(|| object.get("Raw"))?.as_str()?;
            let bytes = base64::engine::general_purpose::STANDARD.decode(raw).ok()?;
            serde_json::from_slice(&bytes).unwrap_or(Value::Null)
        }
        _ => return None,
    })
}

fn value(descriptor: &FieldDescriptor, field: &Field<'_>) -> Option<Value> {
    match (&descriptor.kind, field) {
        (Kind::Message(name), Field::Bytes(_, bytes)) => decode(name, bytes),
        (Kind::Scalar(kind), field) => Some(scalar(kind, field)),
        _ => None,
    }
}

/// A map entry (key = 1, value = 2) as its key and value.
fn entry(descriptor: &FieldDescriptor, bytes: &[u8]) -> Option<(String, Value)> {
    let mut key = String::new();
    let mut found = match descriptor.kind {
        Kind::Scalar("string") => json!(""),
        Kind::Scalar("bytes") => json!(""),
        _ => Value::Null,
    };
    for field in fields(bytes)? {
        match field {
            Field::Bytes(1, k) => key = String::from_utf8_lossy(k).into_owned(),
            f if f.number() == 2 => found = value(descriptor, &f)?,
            _ => {}
        }
    }
    Some((key, found))
}

/// The message `name` in `bytes` as JSON, or None when the bytes are not one.
pub(crate) fn decode(name: &str, bytes: &[u8]) -> Option<Value> {
    let descriptors = message(name)?;
    let mut object = Map::new();
    for field in fields(bytes)? {
        let Some(descriptor) = descriptors.get(&field.number()) else {
            continue;
        };
        let key = descriptor.name.to_string();
        if descriptor.map_key.is_some() {
            let Field::Bytes(_, bytes) = field else {
                continue;
            };
            let (k, v) = entry(descriptor, bytes)?;
            let map = object.entry(key).or_insert_with(|| json!({}));
            if let Some(map) = map.as_object_mut() {
                map.insert(k, v);
            }
        } else if descriptor.repeated {
            let list = object.entry(key).or_insert_with(|| json!([]));
            let items = match (&descriptor.kind, field) {
                (Kind::Scalar(kind), Field::Bytes(_, bytes))
                    if *kind != "string" && *kind != "bytes" =>
                {
                    packed(kind, bytes)
                }
                _ => vec![value(descriptor, &field)?],
            };
            if let Some(list) = list.as_array_mut() {
                list.extend(items);
            }
        } else {
            let v = value(descriptor, &field)?;
            let keeps_zero = ZERO_MEANS_SOMETHING.contains(&descriptor.name) && !v.is_null();
            if is_zero(&v) && !keeps_zero {
                continue;
            }
            if INLINE.contains(&format!("{name}.{key}").as_str())
                && let Value::Object(inner) = v
            {
                object.extend(inner);
                continue;
            }
            object.insert(key, v);
        }
    }
    if name.starts_with("k8s.io.apimachinery.")
        && let Some(json) = special(name, &object)
    {
        return Some(json);
    }
    Some(Value::Object(object))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_go_writes_them() {
        assert_eq!(go_duration(3_600_000_000_000), "1h0m0s");
        assert_eq!(go_duration(30_000_000_000), "30s");
        assert_eq!(go_duration(1_500_000_000), "1.5s");
        assert_eq!(go_duration(500_000_000), "500ms");
        assert_eq!(go_duration(90_000_000_000), "1m30s");
    }
}
