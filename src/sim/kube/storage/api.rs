//! The REST verbs on the store: create, get, list, replace, patch, delete, with the
//! apiserver's validation, defaults and errors.

use serde_json::{Value, json};

use super::defaults::apply_defaults;
use super::managed::manager::Manager;
use super::patch::{PatchError, PatchType, apply_patch};
use super::resources::ResourceType;
use super::service_allocation::allocate;
use super::state::{KubeState, store_key};
use super::status::ApiError;
use super::store::{name_of, namespace_of};
use super::validation::object::{validate, validate_create, validate_update};

mod list;
mod strategy;

pub(crate) use list::{ListOptions, list, list_json};
use strategy::{name_mismatch, wipe_on_create};

pub(crate) type ApiResult<T = Value> = Result<T, ApiError>;

/// How long a deleted namespace stays Terminating while the namespace controller removes its
/// content (a few seconds for a namespace of a few objects on EKS; the twin's choice).
pub(crate) const NAMESPACE_TERMINATION: std::time::Duration = std::time::Duration::from_secs(5);

/// The namespace a create goes into exists (404 otherwise) and is not being deleted (403, as
/// the API server's NamespaceLifecycle admission answers).
fn check_namespace(
    state: &KubeState,
    resource: &ResourceType,
    namespace: &str,
    name: &str,
) -> ApiResult<()> {
    if !resource.namespaced {
        return Ok(());
    }
    let namespaces = state.built_in("namespaces");
    match state.store.get(&store_key(&namespaces), "", namespace) {
        None => Err(ApiError::not_found(&namespaces, namespace)),
        Some(ns) if ns["status"]["phase"] == "Terminating" => {
            let mut error = ApiError::new(
                403,
                "Forbidden",
                format!(
                    "{} \"{name}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated",
                    resource.qualified_plural()
                ),
            );
            error.details = json!({
                "name": name, "group": resource.group, "kind": resource.plural,
                "causes": [{"reason": "NamespaceTerminating",
                            "message": format!("namespace {namespace} is being terminated"),
                            "field": "metadata.namespace"}],
            });
            Err(error)
        }
        Some(_) => Ok(()),
    }
}

fn is_service(resource: &ResourceType) -> bool {
    resource.group.is_empty() && resource.kind == "Service"
}

/// Checks that the body is an object of this resource, and fills namespace and apiVersion.
fn normalize(resource: &ResourceType, namespace: &str, mut body: Value) -> ApiResult {
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request was not a JSON object",
        ));
    }
    let api_version = resource.api_version();
    match body["apiVersion"].as_str() {
        Some(v) if v != api_version => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({api_version})"
            )));
        }
        _ => body["apiVersion"] = json!(api_version),
    }
    match body["kind"].as_str() {
        Some(k) if k != resource.kind => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                resource.kind
            )));
        }
        _ => body["kind"] = json!(resource.kind),
    }
    if !body["metadata"].is_object() {
        body["metadata"] = json!({});
    }
    if resource.namespaced {
        match body["metadata"]["namespace"].as_str() {
            Some(ns) if !ns.is_empty() && ns != namespace => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => body["metadata"]["namespace"] = json!(namespace),
        }
    } else if let Some(m) = body["metadata"].as_object_mut() {
        m.remove("namespace");
    }
    Ok(body)
}

/// A write a client made, for its fields' ownership: its manager, and what an apply applied.
#[derive(Clone, Copy)]
pub(crate) struct Write<'a> {
    pub(crate) manager: &'a Manager,
    pub(crate) config: Option<&'a Value>,
}

impl Write<'_> {
    /// Records the write in `new`'s managedFields (over `existing`; None: a create).
    fn record(
        &self,
        state: &KubeState,
        existing: Option<&Value>,
        new: &mut Value,
    ) -> ApiResult<()> {
        let now = crate::sim::timestamps::rfc3339(state.now);
        super::managed::manager::record(existing, new, self.manager, self.config, &now)
    }
}

/// A create the twin makes itself (scenarios, controllers): no manager recorded.
pub(crate) fn create(
    state: &mut KubeState,
    resource: &ResourceType,
    namespace: &str,
    body: Value,
    dry_run: bool,
) -> ApiResult {
    create_by(state, resource, namespace, body, dry_run, None)
}

