//! Field errors worded as the API server words them (apimachinery's `field/errors.go`): each
//! a path and a body such as `Unsupported value: "Bogus": supported values: "ClusterIP", ...`.

use serde_json::Value;

use crate::sim::kube::storage::status::ApiError;

/// The field errors of one object, in the order they were found.
#[derive(Debug, Default)]
pub(crate) struct Errors(pub Vec<(String, String)>);

/// A Go `%q` of a string (JSON's quoting agrees for the text runbooks send).
pub(crate) fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
}

/// A bad value as Go's `%v` shows it: numbers and booleans bare, strings quoted.
pub(crate) fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => quoted(text),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

impl Errors {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The 422 `Invalid` answer these errors make for the object `name` of `kind`.
    pub(crate) fn into_invalid(self, kind: &str, name: &str) -> ApiError {
        let causes: Vec<(&str, String)> = self
            .0
            .iter()
            .map(|(f, m)| (f.as_str(), m.clone()))
            .collect();
        ApiError::invalid(kind, name, &causes)
    }

    pub(crate) fn push(&mut self, path: impl Into<String>, body: impl Into<String>) {
        self.0.push((path.into(), body.into()));
    }

    pub(crate) fn required(&mut self, path: impl Into<String>) {
        self.push(path, "Required value");
    }

    pub(crate) fn required_because(&mut self, path: impl Into<String>, detail: &str) {
        self.push(path, format!("Required value: {detail}"));
    }

    pub(crate) fn invalid(&mut self, path: impl Into<String>, value: &Value, detail: &str) {
        self.push(path, format!("Invalid value: {}: {detail}", shown(value)));
    }

    pub(crate) fn not_supported(
        &mut self,
        path: impl Into<String>,
        value: &str,
        supported: &[&str],
    ) {
        let supported: Vec<String> = supported.iter().map(|s| quoted(s)).collect();
        self.push(
            path,
            format!(
                "Unsupported value: {}: supported values: {}",
                quoted(value),
                supported.join(", ")
            ),
        );
    }

    pub(crate) fn forbidden(&mut self, path: impl Into<String>, detail: &str) {
        self.push(path, format!("Forbidden: {detail}"));
    }

    pub(crate) fn duplicate(&mut self, path: impl Into<String>, value: &Value) {
        self.push(path, format!("Duplicate value: {}", shown(value)));
    }

    pub(crate) fn not_found(&mut self, path: impl Into<String>, value: &Value) {
        self.push(path, format!("Not found: {}", shown(value)));
    }

    /// An enum field: when set, one of `supported`.
    pub(crate) fn one_of(&mut self, path: impl Into<String>, value: &Value, supported: &[&str]) {
        if let Some(text) = value.as_str()
            && !supported.contains(&text)
        {
            self.not_supported(path, text, supported);
        }
    }

    /// A port number: when set, 1 to 65535.
    pub(crate) fn port(&mut self, path: impl Into<String>, value: &Value) {
        if let Some(n) = value.as_i64()
            && !(1..=65535).contains(&n)
        {
            self.invalid(path, value, "must be between 1 and 65535, inclusive");
        }
    }

    /// A count that may not be negative.
    pub(crate) fn non_negative(&mut self, path: impl Into<String>, value: &Value) {
        if value.as_i64().is_some_and(|n| n < 0) {
            self.invalid(path, value, "must be greater than or equal to 0");
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn bodies_read_as_the_api_servers() {
        let mut errors = Errors::default();
        errors.not_supported("spec.type", "Bogus", &["ClusterIP", "ExternalName"]);
        errors.port("spec.ports[0].port", &json!(99999));
        errors.non_negative("spec.replicas", &json!(-1));
        assert_eq!(
            errors.0,
            [
                (
                    "spec.type".to_string(),
                    r#"Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName""#
                        .to_string()
                ),
                (
                    "spec.ports[0].port".to_string(),
                    "Invalid value: 99999: must be between 1 and 65535, inclusive".to_string()
                ),
                (
                    "spec.replicas".to_string(),
                    "Invalid value: -1: must be greater than or equal to 0".to_string()
                ),
            ]
        );
    }
}
