//! A pod's topology spread constraints, as 1.35's `validateTopologySpreadConstraints` checks
//! them (`ValidateMaxSkew`, `ValidateTopologyKey`, `ValidateWhenUnsatisfiable`,
//! `ValidateSpreadConstraintNotRepeat`, `validateMinDomains`, `validateNodeInclusionPolicy`,
//! the label selector; `matchLabelKeys` is not checked).

use serde_json::Value;

use super::errors::Errors;
use super::label_selector::label_selector;

/// `isNotPositiveErrorMsg`.
const NOT_POSITIVE: &str = "must be greater than zero";
/// `sets.List` of the supported actions and node inclusion policies: sorted.
const ACTIONS: [&str; 2] = ["DoNotSchedule", "ScheduleAnyway"];
const NODE_POLICIES: [&str; 2] = ["Honor", "Ignore"];

pub(crate) fn topology_spread(spec: &Value, path: &str, errors: &mut Errors) {
    let constraints = spec["topologySpreadConstraints"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, constraint) in constraints.iter().enumerate() {
        let at = format!("{path}.topologySpreadConstraints[{i}]");
        let max_skew = constraint["maxSkew"].as_i64().unwrap_or(0);
        if max_skew <= 0 {
            errors.invalid(
                format!("{at}.maxSkew"),
                &Value::from(max_skew),
                NOT_POSITIVE,
            );
        }
        let key = constraint["topologyKey"].as_str().unwrap_or_default();
        if key.is_empty() {
            errors.required_because(format!("{at}.topologyKey"), "can not be empty");
        }
        let action = constraint["whenUnsatisfiable"].as_str().unwrap_or_default();
        if !ACTIONS.contains(&action) {
            errors.not_supported(format!("{at}.whenUnsatisfiable"), action, &ACTIONS);
        }
        // The tuple {topologyKey, whenUnsatisfiable} is one kind of constraint: a later one
        // of the same kind makes this one the duplicate.
        let repeated = constraints[i + 1..].iter().any(|rest| {
            rest["topologyKey"].as_str().unwrap_or_default() == key
                && rest["whenUnsatisfiable"].as_str().unwrap_or_default() == action
        });
        if repeated {
            errors.duplicate(
                format!("{at}.{{topologyKey, whenUnsatisfiable}}"),
                &Value::String(format!("{{{key}, {action}}}")),
            );
        }
        min_domains(&constraint["minDomains"], action, &at, errors);
        for policy in ["nodeAffinityPolicy", "nodeTaintsPolicy"] {
            errors.one_of(
                format!("{at}.{policy}"),
                &constraint[policy],
                &NODE_POLICIES,
            );
        }
        label_selector(
            &constraint["labelSelector"],
            &format!("{at}.labelSelector"),
            errors,
        );
    }
}

/// `validateMinDomains`: when set, positive, and only with `DoNotSchedule`.
fn min_domains(min_domains: &Value, action: &str, at: &str, errors: &mut Errors) {
    let Some(n) = min_domains.as_i64() else {
        return;
    };
    let path = format!("{at}.minDomains");
    if n <= 0 {
        errors.invalid(path.clone(), min_domains, NOT_POSITIVE);
    }
    if action != "DoNotSchedule" {
        errors.invalid(
            path,
            min_domains,
            &format!("can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"),
        );
    }
}
