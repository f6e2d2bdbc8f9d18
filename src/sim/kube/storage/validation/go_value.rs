//! Bad values that are not scalars, as the API server prints them. Kubernetes 1.35's field
//! errors print an API type's value as its JSON (`Invalid value: {"app":"b"}`,
//! `{"matchLabels":{"app":"b"}}`: what real 1.3x servers answer for a Deployment whose selector
//! does not match its template); the internal `core` types of a Pod update's node affinity,
//! which have no JSON form, still print as Go's `%#v` does.

use serde_json::Value;

use super::errors::quoted;

/// A `map[string]string` as `encoding/json` writes it: keys sorted, `null` for none.
pub(crate) fn string_map(map: &Value) -> String {
    match map.as_object() {
        None => "null".into(),
        Some(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let entries: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{}", quoted(k), quoted(v.as_str().unwrap_or_default())))
                .collect();
            format!("{{{}}}", entries.join(","))
        }
    }
}

fn strings(list: &Value) -> String {
    match list.as_array() {
        None => "[]string(nil)".into(),
        Some(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|v| quoted(v.as_str().unwrap_or_default()))
                .collect();
            format!("[]string{{{}}}", items.join(", "))
        }
    }
}

/// A `[]core.NodeSelectorRequirement` as `%#v` prints it (each element with its type).
fn node_requirements(list: &Value) -> String {
    match list.as_array() {
        None => "[]core.NodeSelectorRequirement(nil)".into(),
        Some(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|r| {
                    format!(
                        "core.NodeSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        quoted(r["key"].as_str().unwrap_or_default()),
                        quoted(r["operator"].as_str().unwrap_or_default()),
                        strings(&r["values"])
                    )
                })
                .collect();
            format!("[]core.NodeSelectorRequirement{{{}}}", items.join(", "))
        }
    }
}

/// A `core.NodeSelectorTerm` as `%#v` prints it.
pub(crate) fn node_selector_term(term: &Value) -> String {
    format!(
        "core.NodeSelectorTerm{{MatchExpressions:{}, MatchFields:{}}}",
        node_requirements(&term["matchExpressions"]),
        node_requirements(&term["matchFields"])
    )
}

/// A `[]core.NodeSelectorTerm` as `%#v` prints it.
pub(crate) fn node_selector_terms(terms: &Value) -> String {
    match terms.as_array() {
        None => "[]core.NodeSelectorTerm(nil)".into(),
        Some(items) => {
            let items: Vec<String> = items.iter().map(node_selector_term).collect();
            format!("[]core.NodeSelectorTerm{{{}}}", items.join(", "))
        }
    }
}

/// A `metav1.LabelSelector` as `encoding/json` writes it: fields in the struct's order, the
/// empty ones left out (`omitempty`), so an empty selector is `{}`.
pub(crate) fn label_selector(selector: &Value) -> String {
    let mut fields = Vec::new();
    if selector["matchLabels"]
        .as_object()
        .is_some_and(|m| !m.is_empty())
    {
        fields.push(format!(
            "\"matchLabels\":{}",
            string_map(&selector["matchLabels"])
        ));
    }
    if let Some(items) = selector["matchExpressions"]
        .as_array()
        .filter(|items| !items.is_empty())
    {
        let items: Vec<String> = items
            .iter()
            .map(|e| {
                let mut parts = vec![
                    format!("\"key\":{}", quoted(e["key"].as_str().unwrap_or_default())),
                    format!(
                        "\"operator\":{}",
                        quoted(e["operator"].as_str().unwrap_or_default())
                    ),
                ];
                if let Some(values) = e["values"].as_array().filter(|v| !v.is_empty()) {
                    let values: Vec<String> = values
                        .iter()
                        .map(|v| quoted(v.as_str().unwrap_or_default()))
                        .collect();
                    parts.push(format!("\"values\":[{}]", values.join(",")));
                }
                format!("{{{}}}", parts.join(","))
            })
            .collect();
        fields.push(format!("\"matchExpressions\":[{}]", items.join(",")));
    }
    format!("{{{}}}", fields.join(","))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn prints_as_encoding_json_does() {
        assert_eq!(
            label_selector(&json!({"matchLabels": {"tier": "x", "app": "b"}})),
            r#"{"matchLabels":{"app":"b","tier":"x"}}"#
        );
        assert_eq!(label_selector(&json!({})), "{}");
        assert_eq!(
            label_selector(
                &json!({"matchExpressions": [{"key": "a", "operator": "Exists"}],
                                   "matchLabels": {"app": "b"}})
            ),
            r#"{"matchLabels":{"app":"b"},"matchExpressions":[{"key":"a","operator":"Exists"}]}"#
        );
        assert_eq!(string_map(&Value::Null), "null");
    }
}
