//! Finding EKS's records in the twin's state (a cluster, an ACTIVE one, a node group), with
//! the errors EKS answers when one is missing or a name is already taken.

use super::error::AwsError;
use super::state::{AwsState, Cluster, Nodegroup};

pub(super) fn cluster_missing(name: &str) -> AwsError {
    AwsError::not_found(format!("No cluster found for name: {name}."))
}

pub(super) fn nodegroup_missing(name: &str) -> AwsError {
    AwsError::not_found(format!("No node group found for name: {name}."))
}

pub(super) fn addon_missing(cluster: &str, name: &str) -> AwsError {
    AwsError::not_found(format!("No addon: {name} found in cluster: {cluster}"))
}

/// EKS's 409 for a name that is taken or a resource that is busy.
pub(super) fn in_use(message: String) -> AwsError {
    AwsError::new(409, "ResourceInUseException", message)
}

pub(super) fn cluster<'a>(state: &'a AwsState, name: &str) -> Result<&'a Cluster, AwsError> {
    state
        .clusters
        .get(name)
        .ok_or_else(|| cluster_missing(name))
}

pub(super) fn cluster_mut<'a>(
    state: &'a mut AwsState,
    name: &str,
) -> Result<&'a mut Cluster, AwsError> {
    state
        .clusters
        .get_mut(name)
        .ok_or_else(|| cluster_missing(name))
}

/// A cluster that may take new node groups and add-ons: one that exists and is ACTIVE.
pub(super) fn active_cluster<'a>(state: &'a AwsState, name: &str) -> Result<&'a Cluster, AwsError> {
    let cluster = cluster(state, name)?;
    if cluster.config.status != "ACTIVE" {
        return Err(AwsError::new(
            400,
            "InvalidRequestException",
            format!(
                "Cluster '{name}' is in {} status; it must be ACTIVE",
                cluster.config.status
            ),
        ));
    }
    Ok(cluster)
}

/// A node group of a cluster that exists (a missing cluster is the error then).
pub(super) fn nodegroup<'a>(
    state: &'a AwsState,
    cluster_name: &str,
    name: &str,
) -> Result<&'a Nodegroup, AwsError> {
    cluster(state, cluster_name)?;
    state
        .nodegroups
        .get(&(cluster_name.to_string(), name.to_string()))
        .ok_or_else(|| nodegroup_missing(name))
}

/// The names of a cluster's node groups, in order.
pub(super) fn nodegroup_names<'a>(state: &'a AwsState, cluster: &str) -> Vec<&'a String> {
    state
        .nodegroups
        .keys()
        .filter(|(c, _)| c == cluster)
        .map(|(_, n)| n)
        .collect()
}
