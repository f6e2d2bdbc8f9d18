//! UpdateClusterConfig for a cluster's control plane logs (LoggingUpdate) and its endpoint's
//! access (EndpointAccessUpdate): one kind of change a call, InProgress while the cluster is
//! UPDATING, applied once the twin's timer finishes it.
//!
//! Words, as EKS answered them: "No changes needed for the logging config provided"
//! (aws-quickstart/quickstart-amazon-eks-cluster-resource-provider#38); "Cluster is already at
//! the desired configuration with endpointPrivateAccess: true , endpointPublicAccess: true, and
//! Public Endpoint Restrictions: [0.0.0.0/0]" (the aws CLI's output, quoted in public scripts
//! that tolerate it); "Only one type of update can be allowed." (a logging and a VPC change in
//! one call: aws/aws-cdk#20779, cloud-custodian/cloud-custodian#9250); "Cannot LoggingUpdate
//! because cluster xxx currently has update in progress" (cloud-custodian#9250). A log type EKS
//! does not know and a change the twin does not serve (subnets, security groups, access or
//! upgrade policy) are answered in the twin's words.

use std::time::Duration;

use serde_json::{Value, json};

use super::cluster_settings::{ClusterSettings, LOG_TYPES, clusters_logging};
use super::eks_lifecycle::strings;
use super::eks_records::{active_cluster, cluster, in_use};
use super::error::AwsError;
use super::state::{AwsState, AwsTimer, Update};

/// The categories of UpdateClusterConfig's body, of which one call may carry one.
const CATEGORIES: [&str; 9] = [
    "resourcesVpcConfig",
    "logging",
    "accessConfig",
    "upgradePolicy",
    "zonalShiftConfig",
    "computeConfig",
    "kubernetesNetworkConfig",
    "storageConfig",
    "remoteNetworkConfig",
];

/// How long each update takes on the twin's clock (the twin's choice: EKS gives no figure).
const LOGGING_TAKES: Duration = Duration::from_secs(60);
const ENDPOINT_TAKES: Duration = Duration::from_secs(120);

