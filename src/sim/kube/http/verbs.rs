//! The REST verbs on one object of a resource type (get, its scale, create, replace, patch,
//! delete, a ServiceAccount's token), each answering a status code and an object with the
//! warnings field validation found, or the apiserver's error.

use http::Request;
use hyper::body::Incoming;
use serde_json::Value;

use super::incoming::{header, read_body, read_body_and_bytes, read_protobuf_or_json};
use super::routes::Query;
use super::tables;
use crate::sim::kube::auth::token_request;
use crate::sim::kube::storage::api;
use crate::sim::kube::storage::fields::directive::Directive;
use crate::sim::kube::storage::fields::request::{check_apply, check_patch, check_write};
use crate::sim::kube::storage::managed::manager::{Manager, Operation};
use crate::sim::kube::storage::patch::PatchType;
use crate::sim::kube::storage::resources::ResourceType;
use crate::sim::kube::storage::state::KubeState;
use crate::sim::kube::storage::status::ApiError;
use crate::sim::kube::storage::warnings as strategy;
use crate::sim::twin::Twin;

/// One request on a resource type, as the verbs read it.
pub(super) struct Call<'a> {
    pub(super) twin: &'a Twin,
    pub(super) resource: &'a ResourceType,
    /// The path's namespace; `None` for a cluster-scoped path or one across namespaces.
    pub(super) namespace: Option<&'a str>,
    pub(super) query: &'a Query,
}

impl Call<'_> {
    fn namespace(&self) -> &str {
        self.namespace.unwrap_or_default()
    }

    fn dry_run(&self) -> bool {
        self.query.get("dryRun") == Some("All")
    }

    /// A delete's dry run: asked in the query or, as kubectl's `--dry-run=server` asks it, in
    /// the DeleteOptions body (`{"dryRun": ["All"]}`, cli-runtime's `DeleteWithOptions`).
    pub(super) fn dry_run_delete(&self, options: &Value) -> bool {
        self.dry_run()
            || options["dryRun"]
                .as_array()
                .is_some_and(|modes| modes.iter().any(|m| m == "All"))
    }

    fn directive(&self) -> Directive {
        Directive::from_query(self.query.get("fieldValidation"))
    }

    /// Who writes: `fieldManager` (required for an apply), else the User-Agent's first word;
    /// `force` only for an apply, as the API server takes it.
    fn manager(
        &self,
        user_agent: &str,
        kind: Option<PatchType>,
        subresource: Option<&str>,
    ) -> Result<Manager, ApiError> {
        let force = match self.query.get("force") {
            None | Some("false") => false,
            Some("true") if kind == Some(PatchType::Apply) => true,
            Some("true") => {
                return Err(ApiError::bad_request(
                    "force: Invalid value: true: may not be specified for non-apply patch",
                ));
            }
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "force: Invalid value: {other:?}: not a boolean"
                )));
            }
        };
        let operation = match kind {
            Some(PatchType::Apply) => Operation::Apply { force },
            _ => Operation::Update,
        };
        Manager::of_request(
            self.query.get("fieldManager"),
            user_agent,
            operation,
            subresource,
        )
    }
}

/// A verb's success: the status code, the object, and field validation's warnings.
pub(super) struct Answer {
    pub(super) code: u16,
    pub(super) object: Value,
    pub(super) warnings: Vec<String>,
}

impl Answer {
    pub(super) fn new(code: u16, object: Value) -> Self {
        Self {
            code,
            object,
            warnings: Vec::new(),
        }
    }
}

/// `POST .../serviceaccounts/NAME/token`.
pub(super) async fn token(
    call: &Call<'_>,
    account: &str,
    request: Request<Incoming>,
) -> Result<Answer, ApiError> {
    let body = read_protobuf_or_json(request).await?;
    token_request::issue(call.twin, call.namespace(), account, &body).map(|t| Answer::new(201, t))
}

pub(super) fn scale(call: &Call, name: &str) -> Result<Answer, ApiError> {
    call.twin
        .read_kube(|s| api::get(s, call.resource, call.namespace(), name))
        .map(|o| Answer::new(200, api::scale_of(&o)))
}

/// The object, or a one-row Table of it when the Accept header asks for one.
pub(super) fn get(call: &Call, name: &str, accept: &str) -> Result<Answer, ApiError> {
    call.twin.read_kube(|s| {
        let object = api::get(s, call.resource, call.namespace(), name)?;
        if !tables::wants_table(accept) {
            return Ok(Answer::new(200, object));
        }
        let include = call.query.get("includeObject").unwrap_or("Metadata");
        let table = tables::table(
            call.resource,
            std::slice::from_ref(&object),
            s.now,
            include,
            s.store.resource_version(),
            true,
        );
        Ok(Answer::new(200, table))
    })
}

