//! EKS over rest-json: clusters, node groups (with scaling), updates and add-ons.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::error::AwsError;
use super::state::{AwsState, Cluster, Nodegroup, Update};
use super::wire::epoch;
use super::{access_entries, eks_lifecycle, nodegroups, pod_identity};
use crate::lab;

fn cluster_arn(name: &str) -> String {
    format!(
        "arn:aws:eks:{}:{}:cluster/{name}",
        lab::REGION,
        lab::ACCOUNT_ID
    )
}

fn cluster<'a>(state: &'a AwsState, name: &str) -> Result<&'a Cluster, AwsError> {
    state
        .clusters
        .get(name)
        .ok_or_else(|| AwsError::not_found(format!("No cluster found for name: {name}.")))
}

fn nodegroup<'a>(
    state: &'a AwsState,
    cluster_name: &str,
    name: &str,
) -> Result<&'a Nodegroup, AwsError> {
    cluster(state, cluster_name)?;
    state
        .nodegroups
        .get(&(cluster_name.to_string(), name.to_string()))
        .ok_or_else(|| AwsError::not_found(format!("No node group found for name: {name}.")))
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

fn cluster_json(c: &Cluster, ca_pem: Option<&str>) -> Value {
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
            "endpointPublicAccess": true,
            "endpointPrivateAccess": true,
            "publicAccessCidrs": ["0.0.0.0/0"],
        },
        "kubernetesNetworkConfig": {"serviceIpv4Cidr": "10.100.0.0/16", "ipFamily": "ipv4"},
        "logging": {"clusterLogging": [
            {"types": ["api", "scheduler"], "enabled": true},
            {"types": ["audit", "authenticator", "controllerManager"], "enabled": false},
        ]},
        "identity": {"oidc": {"issuer": c.config.oidc_issuer}},
        "status": c.config.status,
        "certificateAuthority": {"data": certificate_authority(c, ca_pem)},
        "platformVersion": c.config.platform_version,
        "tags": {"terraform-aws-modules": "eks", "Name": c.config.name},
        "health": {"issues": []},
        "accessConfig": {"authenticationMode": c.config.authentication_mode},
    });
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
    let taints: Vec<Value> = ng
        .taints
        .iter()
        .map(|(k, v, e)| json!({"key": k, "value": v, "effect": e.replace("NoSchedule", "NO_SCHEDULE").replace("NoExecute", "NO_EXECUTE")}))
        .collect();
    let mut answer = json!({
        "nodegroupName": ng.name,
        "nodegroupArn": format!("arn:aws:eks:{}:{}:nodegroup/{}/{}/{}", lab::REGION, lab::ACCOUNT_ID, ng.cluster, ng.name, ng.uuid),
        "clusterName": ng.cluster,
        "version": lab::KUBERNETES_VERSION,
        "releaseVersion": "1.35.3-20260320",
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
        "taints": taints,
        "resources": {"autoScalingGroups": [{"name": format!("eks-{}-{}", ng.name, ng.uuid)}]},
        "diskSize": 20,
        "health": {"issues": ng.health_issues.iter().map(|(code, message)| json!({
            "code": code, "message": message,
            "resourceIds": [format!("eks-{}-{}", ng.name, ng.uuid)],
        })).collect::<Vec<_>>()},
        "updateConfig": {"maxUnavailable": 1},
        "tags": {},
    });
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

fn update_json(update: &Update) -> Value {
    json!({
        "id": update.id,
        "status": update.status,
        "type": update.kind,
        "params": update.params.iter().map(|(t, v)| json!({"type": t, "value": v})).collect::<Vec<_>>(),
        "createdAt": epoch(update.created_at),
        "errors": update.errors.iter().map(|(code, message, ids)| json!({"errorCode": code, "errorMessage": message, "resourceIds": ids})).collect::<Vec<_>>(),
    })
}

