//! Bad values the API server prints with Go's `%#v` (a selector, a label map), so a message
//! reads as the server's: `v1.LabelSelector{MatchLabels:map[string]string{"app":"b"}, ...}`.

use serde_json::Value;

use super::errors::quoted;

/// `map[string]string{"a":"1", "b":"2"}`, or `map[string]string(nil)` for none.
pub(crate) fn string_map(map: &Value) -> String {
    match map.as_object() {
        None => "map[string]string(nil)".into(),
        Some(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}:{}", quoted(k), quoted(v.as_str().unwrap_or_default())))
                .collect();
            format!("map[string]string{{{}}}", entries.join(", "))
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

/// A `metav1.LabelSelector` as `%#v` prints it.
pub(crate) fn label_selector(selector: &Value) -> String {
    let expressions = match selector["matchExpressions"].as_array() {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|e| {
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        quoted(e["key"].as_str().unwrap_or_default()),
                        quoted(e["operator"].as_str().unwrap_or_default()),
                        strings(&e["values"])
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{expressions}}}",
        string_map(&selector["matchLabels"])
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn prints_as_go_does() {
        assert_eq!(
            label_selector(&json!({"matchLabels": {"app": "b", "tier": "x"}})),
            r#"v1.LabelSelector{MatchLabels:map[string]string{"app":"b", "tier":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"#
        );
    }
}
