//! Names that EKS's REST API carries in the request's path: one too long for any EKS name
//! would not fit a request line (the SDK cannot build it, and panics), so it is refused here,
//! before anything is sent, naming what was too long.

use super::error::AwsError;

/// The longest value EKS takes in a path: an IAM principal ARN (2,048 characters). Cluster,
/// node group and add-on names are far shorter; EKS itself judges those.
const LONGEST: usize = 2048;

/// Refuses the first of `values` (what it is, the value) that no EKS path could carry.
pub(super) fn checked(operation: &str, values: &[(&str, &str)]) -> Result<(), AwsError> {
    match values.iter().find(|(_, value)| value.len() > LONGEST) {
        None => Ok(()),
        Some((what, value)) => {
            let start: String = value.chars().take(24).collect();
            Err(AwsError::new(
                operation,
                "InvalidParameterException",
                format!(
                    "the {what} `{start}...` is {} characters long, longer than anything EKS takes ({LONGEST}); nothing was sent",
                    value.chars().count()
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_too_long_for_a_request_line_is_refused_with_its_start() {
        let long = "x".repeat(70_000);
        let error = checked("DescribeCluster", &[("cluster name", &long)]).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("cluster name `xxxxxxxxxxxxxxxxxxxxxxxx...` is 70000 characters"),
            "{text}"
        );
        assert!(text.len() < 300, "{text}");
        assert!(checked("DescribeCluster", &[("cluster name", "myeks5w")]).is_ok());
    }
}
