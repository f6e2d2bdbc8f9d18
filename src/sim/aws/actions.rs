//! The IAM action a call to the twin's AWS endpoint is authorized as (`eks:DescribeCluster`,
//! `ec2:DescribeSecurityGroups`): the query APIs name it in `Action`, EKS's REST API by its
//! method and path, as in the service's API reference.

/// `service:Action`, or None for a path EKS does not serve.
pub(crate) fn iam_action(
    service: &str,
    method: &str,
    path: &str,
    query_action: Option<&str>,
) -> Option<String> {
    if service != "eks" {
        return query_action
            .filter(|a| !a.is_empty())
            .map(|action| format!("{service}:{action}"));
    }
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let action = match (method, segments.as_slice()) {
        ("POST", ["clusters"]) => "CreateCluster",
        ("GET", ["clusters"]) => "ListClusters",
        ("GET", ["clusters", _]) => "DescribeCluster",
        ("DELETE", ["clusters", _]) => "DeleteCluster",
        ("POST", ["clusters", _, "node-groups"]) => "CreateNodegroup",
        ("GET", ["clusters", _, "node-groups"]) => "ListNodegroups",
        ("GET", ["clusters", _, "node-groups", _]) => "DescribeNodegroup",
        ("DELETE", ["clusters", _, "node-groups", _]) => "DeleteNodegroup",
        ("POST", ["clusters", _, "node-groups", _, "update-config"]) => "UpdateNodegroupConfig",
        ("POST", ["clusters", _, "node-groups", _, "update-version"]) => "UpdateNodegroupVersion",
        ("POST", ["clusters", _, "update-config"]) => "UpdateClusterConfig",
        ("POST", ["clusters", _, "addons"]) => "CreateAddon",
        ("GET", ["clusters", _, "addons"]) => "ListAddons",
        ("GET", ["clusters", _, "addons", _]) => "DescribeAddon",
        ("DELETE", ["clusters", _, "addons", _]) => "DeleteAddon",
        ("POST", ["clusters", _, "addons", _, "update"]) => "UpdateAddon",
        ("GET", ["clusters", _, "updates"]) => "ListUpdates",
        ("GET", ["clusters", _, "updates", _]) => "DescribeUpdate",
        ("GET", ["addons", "supported-versions"]) => "DescribeAddonVersions",
        ("POST", ["clusters", _, "pod-identity-associations"]) => "CreatePodIdentityAssociation",
        ("GET", ["clusters", _, "pod-identity-associations"]) => "ListPodIdentityAssociations",
        ("GET", ["clusters", _, "pod-identity-associations", _]) => {
            "DescribePodIdentityAssociation"
        }
        ("DELETE", ["clusters", _, "pod-identity-associations", _]) => {
            "DeletePodIdentityAssociation"
        }
        ("POST", ["clusters", _, "access-entries"]) => "CreateAccessEntry",
        ("GET", ["clusters", _, "access-entries"]) => "ListAccessEntries",
        ("GET", ["clusters", _, "access-entries", _]) => "DescribeAccessEntry",
        ("DELETE", ["clusters", _, "access-entries", _]) => "DeleteAccessEntry",
        ("POST", ["clusters", _, "access-entries", _, "access-policies"]) => {
            "AssociateAccessPolicy"
        }
        ("GET", ["clusters", _, "access-entries", _, "access-policies"]) => {
            "ListAssociatedAccessPolicies"
        }
        ("DELETE", ["clusters", _, "access-entries", _, "access-policies", _]) => {
            "DisassociateAccessPolicy"
        }
        _ => return None,
    };
    Some(format!("eks:{action}"))
}

#[cfg(test)]
mod tests {
    use super::iam_action;

    #[test]
    fn eks_paths_and_query_actions_name_their_iam_action() {
        let eks = |method, path| iam_action("eks", method, path, None);
        assert_eq!(
            eks("GET", "/clusters/myeks5w").as_deref(),
            Some("eks:DescribeCluster")
        );
        assert_eq!(
            eks("POST", "/clusters/myeks5w/node-groups/gpu/update-config").as_deref(),
            Some("eks:UpdateNodegroupConfig")
        );
        assert_eq!(
            eks("GET", "/addons/supported-versions").as_deref(),
            Some("eks:DescribeAddonVersions")
        );
        assert_eq!(
            eks("POST", "/clusters/myeks5w/node-groups/gpu/update-version").as_deref(),
            Some("eks:UpdateNodegroupVersion")
        );
        assert_eq!(
            eks("POST", "/clusters/myeks5w/update-config").as_deref(),
            Some("eks:UpdateClusterConfig")
        );
        assert_eq!(eks("PUT", "/clusters"), None);
        assert_eq!(
            iam_action("ec2", "POST", "/", Some("DescribeSecurityGroups")).as_deref(),
            Some("ec2:DescribeSecurityGroups")
        );
        assert_eq!(iam_action("iam", "POST", "/", Some("")), None);
    }
}
