//! EKS resources the lab blueprint creates and destroys: the cluster and its node groups, each
//! moving through CREATING -> ACTIVE and DELETING -> gone on the seed's timeline (add-ons in
//! `eks_addons`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::eks_records::{
    active_cluster, cluster, cluster_missing, in_use, nodegroup_missing, nodegroup_names,
};
use super::error::AwsError;
use super::nodegroups;
use super::state::{AwsState, AwsTimer, Cluster, ClusterConfig, Nodegroup, NodegroupTemplate};
use crate::lab::{self, timeline};

/// A required string field of a request's body.
pub(super) fn text(body: &Value, key: &str) -> Result<String, AwsError> {
    body[key]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| AwsError::invalid_parameter(format!("{key} is required")))
}

/// A node group's `launchTemplate` ({ id | name, version }), checked against EC2's templates.
fn launch_template_of(
    state: &AwsState,
    given: &Value,
) -> Result<Option<NodegroupTemplate>, AwsError> {
    if given.is_null() {
        return Ok(None);
    }
    let (id, name) = (given["id"].as_str(), given["name"].as_str());
    let found = match (id, name) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(AwsError::invalid_parameter(
                "launchTemplate takes either id or name, not both and not neither",
            ));
        }
        (Some(id), None) => state.launch_templates.get(id),
        (None, Some(name)) => state.launch_templates.values().find(|t| t.name == name),
    };
    let template = found.ok_or_else(|| {
        AwsError::invalid_parameter(format!(
            "launch template {} does not exist in {}",
            id.or(name).unwrap_or_default(),
            lab::REGION
        ))
    })?;
    let version = given["version"].as_str().unwrap_or("1");
    if !["1", "$Latest", "$Default"].contains(&version) {
        return Err(AwsError::invalid_parameter(format!(
            "launch template {} has no version {version} (it has version 1)",
            template.id
        )));
    }
    Ok(Some(NodegroupTemplate {
        id: template.id.clone(),
        name: template.name.clone(),
        version: "1".into(),
    }))
}

/// The strings of a JSON list (anything else in it left out); none when it is not a list.
pub(super) fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Creates a cluster for `caller` (a principal ARN), who gets cluster admin through an access
/// entry unless `accessConfig.bootstrapClusterCreatorAdminPermissions` is false.
pub(crate) fn create_cluster(
    state: &mut AwsState,
    caller: &str,
    body: &Value,
) -> Result<Cluster, AwsError> {
    let name = text(body, "name")?;
    super::parameters::tags(&body["tags"])?;
    if state.clusters.contains_key(&name) {
        return Err(in_use(format!("Cluster already exists with name: {name}")));
    }
    let config = cluster_config(state, &name, body)?;
    if !["API", "API_AND_CONFIG_MAP", "CONFIG_MAP"].contains(&config.authentication_mode.as_str()) {
        return Err(AwsError::invalid_parameter(format!(
            "accessConfig.authenticationMode must be API, API_AND_CONFIG_MAP or CONFIG_MAP, not {}",
            config.authentication_mode
        )));
    }
    let mut cluster = Cluster {
        config,
        created_at: state.now,
        addons: BTreeMap::new(),
        access_entries: BTreeMap::new(),
        pod_identity_associations: BTreeMap::new(),
        settings: super::cluster_settings::ClusterSettings::default(),
    };
    if body["accessConfig"]["bootstrapClusterCreatorAdminPermissions"] != Value::Bool(false)
        && cluster.config.authentication_mode != "CONFIG_MAP"
    {
        cluster.access_entries.insert(
            caller.to_string(),
            super::access_entries::creator_entry(caller, state.now),
        );
    }
    state.clusters.insert(name.clone(), cluster.clone());
    let now = state.now;
    state.meter.start(&name, "eks-cluster", now);
    state.schedule(
        timeline::CLUSTER_CREATE,
        AwsTimer::ClusterActive { cluster: name },
    );
    Ok(cluster)
}

