//! EKS resources the lab blueprint creates and destroys: the cluster, node groups and add-ons,
//! each moving through CREATING -> ACTIVE and DELETING -> gone on the seed's timeline.

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::AwsError;
use super::nodegroups;
use super::state::{
    Addon, AwsState, AwsTimer, Cluster, ClusterConfig, Nodegroup, NodegroupTemplate, Update,
};
use crate::lab::{self, timeline};

fn text(body: &Value, key: &str) -> Result<String, AwsError> {
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

fn strings(value: &Value) -> Vec<String> {
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

fn active_cluster<'a>(state: &'a AwsState, name: &str) -> Result<&'a Cluster, AwsError> {
    let cluster = state
        .clusters
        .get(name)
        .ok_or_else(|| AwsError::not_found(format!("No cluster found for name: {name}.")))?;
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
        return Err(AwsError::new(
            409,
            "ResourceInUseException",
            format!("Cluster already exists with name: {name}"),
        ));
    }
    let vpc_config = &body["resourcesVpcConfig"];
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
    let cluster_group = if state.groups.contains_key(lab::CLUSTER_SG) {
        lab::CLUSTER_SG.to_string()
    } else {
        groups.first().cloned().unwrap_or_default()
    };
    let (endpoint, issuer) = if name == lab::CLUSTER_NAME {
        (
            lab::CLUSTER_ENDPOINT.to_string(),
            lab::OIDC_ISSUER.to_string(),
        )
    } else {
        let id = state.next_id("eks").replace("eks-0f", "").to_uppercase();
        (
            format!("https://{id}.gr7.{}.eks.amazonaws.com", lab::REGION),
            format!("https://oidc.eks.{}.amazonaws.com/id/{id}", lab::REGION),
        )
    };
    let cluster = Cluster {
        config: ClusterConfig {
            name: name.clone(),
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
            subnets,
            security_groups: groups,
            cluster_security_group: cluster_group,
            vpc: vpc.unwrap_or_default(),
            oidc_issuer: issuer,
            // EKS's default for a cluster created through its API (the console's differs).
            authentication_mode: body["accessConfig"]["authenticationMode"]
                .as_str()
                .unwrap_or("CONFIG_MAP")
                .to_string(),
            secrets_key: super::kms::secrets_key(state, &body["encryptionConfig"])?,
            remote_network: None,
        },
        created_at: state.now,
        addons: BTreeMap::new(),
        access_entries: BTreeMap::new(),
        pod_identity_associations: BTreeMap::new(),
    };
    if !["API", "API_AND_CONFIG_MAP", "CONFIG_MAP"]
        .contains(&cluster.config.authentication_mode.as_str())
    {
        return Err(AwsError::invalid_parameter(format!(
            "accessConfig.authenticationMode must be API, API_AND_CONFIG_MAP or CONFIG_MAP, not {}",
            cluster.config.authentication_mode
        )));
    }
    let mut cluster = cluster;
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

