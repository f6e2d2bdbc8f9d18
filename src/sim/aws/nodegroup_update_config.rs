//! A node group's `updateConfig`: how many of its nodes an update may take down at once, as a
//! count no greater than its maximum size or a percentage.
//!
//! Words: a count above the maximum size is "max-unavailable must be within the range 1 and max
//! size of the node group" (EKS's InvalidParameterException to CreateNodegroup,
//! hashicorp/terraform-provider-aws#26535; UpdateNodegroupConfig is held to the same rule). The
//! API reference (NodegroupUpdateConfig) bounds the percentage to 1-100 and allows one of the
//! two; EKS's words for those have not been seen and are the twin's.

use serde_json::{Value, json};

use super::error::AwsError;

/// `updateConfig` as a node group with this maximum size keeps it: none when not given.
pub(crate) fn update_config_of(given: &Value, max_size: i64) -> Result<Option<Value>, AwsError> {
    if given.is_null() {
        return Ok(None);
    }
    let count = &given["maxUnavailable"];
    let percentage = &given["maxUnavailablePercentage"];
    let mut kept = json!({});
    match (count.as_i64(), percentage.as_i64()) {
        (Some(_), Some(_)) => {
            return Err(AwsError::invalid_parameter(
                "updateConfig takes maxUnavailable or maxUnavailablePercentage, not both",
            ));
        }
        (Some(count), None) => {
            if !(1..=max_size).contains(&count) {
                return Err(AwsError::invalid_parameter(
                    "max-unavailable must be within the range 1 and max size of the node group",
                ));
            }
            kept["maxUnavailable"] = json!(count);
        }
        (None, Some(percentage)) => {
            if !(1..=100).contains(&percentage) {
                return Err(AwsError::invalid_parameter(format!(
                    "maxUnavailablePercentage must be from 1 to 100, got {percentage}"
                )));
            }
            kept["maxUnavailablePercentage"] = json!(percentage);
        }
        (None, None) if count.is_null() && percentage.is_null() => {}
        (None, None) => {
            return Err(AwsError::invalid_parameter(
                "updateConfig.maxUnavailable and maxUnavailablePercentage must be integers",
            ));
        }
    }
    if let Some(strategy) = given["updateStrategy"].as_str() {
        kept["updateStrategy"] = json!(strategy);
    }
    Ok(Some(kept))
}

/// The update config a node group keeps after an UpdateNodegroupConfig: the one given, or its
/// own, held to its (new) maximum size either way.
pub(crate) fn updated(
    current: Option<&Value>,
    given: &Value,
    max_size: i64,
) -> Result<Option<Value>, AwsError> {
    match (given.is_null(), current) {
        (false, _) => update_config_of(given, max_size),
        (true, Some(current)) => update_config_of(current, max_size),
        (true, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_unavailable_is_held_to_the_max_size_in_eks_words() {
        let refused = update_config_of(&json!({"maxUnavailable": 3}), 2).expect_err("above max");
        assert_eq!(
            (refused.code, refused.message.as_str()),
            (
                "InvalidParameterException",
                "max-unavailable must be within the range 1 and max size of the node group"
            )
        );
        assert_eq!(
            update_config_of(&json!({"maxUnavailable": 2}), 2).ok(),
            Some(Some(json!({"maxUnavailable": 2})))
        );
        assert!(update_config_of(&json!({"maxUnavailablePercentage": 101}), 2).is_err());
        assert_eq!(update_config_of(&Value::Null, 2).ok(), Some(None));
        // Shrinking the maximum below what the node group keeps is refused too.
        let kept = json!({"maxUnavailable": 3});
        assert!(updated(Some(&kept), &Value::Null, 2).is_err());
        assert!(updated(Some(&kept), &Value::Null, 5).is_ok());
    }
}
