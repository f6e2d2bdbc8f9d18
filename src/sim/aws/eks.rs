//! EKS over rest-json: each action on clusters, node groups (with scaling), updates and
//! add-ons a function of its own, chosen by its method and path; access entries and Pod
//! Identity associations route their own paths.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::eks_json::{addon_json, addon_versions_json, cluster_json, nodegroup_json, update_json};
use super::eks_records::{cluster, nodegroup, nodegroup_names};
use super::error::AwsError;
use super::state::AwsState;
use super::{access_entries, eks_addons, eks_cluster_config, eks_lifecycle, eks_versions};
use super::{nodegroups, pod_identity};
use crate::lab;

/// `(HTTP status, JSON body)` of an EKS answer, or its error.
pub(super) type Answer = Result<(u16, Value), AwsError>;

/// A 200 whose body holds one field, as most EKS answers do (`{"cluster": {...}}`).
pub(super) fn answer(field: &str, value: Value) -> Answer {
    let mut body = serde_json::Map::new();
    body.insert(field.to_string(), value);
    Ok((200, Value::Object(body)))
}

/// One EKS request: who signed it (the principal's ARN) and what it asks.
struct Call<'a> {
    caller: &'a str,
    method: &'a str,
    path: &'a str,
    query: &'a BTreeMap<String, String>,
    body: &'a Value,
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
) -> Answer {
    let call = Call {
        caller,
        method,
        path,
        query,
        body,
    };
    let Some(token) = body["clientRequestToken"]
        .as_str()
        .filter(|t| !t.is_empty())
    else {
        return serve(state, &call);
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
    let answer = serve(state, &call)?;
    state.idempotent.insert(key, (body.clone(), answer.clone()));
    Ok(answer)
}

/// Access entries and Pod Identity associations first, the rest by `route`.
fn serve(state: &mut AwsState, call: &Call<'_>) -> Answer {
    let segments: Vec<&str> = call.path.trim_matches('/').split('/').collect();
    check_cluster_names(call.method, &segments, call.body)?;
    if let Some(answer) = access_entries::serve(state, call.method, &segments, call.body) {
        return answer;
    }
    if let Some(answer) = pod_identity::serve(state, call.method, &segments, call.query, call.body)
    {
        return answer;
    }
    route(state, call, &segments)
}

/// The cluster name a path or a CreateCluster body carries, checked before anything else.
fn check_cluster_names(method: &str, segments: &[&str], body: &Value) -> Result<(), AwsError> {
    if let ["clusters", name, rest @ ..] = segments {
        let parameter = if rest.is_empty() {
            "name"
        } else {
            "clusterName"
        };
        super::parameters::cluster_name(parameter, name)?;
    }
    if let (["clusters"], Some(name)) = (segments, body["name"].as_str())
        && method == "POST"
    {
        super::parameters::cluster_name("name", name)?;
        super::parameters::cluster_name_length(name)?;
    }
    Ok(())
}

/// The action a method and path name (see `actions::iam_action` for their IAM names).
fn route(state: &mut AwsState, call: &Call<'_>, segments: &[&str]) -> Answer {
    let body = call.body;
    match (call.method, segments) {
        ("POST", ["clusters"]) => create_cluster(state, call),
        ("GET", ["clusters"]) => list_clusters(state),
        ("GET", ["clusters", name]) => describe_cluster(state, name),
        ("DELETE", ["clusters", name]) => delete_cluster(state, name),
        ("POST", ["clusters", name, "node-groups"]) => create_nodegroup(state, name, body),
        ("GET", ["clusters", name, "node-groups"]) => list_nodegroups(state, name),
        ("GET", ["clusters", name, "node-groups", ng]) => describe_nodegroup(state, name, ng),
        ("DELETE", ["clusters", name, "node-groups", ng]) => delete_nodegroup(state, name, ng),
        ("POST", ["clusters", name, "node-groups", ng, "update-config"]) => {
            update_nodegroup_config(state, name, ng, body)
        }
        ("POST", ["clusters", name, "node-groups", ng, "update-version"]) => {
            let update = eks_versions::update_nodegroup_version(state, name, ng, body)?;
            answer("update", update_json(&update))
        }
        ("POST", ["clusters", name, "update-config"]) => {
            let update = eks_cluster_config::update_cluster_config(state, name, body)?;
            answer("update", update_json(&update))
        }
        ("POST", ["clusters", name, "addons"]) => create_addon(state, name, body),
        ("GET", ["clusters", name, "addons"]) => list_addons(state, name),
        ("GET", ["clusters", name, "addons", addon]) => describe_addon(state, name, addon),
        ("DELETE", ["clusters", name, "addons", addon]) => delete_addon(state, name, addon),
        ("POST", ["clusters", name, "addons", addon, "update"]) => {
            update_addon(state, name, addon, body)
        }
        ("GET", ["clusters", name, "updates"]) => list_updates(state, name, call.query),
        ("GET", ["clusters", name, "updates", id]) => describe_update(state, name, id),
        ("GET", ["addons", "supported-versions"]) => describe_addon_versions(call.query),
        _ => Err(AwsError::new(
            404,
            "UnknownOperationException",
            format!(
                "the lab twin does not serve EKS {} {}",
                call.method, call.path
            ),
        )),
    }
}

fn create_cluster(state: &mut AwsState, call: &Call<'_>) -> Answer {
    let created = eks_lifecycle::create_cluster(state, call.caller, call.body)?;
    answer(
        "cluster",
        cluster_json(&created, state.kube_ca_pem.as_deref()),
    )
}

fn list_clusters(state: &AwsState) -> Answer {
    answer("clusters", json!(state.clusters.keys().collect::<Vec<_>>()))
}

fn describe_cluster(state: &AwsState, name: &str) -> Answer {
    let found = cluster(state, name)?;
    answer("cluster", cluster_json(found, state.kube_ca_pem.as_deref()))
}

fn delete_cluster(state: &mut AwsState, name: &str) -> Answer {
    let deleted = eks_lifecycle::delete_cluster(state, name)?;
    answer(
        "cluster",
        cluster_json(&deleted, state.kube_ca_pem.as_deref()),
    )
}

fn create_nodegroup(state: &mut AwsState, cluster: &str, body: &Value) -> Answer {
    let created = eks_lifecycle::create_nodegroup(state, cluster, body)?;
    answer("nodegroup", nodegroup_json(&created))
}

fn list_nodegroups(state: &AwsState, name: &str) -> Answer {
    cluster(state, name)?;
    answer("nodegroups", json!(nodegroup_names(state, name)))
}

fn describe_nodegroup(state: &AwsState, cluster: &str, name: &str) -> Answer {
    answer(
        "nodegroup",
        nodegroup_json(nodegroup(state, cluster, name)?),
    )
}

fn delete_nodegroup(state: &mut AwsState, cluster: &str, name: &str) -> Answer {
    let deleted = eks_lifecycle::delete_nodegroup(state, cluster, name)?;
    answer("nodegroup", nodegroup_json(&deleted))
}

/// UpdateNodegroupConfig: new scaling sizes and node repair configuration (labels and taints
/// are checked, not kept).
fn update_nodegroup_config(
    state: &mut AwsState,
    cluster: &str,
    name: &str,
    body: &Value,
) -> Answer {
    let current = nodegroup(state, cluster, name)?;
    let desired = int_field(body, &["scalingConfig", "desiredSize"])?;
    let min = int_field(body, &["scalingConfig", "minSize"])?;
    let max = int_field(body, &["scalingConfig", "maxSize"])?;
    if desired.is_none()
        && min.is_none()
        && max.is_none()
        && body["labels"].is_null()
        && body["taints"].is_null()
        && body["nodeRepairConfig"].is_null()
        && body["updateConfig"].is_null()
    {
        return Err(AwsError::invalid_parameter("No changes needed"));
    }
    let update_config = super::nodegroup_update_config::updated(
        current.update_config.as_ref(),
        &body["updateConfig"],
        max.unwrap_or(current.max),
    )?;
    let (labels, taints) = (&body["labels"], &body["taints"]);
    super::parameters::node_labels(&labels["addOrUpdateLabels"], &taints["addOrUpdateTaints"])?;
    super::parameters::taint_count(&taints["addOrUpdateTaints"])?;
    let repair = super::node_repair::node_repair_of(body)?;
    let mut update = nodegroups::update_config(state, cluster, name, desired, min, max)?;
    if let Some(config) = update_config.filter(|_| !body["updateConfig"].is_null()) {
        record_update_config(state, &mut update, (cluster, name), config);
    }
    if let Some(repair) = repair {
        update
            .params
            .push(("NodeRepairConfig".into(), repair.to_string()));
        if let Some(u) = state.updates.get_mut(&update.id) {
            u.params.clone_from(&update.params);
        }
        if let Some(ng) = state
            .nodegroups
            .get_mut(&(cluster.to_string(), name.to_string()))
        {
            ng.node_repair = Some(repair);
        }
        // Repair watches the group's nodes from now on, those already failing included.
        state.schedule(
            std::time::Duration::ZERO,
            super::state::AwsTimer::RepairScan {
                nodegroup: name.to_string(),
            },
        );
    }
    answer("update", update_json(&update))
}

/// A new `updateConfig` kept on the node group and listed in its update's params, as EKS lists
/// them (`MaxUnavailable`, `MaxUnavailablePercentage`).
fn record_update_config(
    state: &mut AwsState,
    update: &mut super::state::Update,
    (cluster, name): (&str, &str),
    config: Value,
) {
    for (field, kind) in [
        ("maxUnavailable", "MaxUnavailable"),
        ("maxUnavailablePercentage", "MaxUnavailablePercentage"),
    ] {
        if let Some(value) = config[field].as_i64() {
            update.params.push((kind.into(), value.to_string()));
        }
    }
    if let Some(u) = state.updates.get_mut(&update.id) {
        u.params.clone_from(&update.params);
    }
    if let Some(ng) = state
        .nodegroups
        .get_mut(&(cluster.to_string(), name.to_string()))
    {
        ng.update_config = Some(config);
    }
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

fn list_updates(state: &AwsState, name: &str, query: &BTreeMap<String, String>) -> Answer {
    cluster(state, name)?;
    let wanted = query.get("nodegroupName");
    if let Some(ng) = wanted {
        nodegroup(state, name, ng)?;
    }
    let ids: Vec<&String> = state
        .updates
        .values()
        .filter(|u| u.cluster == name && u.nodegroup.as_ref() == wanted)
        .map(|u| &u.id)
        .collect();
    answer("updateIds", json!(ids))
}

fn describe_update(state: &AwsState, name: &str, id: &str) -> Answer {
    cluster(state, name)?;
    let update = state
        .updates
        .get(id)
        .filter(|u| u.cluster == name)
        .ok_or_else(|| AwsError::not_found(format!("No update found for ID: {id}")))?;
    answer("update", update_json(update))
}

fn create_addon(state: &mut AwsState, cluster_name: &str, body: &Value) -> Answer {
    eks_addons::create_addon(state, cluster_name, body)?;
    let addon = body["addonName"].as_str().unwrap_or_default();
    answer("addon", addon_json(cluster(state, cluster_name)?, addon)?)
}

fn list_addons(state: &AwsState, name: &str) -> Answer {
    answer(
        "addons",
        json!(cluster(state, name)?.addons.keys().collect::<Vec<_>>()),
    )
}

fn describe_addon(state: &AwsState, cluster_name: &str, addon: &str) -> Answer {
    answer("addon", addon_json(cluster(state, cluster_name)?, addon)?)
}

/// DeleteAddon answers with the add-on as it was, turned DELETING.
fn delete_addon(state: &mut AwsState, cluster_name: &str, addon: &str) -> Answer {
    let mut json = addon_json(cluster(state, cluster_name)?, addon)?;
    eks_addons::delete_addon(state, cluster_name, addon)?;
    json["status"] = json!("DELETING");
    answer("addon", json)
}

fn update_addon(state: &mut AwsState, cluster_name: &str, addon: &str, body: &Value) -> Answer {
    let update = eks_addons::update_addon(state, cluster_name, addon, body)?;
    answer("update", update_json(&update))
}

/// DescribeAddonVersions over the lab's catalog, or the one add-on `addonName` names.
fn describe_addon_versions(query: &BTreeMap<String, String>) -> Answer {
    let addons: Vec<Value> = lab::offered_addons()
        .filter(|(name, _)| query.get("addonName").is_none_or(|n| n == name))
        .map(|(name, _)| addon_versions_json(name, &super::addon_catalog::versions(name)))
        .collect();
    answer("addons", json!(addons))
}
