//! A CustomResourceDefinition's schemas must be structural, as apiextensions-apiserver's
//! `ValidateStructural` (`pkg/apiserver/schema/validation.go`, `validateStructuralInvariants`)
//! checks them: a type at the root (`object`), on every specified property and on array
//! items, unless the node is int-or-string or preserves unknown fields. (The other structural
//! rules, value validations and metadata restrictions, are not checked by the twin.)

use serde_json::Value;

use super::errors::Errors;

#[derive(Clone, Copy, PartialEq)]
enum Level {
    Root,
    Field,
    Item,
}

fn invariants(schema: &Value, level: Level, path: &str, found: &mut Vec<(String, String)>) {
    let kind = schema["type"].as_str().unwrap_or_default();
    let embedded = schema["x-kubernetes-embedded-resource"] == true;
    let loose = schema["x-kubernetes-int-or-string"] == true
        || schema["x-kubernetes-preserve-unknown-fields"] == true;
    let type_path = format!("{path}.type");
    if embedded && kind != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        let body = if kind.is_empty() {
            format!("Required value: {detail}")
        } else {
            format!("Invalid value: \"{kind}\": {detail}")
        };
        found.push((type_path.clone(), body));
    } else if kind.is_empty() && !loose {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        found.push((type_path.clone(), format!("Required value: {detail}")));
    }
    if level == Level::Root && !kind.is_empty() && kind != "object" {
        found.push((
            type_path,
            format!("Invalid value: \"{kind}\": must be object at the root"),
        ));
    }
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            let child = format!("{path}.properties[{name}]");
            invariants(property, Level::Field, &child, found);
        }
    }
    if schema["additionalProperties"].is_object() {
        let child = format!("{path}.additionalProperties");
        invariants(&schema["additionalProperties"], Level::Field, &child, found);
    }
    if schema["items"].is_object() {
        invariants(
            &schema["items"],
            Level::Item,
            &format!("{path}.items"),
            found,
        );
    }
}

/// The name `plural.group`, then `ValidateStructural` of each version's schema; upstream
/// sorts the structural errors by their text (map order would change them from call to call).
pub(crate) fn custom_resource_definition(object: &Value, errors: &mut Errors) {
    // ValidateCustomResourceDefinition's name rule, checked with the object's metadata.
    let required = format!(
        "{}.{}",
        object["spec"]["names"]["plural"]
            .as_str()
            .unwrap_or_default(),
        object["spec"]["group"].as_str().unwrap_or_default()
    );
    if object["metadata"]["name"].as_str() != Some(required.as_str()) {
        errors.invalid(
            "metadata.name",
            &object["metadata"]["name"],
            r#"must be spec.names.plural+"."+spec.group"#,
        );
    }
    let versions = object["spec"]["versions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, version) in versions.iter().enumerate() {
        let schema = &version["schema"]["openAPIV3Schema"];
        if !schema.is_object() {
            continue;
        }
        let mut found = Vec::new();
        let path = format!("spec.versions[{i}].schema.openAPIV3Schema");
        invariants(schema, Level::Root, &path, &mut found);
        found.sort_by(|a, b| format!("{}: {}", a.0, a.1).cmp(&format!("{}: {}", b.0, b.1)));
        for (field, body) in found {
            errors.push(field, body);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_crd_is_named_its_plural_dot_its_group() {
        let crd = json!({"metadata": {"name": "foo.example.com"},
                         "spec": {"group": "example.com", "names": {"plural": "widgets"}}});
        let mut errors = Errors::default();
        custom_resource_definition(&crd, &mut errors);
        assert_eq!(
            errors.0,
            [(
                "metadata.name".to_string(),
                r#"Invalid value: "foo.example.com": must be spec.names.plural+"."+spec.group"#
                    .to_string()
            )]
        );
    }

    #[test]
    fn a_schema_without_types_is_not_structural() {
        let crd = json!({"metadata": {"name": "widgets.example.com"}, "spec": {
            "group": "example.com", "names": {"plural": "widgets"},
            "versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": {"properties": {"size": {"type": "integer"}}},
                "extra": {"x-kubernetes-preserve-unknown-fields": true},
                "tags": {"type": "array", "items": {}}
            }
        }}}]}});
        let mut errors = Errors::default();
        custom_resource_definition(&crd, &mut errors);
        assert_eq!(
            errors.0,
            [
                (
                    "spec.versions[0].schema.openAPIV3Schema.properties[spec].type".to_string(),
                    "Required value: must not be empty for specified object fields".to_string()
                ),
                (
                    "spec.versions[0].schema.openAPIV3Schema.properties[tags].items.type"
                        .to_string(),
                    "Required value: must not be empty for specified array items".to_string()
                ),
            ]
        );
    }
}
