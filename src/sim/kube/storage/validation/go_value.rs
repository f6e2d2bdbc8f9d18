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
