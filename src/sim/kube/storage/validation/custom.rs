//! A custom resource held to the value rules of its CRD version's structural schema, as the
//! apiextensions-apiserver answers them: kube-openapi's validator, its errors turned into field
//! errors by kubeOpenAPIResultToFieldErrors (types, required properties, enums, minimum and
//! maximum, exclusive or not, and patterns), with kube-openapi's words (`spec.size in body
//! should be greater than or equal to 1`). Lengths and item counts are not checked yet.

use serde_json::Value;

use super::errors::{Errors, quoted};
use crate::sim::kube::storage::resources::ResourceType;
use crate::sim::kube::storage::state::KubeState;

/// The value rules of `object`'s schema, when its kind is a custom resource.
pub(crate) fn custom_resource(
    state: &KubeState,
    resource: &ResourceType,
    object: &Value,
    errors: &mut Errors,
) {
    let Some(schema) = state.crd_schema(resource) else {
        return;
    };
    let Some(properties) = schema["properties"].as_object() else {
        return;
    };
    // apiVersion, kind and metadata are the API server's own to check.
    for (name, property) in properties {
        if matches!(name.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        match object.get(name) {
            Some(value) if !value.is_null() => check(property, value, name, errors),
            _ if required(schema, name) => errors.required(name.clone()),
            _ => {}
        }
    }
}

fn required(schema: &Value, name: &str) -> bool {
    schema["required"]
        .as_array()
        .is_some_and(|r| r.iter().any(|n| n == name))
}

/// The JSON type a value is, in the schema's words (a whole number is an integer).
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_fits(wanted: &str, value: &Value, schema: &Value) -> bool {
    let actual = type_of(value);
    if schema["x-kubernetes-int-or-string"] == true {
        return matches!(actual, "integer" | "string");
    }
    wanted == actual || (wanted == "number" && actual == "integer")
}

/// Go's `%v` of a schema bound: 1 for 1.0, 1.5 for 1.5.
fn bound(value: &Value) -> String {
    match value.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        Some(f) => f.to_string(),
        None => value.to_string(),
    }
}

fn check(schema: &Value, value: &Value, path: &str, errors: &mut Errors) {
    if let Some(wanted) = schema["type"].as_str()
        && !type_fits(wanted, value, schema)
    {
        let actual = type_of(value);
        errors.push(
            path,
            format!(
                "Invalid value: {}: {path} in body must be of type {wanted}: {}",
                quoted(actual),
                quoted(actual)
            ),
        );
        return;
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        let supported: Vec<String> = allowed
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect();
        let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
        let given = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_string);
        errors.not_supported(path, &given, &supported);
    }
    if let Some(number) = value.as_f64() {
        range(schema, value, number, path, errors);
    }
    if let (Some(text), Some(pattern)) = (value.as_str(), schema["pattern"].as_str())
        && let Ok(regex) = regex::Regex::new(pattern)
        && !regex.is_match(text)
    {
        errors.invalid(
            path,
            value,
            &format!("{path} in body should match '{pattern}'"),
        );
    }
    match value {
        Value::Object(map) => {
            if let Some(properties) = schema["properties"].as_object() {
                for (name, property) in properties {
                    let child = format!("{path}.{name}");
                    match map.get(name) {
                        Some(v) if !v.is_null() => check(property, v, &child, errors),
                        _ if required(schema, name) => errors.required(child),
                        _ => {}
                    }
                }
            }
            if schema["additionalProperties"].is_object() {
                for (name, v) in map {
                    check(
                        &schema["additionalProperties"],
                        v,
                        &format!("{path}.{name}"),
                        errors,
                    );
                }
            }
        }
        Value::Array(items) if schema["items"].is_object() => {
            for (i, item) in items.iter().enumerate() {
                check(&schema["items"], item, &format!("{path}[{i}]"), errors);
            }
        }
        _ => {}
    }
}

/// minimum and maximum, exclusive when the schema says so.
fn range(schema: &Value, value: &Value, number: f64, path: &str, errors: &mut Errors) {
    if let Some(min) = schema["minimum"].as_f64() {
        let exclusive = schema["exclusiveMinimum"] == true;
        if number < min || (exclusive && number == min) {
            let words = if exclusive {
                "greater than"
            } else {
                "greater than or equal to"
            };
            let detail = format!(
                "{path} in body should be {words} {}",
                bound(&schema["minimum"])
            );
            errors.invalid(path, value, &detail);
        }
    }
    if let Some(max) = schema["maximum"].as_f64() {
        let exclusive = schema["exclusiveMaximum"] == true;
        if number > max || (exclusive && number == max) {
            let words = if exclusive {
                "less than"
            } else {
                "less than or equal to"
            };
            let detail = format!(
                "{path} in body should be {words} {}",
                bound(&schema["maximum"])
            );
            errors.invalid(path, value, &detail);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors_of(schema: Value, object: Value) -> Vec<String> {
        let mut errors = Errors::default();
        for (name, property) in schema["properties"].as_object().unwrap() {
            match object.get(name) {
                Some(v) => check(property, v, name, &mut errors),
                None if required(&schema, name) => errors.required(name.clone()),
                None => {}
            }
        }
        errors
            .0
            .into_iter()
            .map(|(f, m)| format!("{f}: {m}"))
            .collect()
    }

    fn widget_schema() -> Value {
        json!({"type": "object", "required": ["spec"], "properties": {"spec": {
            "type": "object", "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                "mode": {"type": "string", "enum": ["fast", "safe"]},
                "name": {"type": "string", "pattern": "^[a-z]+$"},
                "ratio": {"type": "number", "exclusiveMaximum": true, "maximum": 1},
                "ports": {"type": "array", "items": {"type": "integer", "minimum": 1}},
                "port": {"x-kubernetes-int-or-string": true}
            }
        }}})
    }

    #[test]
    fn values_outside_the_schema_are_refused_in_the_servers_words() {
        let found = errors_of(
            widget_schema(),
            json!({"spec": {"size": 0, "mode": "slow", "name": "Web1", "ratio": 1, "ports": [80, 0], "port": "http"}}),
        );
        assert_eq!(
            found,
            [
                "spec.mode: Unsupported value: \"slow\": supported values: \"fast\", \"safe\"",
                "spec.name: Invalid value: \"Web1\": spec.name in body should match '^[a-z]+$'",
                "spec.ports[1]: Invalid value: 0: spec.ports[1] in body should be greater than or equal to 1",
                "spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1",
                "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1",
            ]
        );
        let typed = errors_of(widget_schema(), json!({"spec": {"size": "big"}}));
        assert_eq!(
            typed,
            [
                "spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\""
            ]
        );
        let missing = errors_of(widget_schema(), json!({"spec": {}}));
        assert_eq!(missing, ["spec.size: Required value"]);
        assert!(errors_of(widget_schema(), json!({"spec": {"size": 3, "port": 8080}})).is_empty());
    }
}