/// A client's create, its manager recorded as the owner of what it set.
pub(crate) fn create_by(
    state: &mut KubeState,
    resource: &ResourceType,
    namespace: &str,
    body: Value,
    dry_run: bool,
    write: Option<Write<'_>>,
) -> ApiResult {
    let mut body = normalize(resource, namespace, body)?;
    check_namespace(state, resource, namespace, name_of(&body))?;
    if name_of(&body).is_empty() {
        let Some(prefix) = body["metadata"]["generateName"]
            .as_str()
            .map(str::to_string)
        else {
            return Err(ApiError::invalid(
                &resource.qualified_kind(),
                "",
                &[(
                    "metadata.name",
                    "Required value: name or generateName is required".into(),
                )],
            ));
        };
        body["metadata"]["name"] = json!(format!("{prefix}{}", state.next_suffix(5)));
    }
    let name = name_of(&body).to_string();
    body["metadata"]["uid"] = json!(state.store.uid());
    if write.is_some() {
        wipe_on_create(resource, &mut body);
    }
    apply_defaults(resource, &mut body);
    custom_defaults(state, resource, &mut body);
    if resource.group.is_empty() && resource.kind == "Pod" {
        super::priority::admit_pod(state, &mut body)?;
    }
    if is_service(resource) {
        allocate(state, &mut body, None)?;
    }
    if let Some(m) = body["metadata"].as_object_mut() {
        m.remove("managedFields");
    }
    if let Some(write) = write {
        write.record(state, None, &mut body)?;
    }
    validate_create(state, resource, &body)?;
    if is_priority_class(resource) {
        super::priority::admit_class(state, &body)?;
    }
    // The storage's `Create` (etcd3 `store.go`) refuses a set resourceVersion with a plain
    // error, which the handler answers as a 500 without a reason (`ErrResourceVersionSetOnCreate`);
    // a dry run never reaches it.
    if write.is_some() && !dry_run && has_resource_version(&body) {
        return Err(ApiError::new(
            500,
            "",
            "resourceVersion should not be set on objects to be created",
        ));
    }
    let key = store_key(resource);
    if state.store.get(&key, namespace_of(&body), &name).is_some() {
        return Err(ApiError::already_exists(resource, &name));
    }
    if resource.kind == "CustomResourceDefinition" && resource.group == "apiextensions.k8s.io" {
        let mut probe = state.registry.clone();
        probe.register_crd(&body).map_err(|msg| {
            ApiError::invalid(&resource.qualified_kind(), &name, &[("spec", msg)])
        })?;
        if !dry_run {
            state.registry = probe;
            body["status"] = crd_status(&body);
        }
    }
    if dry_run {
        return Ok(body);
    }
    let now = state.now;
    Ok(state.store.create(&key, body, now))
}

/// A custom resource's schema defaults (the CRD's version schema), applied as the
/// apiextensions-apiserver decodes the request.
fn custom_defaults(state: &KubeState, resource: &ResourceType, object: &mut Value) {
    if super::resources::is_built_in(resource) {
        return;
    }
    if let Some(schema) = state.crd_schema(resource) {
        super::structural_defaults::default(schema, object);
        super::structural_defaults::prune_nulls(schema, object);
    }
}

fn is_priority_class(resource: &ResourceType) -> bool {
    resource.group == "scheduling.k8s.io" && resource.kind == "PriorityClass"
}

/// The versioner's `ObjectResourceVersion` parses and is not 0 (one that does not parse is
/// let through and cleared, as etcd3's `Create` checks `err == nil && version != 0`).
fn has_resource_version(object: &Value) -> bool {
    object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|v| v != 0)
}

fn crd_status(crd: &Value) -> Value {
    json!({
        "acceptedNames": crd["spec"]["names"],
        "storedVersions": crd["spec"]["versions"].as_array().into_iter().flatten().filter_map(|v| v["name"].as_str()).take(1).collect::<Vec<_>>(),
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found"},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"},
        ],
    })
}

/// Whether the object is there, without copying it.
pub(crate) fn exists(
    state: &KubeState,
    resource: &ResourceType,
    namespace: &str,
    name: &str,
) -> bool {
    state
        .store
        .get(
            &store_key(resource),
            if resource.namespaced { namespace } else { "" },
            name,
        )
        .is_some()
}

pub(crate) fn get(
    state: &KubeState,
    resource: &ResourceType,
    namespace: &str,
    name: &str,
) -> ApiResult {
    state
        .store
        .get(
            &store_key(resource),
            if resource.namespaced { namespace } else { "" },
            name,
        )
        .cloned()
        .ok_or_else(|| ApiError::not_found(resource, name))
}

/// PUT the twin makes itself: no manager recorded.
pub(crate) fn replace(
    state: &mut KubeState,
    resource: &ResourceType,
    namespace: &str,
    name: &str,
    body: Value,
    subresource: Option<&str>,
) -> ApiResult {
    replace_by(state, resource, namespace, name, body, subresource, None)
}

