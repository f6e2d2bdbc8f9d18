//! EKS add-ons of a cluster: CreateAddon (CREATING -> ACTIVE on the seed's timeline),
//! DeleteAddon (DELETING -> gone) and UpdateAddon (a new version or configuration at once).

use std::time::Duration;

use serde_json::Value;

use super::eks_lifecycle::text;
use super::eks_records::{active_cluster, addon_missing, cluster_mut, in_use};
use super::error::AwsError;
use super::state::{Addon, AwsState, AwsTimer, Update};
use crate::lab::{self, timeline};

pub(crate) fn create_addon(
    state: &mut AwsState,
    cluster: &str,
    body: &Value,
) -> Result<Addon, AwsError> {
    active_cluster(state, cluster)?;
    let name = text(body, "addonName")?;
    let Some((_, seed_version)) = lab::offered_addons().find(|(n, _)| *n == name) else {
        return Err(AwsError::invalid_parameter(format!(
            "Addon {name} specified is not supported in {} cluster version",
            lab::KUBERNETES_VERSION
        )));
    };
    let now = state.now;
    let cluster_record = cluster_mut(state, cluster)?;
    if cluster_record.addons.contains_key(&name) {
        // EKS's words (wandb/terraform-aws-wandb#230, a real 409): the name is not in them.
        return Err(in_use("Addon already exists.".into()));
    }
    let version = match body["addonVersion"].as_str() {
        Some(version) => {
            super::addon_catalog::check(&name, version, None)?;
            version.to_string()
        }
        None => lab::resolved_addon_version(name.as_str(), seed_version),
    };
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
    let addon = cluster_mut(state, cluster)?
        .addons
        .get_mut(name)
        .ok_or_else(|| addon_missing(cluster, name))?;
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

/// The twin applies an add-on's new version or configuration at once: the update it answers
/// is Successful already.
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
        .ok_or_else(|| addon_missing(cluster, name))?;
    if let Some(version) = body["addonVersion"].as_str() {
        super::addon_catalog::check(name, version, Some(&addon.version))?;
    }
    let params = apply_addon_changes(addon, body);
    let update = Update {
        id: id.clone(),
        errors: Vec::new(),
        cluster: cluster.into(),
        nodegroup: None,
        kind: "AddonUpdate".into(),
        status: "Successful".into(),
        params,
        created_at: now,
    };
    state.updates.insert(id, update.clone());
    if body["configurationValues"].is_string() {
        // The add-on's controller rolls the new settings out a moment later.
        state.schedule(
            Duration::from_secs(10),
            AwsTimer::AddonConfigured {
                cluster: cluster.into(),
                addon: name.into(),
            },
        );
    }
    Ok(update)
}

/// Sets what an UpdateAddon body changes on the add-on; answers the update's params.
fn apply_addon_changes(addon: &mut Addon, body: &Value) -> Vec<(String, String)> {
    // UpdateAddon may change only the configuration; the version stays then.
    let version = body["addonVersion"]
        .as_str()
        .map_or_else(|| addon.version.clone(), str::to_string);
    addon.version = version.clone();
    let mut params = vec![("AddonVersion".into(), version)];
    if let Some(values) = body["configurationValues"].as_str() {
        addon.configuration_values = Some(values.to_string());
        params.push(("ConfigurationValues".into(), values.to_string()));
    }
    params
}
