//! The instance ids an EC2 call names, checked as EC2 checks them: each one's shape first
//! (`i-` and 8 or 17 hex digits), then that each exists, all the unknown ones named at once.
//!
//! Words: `Invalid id: "not-an-instance"` with InvalidInstanceID.Malformed (DescribeInstances
//! and StopInstances as EC2 answered them, ClusterLabs/cluster-glue#29;
//! aws-quickstart/quickstart-confluent-kafka#50); "The instance ID 'i-1' does not exist" and,
//! for several, "The instance IDs 'i-1, i-2' do not exist" with InvalidInstanceID.NotFound
//! (EC2's wording as moto's ec2/exceptions.py InvalidInstanceIdError copies it).

use super::error::AwsError;
use super::state::AwsState;

/// An instance id of EC2's shape, or InvalidInstanceID.Malformed.
pub(crate) fn instance_id(id: &str) -> Result<(), AwsError> {
    let well_formed = id.strip_prefix("i-").is_some_and(|hex| {
        matches!(hex.len(), 8 | 17)
            && hex
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
    });
    if well_formed {
        return Ok(());
    }
    Err(AwsError::new(
        400,
        "InvalidInstanceID.Malformed",
        format!("Invalid id: \"{id}\""),
    ))
}

/// EC2's answer to instance ids it does not know (one, or several named together).
pub(crate) fn instances_not_found(missing: &[&str]) -> AwsError {
    let message = match missing {
        [one] => format!("The instance ID '{one}' does not exist"),
        several => format!("The instance IDs '{}' do not exist", several.join(", ")),
    };
    AwsError::new(400, "InvalidInstanceID.NotFound", message)
}

/// Every id well formed and known to the twin.
pub(crate) fn check_ids(state: &AwsState, ids: &[String]) -> Result<(), AwsError> {
    for id in ids {
        instance_id(id)?;
    }
    let missing: Vec<&str> = ids
        .iter()
        .filter(|id| !state.instances.contains_key(id.as_str()))
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(instances_not_found(&missing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_and_unknown_ids_in_ec2s_words() {
        let malformed = instance_id("not-an-instance").expect_err("malformed");
        assert_eq!(
            (malformed.code, malformed.message.as_str()),
            (
                "InvalidInstanceID.Malformed",
                "Invalid id: \"not-an-instance\""
            )
        );
        assert!(instance_id("i-0123456789abcdef0").is_ok());
        assert!(instance_id("i-12345678").is_ok());
        assert!(instance_id("i-0123456789ABCDEF0").is_err());
        assert!(instance_id("i-0123").is_err());
        let state = AwsState::default();
        let ids = [
            "i-0123456789abcdef0".to_string(),
            "i-0123456789abcdef1".to_string(),
        ];
        assert_eq!(
            check_ids(&state, &ids).expect_err("unknown").message,
            "The instance IDs 'i-0123456789abcdef0, i-0123456789abcdef1' do not exist"
        );
        assert_eq!(
            check_ids(&state, &ids[..1]).expect_err("unknown").message,
            "The instance ID 'i-0123456789abcdef0' does not exist"
        );
    }
}