/// PUT: the whole object, or its status subresource; a client's manager takes over what it
/// changed.
pub(crate) fn replace_by(
    state: &mut KubeState,
    resource: &ResourceType,
    namespace: &str,
    name: &str,
    body: Value,
    subresource: Option<&str>,
    write: Option<Write<'_>>,
) -> ApiResult {
    let body = normalize(resource, namespace, body)?;
    if name_of(&body) != name {
        return Err(name_mismatch(name_of(&body), name));
    }
    let existing = get(state, resource, namespace, name)?;
    // A uid in the body is a precondition (rest/update.go's defaultUpdatedObjectInfo), checked
    // before the resourceVersion, as storage's Preconditions.Check comes first.
    let (given, stored) = (
        body["metadata"]["uid"].as_str().unwrap_or_default(),
        existing["metadata"]["uid"].as_str().unwrap_or_default(),
    );
    if !given.is_empty() && given != stored {
        return Err(ApiError::conflict_because(
            resource,
            name,
            &format!(
                "Precondition failed: UID in precondition: {given}, UID in object meta: {stored}"
            ),
        ));
    }
    if let Some(rv) = body["metadata"]["resourceVersion"].as_str()
        && !rv.is_empty()
        && Some(rv) != existing["metadata"]["resourceVersion"].as_str()
    {
        return Err(ApiError::conflict(resource, name));
    }
    store_update(state, resource, &existing, body, subresource, write)
}

fn store_update(
    state: &mut KubeState,
    resource: &ResourceType,
    existing: &Value,
    mut updated: Value,
    subresource: Option<&str>,
    write: Option<Write<'_>>,
) -> ApiResult {
    match subresource {
        // Writes to /status change only status; writes to the object never change status.
        Some("status") => {
            let mut object = existing.clone();
            object["status"] = updated["status"].take();
            updated = object;
        }
        Some("scale") => {
            let mut object = existing.clone();
            object["spec"]["replicas"] = updated["spec"]["replicas"].clone();
            updated = object;
        }
        _ => {
            if resource.subresources.iter().any(|s| s == "status") && !existing["status"].is_null()
            {
                updated["status"] = existing["status"].clone();
            }
        }
    }
    apply_defaults(resource, &mut updated);
    custom_defaults(state, resource, &mut updated);
    if subresource.is_none() && resource.group.is_empty() && resource.kind == "Pod" {
        super::priority::keep_on_update(existing, &mut updated);
    }
    if subresource.is_none() && is_service(resource) {
        allocate(state, &mut updated, Some(existing))?;
    }
    // The stored ownership, not what the body says of it.
    updated["metadata"]["managedFields"] = existing["metadata"]["managedFields"].clone();
    if updated["metadata"]["managedFields"].is_null()
        && let Some(m) = updated["metadata"].as_object_mut()
    {
        m.remove("managedFields");
    }
    if let Some(write) = write {
        write.record(state, Some(existing), &mut updated)?;
    }
    if subresource.is_none() {
        validate_update(state, resource, existing, &updated)?;
        if is_priority_class(resource) {
            super::priority::admit_class(state, &updated)?;
        }
    } else {
        validate(state, resource, &updated)?;
    }
    if resource.kind == "CustomResourceDefinition" {
        let mut probe = state.registry.clone();
        probe.register_crd(&updated).map_err(|msg| {
            ApiError::invalid(
                &resource.qualified_kind(),
                name_of(&updated),
                &[("spec", msg)],
            )
        })?;
        state.registry = probe;
    }
    Ok(state.store.update(&store_key(resource), updated))
}

/// The Scale object of a Deployment, ReplicaSet or StatefulSet.
pub(crate) fn scale_of(object: &Value) -> Value {
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": object["metadata"]["name"],
            "namespace": object["metadata"]["namespace"],
            "uid": object["metadata"]["uid"],
            "resourceVersion": object["metadata"]["resourceVersion"],
            "creationTimestamp": object["metadata"]["creationTimestamp"],
        },
        "spec": {"replicas": object["spec"]["replicas"]},
        "status": {"replicas": object["status"]["replicas"].as_i64().unwrap_or(0), "selector": selector_string(&object["spec"]["selector"])},
    })
}

