//! A custom resource's schema defaults, as apiextensions-apiserver applies them when it decodes
//! a request or a stored object (`pkg/apiserver/schema/defaulting/algorithm.go`, `Default`):
//! under an object that is there, a property that is missing (or null where the schema does
//! not allow null) takes a copy of its `default`; then each property, additional property
//! and list item is defaulted by its own schema.

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
}
