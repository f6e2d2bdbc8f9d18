//! How workloads roll out: a Deployment's strategy, a DaemonSet's and a StatefulSet's update
//! strategies, and a Deployment's progress deadline (pkg/apis/apps/validation).

use serde_json::Value;

use super::errors::Errors;

/// `IsValidPercent`'s message.
const PERCENT: &str = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/// `getPercentValue`: the number of a well-formed `N%`.
fn percent(value: &Value) -> Option<i64> {
    let digits = value.as_str()?.strip_suffix('%')?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `getIntOrPercentValue`: a malformed string counts as 0, as upstream's `IntValue` does.
fn amount(value: &Value) -> i64 {
    value.as_i64().or_else(|| percent(value)).unwrap_or(0)
}

/// `ValidatePositiveIntOrPercent` (a PodDisruptionBudget's counts too).
pub(crate) fn int_or_percent(value: &Value, at: &str, errors: &mut Errors) {
    match value {
        Value::String(_) if percent(value).is_none() => errors.invalid(at, value, PERCENT),
        Value::Number(_) => errors.non_negative(at, value),
        _ => {}
    }
}

/// `IsNotMoreThan100Percent`.
pub(crate) fn at_most_all(value: &Value, at: &str, errors: &mut Errors) {
    if percent(value).is_some_and(|p| p > 100) {
        errors.invalid(at, value, "must not be greater than 100%");
    }
}

/// `ValidateDeploymentStrategy` and `ValidateRollingUpdateDeployment`.
pub(crate) fn deployment_strategy(spec: &Value, errors: &mut Errors) {
    let strategy = &spec["strategy"];
    match strategy["type"].as_str().unwrap_or_default() {
        "Recreate" if !strategy["rollingUpdate"].is_null() => errors.forbidden(
            "spec.strategy.rollingUpdate",
            "may not be specified when strategy `type` is 'Recreate'",
        ),
        "Recreate" => {}
        "RollingUpdate" => {
            let rolling = &strategy["rollingUpdate"];
            let path = "spec.strategy.rollingUpdate";
            let (unavailable, surge) = (&rolling["maxUnavailable"], &rolling["maxSurge"]);
            int_or_percent(unavailable, &format!("{path}.maxUnavailable"), errors);
            int_or_percent(surge, &format!("{path}.maxSurge"), errors);
            if amount(unavailable) == 0 && amount(surge) == 0 {
                errors.invalid(
                    format!("{path}.maxUnavailable"),
                    unavailable,
                    "may not be 0 when `maxSurge` is 0",
                );
            }
            at_most_all(unavailable, &format!("{path}.maxUnavailable"), errors);
        }
        _ => errors.push(
            "spec.strategy",
            format!(
                "Unsupported value: {strategy}: supported values: \"Recreate\", \"RollingUpdate\""
            ),
        ),
    }
    let deadline = &spec["progressDeadlineSeconds"];
    if let Some(seconds) = deadline.as_i64() {
        errors.non_negative("spec.progressDeadlineSeconds", deadline);
        if seconds <= spec["minReadySeconds"].as_i64().unwrap_or(0) {
            errors.invalid(
                "spec.progressDeadlineSeconds",
                deadline,
                "must be greater than minReadySeconds",
            );
        }
    }
}

/// `ValidateDaemonSetUpdateStrategy` and `ValidateRollingUpdateDaemonSet`: exactly one of
/// surge and unavailability, neither over 100%.
pub(crate) fn daemon_set_strategy(spec: &Value, errors: &mut Errors) {
    let strategy = &spec["updateStrategy"];
    match strategy["type"].as_str().unwrap_or_default() {
        "OnDelete" => {}
        "RollingUpdate" => {
            let rolling = &strategy["rollingUpdate"];
            let path = "spec.updateStrategy.rollingUpdate";
            if rolling.is_null() {
                return errors.required(path);
            }
            let (unavailable, surge) = (&rolling["maxUnavailable"], &rolling["maxSurge"]);
            let (unavailable_at, surge_at) =
                (format!("{path}.maxUnavailable"), format!("{path}.maxSurge"));
            int_or_percent(unavailable, &unavailable_at, errors);
            int_or_percent(surge, &surge_at, errors);
            at_most_all(unavailable, &unavailable_at, errors);
            at_most_all(surge, &surge_at, errors);
            match (amount(unavailable) != 0, amount(surge) != 0) {
                (true, true) => errors.invalid(
                    surge_at,
                    surge,
                    "may not be set when maxUnavailable is non-zero",
                ),
                (false, false) => {
                    errors.required_because(unavailable_at, "cannot be 0 when maxSurge is 0");
                }
                _ => {}
            }
        }
        _ => errors.push(
            "spec.updateStrategy",
            format!(
                "Unsupported value: {strategy}: supported values: \"RollingUpdate\", \"OnDelete\""
            ),
        ),
    }
}

/// `ValidateStatefulSetSpec`'s policies: worded as Invalid with both values named.
pub(crate) fn stateful_set_strategy(spec: &Value, errors: &mut Errors) {
    let policy = &spec["podManagementPolicy"];
    match policy.as_str() {
        None | Some("") => errors.required("spec.podManagementPolicy"),
        Some("OrderedReady" | "Parallel") => {}
        Some(_) => errors.invalid(
            "spec.podManagementPolicy",
            policy,
            "must be 'OrderedReady' or 'Parallel'",
        ),
    }
    let strategy = &spec["updateStrategy"];
    match strategy["type"].as_str().unwrap_or_default() {
        "" => errors.required("spec.updateStrategy"),
        "OnDelete" if !strategy["rollingUpdate"].is_null() => errors.invalid(
            "spec.updateStrategy.rollingUpdate",
            &strategy["rollingUpdate"],
            "only allowed for updateStrategy 'RollingUpdate'",
        ),
        "OnDelete" => {}
        "RollingUpdate" => errors.non_negative(
            "spec.updateStrategy.rollingUpdate.partition",
            &strategy["rollingUpdate"]["partition"],
        ),
        _ => errors.invalid(
            "spec.updateStrategy",
            strategy,
            "must be 'RollingUpdate' or 'OnDelete'",
        ),
    }
}
