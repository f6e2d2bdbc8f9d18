//! PriorityClasses (scheduling.k8s.io/v1), as 1.35's `ValidatePriorityClass` and
//! `ValidatePriorityClassUpdate` check them (`pkg/apis/scheduling/validation/validation.go`):
//! the `system-` prefix kept for the server's own classes, a user's value at most one
//! billion, the preemption policy; value and policy fixed once made.

use serde_json::Value;

use super::errors::{Errors, shown};

/// `scheduling.HighestUserDefinablePriority`.
const HIGHEST_USER_PRIORITY: i64 = 1_000_000_000;
const SYSTEM_PREFIX: &str = "system-";
/// `scheduling/v1`'s `systemPriorityClasses`: name, value (neither is a global default).
const SYSTEM_CLASSES: [(&str, i64); 2] = [
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];
/// `ValidatePreemptionPolicy`'s list, in its order.
const PREEMPTION_POLICIES: [&str; 2] = ["PreemptLowerPriority", "Never"];

/// `IsKnownSystemPriorityClass`: why a `system-` class is not one of the server's.
fn unknown_system_class(name: &str, value: i64, global_default: bool) -> Option<String> {
    let Some((known, known_value)) = SYSTEM_CLASSES.iter().find(|(n, _)| *n == name) else {
        return Some(format!("{name} is not a known system priority class"));
    };
    if *known_value != value {
        return Some(format!(
            "value of {known} PriorityClass must be {known_value}"
        ));
    }
    global_default.then(|| format!("globalDefault of {known} PriorityClass must be false"))
}

/// `ValidatePriorityClass`.
pub(crate) fn priority_class(object: &Value, errors: &mut Errors) {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let value = object["value"].as_i64().unwrap_or(0);
    if name.starts_with(SYSTEM_PREFIX) {
        if let Some(why) = unknown_system_class(name, value, object["globalDefault"] == true) {
            errors.forbidden(
                "metadata.name",
                &format!(
                    "priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {why}"
                ),
            );
        }
    } else if value > HIGHEST_USER_PRIORITY {
        errors.forbidden(
            "value",
            &format!("maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"),
        );
    }
    match object["preemptionPolicy"].as_str() {
        Some("") => errors.required("preemptionPolicy"),
        policy => errors.one_of(
            "preemptionPolicy",
            &Value::from(policy),
            &PREEMPTION_POLICIES,
        ),
    }
}

/// `ValidatePriorityClassUpdate`: the value and the preemption policy stay as made.
pub(crate) fn priority_class_update(old: &Value, new: &Value, errors: &mut Errors) {
    if old["value"].as_i64().unwrap_or(0) != new["value"].as_i64().unwrap_or(0) {
        errors.forbidden("value", "may not be changed in an update.");
    }
    if old["preemptionPolicy"] != new["preemptionPolicy"] {
        errors.push(
            "preemptionPolicy",
            format!(
                "Invalid value: {}: field is immutable",
                shown(&new["preemptionPolicy"])
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn causes(object: &Value) -> Vec<String> {
        let mut errors = Errors::default();
        priority_class(object, &mut errors);
        errors
            .0
            .into_iter()
            .map(|(f, m)| format!("{f}: {m}"))
            .collect()
    }

    fn class(name: &str, value: i64) -> Value {
        json!({"metadata": {"name": name}, "value": value, "preemptionPolicy": "PreemptLowerPriority"})
    }

    #[test]
    fn values_names_and_policies() {
        assert_eq!(
            causes(&class("k2-pc1", 1_000_000_001)),
            ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]
        );
        assert!(causes(&class("k2-pc5", 1_000_000_000)).is_empty());
        assert_eq!(
            causes(&class("system-k2", 100)),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-k2 is not a known system priority class"
            ]
        );
        assert!(causes(&class("system-node-critical", 2_000_001_000)).is_empty());
        let mut sometimes = class("k2-pc4", 100);
        sometimes["preemptionPolicy"] = json!("Sometimes");
        assert_eq!(
            causes(&sometimes),
            [
                r#"preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never""#
            ]
        );
    }

    #[test]
    fn an_update_keeps_the_value_and_policy() {
        let mut errors = Errors::default();
        let mut new = class("k2-pc3", 200);
        new["preemptionPolicy"] = json!("Never");
        priority_class_update(&class("k2-pc3", 100), &new, &mut errors);
        assert_eq!(
            errors.0,
            [
                (
                    "value".to_string(),
                    "Forbidden: may not be changed in an update.".to_string()
                ),
                (
                    "preemptionPolicy".to_string(),
                    r#"Invalid value: "Never": field is immutable"#.to_string()
                ),
            ]
        );
    }
}
