//! EKS access entries: which IAM principal is who inside the cluster (username, groups) and
//! which EKS access policies it holds. The Kubernetes side authenticates EKS tokens through
//! them; the cluster's creator gets one with cluster admin, as `bootstrapClusterCreatorAdminPermissions`
//! does by default.

use std::collections::BTreeMap;

use percent_encoding::percent_decode_str;
use serde_json::{Value, json};

use super::error::AwsError;
use super::state::{AccessEntry, AssociatedPolicy, AwsState, Cluster};
use super::wire::epoch;
use crate::lab;

/// The access policies the twin enforces (see `sim::kube::auth::authorization`).
pub(crate) const CLUSTER_ADMIN: &str =
    "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy";
pub(crate) const ADMIN_VIEW: &str =
    "arn:aws:eks::aws:cluster-access-policy/AmazonEKSAdminViewPolicy";
pub(crate) const ADMIN: &str = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSAdminPolicy";
pub(crate) const EDIT: &str = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSEditPolicy";
pub(crate) const VIEW: &str = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy";
const ENFORCED: [&str; 5] = [CLUSTER_ADMIN, ADMIN, EDIT, ADMIN_VIEW, VIEW];

/// The entry EKS makes for a cluster's creator.
pub(crate) fn creator_entry(principal_arn: &str, now: std::time::Duration) -> AccessEntry {
    let mut entry = new_entry(principal_arn, None, Vec::new(), now);
    entry.policies.insert(
        CLUSTER_ADMIN.to_string(),
        AssociatedPolicy {
            policy_arn: CLUSTER_ADMIN.to_string(),
            scope: "cluster".into(),
            namespaces: Vec::new(),
            associated_at: now,
            modified_at: now,
        },
    );
    entry
}

/// The username EKS gives a principal with none set: an IAM user's ARN, or for a role the
/// assumed-role ARN with the session name as a template.
fn default_username(principal_arn: &str) -> String {
    match principal_arn.split_once(":role/") {
        Some((account, path)) => {
            let name = path.rsplit('/').next().unwrap_or(path);
            format!(
                "{}:assumed-role/{name}/{{{{SessionName}}}}",
                account.replacen(":iam:", ":sts:", 1)
            )
        }
        None => principal_arn.to_string(),
    }
}

fn new_entry(
    principal_arn: &str,
    username: Option<&str>,
    groups: Vec<String>,
    now: std::time::Duration,
) -> AccessEntry {
    AccessEntry {
        principal_arn: principal_arn.to_string(),
        username: username.map_or_else(|| default_username(principal_arn), str::to_string),
        groups,
        kind: "STANDARD".into(),
        created_at: now,
        modified_at: now,
        policies: BTreeMap::new(),
    }
}

fn entry_json(cluster: &str, entry: &AccessEntry) -> Value {
    json!({
        "clusterName": cluster,
        "principalArn": entry.principal_arn,
        "kubernetesGroups": entry.groups,
        "accessEntryArn": format!(
            "arn:aws:eks:{}:{}:access-entry/{cluster}/{}",
            lab::REGION, lab::ACCOUNT_ID, entry.principal_arn.rsplit(':').next().unwrap_or_default()
        ),
        "createdAt": epoch(entry.created_at),
        "modifiedAt": epoch(entry.modified_at),
        "tags": {},
        "username": entry.username,
        "type": entry.kind,
    })
}

fn policy_json(policy: &AssociatedPolicy) -> Value {
    let mut scope = json!({"type": policy.scope});
    if policy.scope == "namespace" {
        scope["namespaces"] = json!(policy.namespaces);
    }
    json!({
        "policyArn": policy.policy_arn,
        "accessScope": scope,
        "associatedAt": epoch(policy.associated_at),
        "modifiedAt": epoch(policy.modified_at),
    })
}

fn decoded(segment: &str) -> String {
    percent_decode_str(segment).decode_utf8_lossy().into_owned()
}

fn cluster_mut<'a>(state: &'a mut AwsState, name: &str) -> Result<&'a mut Cluster, AwsError> {
    state
        .clusters
        .get_mut(name)
        .ok_or_else(|| AwsError::not_found(format!("No cluster found for name: {name}.")))
}

fn entry_mut<'a>(
    cluster: &'a mut Cluster,
    principal: &str,
) -> Result<&'a mut AccessEntry, AwsError> {
    cluster.access_entries.get_mut(principal).ok_or_else(|| {
        AwsError::not_found(format!(
            "The specified access entry resource is not found. Principal ARN: {principal}"
        ))
    })
}

fn api_mode(cluster: &Cluster) -> Result<(), AwsError> {
    if cluster.config.authentication_mode == "CONFIG_MAP" {
        return Err(AwsError::invalid_request(format!(
            "The cluster's authentication mode must be set to one of [API, API_AND_CONFIG_MAP] to perform this operation (cluster {} is CONFIG_MAP)",
            cluster.config.name
        )));
    }
    Ok(())
}

