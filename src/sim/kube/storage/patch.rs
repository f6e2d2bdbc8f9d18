//! PATCH bodies: JSON merge (RFC 7386), JSON patch (RFC 6902), strategic merge for the
//! built-in kinds, and server-side apply (treated as a strategic merge of the applied object).

use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchType {
    Merge,
    Json,
    Strategic,
    Apply,
}

impl PatchType {
    pub(crate) fn from_content_type(content_type: &str) -> Option<Self> {
        match content_type.split(';').next()?.trim() {
            "application/merge-patch+json" => Some(Self::Merge),
            "application/json-patch+json" => Some(Self::Json),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            "application/apply-patch+yaml"
            | "application/apply-patch+json"
            | "application/apply-patch+cbor" => Some(Self::Apply),
            _ => None,
        }
    }
}

/// Why a patch did not apply.
#[derive(Debug)]
pub(crate) enum PatchError {
    /// The body does not decode as its type's Go value (`applyJSPatch` with the Warn or Strict
    /// directive, the default: 400 `error decoding patch: ...`).
    Decode(String),
    /// JSON patch operations that do not apply to the object (`patchObj.Apply` failing:
    /// `NewGenericServerResponse(422, ...)`, which keeps only a generic sentence).
    Apply,
    /// A strategic merge patch on a custom resource: the CRD handler's patch types do not
    /// include it (customresource_handler.go's supportedTypes), so the request is refused as
    /// negotiation refuses any unknown body: 415 UnsupportedMediaType.
    UnsupportedMediaType,
}

/// What the CRD handler takes, in its order (CBOR apply is behind an alpha gate in 1.35).
pub(crate) const CUSTOM_PATCH_TYPES: [&str; 3] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

/// encoding/json's word for a JSON value's type in "cannot unmarshal X into ...".
fn go_kind(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    }
}

fn cannot_unmarshal(value: &Value, go_type: &str) -> PatchError {
    PatchError::Decode(format!(
        "error decoding patch: json: cannot unmarshal {} into Go value of type {go_type}",
        go_kind(value)
    ))
}

