//! A custom resource's schema defaults, as apiextensions-apiserver applies them when it decodes
//! a request or a stored object (`pkg/apiserver/schema/defaulting/algorithm.go`, `Default`):
//! under an object that is there, a property that is missing (or null where the schema does
//! not allow null) takes a copy of its `default`; then each property, additional property
//! and list item is defaulted by its own schema. Then, as the decoder does after defaulting
//! (`PruneNonNullableNullsWithoutDefaults`, defaulting/prunenulls.go), a null left where the
//! schema allows none and gives no default is dropped.

use serde_json::Value;

pub(crate) fn default(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(properties) = schema["properties"].as_object() {
                for (name, property) in properties {
                    let Some(default) = property.get("default") else {
                        continue;
                    };
                    let nullable = property["nullable"] == true;
                    let missing = match map.get(name) {
                        None => true,
                        Some(Value::Null) => !nullable,
                        Some(_) => false,
                    };
                    if missing {
                        map.insert(name.clone(), default.clone());
                    }
                }
                for (name, property) in properties {
                    if let Some(child) = map.get_mut(name) {
                        default(property, child);
                    }
                }
            }
            let additional = &schema["additionalProperties"];
            if additional.is_object() {
                for child in map.values_mut() {
                    default(additional, child);
                }
            }
        }
        Value::Array(items) if schema["items"].is_object() => {
            for item in items {
                default(&schema["items"], item);
            }
        }
        _ => {}
    }
}

/// The schema of `name` under an object of `schema`: its property, else its additional ones.
fn child_schema<'a>(schema: &'a Value, name: &str) -> Option<&'a Value> {
    schema["properties"]
        .get(name)
        .or_else(|| Some(&schema["additionalProperties"]).filter(|s| s.is_object()))
}

/// `PruneNonNullableNullsWithoutDefaults`: drops each null whose schema is neither nullable
/// nor defaulted, in objects and list items all the way down.
pub(crate) fn prune_nulls(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|name, child| {
                let Some(property) = child_schema(schema, name) else {
                    return true;
                };
                !(child.is_null()
                    && property["nullable"] != true
                    && property.get("default").is_none())
            });
            for (name, child) in map.iter_mut() {
                if let Some(property) = child_schema(schema, name) {
                    prune_nulls(property, child);
                }
            }
        }
        Value::Array(items) if schema["items"].is_object() => {
            for item in items {
                prune_nulls(&schema["items"], item);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn missing_properties_under_present_objects_take_their_defaults() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "mode": {"type": "string", "default": "fast"},
                "size": {"type": "integer"},
                "tiers": {"type": "array", "items": {"type": "object", "properties": {
                    "weight": {"type": "integer", "default": 1}
                }}}
            }},
            "status": {"type": "object", "properties": {"phase": {"type": "string", "default": "New"}}}
        }});
        let mut object = json!({"spec": {"size": 1, "tiers": [{}, {"weight": 3}]}});
        default(&schema, &mut object);
        assert_eq!(
            object,
            json!({"spec": {"size": 1, "mode": "fast", "tiers": [{"weight": 1}, {"weight": 3}]}})
        );
    }

    #[test]
    fn nulls_the_schema_allows_neither_as_null_nor_by_default_are_dropped() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "plain": {"type": "string"},
            "note": {"type": "string", "nullable": true},
            "mode": {"type": "string", "default": "fast"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}}
        }}}});
        let mut object =
            json!({"spec": {"plain": null, "note": null, "mode": null, "labels": {"a": null}}});
        default(&schema, &mut object);
        prune_nulls(&schema, &mut object);
        assert_eq!(
            object,
            json!({"spec": {"note": null, "mode": "fast", "labels": {}}})
        );
    }
}