pub(super) async fn create(
    call: &Call<'_>,
    request: Request<Incoming>,
) -> Result<Answer, ApiError> {
    let manager = call.manager(header(&request, "user-agent"), None, None)?;
    let (bytes, mut body) = read_body_and_bytes(request).await?;
    call.twin.kube(|s| {
        let mut warnings = check_write(s, call.resource, &bytes, &mut body, call.directive())?;
        let write = api::Write {
            manager: &manager,
            config: None,
        };
        let object = api::create_by(
            s,
            call.resource,
            call.namespace(),
            body,
            call.dry_run(),
            Some(write),
        )?;
        warnings.extend(strategy::on_create(call.resource, &object));
        Ok(Answer {
            code: 201,
            object,
            warnings,
        })
    })
}

/// `PUT` of the object or of a subresource (whose body field validation does not check).
pub(super) async fn replace(
    call: &Call<'_>,
    name: &str,
    subresource: Option<&str>,
    request: Request<Incoming>,
) -> Result<Answer, ApiError> {
    let manager = call.manager(header(&request, "user-agent"), None, subresource)?;
    let (bytes, mut body) = read_body_and_bytes(request).await?;
    call.twin.kube(|s| {
        let mut warnings = Vec::new();
        if subresource.is_none() {
            warnings = check_write(s, call.resource, &bytes, &mut body, call.directive())?;
        }
        let write = api::Write {
            manager: &manager,
            config: None,
        };
        let object = api::replace_by(
            s,
            call.resource,
            call.namespace(),
            name,
            body,
            subresource,
            Some(write),
        )?;
        if subresource.is_none() {
            warnings.extend(strategy::on_update(call.resource, &object));
        }
        Ok(Answer {
            code: 200,
            object,
            warnings,
        })
    })
}

fn unsupported_patch(content_type: &str) -> ApiError {
    ApiError::new(
        415,
        "UnsupportedMediaType",
        format!(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {content_type:?})"
        ),
    )
}

pub(super) async fn patch(
    call: &Call<'_>,
    name: &str,
    subresource: Option<&str>,
    request: Request<Incoming>,
) -> Result<Answer, ApiError> {
    let content_type = header(&request, "content-type").to_string();
    let kind = PatchType::from_content_type(&content_type)
        .ok_or_else(|| unsupported_patch(&content_type))?;
    let manager = call.manager(header(&request, "user-agent"), Some(kind), subresource)?;
    let (bytes, body) = read_body_and_bytes(request).await?;
    call.twin.kube(|s| {
        let patch = Patch {
            name,
            subresource,
            kind,
            manager: &manager,
        };
        apply_patch(s, call, &patch, &bytes, &body)
    })
}

/// A PATCH request's parts past its body.
struct Patch<'a> {
    name: &'a str,
    subresource: Option<&'a str>,
    kind: PatchType,
    manager: &'a Manager,
}

/// An apply that creates its object answers 201, as the API server does (and is authorized as
/// a create too).
fn apply_patch(
    s: &mut KubeState,
    call: &Call,
    patch: &Patch<'_>,
    bytes: &[u8],
    body: &Value,
) -> Result<Answer, ApiError> {
    let Patch {
        name,
        subresource,
        kind,
        manager,
    } = *patch;
    let (resource, namespace) = (call.resource, call.namespace());
    let existed = api::exists(s, resource, namespace, name);
    if kind == PatchType::Apply {
        check_apply(s, resource, namespace, name, body)?;
    }
    let json_patch = kind == PatchType::Json;
    let directive = call.directive();
    let mut warnings = Vec::new();
    let mut check = |s: &KubeState, existing: &Value, patched: &mut Value| {
        if kind == PatchType::Apply || subresource.is_some() {
            return Ok(());
        }
        warnings = check_patch(s, resource, bytes, json_patch, existing, patched, directive)?;
        Ok(())
    };
    let object = api::patch(
        s,
        resource,
        namespace,
        name,
        kind,
        body,
        subresource,
        call.dry_run(),
        manager,
        &mut check,
    )?;
    if subresource.is_none() {
        warnings.extend(if existed {
            strategy::on_update(resource, &object)
        } else {
            strategy::on_create(resource, &object)
        });
    }
    Ok(Answer {
        code: if existed { 200 } else { 201 },
        object,
        warnings,
    })
}

/// `DELETE`, orphaning the dependents when the query or the DeleteOptions body ask.
pub(super) async fn delete(
    call: &Call<'_>,
    name: &str,
    request: Request<Incoming>,
) -> Result<Answer, ApiError> {
    let body = read_body(request).await.unwrap_or(Value::Null);
    let orphan = call.query.get("propagationPolicy") == Some("Orphan")
        || body["propagationPolicy"] == "Orphan"
        || body["orphanDependents"] == true;
    call.twin
        .kube(|s| {
            api::check_preconditions(
                s,
                call.resource,
                call.namespace(),
                name,
                &body["preconditions"],
            )?;
            api::delete(
                s,
                call.resource,
                call.namespace(),
                name,
                orphan,
                call.dry_run_delete(&body),
            )
        })
        .map(|o| Answer::new(200, o))
}
