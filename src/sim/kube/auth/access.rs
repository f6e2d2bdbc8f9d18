//! Who a request comes from and whether it may go on, in the apiserver's order: the admin
//! endpoints' token, authentication, impersonation, then RBAC; and the audit of what was let
//! through.

use http::Request;
use hyper::body::Incoming;

use super::authentication::{self, User};
use super::authorization;
use super::impersonation;
use super::request_info::{self, RequestAttributes};
use crate::sim::kube::http::incoming::{header, header_text};
use crate::sim::kube::http::routes::{self, Query, Route};
use crate::sim::kube::storage::api;
use crate::sim::kube::storage::status::ApiError;
use crate::sim::recording::Recorded;
use crate::sim::request_path;
use crate::sim::twin::Twin;

/// EKS's answer to a request without a credential it takes: nothing more than this.
fn unauthorized() -> ApiError {
    ApiError::new(401, "Unauthorized", "Unauthorized")
}

/// The user a request acts as and, when they are to be checked or audited, its RBAC
/// attributes; or the error that refuses it.
pub(crate) fn admit(
    twin: &Twin,
    request: &Request<Incoming>,
    path: &str,
    query: &Query,
) -> Result<(User, Option<RequestAttributes>), ApiError> {
    let credential = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok());
    if request_path::is_admin_endpoint(path) && !twin.secrets.is_admin(credential) {
        return Err(unauthorized());
    }
    let user = authentication::authenticate(twin, credential).map_err(|why| {
        twin.refusals.record(why);
        unauthorized()
    })?;
    record(twin, request, path);
    let user = impersonate(twin, request, user)?;
    let admin = user.groups.iter().any(|g| g == "system:masters");
    // The admin (every runbook's own client) needs no decision, nor its cost, unless audited.
    let attributes = (!admin || twin.audit.is_enabled())
        .then(|| request_info::attributes(request.method().as_str(), path, query))
        .flatten();
    if !admin && let Some(attributes) = &attributes {
        authorize(twin, request, path, &user, attributes)?;
    }
    Ok((user, attributes))
}

/// Keeps the request for `GET /twin/record` while recording is on (the twin's own endpoints
/// are not the lab's traffic).
fn record(twin: &Twin, request: &Request<Incoming>, path: &str) {
    if !twin.recording.is_on() || request_path::is_admin_endpoint(path) {
        return;
    }
    twin.recording.keep(Recorded {
        service: "kubernetes".into(),
        method: request.method().to_string(),
        path: request
            .uri()
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default(),
        content_type: header_text(request.headers(), "content-type"),
        target: None,
        body: String::new(),
    });
}

/// The user the `Impersonate-*` headers ask for, when the caller may impersonate them.
fn impersonate(twin: &Twin, request: &Request<Incoming>, user: User) -> Result<User, ApiError> {
    match impersonation::requested(request.headers())? {
        None => Ok(user),
        Some(_) if user.is_anonymous() => Err(unauthorized()),
        Some(wanted) => {
            let refused = twin.read_kube(|s| {
                wanted
                    .checks()
                    .into_iter()
                    .find(|check| !authorization::allowed(s, &user, check))
            });
            if let Some(check) = refused {
                return Err(authorization::forbidden(&user, &check));
            }
            let policies = twin.read_aws(|s| authentication::policies_of_username(s, &wanted.user));
            Ok(wanted.into_user(policies))
        }
    }
}

/// RBAC's decision on the request, and on the create an apply of a missing object also is.
fn authorize(
    twin: &Twin,
    request: &Request<Incoming>,
    path: &str,
    user: &User,
    attributes: &RequestAttributes,
) -> Result<(), ApiError> {
    let creates = creating_apply(twin, request, path, attributes);
    let refused = twin.read_kube(|s| {
        std::iter::once(attributes)
            .chain(creates.as_ref())
            .find(|a| !authorization::allowed(s, user, a))
            .cloned()
    });
    match refused {
        // Anonymous requests reach only the health endpoints on EKS; the rest are 401.
        Some(_) if user.is_anonymous() => Err(unauthorized()),
        Some(refused) => Err(authorization::forbidden(user, &refused)),
        None => Ok(()),
    }
}

/// The `create` a server-side apply of an object that does not exist yet also needs, as the
/// API server asks it (an apply may create; other patches of a missing object are 404).
fn creating_apply(
    twin: &Twin,
    request: &Request<Incoming>,
    path: &str,
    attributes: &RequestAttributes,
) -> Option<RequestAttributes> {
    if header(request, "content-type") != "application/apply-patch+yaml" {
        return None;
    }
    let Route::Resource(target) = routes::parse(path) else {
        return None;
    };
    let missing = twin.read_kube(|s| {
        let resource = s
            .registry
            .by_plural(&target.group, &target.version, &target.plural)?;
        let name = target.name.as_deref()?;
        let namespace = target.namespace.as_deref().unwrap_or_default();
        Some(!api::exists(s, resource, namespace, name))
    });
    if missing == Some(true) {
        request_info::created_by_apply(attributes, 201)
    } else {
        None
    }
}

/// Audits what was served (when auditing is on), with the create an apply turned out to be.
pub(crate) fn audit(twin: &Twin, attributes: Option<RequestAttributes>, status: u16) {
    let Some(attributes) = attributes.filter(|_| twin.audit.is_enabled()) else {
        return;
    };
    if let Some(create) = request_info::created_by_apply(&attributes, status) {
        twin.audit.record(create);
    }
    twin.audit.record(attributes);
}