fn selector_string(selector: &Value) -> String {
    selector["matchLabels"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the PATCH request's parts one to one"
)]
pub(crate) fn patch(
    state: &mut KubeState,
    resource: &ResourceType,
    namespace: &str,
    name: &str,
    kind: PatchType,
    body: &Value,
    subresource: Option<&str>,
    dry_run: bool,
    manager: &Manager,
    check: &mut dyn FnMut(&KubeState, &Value, &mut Value) -> ApiResult<()>,
) -> ApiResult {
    let built_in = super::resources::is_built_in(resource);
    let write = Write {
        manager,
        config: (kind == PatchType::Apply).then_some(body),
    };
    let existing = match get(state, resource, namespace, name) {
        Ok(existing) => existing,
        Err(_) if kind == PatchType::Apply && subresource.is_none() => {
            // Server-side apply creates what does not exist yet.
            return create_by(
                state,
                resource,
                namespace,
                body.clone(),
                dry_run,
                Some(write),
            );
        }
        Err(error) => return Err(error),
    };
    if kind == PatchType::Apply && name_of(body) != name && !name_of(body).is_empty() {
        return Err(name_mismatch(name_of(body), name));
    }
    let base = match subresource {
        Some("scale") => scale_of(&existing),
        _ => existing.clone(),
    };
    let patched = apply_patch(&base, body, kind, built_in).map_err(|error| match error {
        PatchError::Decode(message) => ApiError::bad_request(message),
        PatchError::Apply => {
            let mut error = ApiError::new(
                422,
                "Invalid",
                "the server rejected our request due to an error in our request",
            );
            error.details = json!({});
            error
        }
        // negotiation.NewUnsupportedMediaTypeError's words.
        PatchError::UnsupportedMediaType => ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                super::patch::CUSTOM_PATCH_TYPES.join(", ")
            ),
        ),
    })?;
    let patched = match subresource {
        Some("scale") => {
            let mut object = existing.clone();
            object["spec"]["replicas"] = patched["spec"]["replicas"].clone();
            object
        }
        _ => patched,
    };
    let mut patched = normalize(resource, namespace, patched)?;
    patched["metadata"]["name"] = json!(name);
    // Field validation of what the patch made (unknown fields dropped or refused).
    check(state, &existing, &mut patched)?;
    if dry_run {
        // A dry run meets the same conflicts.
        write.record(state, Some(&existing), &mut patched)?;
        return Ok(patched);
    }
    let stored = store_update(
        state,
        resource,
        &existing,
        patched,
        subresource.filter(|s| *s != "scale"),
        Some(write),
    )?;
    Ok(if subresource == Some("scale") {
        scale_of(&stored)
    } else {
        stored
    })
}

/// A deleted namespace: Terminating now, gone once the namespace controller has removed what
/// is in it.
fn terminate_namespace(
    state: &mut KubeState,
    resource: &ResourceType,
    mut namespace: Value,
) -> Value {
    if namespace["status"]["phase"] == "Terminating" {
        return namespace;
    }
    let name = name_of(&namespace).to_string();
    namespace["metadata"]["deletionTimestamp"] = json!(crate::sim::timestamps::rfc3339(state.now));
    namespace["status"]["phase"] = json!("Terminating");
    let updated = state.store.update(&store_key(resource), namespace);
    state.schedule(
        NAMESPACE_TERMINATION,
        super::state::Timer::NamespaceFinalize { name },
    );
    updated
}

/// DELETE: removes the object now (the twin has no finalizers); dependents go in the next
/// garbage collection unless `orphan` is asked for.
/// A delete's `preconditions` (DeleteOptions): the object's uid and resourceVersion must be
/// the ones given, or the delete is a 409 Conflict worded as the apiserver's storage words it
/// (a client deleting what it last read, as a lock's holder gives back its Lease).
pub(crate) fn check_preconditions(
    state: &KubeState,
    resource: &ResourceType,
    namespace: &str,
    name: &str,
    preconditions: &Value,
) -> Result<(), ApiError> {
    if !preconditions.is_object() {
        return Ok(());
    }
    let namespace = if resource.namespaced { namespace } else { "" };
    let existing = get(state, resource, namespace, name)?;
    for (field, label) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
        let Some(wanted) = preconditions[field].as_str() else {
            continue;
        };
        let actual = existing["metadata"][field].as_str().unwrap_or_default();
        if wanted != actual {
            return Err(ApiError::conflict_because(
                resource,
                name,
                &format!(
                    "Precondition failed: {label} in precondition: {wanted}, {label} in object meta: {actual}"
                ),
            ));
        }
    }
    Ok(())
}

pub(crate) fn delete(
    state: &mut KubeState,
    resource: &ResourceType,
    namespace: &str,
    name: &str,
    orphan: bool,
    dry_run: bool,
) -> ApiResult {
    let namespace = if resource.namespaced { namespace } else { "" };
    let existing = get(state, resource, namespace, name)?;
    if dry_run {
        return Ok(existing);
    }
    if resource.group.is_empty() && resource.kind == "Namespace" {
        return Ok(terminate_namespace(state, resource, existing));
    }
    let removed = state
        .store
        .remove(&store_key(resource), namespace, name)
        .unwrap_or(existing);
    if orphan {
        let uid = removed["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        super::ownership::orphan_dependents(state, &uid);
    }
    if resource.kind == "CustomResourceDefinition" {
        let group = removed["spec"]["group"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let plural = removed["spec"]["names"]["plural"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        state.registry.unregister_crd(&group, &plural);
    }
    if resource.kind == "Pod" {
        state.forget_logs(namespace, name);
    }
    Ok(removed)
}