fn addon_json(cluster: &Cluster, name: &str) -> Result<Value, AwsError> {
    let addon = cluster.addons.get(name).ok_or_else(|| {
        AwsError::not_found(format!(
            "No addon: {name} found in cluster: {}",
            cluster.config.name
        ))
    })?;
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

fn int_field(body: &Value, path: &[&str]) -> Result<Option<i64>, AwsError> {
    let mut current = body;
    for key in path {
        current = &current[*key];
    }
    match current {
        Value::Null => Ok(None),
        Value::Number(n) => n.as_i64().map(Some).ok_or_else(|| {
            AwsError::invalid_parameter(format!("{} must be an integer", path.join(".")))
        }),
        _ => Err(AwsError::invalid_parameter(format!(
            "{} must be an integer",
            path.join(".")
        ))),
    }
}

/// Serves one EKS request: `(HTTP status, JSON body)` or an error. A call that carries a
/// `clientRequestToken` it carried before gets the first answer again, as EKS does, so a
/// client that retries a create or an update whose answer it lost changes nothing twice.
pub(crate) fn handle(
    state: &mut AwsState,
    caller: &str,
    method: &str,
    path: &str,
    query: &BTreeMap<String, String>,
    body: &Value,
) -> Result<(u16, Value), AwsError> {
    let Some(token) = body["clientRequestToken"]
        .as_str()
        .filter(|t| !t.is_empty())
    else {
        return serve(state, caller, method, path, query, body);
    };
    let key = format!("{method} {path} {token}");
    if let Some((first_body, answer)) = state.idempotent.get(&key) {
        if first_body != body {
            return Err(AwsError::new(
                400,
                "InvalidParameterException",
                format!("clientRequestToken {token} was used before with other parameters"),
            ));
        }
        return Ok(answer.clone());
    }
    let answer = serve(state, caller, method, path, query, body)?;
    state.idempotent.insert(key, (body.clone(), answer.clone()));
    Ok(answer)
}

/// `caller` is the ARN of the principal that signed the call.
fn serve(
    state: &mut AwsState,
    caller: &str,
    method: &str,
    path: &str,
    query: &BTreeMap<String, String>,
    body: &Value,
) -> Result<(u16, Value), AwsError> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    if let ["clusters", name, rest @ ..] = segments.as_slice() {
        let parameter = if rest.is_empty() {
            "name"
        } else {
            "clusterName"
        };
        super::parameters::cluster_name(parameter, name)?;
    }
    if let (["clusters"], Some(name)) = (segments.as_slice(), body["name"].as_str())
        && method == "POST"
    {
        super::parameters::cluster_name("name", name)?;
        super::parameters::cluster_name_length(name)?;
    }
    if let Some(answer) = access_entries::serve(state, method, &segments, body) {
        return answer;
    }
    if let Some(answer) = pod_identity::serve(state, method, &segments, query, body) {
        return answer;
    }
    match (method, segments.as_slice()) {
        ("POST", ["clusters"]) => {
            let created = eks_lifecycle::create_cluster(state, caller, body)?;
            Ok((
                200,
                json!({"cluster": cluster_json(&created, state.kube_ca_pem.as_deref())}),
            ))
        }
        ("DELETE", ["clusters", name]) => {
            let deleted = eks_lifecycle::delete_cluster(state, name)?;
            Ok((
                200,
                json!({"cluster": cluster_json(&deleted, state.kube_ca_pem.as_deref())}),
            ))
        }
        ("POST", ["clusters", name, "node-groups"]) => {
            let created = eks_lifecycle::create_nodegroup(state, name, body)?;
            Ok((200, json!({"nodegroup": nodegroup_json(&created)})))
        }
        ("DELETE", ["clusters", name, "node-groups", ng]) => {
            let deleted = eks_lifecycle::delete_nodegroup(state, name, ng)?;
            Ok((200, json!({"nodegroup": nodegroup_json(&deleted)})))
        }
        ("POST", ["clusters", name, "addons"]) => {
            eks_lifecycle::create_addon(state, name, body)?;
            let addon = body["addonName"].as_str().unwrap_or_default();
            Ok((
                200,
                json!({"addon": addon_json(cluster(state, name)?, addon)?}),
            ))
        }
        ("DELETE", ["clusters", name, "addons", addon]) => {
            let json = addon_json(cluster(state, name)?, addon)?;
            eks_lifecycle::delete_addon(state, name, addon)?;
            let mut json = json;
            json["status"] = json!("DELETING");
            Ok((200, json!({"addon": json})))
        }
        ("POST", ["clusters", name, "addons", addon, "update"]) => {
            let update = eks_lifecycle::update_addon(state, name, addon, body)?;
            Ok((200, json!({"update": update_json(&update)})))
        }
        ("GET", ["clusters"]) => Ok((
            200,
            json!({"clusters": state.clusters.keys().collect::<Vec<_>>()}),
        )),
        ("GET", ["clusters", name]) => Ok((
            200,
            json!({"cluster": cluster_json(cluster(state, name)?, state.kube_ca_pem.as_deref())}),
        )),
        ("GET", ["clusters", name, "node-groups"]) => {
            cluster(state, name)?;
            let names: Vec<&String> = state
                .nodegroups
                .keys()
                .filter(|(c, _)| c == name)
                .map(|(_, n)| n)
                .collect();
            Ok((200, json!({"nodegroups": names})))
        }
        ("GET", ["clusters", name, "node-groups", ng]) => {
            let ng = nodegroup(state, name, ng)?.clone();
            Ok((200, json!({"nodegroup": nodegroup_json(&ng)})))
        }
        ("POST", ["clusters", name, "node-groups", ng, "update-config"]) => {
            nodegroup(state, name, ng)?;
            let desired = int_field(body, &["scalingConfig", "desiredSize"])?;
            let min = int_field(body, &["scalingConfig", "minSize"])?;
            let max = int_field(body, &["scalingConfig", "maxSize"])?;
            if desired.is_none()
                && min.is_none()
                && max.is_none()
                && body["labels"].is_null()
                && body["taints"].is_null()
            {
                return Err(AwsError::invalid_parameter("No changes needed"));
            }
            let (labels, taints) = (&body["labels"], &body["taints"]);
            super::parameters::node_labels(
                &labels["addOrUpdateLabels"],
                &taints["addOrUpdateTaints"],
            )?;
            super::parameters::taint_count(&taints["addOrUpdateTaints"])?;
            let update = nodegroups::update_config(state, name, ng, desired, min, max)?;
            Ok((200, json!({"update": update_json(&update)})))
        }
        ("GET", ["clusters", name, "updates"]) => {
            cluster(state, name)?;
            let wanted = query.get("nodegroupName");
            if let Some(ng) = wanted {
                nodegroup(state, name, ng)?;
            }
            let ids: Vec<&String> = state
                .updates
                .values()
                .filter(|u| u.cluster == *name && u.nodegroup.as_ref() == wanted)
                .map(|u| &u.id)
                .collect();
            Ok((200, json!({"updateIds": ids})))
        }
        ("GET", ["clusters", name, "updates", id]) => {
            cluster(state, name)?;
            let update = state
                .updates
                .get(*id)
                .filter(|u| u.cluster == *name)
                .ok_or_else(|| AwsError::not_found(format!("No update found for ID: {id}")))?;
            Ok((200, json!({"update": update_json(update)})))
        }
        ("GET", ["clusters", name, "addons"]) => {
            let c = cluster(state, name)?;
            Ok((200, json!({"addons": c.addons.keys().collect::<Vec<_>>()})))
        }
        ("GET", ["clusters", name, "addons", addon]) => Ok((
            200,
            json!({"addon": addon_json(cluster(state, name)?, addon)?}),
        )),
        ("GET", ["addons", "supported-versions"]) => {
            let addons: Vec<Value> = lab::ADDONS
                .iter()
                .filter(|(name, _)| query.get("addonName").is_none_or(|n| n == name))
                .map(|(name, version)| {
                    json!({"addonName": name, "type": "networking", "addonVersions": [{
                        "addonVersion": version,
                        "architecture": ["amd64", "arm64"],
                        "compatibilities": [{"clusterVersion": lab::KUBERNETES_VERSION, "platformVersions": ["*"], "defaultVersion": true}],
                    }]})
                })
                .collect();
            Ok((200, json!({"addons": addons})))
        }
        _ => Err(AwsError::new(
            404,
            "UnknownOperationException",
            format!("the lab twin does not serve EKS {method} {path}"),
        )),
    }
}