/// Serves `/clusters/{name}/access-entries...`; None for any other path.
pub(crate) fn serve(
    state: &mut AwsState,
    method: &str,
    segments: &[&str],
    body: &Value,
) -> Option<Result<(u16, Value), AwsError>> {
    let ["clusters", name, "access-entries", rest @ ..] = segments else {
        return None;
    };
    let now = state.now;
    let name = decoded(name);
    let rest: Vec<String> = rest.iter().map(|s| decoded(s)).collect();
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    Some((|| {
        let cluster = cluster_mut(state, &name)?;
        api_mode(cluster)?;
        match (method, rest.as_slice()) {
            ("POST", []) => {
                let principal = body["principalArn"].as_str().unwrap_or_default();
                if !principal.starts_with("arn:aws:iam::") {
                    return Err(AwsError::invalid_parameter(format!(
                        "The principalArn parameter format is not valid: `{principal}` (an IAM user or role ARN)"
                    )));
                }
                if cluster.access_entries.contains_key(principal) {
                    return Err(AwsError::new(
                        409,
                        "ResourceInUseException",
                        format!(
                            "The specified access entry resource is already in use on this cluster. Principal ARN: {principal}"
                        ),
                    ));
                }
                let groups = body["kubernetesGroups"]
                    .as_array()
                    .map(|g| {
                        g.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                let entry = new_entry(principal, body["username"].as_str(), groups, now);
                let answer = entry_json(&name, &entry);
                cluster.access_entries.insert(principal.to_string(), entry);
                Ok((200, json!({"accessEntry": answer})))
            }
            ("GET", []) => Ok((
                200,
                json!({"accessEntries": cluster.access_entries.keys().collect::<Vec<_>>()}),
            )),
            ("GET", [principal]) => {
                let entry = entry_mut(cluster, principal)?;
                Ok((200, json!({"accessEntry": entry_json(&name, entry)})))
            }
            ("DELETE", [principal]) => {
                entry_mut(cluster, principal)?;
                cluster.access_entries.remove(*principal);
                Ok((200, json!({})))
            }
            ("POST", [principal, "access-policies"]) => {
                let policy_arn = body["policyArn"].as_str().unwrap_or_default().to_string();
                if !policy_arn.starts_with("arn:aws:eks::aws:cluster-access-policy/") {
                    return Err(AwsError::invalid_parameter(format!(
                        "The policyArn `{policy_arn}` is not an EKS access policy (arn:aws:eks::aws:cluster-access-policy/NAME)"
                    )));
                }
                if !ENFORCED.contains(&policy_arn.as_str()) {
                    return Err(AwsError::invalid_parameter(format!(
                        "the lab twin enforces AmazonEKSClusterAdminPolicy, AmazonEKSAdminPolicy, AmazonEKSEditPolicy, AmazonEKSAdminViewPolicy and AmazonEKSViewPolicy; `{policy_arn}` is not modelled, so associating it would grant nothing here"
                    )));
                }
                let scope = body["accessScope"]["type"]
                    .as_str()
                    .unwrap_or("cluster")
                    .to_string();
                let namespaces: Vec<String> = body["accessScope"]["namespaces"]
                    .as_array()
                    .map(|n| {
                        n.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                if scope == "namespace" && namespaces.is_empty() {
                    return Err(AwsError::invalid_parameter(
                        "accessScope type namespace needs at least one namespace",
                    ));
                }
                let entry = entry_mut(cluster, principal)?;
                let associated_at = entry
                    .policies
                    .get(&policy_arn)
                    .map_or(now, |p| p.associated_at);
                let policy = AssociatedPolicy {
                    policy_arn: policy_arn.clone(),
                    scope,
                    namespaces,
                    associated_at,
                    modified_at: now,
                };
                let answer = policy_json(&policy);
                entry.policies.insert(policy_arn, policy);
                Ok((
                    200,
                    json!({"clusterName": name, "principalArn": principal, "associatedAccessPolicy": answer}),
                ))
            }
            ("GET", [principal, "access-policies"]) => {
                let entry = entry_mut(cluster, principal)?;
                let policies: Vec<Value> = entry.policies.values().map(policy_json).collect();
                Ok((
                    200,
                    json!({"clusterName": name, "principalArn": principal, "associatedAccessPolicies": policies}),
                ))
            }
            ("DELETE", [principal, "access-policies", policy]) => {
                let entry = entry_mut(cluster, principal)?;
                entry.policies.remove(*policy).ok_or_else(|| AwsError::not_found(format!(
                    "The specified policy is not associated with principal {principal}: {policy}"
                )))?;
                Ok((200, json!({})))
            }
            _ => Err(AwsError::new(
                404,
                "ResourceNotFoundException",
                format!("no access-entries route for {method} {}", rest.join("/")),
            )),
        }
    })())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_usernames_are_eks_own() {
        assert_eq!(
            default_username("arn:aws:iam::123456789012:user/alice"),
            "arn:aws:iam::123456789012:user/alice"
        );
        assert_eq!(
            default_username("arn:aws:iam::123456789012:role/path/drill"),
            "arn:aws:sts::123456789012:assumed-role/drill/{{SessionName}}"
        );
    }
}