/// What DescribeCluster will say of a new cluster, from its CreateCluster body.
fn cluster_config(
    state: &mut AwsState,
    name: &str,
    body: &Value,
) -> Result<ClusterConfig, AwsError> {
    let network = cluster_network(state, &body["resourcesVpcConfig"])?;
    let (endpoint, oidc_issuer) = endpoint_and_issuer(state, name);
    Ok(ClusterConfig {
        name: name.to_string(),
        status: "CREATING".into(),
        version: body["version"]
            .as_str()
            .unwrap_or(lab::KUBERNETES_VERSION)
            .into(),
        platform_version: lab::PLATFORM_VERSION.into(),
        endpoint,
        role_arn: body["roleArn"]
            .as_str()
            .map_or_else(|| role_arn(&format!("{name}-cluster-role")), str::to_string),
        subnets: network.subnets,
        security_groups: network.security_groups,
        cluster_security_group: network.cluster_security_group,
        vpc: network.vpc,
        oidc_issuer,
        // EKS's default for a cluster created through its API (the console's differs).
        authentication_mode: body["accessConfig"]["authenticationMode"]
            .as_str()
            .unwrap_or("CONFIG_MAP")
            .to_string(),
        secrets_key: super::kms::secrets_key(state, &body["encryptionConfig"])?,
        remote_network: None,
    })
}

/// Where a new cluster's control plane attaches: its subnets (two at least), their VPC and
/// its security groups, all of which must exist in EC2.
struct ClusterNetwork {
    subnets: Vec<String>,
    vpc: String,
    security_groups: Vec<String>,
    cluster_security_group: String,
}

fn cluster_network(state: &AwsState, vpc_config: &Value) -> Result<ClusterNetwork, AwsError> {
    let subnets = strings(&vpc_config["subnetIds"]);
    if subnets.len() < 2 {
        return Err(AwsError::invalid_parameter(
            "Subnets specified must be in at least two different AZs",
        ));
    }
    let mut vpc = None;
    for subnet in &subnets {
        let found = state.subnets.get(subnet).ok_or_else(|| {
            AwsError::invalid_parameter(format!("The subnet ID '{subnet}' does not exist"))
        })?;
        vpc = Some(found.vpc.clone());
    }
    let groups = strings(&vpc_config["securityGroupIds"]);
    if let Some(missing) = groups.iter().find(|g| !state.groups.contains_key(*g)) {
        return Err(AwsError::invalid_parameter(format!(
            "The security group '{missing}' does not exist"
        )));
    }
    // EKS makes its own cluster security group; in the twin the seed's cluster SG plays it
    // when the blueprint has made it.
    let cluster_security_group = if state.groups.contains_key(lab::CLUSTER_SG) {
        lab::CLUSTER_SG.to_string()
    } else {
        groups.first().cloned().unwrap_or_default()
    };
    Ok(ClusterNetwork {
        subnets,
        vpc: vpc.unwrap_or_default(),
        security_groups: groups,
        cluster_security_group,
    })
}

/// The API server endpoint and OIDC issuer of a new cluster: the lab's own for the lab's
/// cluster, fresh ones otherwise.
fn endpoint_and_issuer(state: &mut AwsState, name: &str) -> (String, String) {
    if name == lab::CLUSTER_NAME {
        return (
            lab::CLUSTER_ENDPOINT.to_string(),
            lab::OIDC_ISSUER.to_string(),
        );
    }
    let id = state.next_id("eks").replace("eks-0f", "").to_uppercase();
    (
        format!("https://{id}.gr7.{}.eks.amazonaws.com", lab::REGION),
        format!("https://oidc.eks.{}.amazonaws.com/id/{id}", lab::REGION),
    )
}

