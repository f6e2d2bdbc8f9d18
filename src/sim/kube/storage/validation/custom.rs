//! A custom resource held to the value rules of its CRD version's structural schema, as the
//! apiextensions-apiserver answers them: kube-openapi's validator, its errors turned into field
//! errors by kubeOpenAPIResultToFieldErrors (types, required properties, enums, minimum and
//! maximum, exclusive or not, and patterns), with kube-openapi's words (`spec.size in body
//! should be greater than or equal to 1`), lengths and counts, multiples, date-times, and
//! list-type sets and maps.

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

/// The type a schema asks for, as kube-openapi joins it: `x-kubernetes-int-or-string` becomes
/// the two types `integer,string` (apiextensions' `ConvertJSONSchemaPropsWithPostProcess`),
/// whether or not the schema names a type.
fn wanted_type(schema: &Value) -> Option<&str> {
    if schema["x-kubernetes-int-or-string"] == true {
        return Some("integer,string");
    }
    schema["type"].as_str()
}

fn check(schema: &Value, value: &Value, path: &str, errors: &mut Errors) {
    if let Some(wanted) = wanted_type(schema)
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
        multiple(schema, value, number, path, errors);
    }
    sizes(schema, value, path, errors);
    date_time(schema, value, path, errors);
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
        Value::Array(items) => {
            if schema["items"].is_object() {
                for (i, item) in items.iter().enumerate() {
                    check(&schema["items"], item, &format!("{path}[{i}]"), errors);
                }
            }
            list_duplicates(schema, items, path, errors);
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

/// Go's plural of apimachinery's messages: "1 byte", "2 bytes".
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Lengths, item and property counts: maxLength as `TooLong` (its words say bytes, though
/// it counts characters), maxItems and maxProperties as `TooMany` (items, both), the
/// minimums as kube-openapi words them.
fn sizes(schema: &Value, value: &Value, path: &str, errors: &mut Errors) {
    let (size, noun) = match value {
        Value::String(text) => (text.chars().count() as u64, "chars long"),
        Value::Array(items) => (items.len() as u64, "items"),
        Value::Object(map) => (map.len() as u64, "properties"),
        _ => return,
    };
    let (max_key, min_key) = match value {
        Value::String(_) => ("maxLength", "minLength"),
        Value::Array(_) => ("maxItems", "minItems"),
        _ => ("maxProperties", "minProperties"),
    };
    if let Some(max) = schema[max_key].as_u64()
        && size > max
    {
        let body = if value.is_string() {
            format!(
                "Too long: may not be more than {}",
                counted(max, "byte", "bytes")
            )
        } else {
            format!(
                "Too many: {size}: must have at most {}",
                counted(max, "item", "items")
            )
        };
        errors.push(path, body);
    }
    if let Some(min) = schema[min_key].as_u64()
        && size < min
    {
        let detail = if value.is_string() {
            format!("{path} in body should be at least {min} {noun}")
        } else {
            format!("{path} in body should have at least {min} {noun}")
        };
        let shown = if value.is_string() {
            value.clone()
        } else {
            Value::from(size)
        };
        errors.invalid(path, &shown, &detail);
    }
}

fn multiple(schema: &Value, value: &Value, number: f64, path: &str, errors: &mut Errors) {
    let Some(factor) = schema["multipleOf"].as_f64().filter(|f| *f > 0.0) else {
        return;
    };
    let ratio = number / factor;
    if (ratio - ratio.round()).abs() > 1e-9 {
        let detail = format!(
            "{path} in body should be a multiple of {}",
            bound(&schema["multipleOf"])
        );
        errors.invalid(path, value, &detail);
    }
}

/// `format: date-time` (RFC 3339), the format CRDs use most.
fn date_time(schema: &Value, value: &Value, path: &str, errors: &mut Errors) {
    if schema["format"] != "date-time" {
        return;
    }
    // strfmt's date-time: RFC 3339, with its lenient separators; compiled once.
    static SHAPE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$",
        )
        .expect("a valid pattern")
    });
    if let Some(text) = value.as_str()
        && !SHAPE.is_match(text)
    {
        errors.invalid(
            path,
            value,
            &format!("{path} in body must be of type date-time: {}", quoted(text)),
        );
    }
}

/// `x-kubernetes-list-type: set` (items unique) and `map` (keys unique), each later
/// duplicate refused as the server names it.
fn list_duplicates(schema: &Value, items: &[Value], path: &str, errors: &mut Errors) {
    let keys: Vec<&str> = schema["x-kubernetes-list-map-keys"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let identity = |item: &Value| -> Value {
        match schema["x-kubernetes-list-type"].as_str() {
            Some("map") => Value::Object(
                keys.iter()
                    .map(|k| ((*k).to_string(), item[*k].clone()))
                    .collect(),
            ),
            _ => item.clone(),
        }
    };
    if !matches!(
        schema["x-kubernetes-list-type"].as_str(),
        Some("set" | "map")
    ) {
        return;
    }
    let mut seen = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let id = identity(item);
        if seen.contains(&id) {
            errors.duplicate(format!("{path}[{i}]"), &id);
        } else {
            seen.push(id);
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
        let boolean = errors_of(widget_schema(), json!({"spec": {"size": 3, "port": true}}));
        assert_eq!(
            boolean,
            [
                "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\""
            ]
        );
    }

    /// The 1.35 words, as apiextensions-apiserver v0.35.0 turns kube-openapi's results into
    /// field errors (TooLong, TooMany, Invalid, Duplicate).
    #[test]
    fn lengths_counts_multiples_dates_and_list_types_in_the_servers_words() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 5, "minLength": 3},
            "code": {"type": "string", "maxLength": 1},
            "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "hosts": {"type": "array", "minItems": 1},
            "labels": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
            "step": {"type": "integer", "multipleOf": 5},
            "at": {"type": "string", "format": "date-time"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
        }}}});
        let found = errors_of(
            schema.clone(),
            json!({"spec": {"name": "abcdefg", "code": "xy", "tags": ["a", "b", "a"], "hosts": [],
                "labels": {"a": "1", "b": "2"}, "step": 7, "at": "yesterday",
                "ports": [{"name": "http"}, {"name": "http"}]}}),
        );
        assert_eq!(
            found,
            [
                "spec.at: Invalid value: \"yesterday\": spec.at in body must be of type date-time: \"yesterday\"",
                "spec.code: Too long: may not be more than 1 byte",
                "spec.hosts: Invalid value: 0: spec.hosts in body should have at least 1 items",
                "spec.labels: Too many: 2: must have at most 1 item",
                "spec.name: Too long: may not be more than 5 bytes",
                "spec.ports[1]: Duplicate value: {\"name\":\"http\"}",
                "spec.step: Invalid value: 7: spec.step in body should be a multiple of 5",
                "spec.tags: Too many: 3: must have at most 2 items",
                "spec.tags[2]: Duplicate value: \"a\"",
            ]
        );
        let short = errors_of(
            schema,
            json!({"spec": {"name": "ab", "at": "2026-12-07T10:00:00Z", "step": 10}}),
        );
        assert_eq!(
            short,
            ["spec.name: Invalid value: \"ab\": spec.name in body should be at least 3 chars long"]
        );
    }
}
