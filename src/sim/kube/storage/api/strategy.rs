//! What the registry's strategies do to a write before it is stored: what a client may not
//! set on create, and the name in the body against the name on the URL.

use serde_json::Value;

use crate::sim::kube::storage::resources::ResourceType;
use crate::sim::kube::storage::status::ApiError;

/// What a client may not set on create: the deletion fields (rest.BeforeCreate's
/// `WipeObjectMetaSystemFields` keeps neither) and, for the kinds whose strategy resets it in
/// `PrepareForCreate`, the status (a Service's load balancer, an Ingress's, a custom
/// resource's under a status subresource).
pub(super) fn wipe_on_create(resource: &ResourceType, body: &mut Value) {
    if let Some(meta) = body["metadata"].as_object_mut() {
        meta.remove("deletionTimestamp");
        meta.remove("deletionGracePeriodSeconds");
    }
    // A custom resource whose CRD turns the status subresource on loses it too
    // (customResourceStrategy.PrepareForCreate).
    let custom_with_status = !crate::sim::kube::storage::resources::is_built_in(resource)
        && resource.subresources.iter().any(|s| s == "status");
    let resets_status = custom_with_status
        || matches!(
            (resource.group.as_str(), resource.kind.as_str()),
            ("", "Service") | ("networking.k8s.io", "Ingress")
        );
    if resets_status && let Some(object) = body.as_object_mut() {
        object.remove("status");
    }
}

/// handlers/rest.go's `checkName`: both names in the message.
pub(super) fn name_mismatch(in_body: &str, on_url: &str) -> ApiError {
    ApiError::bad_request(format!(
        "the name of the object ({in_body}) does not match the name on the URL ({on_url})"
    ))
}