pub(crate) fn delete_cluster(state: &mut AwsState, name: &str) -> Result<Cluster, AwsError> {
    let cluster = state
        .clusters
        .get(name)
        .ok_or_else(|| AwsError::not_found(format!("No cluster found for name: {name}.")))?;
    if cluster.config.status == "DELETING" {
        return Ok(cluster.clone());
    }
    let attached: Vec<&String> = state
        .nodegroups
        .keys()
        .filter(|(c, _)| c == name)
        .map(|(_, n)| n)
        .collect();
    if !attached.is_empty() {
        return Err(AwsError::new(
            409,
            "ResourceInUseException",
            format!(
                "Cluster has nodegroups attached: {}",
                attached
                    .iter()
                    .map(|n| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let cluster = state
        .clusters
        .get_mut(name)
        .ok_or_else(|| AwsError::not_found(format!("No cluster found for name: {name}.")))?;
    cluster.config.status = "DELETING".into();
    let deleted = cluster.clone();
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
        return Err(AwsError::new(
            409,
            "ResourceInUseException",
            format!("NodeGroup already exists with name {name} and cluster name {cluster}"),
        ));
    }
    let scaling = &body["scalingConfig"];
    let size = |key: &str, default: i64| scaling[key].as_i64().unwrap_or(default);
    let (min, max, desired) = (
        size("minSize", 1),
        size("maxSize", 2),
        size("desiredSize", 1),
    );
    super::parameters::scaling(min, desired, max)?;
    let subnets = strings(&body["subnets"]);
    if subnets.is_empty() {
        return Err(AwsError::invalid_parameter("subnets is required"));
    }
    if let Some(missing) = subnets.iter().find(|s| !state.subnets.contains_key(*s)) {
        return Err(AwsError::invalid_parameter(format!(
            "The subnet ID '{missing}' does not exist"
        )));
    }
    let launch_template = launch_template_of(state, &body["launchTemplate"])?;
    super::parameters::node_labels(&body["labels"], &body["taints"])?;
    super::parameters::taint_count(&body["taints"])?;
    super::parameters::tags(&body["tags"])?;
    let labels = body["labels"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let mut taints = Vec::new();
    for taint in body["taints"].as_array().into_iter().flatten() {
        taints.push((
            taint["key"].as_str().unwrap_or_default().to_string(),
            taint["value"].as_str().unwrap_or_default().to_string(),
            taint_effect(taint["effect"].as_str().unwrap_or_default())?,
        ));
    }
    let instance_type = strings(&body["instanceTypes"])
        .into_iter()
        .next()
        .unwrap_or_else(|| "t3.medium".into());
    let uuid = state.next_uuid();
    let nodegroup = Nodegroup {
        cluster: cluster.into(),
        name: name.clone(),
        uuid,
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
    };
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
    let joined = nodegroups::launch(state, &nodegroup, 0, desired as usize);
    let ready_after = if desired == 0 {
        timeline::EMPTY_NODEGROUP_CREATE
    } else {
        joined + timeline::NODEGROUP_SETTLE
    };
    state.schedule(
        ready_after,
        AwsTimer::NodegroupActive {
            cluster: cluster.into(),
            nodegroup: name,
        },
    );
    Ok(nodegroup)
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
        .ok_or_else(|| AwsError::not_found(format!("No node group found for name: {name}.")))?;
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

pub(crate) fn create_addon(
    state: &mut AwsState,
    cluster: &str,
    body: &Value,
) -> Result<Addon, AwsError> {
    active_cluster(state, cluster)?;
    let name = text(body, "addonName")?;
    let Some((_, seed_version)) = lab::ADDONS.iter().find(|(n, _)| *n == name) else {
        return Err(AwsError::invalid_parameter(format!(
            "Addon {name} specified is not supported in {} cluster version",
            lab::KUBERNETES_VERSION
        )));
    };
    let version = body["addonVersion"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| lab::resolved_addon_version(name.as_str(), seed_version));
    let now = state.now;
    let cluster_record = state
        .clusters
        .get_mut(cluster)
        .ok_or_else(|| AwsError::not_found(format!("No cluster found for name: {cluster}.")))?;
    if cluster_record.addons.contains_key(&name) {
        return Err(AwsError::new(
            409,
            "ResourceInUseException",
            format!("Addon already exists: {name}"),
        ));
    }
    let addon = Addon {
        name: name.clone(),
        version,
        status: "CREATING".into(),
        created_at: now,
        configuration_values: body["configurationValues"].as_str().map(str::to_string),
    };
    cluster_record.addons.insert(name.clone(), addon.clone());
    state.schedule(
        timeline::addon_create(&name),
        AwsTimer::AddonActive {
            cluster: cluster.into(),
            addon: name,
        },
    );
    Ok(addon)
}

pub(crate) fn delete_addon(
    state: &mut AwsState,
    cluster: &str,
    name: &str,
) -> Result<Addon, AwsError> {
    let addon = state
        .clusters
        .get_mut(cluster)
        .ok_or_else(|| AwsError::not_found(format!("No cluster found for name: {cluster}.")))?
        .addons
        .get_mut(name)
        .ok_or_else(|| {
            AwsError::not_found(format!("No addon: {name} found in cluster: {cluster}"))
        })?;
    addon.status = "DELETING".into();
    let deleted = addon.clone();
    state.schedule(
        timeline::ADDON_DELETE,
        AwsTimer::AddonDeleted {
            cluster: cluster.into(),
            addon: name.into(),
        },
    );
    Ok(deleted)
}

pub(crate) fn update_addon(
    state: &mut AwsState,
    cluster: &str,
    name: &str,
    body: &Value,
) -> Result<Update, AwsError> {
    active_cluster(state, cluster)?;
    let now = state.now;
    let id = state.next_uuid();
    let addon = state
        .clusters
        .get_mut(cluster)
        .and_then(|c| c.addons.get_mut(name))
        .ok_or_else(|| {
            AwsError::not_found(format!("No addon: {name} found in cluster: {cluster}"))
        })?;
    // UpdateAddon may change only the configuration; the version stays then.
    let version = body["addonVersion"]
        .as_str()
        .map_or_else(|| addon.version.clone(), str::to_string);
    addon.version = version.clone();
    let mut params = vec![("AddonVersion".into(), version)];
    let configured = body["configurationValues"].as_str().map(str::to_string);
    if let Some(values) = &configured {
        addon.configuration_values = Some(values.clone());
        params.push(("ConfigurationValues".into(), values.clone()));
    }
    let update = Update {
        id: id.clone(),
        errors: Vec::new(),
        cluster: cluster.into(),
        nodegroup: None,
        kind: "AddonUpdate".into(),
        // The twin applies add-on version changes at once.
        status: "Successful".into(),
        params,
        created_at: now,
    };
    state.updates.insert(id, update.clone());
    if configured.is_some() {
        // The add-on's controller rolls the new settings out a moment later.
        state.schedule(
            std::time::Duration::from_secs(10),
            AwsTimer::AddonConfigured {
                cluster: cluster.into(),
                addon: name.into(),
            },
        );
    }
    Ok(update)
}

/// What the timers do to the AWS side; the twin adds the Kubernetes side.
pub(crate) fn on_timer(state: &mut AwsState, timer: &AwsTimer) {
    let now = state.now;
    match timer {
        AwsTimer::ClusterActive { cluster } => {
            if let Some(c) = state.clusters.get_mut(cluster) {
                c.config.status = "ACTIVE".into();
            }
        }
        AwsTimer::ClusterDeleted { cluster } => {
            state.clusters.remove(cluster);
            state.meter.stop(cluster, now);
            state.updates.retain(|_, u| u.cluster != *cluster);
        }
        AwsTimer::AddonActive { cluster, addon } => {
            if let Some(a) = state
                .clusters
                .get_mut(cluster)
                .and_then(|c| c.addons.get_mut(addon))
            {
                a.status = "ACTIVE".into();
            }
        }
        AwsTimer::AddonDeleted { cluster, addon } => {
            if let Some(c) = state.clusters.get_mut(cluster) {
                c.addons.remove(addon);
            }
        }
        AwsTimer::NodegroupActive { cluster, nodegroup } => {
            let stuck = state
                .instances
                .values()
                .any(|i| i.nodegroup == *nodegroup && i.state == "pending");
            if let Some(ng) = state
                .nodegroups
                .get_mut(&(cluster.clone(), nodegroup.clone()))
            {
                ng.status = if stuck { "CREATE_FAILED" } else { "ACTIVE" }.into();
                ng.modified_at = now;
            }
        }
        AwsTimer::NodegroupDeleted { cluster, nodegroup } => {
            state
                .nodegroups
                .remove(&(cluster.clone(), nodegroup.clone()));
        }
        AwsTimer::NatAvailable { id } => {
            if let Some(n) = state.nat_gateways.get_mut(id) {
                n.state = "available".into();
            }
        }
        AwsTimer::NatDeleted { id } => {
            if let Some(n) = state.nat_gateways.get_mut(id) {
                n.state = "deleted".into();
            }
            // A deleted NAT gateway lets go of its Elastic IP, which can then be released.
            for address in state.addresses.values_mut() {
                if address.nat_gateway.as_deref() == Some(id.as_str()) {
                    address.nat_gateway = None;
                }
            }
            state.meter.stop(id, now);
        }
        AwsTimer::InstanceJoins { .. }
        | AwsTimer::InstanceTerminated { .. }
        | AwsTimer::UpdateDone { .. }
        | AwsTimer::AddonConfigured { .. } => {}
    }
}

/// The ARN of a role of the lab's account.
fn role_arn(name: &str) -> String {
    format!("arn:aws:iam::{}:role/{name}", lab::ACCOUNT_ID)
}
