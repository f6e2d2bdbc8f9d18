//! PodDisruptionBudgets (policy/v1), as 1.35's `ValidatePodDisruptionBudgetSpec` checks them
//! (`pkg/apis/policy/validation/validation.go`): one of `minAvailable` and `maxUnavailable`,
//! each a count or a percentage no more than 100%, the selector, the unhealthy-pod policy.

use serde_json::Value;

use super::errors::{Errors, quoted};
use super::go_value::label_selector as selector_json;
use super::label_selector::label_selector;
use super::rollout::{at_most_all, int_or_percent};

/// `supportedUnhealthyPodEvictionPolicies.List()`, sorted.
const EVICTION_POLICIES: [&str; 2] = ["AlwaysAllow", "IfHealthyBudget"];

/// An int-or-string as `encoding/json` writes it.
fn int_or_string(value: &Value) -> String {
    match value {
        Value::String(text) => quoted(text),
        other => other.to_string(),
    }
}

/// The spec as the server prints it for "both set": its JSON, in the Go struct's field order.
fn spec_json(spec: &Value) -> String {
    let mut fields = Vec::new();
    for field in [
        "minAvailable",
        "selector",
        "maxUnavailable",
        "unhealthyPodEvictionPolicy",
    ] {
        let value = &spec[field];
        if value.is_null() {
            continue;
        }
        let shown = if field == "selector" {
            selector_json(value)
        } else {
            int_or_string(value)
        };
        fields.push(format!("{}:{shown}", quoted(field)));
    }
    format!("{{{}}}", fields.join(","))
}

/// `ValidatePodDisruptionBudgetSpec`.
pub(crate) fn pod_disruption_budget(object: &Value, errors: &mut Errors) {
    let spec = &object["spec"];
    let (min, max) = (&spec["minAvailable"], &spec["maxUnavailable"]);
    if !min.is_null() && !max.is_null() {
        errors.push(
            "spec",
            format!(
                "Invalid value: {}: minAvailable and maxUnavailable cannot be both set",
                spec_json(spec)
            ),
        );
    }
    for (value, at) in [(min, "spec.minAvailable"), (max, "spec.maxUnavailable")] {
        if !value.is_null() {
            int_or_percent(value, at, errors);
            at_most_all(value, at, errors);
        }
    }
    label_selector(&spec["selector"], "spec.selector", errors);
    errors.one_of(
        "spec.unhealthyPodEvictionPolicy",
        &spec["unhealthyPodEvictionPolicy"],
        &EVICTION_POLICIES,
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn causes(spec: Value) -> Vec<String> {
        let mut errors = Errors::default();
        pod_disruption_budget(&json!({ "spec": spec }), &mut errors);
        errors
            .0
            .into_iter()
            .map(|(f, m)| format!("{f}: {m}"))
            .collect()
    }

    #[test]
    fn counts_percentages_and_policies() {
        let selector = json!({"matchLabels": {"app": "x"}});
        let cases = [
            (
                json!({"selector": selector, "minAvailable": "150%"}),
                r#"spec.minAvailable: Invalid value: "150%": must not be greater than 100%"#,
            ),
            (
                json!({"selector": selector, "maxUnavailable": -1}),
                "spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                json!({"selector": selector, "minAvailable": "50"}),
                r#"spec.minAvailable: Invalid value: "50": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"#,
            ),
            (
                json!({"selector": selector, "minAvailable": 1, "unhealthyPodEvictionPolicy": "Never"}),
                r#"spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget""#,
            ),
            (
                json!({"selector": selector, "minAvailable": 1, "maxUnavailable": "10%"}),
                r#"spec: Invalid value: {"minAvailable":1,"selector":{"matchLabels":{"app":"x"}},"maxUnavailable":"10%"}: minAvailable and maxUnavailable cannot be both set"#,
            ),
            (
                json!({"minAvailable": 1, "selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}}),
                "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
            ),
        ];
        for (spec, expected) in cases {
            assert_eq!(causes(spec), [expected]);
        }
        assert!(causes(json!({"selector": selector, "maxUnavailable": "0%"})).is_empty());
        assert!(
            causes(json!({"minAvailable": 2, "unhealthyPodEvictionPolicy": "AlwaysAllow"}))
                .is_empty()
        );
    }
}
