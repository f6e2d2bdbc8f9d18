//! A node group's Kubernetes version and AMI release: UpdateNodegroupVersion's checks, its
//! VersionUpdate (InProgress, then Successful on the twin's timers, as UpdateNodegroupConfig's
//! updates go) and the version the node group shows once it has finished.
//!
//! Words: a release of another Kubernetes version is "Requested release version
//! 1.31.3-20250103 is not valid for kubernetes version 1.30." (EKS through CloudFormation,
//! eksctl-io/eksctl#7976). EKS refuses a node group version newer than its control plane with
//! InvalidParameterException (the EKS user guide: nodes may not be newer than the control
//! plane), but its words for that have not been seen: the twin's follow EKS's for a release
//! the control plane does not allow, "Requested Nodegroup release version 1.17.9-20200723 is
//! invalid. Allowed release version is 1.16.13-20200723" (hashicorp/terraform-provider-aws
//! #14492), with the version in place of the release.

use std::time::Duration;

use serde_json::Value;

use super::ami_releases::release_for;
use super::eks_records::{cluster, in_use, nodegroup};
use super::error::AwsError;
use super::state::{AwsState, AwsTimer, Update, join_delay};

/// `(major, minor)` of a Kubernetes version as EKS names them (`1.35`).
fn minor_of(version: &str) -> Option<(u32, u32)> {
    let (major, minor) = version.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The version and release an UpdateNodegroupVersion body asks for, checked against the
/// cluster's version: `(version, release)`.
fn wanted(body: &Value, cluster_version: &str) -> Result<(String, String), AwsError> {
    let version = body["version"].as_str().unwrap_or(cluster_version);
    let newer = match (minor_of(version), minor_of(cluster_version)) {
        (Some(asked), Some(control_plane)) => asked > control_plane,
        _ => version != cluster_version,
    };
    if newer {
        return Err(AwsError::invalid_parameter(format!(
            "Requested Nodegroup version {version} is invalid. Allowed version is {cluster_version}"
        )));
    }
    let release = match body["releaseVersion"].as_str() {
        None => release_for(version),
        Some(release) if release.starts_with(&format!("{version}.")) => release.to_string(),
        Some(release) => {
            return Err(AwsError::invalid_parameter(format!(
                "Requested release version {release} is not valid for kubernetes version {version}."
            )));
        }
    };
    Ok((version.to_string(), release))
}

/// UpdateNodegroupVersion: the node group turns UPDATING and the update InProgress; both finish
/// once each of its nodes has had the time a new one takes to join (`finish`).
pub(crate) fn update_nodegroup_version(
    state: &mut AwsState,
    cluster_name: &str,
    name: &str,
    body: &Value,
) -> Result<Update, AwsError> {
    let current = nodegroup(state, cluster_name, name)?.clone();
    let cluster_version = cluster(state, cluster_name)?.config.version.clone();
    let (version, release) = wanted(body, &cluster_version)?;
    if current.status == "UPDATING" {
        return Err(in_use(format!(
            "Nodegroup {name} is currently being updated"
        )));
    }
    let id = state.next_uuid();
    let update = Update {
        id: id.clone(),
        errors: Vec::new(),
        cluster: cluster_name.into(),
        nodegroup: Some(name.into()),
        kind: "VersionUpdate".into(),
        status: "InProgress".into(),
        params: vec![
            ("Version".into(), version),
            ("ReleaseVersion".into(), release),
        ],
        created_at: state.now,
    };
    state.updates.insert(id.clone(), update.clone());
    let now = state.now;
    if let Some(ng) = state
        .nodegroups
        .get_mut(&(cluster_name.to_string(), name.to_string()))
    {
        ng.status = "UPDATING".into();
        ng.modified_at = now;
    }
    // EKS replaces the nodes one at a time: each takes what a new node takes to join.
    let nodes = u32::try_from(state.live_instances(name).len().max(1)).unwrap_or(u32::MAX);
    let takes = join_delay(&current.instance_type).saturating_mul(nodes) + Duration::from_secs(30);
    state.schedule(takes, AwsTimer::UpdateDone { update: id });
    Ok(update)
}

/// A finished VersionUpdate: the node group shows the version and release it asked for.
pub(crate) fn finish(state: &mut AwsState, update: &Update) {
    let Some(name) = &update.nodegroup else {
        return;
    };
    let param = |kind: &str| {
        update
            .params
            .iter()
            .find(|(t, _)| t == kind)
            .map(|(_, v)| v.clone())
    };
    if let Some(ng) = state
        .nodegroups
        .get_mut(&(update.cluster.clone(), name.clone()))
    {
        if let Some(version) = param("Version") {
            ng.version = version;
        }
        if let Some(release) = param("ReleaseVersion") {
            ng.release_version = release;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_version_newer_than_the_control_plane_is_refused_and_the_release_must_match() {
        let refused = wanted(&json!({"version": "1.99"}), "1.35").expect_err("newer");
        assert_eq!(refused.code, "InvalidParameterException");
        assert_eq!(
            refused.message,
            "Requested Nodegroup version 1.99 is invalid. Allowed version is 1.35"
        );
        // 1.100 is newer than 1.35 though it sorts before it as text.
        assert!(wanted(&json!({"version": "1.100"}), "1.35").is_err());
        assert_eq!(
            wanted(&json!({}), "1.35").ok(),
            Some((
                "1.35".to_string(),
                super::super::ami_releases::LAB_RELEASE.to_string()
            ))
        );
        assert_eq!(
            wanted(&json!({"version": "1.34"}), "1.35")
                .ok()
                .map(|(_, r)| r),
            Some("1.34.0-20260320".to_string())
        );
        let release = wanted(&json!({"releaseVersion": "1.31.3-20250103"}), "1.35")
            .expect_err("another version's release");
        assert_eq!(
            release.message,
            "Requested release version 1.31.3-20250103 is not valid for kubernetes version 1.35."
        );
    }
}
