//! EKS access entries: which IAM principal is who inside the cluster (username, groups) and
//! which EKS access policies it holds. The Kubernetes side authenticates EKS tokens through
//! them; the cluster's creator gets one with cluster admin, as `bootstrapClusterCreatorAdminPermissions`
//! does by default.

use std::collections::BTreeMap;
use std::time::Duration;

use percent_encoding::percent_decode_str;
use serde_json::{Value, json};

use super::eks::Answer;
use super::eks_lifecycle::strings;
use super::eks_records::{cluster_mut, in_use};
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
pub(crate) fn creator_entry(principal_arn: &str, now: Duration) -> AccessEntry {
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
    now: Duration,
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
) -> Option<Answer> {
    let ["clusters", name, "access-entries", rest @ ..] = segments else {
        return None;
    };
    let call = Call {
        cluster: decoded(name),
        body,
        now: state.now,
    };
    let rest: Vec<String> = rest.iter().map(|s| decoded(s)).collect();
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    Some(cluster_mut(state, &call.cluster).and_then(|cluster| {
        api_mode(cluster)?;
        route(cluster, &call, method, &rest)
    }))
}

/// A request under a cluster's `access-entries`: the cluster's (decoded) name, the body and
/// the virtual time.
struct Call<'a> {
    cluster: String,
    body: &'a Value,
    now: Duration,
}

/// The action a method and the (decoded) path under `access-entries/` name.
fn route(cluster: &mut Cluster, call: &Call<'_>, method: &str, rest: &[&str]) -> Answer {
    match (method, rest) {
        ("POST", []) => create_entry(cluster, call),
        ("GET", []) => list_entries(cluster),
        ("GET", [principal]) => describe_entry(cluster, call, principal),
        ("DELETE", [principal]) => delete_entry(cluster, principal),
        ("POST", [principal, "access-policies"]) => associate_policy(cluster, call, principal),
        ("GET", [principal, "access-policies"]) => list_policies(cluster, call, principal),
        ("DELETE", [principal, "access-policies", policy]) => {
            disassociate_policy(cluster, principal, policy)
        }
        _ => Err(AwsError::new(
            404,
            "ResourceNotFoundException",
            format!("no access-entries route for {method} {}", rest.join("/")),
        )),
    }
}

fn create_entry(cluster: &mut Cluster, call: &Call<'_>) -> Answer {
    let principal = call.body["principalArn"].as_str().unwrap_or_default();
    if !principal.starts_with("arn:aws:iam::") {
        return Err(AwsError::invalid_parameter(format!(
            "The principalArn parameter format is not valid: `{principal}` (an IAM user or role ARN)"
        )));
    }
    if cluster.access_entries.contains_key(principal) {
        return Err(in_use(format!(
            "The specified access entry resource is already in use on this cluster. Principal ARN: {principal}"
        )));
    }
    let groups = strings(&call.body["kubernetesGroups"]);
    let entry = new_entry(principal, call.body["username"].as_str(), groups, call.now);
    let answer = entry_json(&call.cluster, &entry);
    cluster.access_entries.insert(principal.to_string(), entry);
    Ok((200, json!({"accessEntry": answer})))
}

fn list_entries(cluster: &Cluster) -> Answer {
    Ok((
        200,
        json!({"accessEntries": cluster.access_entries.keys().collect::<Vec<_>>()}),
    ))
}

fn describe_entry(cluster: &mut Cluster, call: &Call<'_>, principal: &str) -> Answer {
    let entry = entry_mut(cluster, principal)?;
    Ok((
        200,
        json!({"accessEntry": entry_json(&call.cluster, entry)}),
    ))
}

fn delete_entry(cluster: &mut Cluster, principal: &str) -> Answer {
    entry_mut(cluster, principal)?;
    cluster.access_entries.remove(principal);
    Ok((200, json!({})))
}

/// AssociateAccessPolicy: one of the policies the twin enforces, for the cluster or some
/// namespaces; associating it again changes its scope and keeps when it was first associated.
fn associate_policy(cluster: &mut Cluster, call: &Call<'_>, principal: &str) -> Answer {
    let policy_arn = call.body["policyArn"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    enforced_policy(&policy_arn)?;
    let scope = call.body["accessScope"]["type"]
        .as_str()
        .unwrap_or("cluster")
        .to_string();
    let namespaces = strings(&call.body["accessScope"]["namespaces"]);
    if scope == "namespace" && namespaces.is_empty() {
        return Err(AwsError::invalid_parameter(
            "accessScope type namespace needs at least one namespace",
        ));
    }
    let entry = entry_mut(cluster, principal)?;
    let associated_at = entry
        .policies
        .get(&policy_arn)
        .map_or(call.now, |p| p.associated_at);
    let policy = AssociatedPolicy {
        policy_arn: policy_arn.clone(),
        scope,
        namespaces,
        associated_at,
        modified_at: call.now,
    };
    let answer = policy_json(&policy);
    entry.policies.insert(policy_arn, policy);
    Ok((
        200,
        json!({"clusterName": call.cluster, "principalArn": principal, "associatedAccessPolicy": answer}),
    ))
}

/// An EKS access policy ARN, and one the twin enforces (see `sim::kube::authorization`).
fn enforced_policy(policy_arn: &str) -> Result<(), AwsError> {
    if !policy_arn.starts_with("arn:aws:eks::aws:cluster-access-policy/") {
        return Err(AwsError::invalid_parameter(format!(
            "The policyArn `{policy_arn}` is not an EKS access policy (arn:aws:eks::aws:cluster-access-policy/NAME)"
        )));
    }
    if !ENFORCED.contains(&policy_arn) {
        return Err(AwsError::invalid_parameter(format!(
            "the lab twin enforces AmazonEKSClusterAdminPolicy, AmazonEKSAdminPolicy, AmazonEKSEditPolicy, AmazonEKSAdminViewPolicy and AmazonEKSViewPolicy; `{policy_arn}` is not modelled, so associating it would grant nothing here"
        )));
    }
    Ok(())
}

fn list_policies(cluster: &mut Cluster, call: &Call<'_>, principal: &str) -> Answer {
    let entry = entry_mut(cluster, principal)?;
    let policies: Vec<Value> = entry.policies.values().map(policy_json).collect();
    Ok((
        200,
        json!({"clusterName": call.cluster, "principalArn": principal, "associatedAccessPolicies": policies}),
    ))
}

fn disassociate_policy(cluster: &mut Cluster, principal: &str, policy: &str) -> Answer {
    let entry = entry_mut(cluster, principal)?;
    entry.policies.remove(policy).ok_or_else(|| {
        AwsError::not_found(format!(
            "The specified policy is not associated with principal {principal}: {policy}"
        ))
    })?;
    Ok((200, json!({})))
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
