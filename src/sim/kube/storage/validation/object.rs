//! The API server's validation of a whole object on create and update: 422 `Invalid` with a
//! cause per field, worded as the server words them; a quantity that does not parse is the
//! server's 400 decode error instead.

use serde_json::Value;

use super::cluster::{config_map, node, secret};
use super::errors::Errors;
use super::metadata::metadata;
use super::pod::{BadQuantity, pod_images, pod_spec};
use super::scheduling_gates::pod_create;
use super::service::service;
use super::updates::update;
use super::workloads::{cron_job, job, replicated};
use crate::sim::kube::storage::quantity::SYNTAX_ERROR;
use crate::sim::kube::storage::resources::ResourceType;
use crate::sim::kube::storage::state::KubeState;
use crate::sim::kube::storage::status::ApiError;
use crate::sim::kube::storage::store::name_of;

fn kind_rules(
    resource: &ResourceType,
    object: &Value,
    errors: &mut Errors,
) -> Result<(), BadQuantity> {
    match (resource.group.as_str(), resource.kind.as_str()) {
        ("", "Pod") => {
            pod_spec(&object["spec"], "spec", errors)?;
            pod_images(&object["spec"], errors);
            Ok(())
        }
        ("apps", kind @ ("Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet")) => {
            replicated(kind, object, errors)
        }
        ("batch", "Job") => job(object, errors),
        ("batch", "CronJob") => cron_job(object, errors),
        ("", "Service") => {
            service(object, errors);
            Ok(())
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            super::crd::custom_resource_definition(object, errors);
            Ok(())
        }
        ("", "Node") => {
            node(object, errors);
            Ok(())
        }
        ("", "ConfigMap") => {
            config_map(object, errors);
            Ok(())
        }
        ("", "Secret") => {
            secret(object, errors);
            Ok(())
        }
        ("", "PersistentVolumeClaim") => super::claim::claim(object, errors),
        _ => {
            other_kind_rules(resource, object, errors);
            Ok(())
        }
    }
}

/// The kinds whose rules have no quantities to decode: networking, policy, scheduling, RBAC,
/// storage and coordination.
fn other_kind_rules(resource: &ResourceType, object: &Value, errors: &mut Errors) {
    match (resource.group.as_str(), resource.kind.as_str()) {
        ("networking.k8s.io", "Ingress") => super::ingress::ingress(object, errors),
        ("networking.k8s.io", "NetworkPolicy") => {
            super::network_policy::network_policy(object, errors);
        }
        ("policy", "PodDisruptionBudget") => super::policy::pod_disruption_budget(object, errors),
        ("scheduling.k8s.io", "PriorityClass") => super::scheduling::priority_class(object, errors),
        ("rbac.authorization.k8s.io", kind @ ("Role" | "ClusterRole")) => {
            super::rbac::role(object, kind == "Role", errors);
        }
        ("rbac.authorization.k8s.io", kind @ ("RoleBinding" | "ClusterRoleBinding")) => {
            super::rbac::role_binding(object, kind == "RoleBinding", errors);
        }
        ("storage.k8s.io", "StorageClass") => super::storage_class::storage_class(object, errors),
        ("coordination.k8s.io", "Lease") => super::lease::lease(object, errors),
        _ => {}
    }
}

fn answer(resource: &ResourceType, name: &str, errors: Errors) -> Result<(), ApiError> {
    if errors.is_empty() {
        return Ok(());
    }
    Err(errors.into_invalid(&resource.qualified_kind(), name))
}

fn bad_quantity(resource: &ResourceType) -> ApiError {
    let kind = &resource.kind;
    ApiError::bad_request(format!(
        "{kind} in version \"{}\" cannot be handled as a {kind}: {SYNTAX_ERROR}",
        resource.version
    ))
}

/// Every field rule an object is held to.
fn object_errors(
    state: &KubeState,
    resource: &ResourceType,
    object: &Value,
    errors: &mut Errors,
) -> Result<(), ApiError> {
    metadata(resource, object, errors);
    kind_rules(resource, object, errors).map_err(|BadQuantity| bad_quantity(resource))?;
    if !crate::sim::kube::storage::resources::is_built_in(resource) {
        super::custom::custom_resource(state, resource, object, errors);
    }
    Ok(())
}

/// Validates an object about to be stored (defaults already applied, as the server does).
pub(crate) fn validate(
    state: &KubeState,
    resource: &ResourceType,
    object: &Value,
) -> Result<(), ApiError> {
    let mut errors = Errors::default();
    object_errors(state, resource, object, &mut errors)?;
    answer(resource, name_of(object), errors)
}

/// A create: the object's rules, then what only a new object is held to
/// (`ValidatePodCreate`, `ValidateIngressCreate`).
pub(crate) fn validate_create(
    state: &KubeState,
    resource: &ResourceType,
    object: &Value,
) -> Result<(), ApiError> {
    let mut errors = Errors::default();
    object_errors(state, resource, object, &mut errors)?;
    match (resource.group.as_str(), resource.kind.as_str()) {
        ("", "Pod") => pod_create(&object["spec"], &mut errors),
        ("networking.k8s.io", "Ingress") => super::ingress::ingress_create(object, &mut errors),
        _ => {}
    }
    answer(resource, name_of(object), errors)
}

/// An update: what an update may not change, then the new object's own rules, in one answer
/// as the server's `Validate*Update` gives them.
pub(crate) fn validate_update(
    state: &KubeState,
    resource: &ResourceType,
    old: &Value,
    new: &Value,
) -> Result<(), ApiError> {
    let mut errors = Errors::default();
    update(&resource.group, &resource.kind, old, new, &mut errors);
    object_errors(state, resource, new, &mut errors)?;
    answer(resource, name_of(new), errors)
}
