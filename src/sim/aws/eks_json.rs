//! How EKS shows its records on the wire: clusters, node groups, updates and add-ons as the
//! rest-json objects its answers carry.

use serde_json::{Value, json};

use super::eks_records::addon_missing;
use super::error::AwsError;
use super::state::{Cluster, Nodegroup, Update};
use super::wire::epoch;
use crate::lab;

fn cluster_arn(name: &str) -> String {
    format!(
        "arn:aws:eks:{}:{}:cluster/{name}",
        lab::REGION,
        lab::ACCOUNT_ID
    )
}

/// The base64 PEM of the CA the cluster's API server is signed by: the twin's own for the
/// lab's cluster once it serves (so a client that trusts it reaches the twin), else a
/// placeholder.
fn certificate_authority(c: &Cluster, ca_pem: Option<&str>) -> String {
    use base64::Engine;
    let pem = match ca_pem {
        Some(pem) if c.config.name == lab::CLUSTER_NAME => pem,
        _ => "-----BEGIN CERTIFICATE-----\ntwin\n-----END CERTIFICATE-----\n",
    };
    base64::engine::general_purpose::STANDARD.encode(pem)
}

pub(super) fn cluster_json(c: &Cluster, ca_pem: Option<&str>) -> Value {
    let mut json = cluster_fields(c, ca_pem);
    if c.config.status == "CREATING" {
        // EKS has no endpoint, CA or issuer to show until the control plane is up.
        if let Some(fields) = json.as_object_mut() {
            fields.remove("endpoint");
            fields.remove("certificateAuthority");
            fields.remove("identity");
        }
    }
    json
}

fn cluster_fields(c: &Cluster, ca_pem: Option<&str>) -> Value {
    let mut json = json!({
        "name": c.config.name,
        "arn": cluster_arn(&c.config.name),
        "createdAt": epoch(c.created_at),
        "version": c.config.version,
        "endpoint": c.config.endpoint,
        "roleArn": c.config.role_arn,
        "resourcesVpcConfig": {
            "subnetIds": c.config.subnets,
            "securityGroupIds": c.config.security_groups,
            "clusterSecurityGroupId": c.config.cluster_security_group,
            "vpcId": c.config.vpc,
        },
        "kubernetesNetworkConfig": {"serviceIpv4Cidr": "10.100.0.0/16", "ipFamily": "ipv4"},
        "logging": c.settings.logging_json(),
        "identity": {"oidc": {"issuer": c.config.oidc_issuer}},
        "status": c.config.status,
        "certificateAuthority": {"data": certificate_authority(c, ca_pem)},
        "platformVersion": c.config.platform_version,
        "tags": {"terraform-aws-modules": "eks", "Name": c.config.name},
        "health": {"issues": []},
        "accessConfig": {"authenticationMode": c.config.authentication_mode},
    });
    c.settings.fill_vpc_config(&mut json["resourcesVpcConfig"]);
    if let Some(remote) = &c.config.remote_network {
        json["remoteNetworkConfig"] = json!({
            "remoteNodeNetworks": [{"cidrs": remote.node_cidrs}],
            "remotePodNetworks": [{"cidrs": remote.pod_cidrs}],
        });
    }
    if let Some(key) = &c.config.secrets_key {
        json["encryptionConfig"] =
            serde_json::json!([{"resources": ["secrets"], "provider": {"keyArn": key}}]);
    }
    json
}