/// An update's kind (`LoggingUpdate`) and its params, as EKS lists them.
type Change = (&'static str, Vec<(String, String)>);

/// The enabled log types after a `clusterLogging` list is applied to `current`.
fn logs_after(current: &[String], groups: &Value) -> Result<Vec<String>, AwsError> {
    let mut enabled: Vec<String> = current.to_vec();
    for group in groups.as_array().into_iter().flatten() {
        let on = group["enabled"].as_bool().unwrap_or(false);
        for kind in strings(&group["types"]) {
            if !LOG_TYPES.contains(&kind.as_str()) {
                return Err(AwsError::invalid_parameter(format!(
                    "Unknown log type {kind}: the types are {}",
                    LOG_TYPES.join(", ")
                )));
            }
            enabled.retain(|e| *e != kind);
            if on {
                enabled.push(kind);
            }
        }
    }
    Ok(LOG_TYPES
        .iter()
        .filter(|t| enabled.iter().any(|e| e == *t))
        .map(|t| (*t).to_string())
        .collect())
}

/// The update's kind and params a body asks for, checked against the cluster's settings.
fn change(settings: &ClusterSettings, body: &Value) -> Result<Change, AwsError> {
    let asked: Vec<&str> = CATEGORIES
        .iter()
        .copied()
        .filter(|c| !body[*c].is_null())
        .collect();
    match asked.as_slice() {
        ["logging"] => {
            let enabled = logs_after(&settings.enabled_logs, &body["logging"]["clusterLogging"])?;
            if enabled == settings.enabled_logs {
                return Err(AwsError::invalid_parameter(
                    "No changes needed for the logging config provided",
                ));
            }
            let value = Value::Array(clusters_logging(&enabled)).to_string();
            Ok(("LoggingUpdate", vec![("ClusterLogging".into(), value)]))
        }
        ["resourcesVpcConfig"] => endpoint_change(settings, &body["resourcesVpcConfig"]),
        [] | [_] => Err(AwsError::invalid_parameter(format!(
            "the lab twin's UpdateClusterConfig changes logging and resourcesVpcConfig endpoint access, not {}",
            asked.first().copied().unwrap_or("nothing")
        ))),
        _ => Err(AwsError::invalid_parameter(
            "Only one type of update can be allowed.",
        )),
    }
}

/// An EndpointAccessUpdate's params: each endpoint field as it will be.
fn endpoint_change(settings: &ClusterSettings, vpc_config: &Value) -> Result<Change, AwsError> {
    if !vpc_config["subnetIds"].is_null() || !vpc_config["securityGroupIds"].is_null() {
        return Err(AwsError::invalid_parameter(
            "the lab twin's UpdateClusterConfig changes endpoint access, not subnets or security groups",
        ));
    }
    let public = vpc_config["endpointPublicAccess"]
        .as_bool()
        .unwrap_or(settings.public_access);
    let private = vpc_config["endpointPrivateAccess"]
        .as_bool()
        .unwrap_or(settings.private_access);
    let cidrs = if vpc_config["publicAccessCidrs"].is_null() {
        settings.public_cidrs.clone()
    } else {
        strings(&vpc_config["publicAccessCidrs"])
    };
    if (public, private, &cidrs)
        == (
            settings.public_access,
            settings.private_access,
            &settings.public_cidrs,
        )
    {
        return Err(AwsError::invalid_parameter(format!(
            "Cluster is already at the desired configuration with endpointPrivateAccess: {private} , endpointPublicAccess: {public}, and Public Endpoint Restrictions: [{}]",
            cidrs.join(", ")
        )));
    }
    Ok((
        "EndpointAccessUpdate",
        vec![
            ("EndpointPublicAccess".into(), public.to_string()),
            ("EndpointPrivateAccess".into(), private.to_string()),
            ("PublicAccessCidrs".into(), json!(cidrs).to_string()),
        ],
    ))
}

/// UpdateClusterConfig: the cluster turns UPDATING and the update InProgress until `finish`.
pub(crate) fn update_cluster_config(
    state: &mut AwsState,
    name: &str,
    body: &Value,
) -> Result<Update, AwsError> {
    let found = cluster(state, name)?;
    let (kind, params) = change(&found.settings, body)?;
    let busy = state
        .updates
        .values()
        .any(|u| u.cluster == name && u.nodegroup.is_none() && u.status == "InProgress");
    if busy || found.config.status == "UPDATING" {
        return Err(in_use(format!(
            "Cannot {kind} because cluster {name} currently has update in progress"
        )));
    }
    active_cluster(state, name)?;
    let id = state.next_uuid();
    let update = Update {
        id: id.clone(),
        errors: Vec::new(),
        cluster: name.into(),
        nodegroup: None,
        kind: kind.into(),
        status: "InProgress".into(),
        params,
        created_at: state.now,
    };
    state.updates.insert(id.clone(), update.clone());
    if let Some(c) = state.clusters.get_mut(name) {
        c.config.status = "UPDATING".into();
    }
    let takes = if kind == "LoggingUpdate" {
        LOGGING_TAKES
    } else {
        ENDPOINT_TAKES
    };
    state.schedule(takes, AwsTimer::UpdateDone { update: id });
    Ok(update)
}

/// A cluster's update is done: Successful, its settings as the update's params say, ACTIVE.
pub(crate) fn finish(state: &mut AwsState, update: &Update) {
    if let Some(u) = state.updates.get_mut(&update.id) {
        u.status = "Successful".into();
    }
    let Some(c) = state.clusters.get_mut(&update.cluster) else {
        return;
    };
    c.config.status = "ACTIVE".into();
    let settings = &mut c.settings;
    for (kind, value) in &update.params {
        match kind.as_str() {
            "ClusterLogging" => {
                let groups: Value = serde_json::from_str(value).unwrap_or(Value::Null);
                if let Ok(enabled) = logs_after(&[], &groups) {
                    settings.enabled_logs = enabled;
                }
            }
            "EndpointPublicAccess" => settings.public_access = value == "true",
            "EndpointPrivateAccess" => settings.private_access = value == "true",
            "PublicAccessCidrs" => {
                settings.public_cidrs =
                    strings(&serde_json::from_str(value).unwrap_or(Value::Null));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logging_changes_are_checked_and_an_unchanged_config_is_refused_in_eks_words() {
        let settings = ClusterSettings::default();
        let body =
            json!({"logging": {"clusterLogging": [{"types": ["api", "audit"], "enabled": true}]}});
        let (kind, params) = change(&settings, &body).expect("a change");
        assert_eq!(kind, "LoggingUpdate");
        assert_eq!(
            params[0].1,
            r#"[{"enabled":true,"types":["api","audit","scheduler"]},{"enabled":false,"types":["authenticator","controllerManager"]}]"#
        );
        let same = json!({"logging": {"clusterLogging": [{"types": ["api"], "enabled": true}]}});
        assert_eq!(
            change(&settings, &same).expect_err("no change").message,
            "No changes needed for the logging config provided"
        );
        let both = json!({"logging": {}, "resourcesVpcConfig": {}});
        assert_eq!(
            change(&settings, &both).expect_err("two kinds").message,
            "Only one type of update can be allowed."
        );
        let endpoint = json!({"resourcesVpcConfig": {"endpointPublicAccess": true}});
        assert_eq!(
            change(&settings, &endpoint).expect_err("no change").message,
            "Cluster is already at the desired configuration with endpointPrivateAccess: true , endpointPublicAccess: true, and Public Endpoint Restrictions: [0.0.0.0/0]"
        );
        let private = json!({"resourcesVpcConfig": {"endpointPublicAccess": false}});
        assert_eq!(
            change(&settings, &private).map(|(kind, _)| kind).ok(),
            Some("EndpointAccessUpdate")
        );
    }
}
