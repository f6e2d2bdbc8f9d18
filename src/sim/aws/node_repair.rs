//! A managed node group's node auto repair configuration (`nodeRepairConfig`), checked as the
//! EKS API reference states it (API_NodeRepairConfig, API_NodeRepairConfigOverrides): counts
//! at least 1, percentages 1 to 100, a count and its percentage never both, each override with
//! its condition, reason, wait and one of the RepairAction values. The reference states these
//! limits, not EKS's words for breaking them: the messages are the twin's, in EKS's
//! InvalidParameterException.

use serde_json::{Map, Value, json};

use super::error::AwsError;

/// RepairAction's values (the EKS API reference, API_NodeRepairConfigOverrides).
const ACTIONS: [&str; 3] = ["Replace", "Reboot", "NoAction"];

/// Each threshold pair: the count and the percentage that may not both be set.
const PAIRS: [(&str, &str); 2] = [
    (
        "maxUnhealthyNodeThresholdCount",
        "maxUnhealthyNodeThresholdPercentage",
    ),
    (
        "maxParallelNodesRepairedCount",
        "maxParallelNodesRepairedPercentage",
    ),
];

fn invalid(message: String) -> AwsError {
    AwsError::invalid_parameter(message)
}

/// An integer field of `object` at least `min` (and at most `max`), when present.
fn bounded(
    object: &Value,
    field: &str,
    min: i64,
    max: Option<i64>,
) -> Result<Option<i64>, AwsError> {
    let value = &object[field];
    if value.is_null() {
        return Ok(None);
    }
    let number = value
        .as_i64()
        .ok_or_else(|| invalid(format!("{field} must be an integer, got {value}")))?;
    if number < min || max.is_some_and(|max| number > max) {
        let range = match max {
            Some(max) => format!("from {min} to {max}"),
            None => format!("at least {min}"),
        };
        return Err(invalid(format!("{field} must be {range}, got {number}")));
    }
    Ok(Some(number))
}

fn text(object: &Value, field: &str, at: &str) -> Result<String, AwsError> {
    object[field]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| invalid(format!("{at}.{field} is required")))
}

/// One override: which condition and reason, how long to wait, what to do.
fn override_of(item: &Value, index: usize) -> Result<Value, AwsError> {
    let at = format!("nodeRepairConfigOverrides[{index}]");
    let condition = text(item, "nodeMonitoringCondition", &at)?;
    let reason = text(item, "nodeUnhealthyReason", &at)?;
    let wait = bounded(item, "minRepairWaitTimeMins", 0, None)?
        .ok_or_else(|| invalid(format!("{at}.minRepairWaitTimeMins is required")))?;
    let action = text(item, "repairAction", &at)?;
    if !ACTIONS.contains(&action.as_str()) {
        return Err(invalid(format!(
            "{at}.repairAction must be one of {}, got {action}",
            ACTIONS.join(", ")
        )));
    }
    Ok(json!({
        "nodeMonitoringCondition": condition,
        "nodeUnhealthyReason": reason,
        "minRepairWaitTimeMins": wait,
        "repairAction": action,
    }))
}

/// The configuration a CreateNodegroup or UpdateNodegroupConfig body gives, checked, as
/// DescribeNodegroup answers it; None when the body gives none.
pub(crate) fn node_repair_of(body: &Value) -> Result<Option<Value>, AwsError> {
    let config = &body["nodeRepairConfig"];
    if config.is_null() {
        return Ok(None);
    }
    if !config.is_object() {
        return Err(invalid(format!(
            "nodeRepairConfig must be an object, got {config}"
        )));
    }
    let mut kept = Map::new();
    if let Some(enabled) = config.get("enabled").filter(|v| !v.is_null()) {
        let enabled = enabled.as_bool().ok_or_else(|| {
            invalid(format!(
                "nodeRepairConfig.enabled must be a boolean, got {enabled}"
            ))
        })?;
        kept.insert("enabled".into(), json!(enabled));
    }
    for (count, percentage) in PAIRS {
        let by_count = bounded(config, count, 1, None)?;
        let by_share = bounded(config, percentage, 1, Some(100))?;
        if by_count.is_some() && by_share.is_some() {
            return Err(invalid(format!(
                "Only one of {count} and {percentage} may be set in nodeRepairConfig"
            )));
        }
        if let Some(n) = by_count {
            kept.insert(count.into(), json!(n));
        }
        if let Some(n) = by_share {
            kept.insert(percentage.into(), json!(n));
        }
    }
    if let Some(overrides) = config
        .get("nodeRepairConfigOverrides")
        .filter(|v| !v.is_null())
    {
        let items = overrides.as_array().ok_or_else(|| {
            invalid(format!(
                "nodeRepairConfigOverrides must be a list, got {overrides}"
            ))
        })?;
        let checked = items
            .iter()
            .enumerate()
            .map(|(i, item)| override_of(item, i))
            .collect::<Result<Vec<_>, _>>()?;
        kept.insert("nodeRepairConfigOverrides".into(), json!(checked));
    }
    Ok(Some(Value::Object(kept)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(config: Value) -> Result<Option<Value>, String> {
        node_repair_of(&json!({ "nodeRepairConfig": config })).map_err(|e| e.message)
    }

    #[test]
    fn a_full_configuration_is_kept_as_given() {
        let config = json!({
            "enabled": true,
            "maxUnhealthyNodeThresholdPercentage": 20,
            "maxParallelNodesRepairedCount": 1,
            "nodeRepairConfigOverrides": [{
                "nodeMonitoringCondition": "AcceleratedHardwareReady",
                "nodeUnhealthyReason": "NvidiaXID79Error",
                "minRepairWaitTimeMins": 10,
                "repairAction": "Replace",
            }],
        });
        assert_eq!(of(config.clone()), Ok(Some(config)));
        assert_eq!(node_repair_of(&json!({})).map_err(|e| e.message), Ok(None));
    }

    #[test]
    fn a_count_and_its_percentage_together_or_out_of_range_are_refused() {
        let both = of(
            json!({ "maxUnhealthyNodeThresholdCount": 2, "maxUnhealthyNodeThresholdPercentage": 10 }),
        );
        assert_eq!(
            both,
            Err("Only one of maxUnhealthyNodeThresholdCount and maxUnhealthyNodeThresholdPercentage may be set in nodeRepairConfig".into())
        );
        assert_eq!(
            of(json!({ "maxParallelNodesRepairedPercentage": 101 })),
            Err("maxParallelNodesRepairedPercentage must be from 1 to 100, got 101".into())
        );
        assert_eq!(
            of(json!({ "maxParallelNodesRepairedCount": 0 })),
            Err("maxParallelNodesRepairedCount must be at least 1, got 0".into())
        );
        let action = of(
            json!({ "nodeRepairConfigOverrides": [{ "nodeMonitoringCondition": "AcceleratedHardwareReady",
            "nodeUnhealthyReason": "NvidiaXID79Error", "minRepairWaitTimeMins": 10, "repairAction": "Restart" }] }),
        );
        assert_eq!(
            action,
            Err("nodeRepairConfigOverrides[0].repairAction must be one of Replace, Reboot, NoAction, got Restart".into())
        );
    }
}
