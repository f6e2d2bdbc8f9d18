//! The add-on versions the twin's EKS offers (what DescribeAddonVersions lists and what
//! CreateAddon and UpdateAddon accept): for each add-on of the lab's catalog, the version the
//! lab installs (its default), the hybrid lab's, and the older ones its drills install.
//!
//! Words: a version the add-on does not have is InvalidParameterException "Addon version
//! specified is not supported" (CreateAddon: hashicorp/terraform-provider-aws#33385, #20559,
//! aws-samples/eks-workshop-v2#964; UpdateAddon: aws/aws-sdk-go-v2#2554, nebari-dev/nebari
//! #3016).

use super::error::AwsError;
use crate::lab::{self, hybrid};

/// Older versions the drills roll an add-on back to (the hybrid drill's "below the minimum"
/// node monitoring agent).
const OLDER: [(&str, &str); 1] = [("eks-node-monitoring-agent", "v1.1.2-eksbuild.1")];

/// An add-on's versions, its default first; none for an add-on the catalog does not hold.
pub(crate) fn versions(name: &str) -> Vec<String> {
    let Some((_, seed)) = lab::offered_addons().find(|(n, _)| *n == name) else {
        return Vec::new();
    };
    let mut versions = vec![lab::resolved_addon_version(name, seed)];
    let others = hybrid::HYBRID_ADDONS.iter().chain(OLDER.iter());
    for (_, version) in others.filter(|(n, _)| *n == name) {
        if !versions.iter().any(|v| v == version) {
            versions.push((*version).to_string());
        }
    }
    versions
}

/// A version an add-on may be created or updated to: one the catalog lists, or the one it
/// already runs (a captured cluster's may be older than the catalog).
pub(crate) fn check(name: &str, version: &str, installed: Option<&str>) -> Result<(), AwsError> {
    if installed == Some(version) || versions(name).iter().any(|v| v == version) {
        return Ok(());
    }
    Err(AwsError::invalid_parameter(
        "Addon version specified is not supported",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_outside_the_catalog_is_refused_in_eks_words() {
        assert_eq!(
            versions("cert-manager"),
            vec!["v1.19.1-eksbuild.1".to_string()]
        );
        let refused = check("cert-manager", "v0.0.1-eksbuild.1", None).expect_err("unknown");
        assert_eq!(
            (refused.code, refused.message.as_str()),
            (
                "InvalidParameterException",
                "Addon version specified is not supported"
            )
        );
        assert!(check("eks-node-monitoring-agent", "v1.1.2-eksbuild.1", None).is_ok());
        assert!(check("coredns", "v1.0.0", Some("v1.0.0")).is_ok());
    }
}
