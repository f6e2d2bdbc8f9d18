//! Leases (coordination.k8s.io/v1), as 1.35's `ValidateLeaseSpec` checks them
//! (`pkg/apis/coordination/validation/validation.go`): a positive duration, transitions not
//! negative, a preferred holder only with a strategy.

use serde_json::Value;

use super::errors::Errors;

/// `ValidateLeaseSpec` (a strategy's own name is not checked by the twin).
pub(crate) fn lease(object: &Value, errors: &mut Errors) {
    let spec = &object["spec"];
    let duration = &spec["leaseDurationSeconds"];
    if duration.as_i64().is_some_and(|d| d <= 0) {
        errors.invalid(
            "spec.leaseDurationSeconds",
            duration,
            "must be greater than 0",
        );
    }
    errors.non_negative("spec.leaseTransitions", &spec["leaseTransitions"]);
    let preferred = spec["preferredHolder"]
        .as_str()
        .is_some_and(|h| !h.is_empty());
    let strategy = spec["strategy"].as_str().is_some_and(|s| !s.is_empty());
    if preferred && !strategy {
        errors.forbidden(
            "spec.preferredHolder",
            "may only be specified if `strategy` is defined",
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn durations_and_transitions() {
        let mut errors = Errors::default();
        lease(
            &json!({"spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1}}),
            &mut errors,
        );
        assert_eq!(
            errors.0,
            [
                (
                    "spec.leaseDurationSeconds".to_string(),
                    "Invalid value: 0: must be greater than 0".to_string()
                ),
                (
                    "spec.leaseTransitions".to_string(),
                    "Invalid value: -1: must be greater than or equal to 0".to_string()
                ),
            ]
        );
        let mut none = Errors::default();
        lease(&json!({"spec": {}}), &mut none);
        lease(
            &json!({"spec": {"leaseDurationSeconds": 15, "holderIdentity": "a"}}),
            &mut none,
        );
        assert!(none.is_empty());
    }
}