pub(crate) fn delete_cluster(state: &mut AwsState, name: &str) -> Result<Cluster, AwsError> {
    let existing = cluster(state, name)?;
    if existing.config.status == "DELETING" {
        return Ok(existing.clone());
    }
    let attached = nodegroup_names(state, name);
    if !attached.is_empty() {
        return Err(in_use(format!(
            "Cluster has nodegroups attached: {}",
            attached
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let record = state
        .clusters
        .get_mut(name)
        .ok_or_else(|| cluster_missing(name))?;
    record.config.status = "DELETING".into();
    let deleted = record.clone();
    state.schedule(
        timeline::CLUSTER_DELETE,
        AwsTimer::ClusterDeleted {
            cluster: name.into(),
        },
    );
    Ok(deleted)
}

fn taint_effect(effect: &str) -> Result<String, AwsError> {
    match effect {
        "NO_SCHEDULE" => Ok("NoSchedule".into()),
        "NO_EXECUTE" => Ok("NoExecute".into()),
        "PREFER_NO_SCHEDULE" => Ok("PreferNoSchedule".into()),
        other => Err(super::parameters::taint_effect(other)),
    }
}

pub(crate) fn create_nodegroup(
    state: &mut AwsState,
    cluster: &str,
    body: &Value,
) -> Result<Nodegroup, AwsError> {
    active_cluster(state, cluster)?;
    let name = text(body, "nodegroupName")?;
    super::parameters::nodegroup_name(&name)?;
    let key = (cluster.to_string(), name.clone());
    if state.nodegroups.contains_key(&key) {
        return Err(in_use(format!(
            "NodeGroup already exists with name {name} and cluster name {cluster}"
        )));
    }
    let nodegroup = nodegroup_of(state, cluster, &name, body)?;
    // EKS takes any name here; the launch template it makes then fails (`CREATE_FAILED`,
    // `Ec2LaunchTemplateInvalidConfiguration`), as a type that does not exist does on AWS.
    if let Some(unknown) = super::parameters::unknown_instance_type(&nodegroup.instance_type) {
        let mut failed = nodegroup;
        failed.status = "CREATE_FAILED".into();
        failed.health_issues = vec![("Ec2LaunchTemplateInvalidConfiguration".into(), unknown)];
        state.nodegroups.insert(key, failed.clone());
        return Ok(failed);
    }
    state.nodegroups.insert(key, nodegroup.clone());
    launch_nodegroup(state, &nodegroup);
    Ok(nodegroup)
}

/// A new node group as a CreateNodegroup body asks for it, checked, with EKS's defaults.
fn nodegroup_of(
    state: &mut AwsState,
    cluster: &str,
    name: &str,
    body: &Value,
) -> Result<Nodegroup, AwsError> {
    let (min, max, desired) = scaling_of(&body["scalingConfig"])?;
    let update_config =
        super::nodegroup_update_config::update_config_of(&body["updateConfig"], max)?;
    let version = body["version"].as_str().map_or_else(
        || active_cluster(state, cluster).map(|c| c.config.version.clone()),
        |v| Ok(v.to_string()),
    )?;
    let subnets = nodegroup_subnets(state, &body["subnets"])?;
    let launch_template = launch_template_of(state, &body["launchTemplate"])?;
    super::parameters::node_labels(&body["labels"], &body["taints"])?;
    super::parameters::taint_count(&body["taints"])?;
    super::parameters::tags(&body["tags"])?;
    let labels = labels_of(&body["labels"]);
    let taints = taints_of(&body["taints"])?;
    let instance_types = strings(&body["instanceTypes"]);
    if let Some(ami_type) = body["amiType"].as_str() {
        super::parameters::instance_types_for_ami(ami_type, &instance_types)?;
    }
    let instance_type = instance_types
        .into_iter()
        .next()
        .unwrap_or_else(|| "t3.medium".into());
    Ok(Nodegroup {
        cluster: cluster.into(),
        name: name.to_string(),
        uuid: state.next_uuid(),
        ami_type: body["amiType"]
            .as_str()
            .unwrap_or("AL2023_x86_64_STANDARD")
            .into(),
        instance_type,
        desired,
        min,
        max,
        labels,
        taints,
        subnets,
        node_role: body["nodeRole"].as_str().map_or_else(
            || role_arn(&format!("{cluster}-{name}-node-role")),
            str::to_string,
        ),
        status: "CREATING".into(),
        created_at: state.now,
        modified_at: state.now,
        launch_template,
        health_issues: Vec::new(),
        node_repair: super::node_repair::node_repair_of(body)?,
        release_version: body["releaseVersion"].as_str().map_or_else(
            || super::ami_releases::release_for(&version),
            str::to_string,
        ),
        version,
        update_config,
    })
}

/// `(min, max, desired)` of a `scalingConfig`, EKS's defaults for those not given.
fn scaling_of(scaling: &Value) -> Result<(i64, i64, i64), AwsError> {
    let size = |key: &str, default: i64| scaling[key].as_i64().unwrap_or(default);
    let (min, max, desired) = (
        size("minSize", 1),
        size("maxSize", 2),
        size("desiredSize", 1),
    );
    super::parameters::scaling(
        min,
        desired,
        max,
        super::parameters::Sizing::CreateNodegroup,
    )?;
    Ok((min, max, desired))
}

/// A node group's subnets: at least one, each of them EC2's.
fn nodegroup_subnets(state: &AwsState, given: &Value) -> Result<Vec<String>, AwsError> {
    let subnets = strings(given);
    if subnets.is_empty() {
        return Err(AwsError::invalid_parameter("subnets is required"));
    }
    if let Some(missing) = subnets.iter().find(|s| !state.subnets.contains_key(*s)) {
        return Err(AwsError::invalid_parameter(format!(
            "The subnet ID '{missing}' does not exist"
        )));
    }
    Ok(subnets)
}

fn labels_of(labels: &Value) -> Vec<(String, String)> {
    labels
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// `(key, value, effect)` of each taint, the effect as Kubernetes spells it.
fn taints_of(taints: &Value) -> Result<Vec<(String, String, String)>, AwsError> {
    let mut found = Vec::new();
    for taint in taints.as_array().into_iter().flatten() {
        found.push((
            taint["key"].as_str().unwrap_or_default().to_string(),
            taint["value"].as_str().unwrap_or_default().to_string(),
            taint_effect(taint["effect"].as_str().unwrap_or_default())?,
        ));
    }
    Ok(found)
}

/// Starts a new node group's instances; it turns ACTIVE once they have joined (an empty one
/// after EKS's own delay).
fn launch_nodegroup(state: &mut AwsState, nodegroup: &Nodegroup) {
    let desired = nodegroup.desired;
    let joined = nodegroups::launch(state, nodegroup, 0, desired as usize);
    let ready_after = if desired == 0 {
        timeline::EMPTY_NODEGROUP_CREATE
    } else {
        joined + timeline::NODEGROUP_SETTLE
    };
    state.schedule(
        ready_after,
        AwsTimer::NodegroupActive {
            cluster: nodegroup.cluster.clone(),
            nodegroup: nodegroup.name.clone(),
        },
    );
}

pub(crate) fn delete_nodegroup(
    state: &mut AwsState,
    cluster: &str,
    name: &str,
) -> Result<Nodegroup, AwsError> {
    let key = (cluster.to_string(), name.to_string());
    let nodegroup = state
        .nodegroups
        .get_mut(&key)
        .ok_or_else(|| nodegroup_missing(name))?;
    if nodegroup.status == "DELETING" {
        return Ok(nodegroup.clone());
    }
    nodegroup.status = "DELETING".into();
    let deleted = nodegroup.clone();
    let live = state.live_instances(name).len();
    let gone = nodegroups::terminate_newest(state, name, live);
    state.schedule(
        gone + timeline::NODEGROUP_DELETE_SETTLE,
        AwsTimer::NodegroupDeleted {
            cluster: cluster.into(),
            nodegroup: name.into(),
        },
    );
    Ok(deleted)
}

/// The ARN of a role of the lab's account.
fn role_arn(name: &str) -> String {
    format!("arn:aws:iam::{}:role/{name}", lab::ACCOUNT_ID)
}