pub(super) fn nodegroup_json(ng: &Nodegroup) -> Value {
    let labels: serde_json::Map<String, Value> = ng
        .labels
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let mut answer = json!({
        "nodegroupName": ng.name,
        "nodegroupArn": format!("arn:aws:eks:{}:{}:nodegroup/{}/{}/{}", lab::REGION, lab::ACCOUNT_ID, ng.cluster, ng.name, ng.uuid),
        "clusterName": ng.cluster,
        "version": ng.version,
        "releaseVersion": ng.release_version,
        "createdAt": epoch(ng.created_at),
        "modifiedAt": epoch(ng.modified_at),
        "status": ng.status,
        "capacityType": "ON_DEMAND",
        "scalingConfig": {"minSize": ng.min, "maxSize": ng.max, "desiredSize": ng.desired},
        "instanceTypes": [ng.instance_type],
        "subnets": ng.subnets,
        "amiType": ng.ami_type,
        "nodeRole": ng.node_role,
        "labels": labels,
        "taints": taints_json(ng),
        "resources": {"autoScalingGroups": [{"name": auto_scaling_group(ng)}]},
        "diskSize": 20,
        "health": {"issues": health_issues_json(ng)},
        "updateConfig": ng.update_config.clone().unwrap_or_else(|| json!({"maxUnavailable": 1})),
        "tags": {},
    });
    if let Some(repair) = &ng.node_repair {
        answer["nodeRepairConfig"] = repair.clone();
    }
    if let Some(template) = &ng.launch_template {
        // EKS takes the disk from the template then, and answers without diskSize.
        answer["launchTemplate"] =
            json!({"name": template.name, "version": template.version, "id": template.id});
        if let Some(map) = answer.as_object_mut() {
            map.remove("diskSize");
        }
    }
    answer
}

/// The node group's Auto Scaling group, as EKS names it.
fn auto_scaling_group(ng: &Nodegroup) -> String {
    format!("eks-{}-{}", ng.name, ng.uuid)
}

/// Taints with EKS's effects (`NO_SCHEDULE`), where the twin keeps Kubernetes' (`NoSchedule`).
fn taints_json(ng: &Nodegroup) -> Vec<Value> {
    ng.taints
        .iter()
        .map(|(k, v, e)| json!({"key": k, "value": v, "effect": e.replace("NoSchedule", "NO_SCHEDULE").replace("NoExecute", "NO_EXECUTE")}))
        .collect()
}

fn health_issues_json(ng: &Nodegroup) -> Vec<Value> {
    ng.health_issues
        .iter()
        .map(|(code, message)| {
            json!({"code": code, "message": message, "resourceIds": [auto_scaling_group(ng)]})
        })
        .collect()
}

pub(super) fn update_json(update: &Update) -> Value {
    json!({
        "id": update.id,
        "status": update.status,
        "type": update.kind,
        "params": update.params.iter().map(|(t, v)| json!({"type": t, "value": v})).collect::<Vec<_>>(),
        "createdAt": epoch(update.created_at),
        "errors": update.errors.iter().map(|(code, message, ids)| json!({"errorCode": code, "errorMessage": message, "resourceIds": ids})).collect::<Vec<_>>(),
    })
}

pub(super) fn addon_json(cluster: &Cluster, name: &str) -> Result<Value, AwsError> {
    let addon = cluster
        .addons
        .get(name)
        .ok_or_else(|| addon_missing(&cluster.config.name, name))?;
    let mut json = json!({
        "addonName": addon.name,
        "clusterName": cluster.config.name,
        "status": addon.status,
        "addonVersion": addon.version,
        "health": {"issues": []},
        "addonArn": format!("arn:aws:eks:{}:{}:addon/{}/{}/{}", lab::REGION, lab::ACCOUNT_ID, cluster.config.name, addon.name, "a1b2c3d4"),
        "createdAt": epoch(addon.created_at),
        "modifiedAt": epoch(addon.created_at),
        "tags": {},
    });
    if let Some(values) = &addon.configuration_values {
        json["configurationValues"] = json!(values);
    }
    Ok(json)
}

/// An add-on of the lab's catalog as DescribeAddonVersions lists it: its versions, the first
/// the default.
pub(super) fn addon_versions_json(name: &str, versions: &[String]) -> Value {
    let listed: Vec<Value> = versions
        .iter()
        .enumerate()
        .map(|(i, version)| json!({
            "addonVersion": version,
            "architecture": ["amd64", "arm64"],
            "compatibilities": [{"clusterVersion": lab::KUBERNETES_VERSION, "platformVersions": ["*"], "defaultVersion": i == 0}],
        }))
        .collect();
    json!({"addonName": name, "type": "networking", "addonVersions": listed})
}