/// `kjson.UnmarshalStrict` of a JSON patch into `[]handlers.jsonPatchOp`: a list of objects
/// whose `op`, `path` and `from` are strings.
fn decode_json_patch(patch: &Value) -> Result<(), PatchError> {
    let Value::Array(operations) = patch else {
        return Err(cannot_unmarshal(patch, "[]handlers.jsonPatchOp"));
    };
    for operation in operations {
        let Value::Object(fields) = operation else {
            return Err(cannot_unmarshal(operation, "handlers.jsonPatchOp"));
        };
        for field in ["op", "path", "from"] {
            match fields.get(field) {
                None | Some(Value::String(_) | Value::Null) => {}
                Some(other) => {
                    return Err(PatchError::Decode(format!(
                        "error decoding patch: json: cannot unmarshal {} into Go struct field jsonPatchOp.{field} of type string",
                        go_kind(other)
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Applies `patch` to `target` (patch.go's `applyJSPatch` and `applyPatchToCurrentObject`).
pub(crate) fn apply_patch(
    target: &Value,
    patch: &Value,
    kind: PatchType,
    built_in: bool,
) -> Result<Value, PatchError> {
    match kind {
        // A merge patch decodes into `map[string]interface{}` (null decodes to an empty map).
        PatchType::Merge if !patch.is_object() && !patch.is_null() => {
            Err(cannot_unmarshal(patch, "map[string]interface {}"))
        }
        PatchType::Merge => Ok(merge(target, patch)),
        PatchType::Json => {
            decode_json_patch(patch)?;
            let operations: json_patch::Patch =
                serde_json::from_value(patch.clone()).map_err(|_| PatchError::Apply)?;
            let mut doc = target.clone();
            json_patch::patch(&mut doc, &operations).map_err(|_| PatchError::Apply)?;
            Ok(doc)
        }
        PatchType::Strategic if !built_in => Err(PatchError::UnsupportedMediaType),
        PatchType::Strategic | PatchType::Apply => Ok(strategic(target, patch, "")),
    }
}

/// RFC 7386: maps merge, `null` deletes, everything else replaces.
pub(crate) fn merge(target: &Value, patch: &Value) -> Value {
    let Value::Object(patch_map) = patch else {
        return patch.clone();
    };
    let mut out = match target {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    for (key, value) in patch_map {
        if value.is_null() {
            out.remove(key);
        } else {
            let merged = merge(out.get(key).unwrap_or(&Value::Null), value);
            out.insert(key.clone(), merged);
        }
    }
    Value::Object(out)
}

/// The merge key of the built-in lists that merge item by item (`patchMergeKey`); other lists
/// are replaced whole.
pub(crate) fn merge_key(path: &str) -> Option<&'static str> {
    let last = path.rsplit('.').next().unwrap_or(path);
    Some(match last {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets" => "name",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "ports" if path.contains("containers") => "containerPort",
        "ports" => "port",
        "taints" => "key",
        "conditions" => "type",
        "ownerReferences" => "uid",
        "hostAliases" => "ip",
        "topologySpreadConstraints" => "topologyKey",
        _ => return None,
    })
}

/// The primitive lists that merge rather than replace (`patchStrategy:"merge"` on a list of
/// strings: ObjectMeta's finalizers).
fn merges_primitives(path: &str) -> bool {
    path.ends_with("metadata.finalizers")
}

/// `$setElementOrder/FIELD`: the list's items in the order given (by merge key, or by value for
/// primitives), those it does not name after them in their own order.
fn set_element_order(list: &mut Value, order: &[Value], key: Option<&str>) {
    let Some(items) = list.as_array_mut() else {
        return;
    };
    let rank = |item: &Value| {
        let id = key.map_or(item, |k| &item[k]);
        order
            .iter()
            .position(|o| key.map_or(o, |k| &o[k]) == id)
            .unwrap_or(usize::MAX)
    };
    items.sort_by_key(rank);
}

/// Strategic merge: maps merge, `null` deletes, lists with a merge key merge by it (an item
/// with `$patch: delete` removes its match), `$patch: replace` replaces a map; the finalizers
/// merge as a set, `$deleteFromPrimitiveList/FIELD` removes values from one and
/// `$setElementOrder/FIELD` orders a list (apimachinery's strategicpatch directives).
pub(crate) fn strategic(target: &Value, patch: &Value, path: &str) -> Value {
    match patch {
        Value::Object(patch_map) => {
            if patch_map.get("$patch").and_then(Value::as_str) == Some("replace") {
                let mut replaced = patch_map.clone();
                replaced.remove("$patch");
                return Value::Object(replaced);
            }
            let mut out = match target {
                Value::Object(m) => m.clone(),
                _ => Map::new(),
            };
            for (key, value) in patch_map {
                if key.starts_with('$') {
                    continue;
                }
                if value.is_null() {
                    out.remove(key);
                    continue;
                }
                let child = format!("{path}.{key}");
                let merged = strategic(out.get(key).unwrap_or(&Value::Null), value, &child);
                out.insert(key.clone(), merged);
            }
            // `$retainKeys` (fields with patchStrategy retainKeys, such as a Deployment's
            // strategy): only the keys it lists stay, so a switch to Recreate drops the
            // defaulted rollingUpdate as the API server does.
            if let Some(retain) = patch_map.get("$retainKeys").and_then(Value::as_array) {
                out.retain(|key, _| retain.iter().any(|k| k == key.as_str()));
            }
            for (directive, values) in patch_map {
                let values = values.as_array().map(Vec::as_slice).unwrap_or_default();
                if let Some(field) = directive.strip_prefix("$deleteFromPrimitiveList/")
                    && let Some(list) = out.get_mut(field).and_then(Value::as_array_mut)
                {
                    list.retain(|v| !values.contains(v));
                } else if let Some(field) = directive.strip_prefix("$setElementOrder/")
                    && let Some(list) = out.get_mut(field)
                {
                    set_element_order(list, values, merge_key(&format!("{path}.{field}")));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => match (merge_key(path), target) {
            (Some(key), Value::Array(existing)) => merge_list(existing, items, key, path),
            (None, Value::Array(existing)) if merges_primitives(path) => {
                let mut merged = existing.clone();
                merged.extend(items.iter().filter(|i| !existing.contains(i)).cloned());
                Value::Array(merged)
            }
            _ => Value::Array(
                items
                    .iter()
                    .filter(|i| i.get("$patch").is_none())
                    .cloned()
                    .collect(),
            ),
        },
        other => other.clone(),
    }
}

fn merge_list(existing: &[Value], patch: &[Value], key: &str, path: &str) -> Value {
    let mut out: Vec<Value> = existing.to_vec();
    for item in patch {
        let id = &item[key];
        let position = out.iter().position(|e| !id.is_null() && &e[key] == id);
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (position, delete) {
            (Some(i), true) => {
                out.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => out[i] = strategic(&out[i], item, path),
            (None, false) => out.push(strategic(&Value::Null, item, path)),
        }
    }
    Value::Array(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_deletes_with_null() {
        let target = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
        let patched = merge(
            &target,
            &json!({"metadata": {"labels": {"a": null, "c": "3"}}}),
        );
        assert_eq!(
            patched,
            json!({"metadata": {"labels": {"b": "2", "c": "3"}}})
        );
    }

    #[test]
    fn strategic_merge_merges_taints_by_key_and_containers_by_name() {
        let node = json!({"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}});
        let patched = strategic(
            &node,
            &json!({"spec": {"taints": [{"key": "b", "effect": "NoExecute"}]}}),
            "",
        );
        assert_eq!(patched["spec"]["taints"].as_array().unwrap().len(), 2);
        let removed = strategic(
            &patched,
            &json!({"spec": {"taints": [{"key": "a", "$patch": "delete"}]}}),
            "",
        );
        assert_eq!(
            removed["spec"]["taints"],
            json!([{"key": "b", "effect": "NoExecute"}])
        );

        let deploy = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "v1"}, {"name": "side", "image": "s"}]}}}});
        let patched = strategic(
            &deploy,
            &json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "v2"}]}}}}),
            "",
        );
        assert_eq!(
            patched["spec"]["template"]["spec"]["containers"],
            json!([{"name": "app", "image": "v2"}, {"name": "side", "image": "s"}])
        );
    }

    #[test]
    fn json_patch_reports_bad_paths() {
        let err = apply_patch(
            &json!({"a": 1}),
            &json!([{"op": "remove", "path": "/b"}]),
            PatchType::Json,
            true,
        )
        .unwrap_err();
        assert!(matches!(err, PatchError::Apply));
        let err = apply_patch(&json!({}), &json!({"op": "add"}), PatchType::Json, true);
        assert!(
            matches!(&err, Err(PatchError::Decode(m)) if m == "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"),
            "{err:?}"
        );
        let err = apply_patch(&json!({}), &json!([1, 2]), PatchType::Merge, true);
        assert!(
            matches!(&err, Err(PatchError::Decode(m)) if m == "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"),
            "{err:?}"
        );
        let ok = apply_patch(
            &json!({"a": 1}),
            &json!([{"op": "replace", "path": "/a", "value": 2}]),
            PatchType::Json,
            true,
        );
        assert_eq!(ok.unwrap(), json!({"a": 2}));
    }
}
