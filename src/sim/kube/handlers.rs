//! Routes each request to discovery, health, the REST verbs, watch, logs, exec or the admin
//! endpoints, and encodes the answer as the apiserver does.

use std::sync::Arc;

use http::{Method, Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::{Value, json};

use super::api::{self, ListOptions};
use super::fields::directive::{Directive, warning_header};
use super::fields::request::{check_apply, check_patch, check_write};
use super::health;
use super::patch::PatchType;
use super::request_info;
use super::resources::ResourceType;
use super::routes::{self, Query, ResourcePath, Route};
use super::selectors::{FieldSelector, LabelSelector};
use super::server::{Body, json_response, text_response};
use super::state::KubeState;
use super::status::ApiError;
use super::{
    admin, authentication, authorization, discovery, exec, impersonation, logs, openapi, protobuf,
    reviews, tables, token_request, watch,
};
use crate::sim::recording::Recorded;
use crate::sim::request_path;
use crate::sim::twin::Twin;

fn header<'a>(request: &'a Request<Incoming>, name: &str) -> &'a str {
    request
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

pub(crate) fn error_response(error: &ApiError) -> Response<Body> {
    json_response(error.code, &error.to_status())
}

fn not_found_page() -> Response<Body> {
    text_response(404, "404 page not found\n".into())
}

/// Aggregated discovery, answered with its own media type (kubectl checks it).
fn aggregated_response(twin: &Twin, core: bool) -> Response<Body> {
    let document = twin.read_kube(|s| discovery::aggregated(&s.registry, core));
    let mut response = json_response(200, &document);
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(discovery::AGGREGATED_V2),
    );
    response
}

/// EKS's answer to a request without a credential it takes: nothing more than this.
fn unauthorized() -> Response<Body> {
    error_response(&ApiError::new(401, "Unauthorized", "Unauthorized"))
}

/// The `create` a server-side apply of an object that does not exist yet also needs, as the
/// API server asks it (an apply may create; other patches of a missing object are 404).
fn creating_apply(
    twin: &Twin,
    request: &Request<Incoming>,
    path: &str,
    attributes: &request_info::RequestAttributes,
) -> Option<request_info::RequestAttributes> {
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

fn header_text(headers: &http::HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

pub(crate) async fn handle(twin: Arc<Twin>, request: Request<Incoming>) -> Response<Body> {
    // Every check below and the router read this one normalised path.
    let path = request_path::normalized(request.uri().path());
    let query = Query::parse(request.uri().query());
    let credential = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok());
    if request_path::is_admin_endpoint(&path) && !twin.secrets.is_admin(credential) {
        return unauthorized();
    }
    let user = match authentication::authenticate(&twin, credential) {
        Ok(user) => user,
        Err(why) => {
            twin.refusals.record(why);
            return unauthorized();
        }
    };
    if twin.recording.is_on() && !request_path::is_admin_endpoint(&path) {
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
    let user = match impersonation::requested(request.headers()) {
        Err(error) => return error_response(&error),
        Ok(None) => user,
        Ok(Some(_)) if user.is_anonymous() => return unauthorized(),
        Ok(Some(wanted)) => {
            let refused = twin.read_kube(|s| {
                wanted
                    .checks()
                    .into_iter()
                    .find(|check| !authorization::allowed(s, &user, check))
            });
            if let Some(check) = refused {
                return error_response(&authorization::forbidden(&user, &check));
            }
            let policies = twin.read_aws(|s| authentication::policies_of_username(s, &wanted.user));
            wanted.into_user(policies)
        }
    };
    let admin = user.groups.iter().any(|g| g == "system:masters");
    // The admin (every runbook's own client) needs no decision, nor its cost, unless audited.
    let attributes = (!admin || twin.audit.is_enabled())
        .then(|| request_info::attributes(request.method().as_str(), &path, &query))
        .flatten();
    if !admin && let Some(attributes) = &attributes {
        let creates = creating_apply(&twin, &request, &path, attributes);
        let refused = twin.read_kube(|s| {
            std::iter::once(attributes)
                .chain(creates.as_ref())
                .find(|a| !authorization::allowed(s, &user, a))
                .cloned()
        });
        if let Some(refused) = refused {
            if user.is_anonymous() {
                // Anonymous requests reach only the health endpoints on EKS; the rest are 401.
                return unauthorized();
            }
            return error_response(&authorization::forbidden(&user, &refused));
        }
    }
    let response = serve(twin.clone(), request, &path, query, &user).await;
    if let Some(attributes) = attributes.filter(|_| twin.audit.is_enabled()) {
        if let Some(create) =
            request_info::created_by_apply(&attributes, response.status().as_u16())
        {
            twin.audit.record(create);
        }
        twin.audit.record(attributes);
    }
    response
}

async fn serve(
    twin: Arc<Twin>,
    request: Request<Incoming>,
    path: &str,
    query: Query,
    user: &authentication::User,
) -> Response<Body> {
    let aggregated = discovery::wants_aggregated(header(&request, "accept"));
    match routes::parse(path) {
        Route::Version => {
            json_response(200, &discovery::version(twin.read_kube(|s| s.git_version)))
        }
        Route::CoreVersions if aggregated => aggregated_response(&twin, true),
        Route::CoreVersions => json_response(200, &discovery::core_versions()),
        Route::GroupList if aggregated => aggregated_response(&twin, false),
        Route::GroupList => {
            json_response(200, &twin.read_kube(|s| discovery::group_list(&s.registry)))
        }
        Route::Group { group } => match twin.read_kube(|s| discovery::group(&s.registry, &group)) {
            Some(doc) => json_response(200, &doc),
            None => not_found_page(),
        },
        Route::ResourceList { group, version } => {
            match twin.read_kube(|s| discovery::resource_list(&s.registry, &group, &version)) {
                Some(doc) => json_response(200, &doc),
                None => not_found_page(),
            }
        }
        Route::Health { endpoint, check } => {
            let excludes: Vec<String> = query.all("exclude").to_vec();
            let failing = twin.read_kube(|s| s.failing_checks.clone());
            let (code, body) = health::answer(
                endpoint,
                check.as_deref(),
                query.has("verbose"),
                &excludes,
                &failing,
            );
            text_response(code, body)
        }
        Route::OpenApiRoot => json_response(200, &twin.read_kube(|s| openapi::root(&s.registry))),
        Route::OpenApi { path } => {
            match twin.read_kube(|s| openapi::group_version(&s.registry, &path)) {
                Some(doc) => json_response(200, &doc),
                None => not_found_page(),
            }
        }
        Route::Admin { path } => admin::handle(&twin, request.method(), &path, &query),
        Route::Resource(target)
            if request.method() == Method::POST
                && target.name.is_none()
                && reviews::is_review(&target.group, &target.version, &target.plural) =>
        {
            let now =
                crate::sim::timestamps::rfc3339(crate::clock::Clock::now(twin.clock.as_ref()));
            match read_protobuf_or_json(request).await {
                Ok(body) => match reviews::answer(
                    &twin,
                    user,
                    &target.plural,
                    target.namespace.as_deref(),
                    &body,
                    &now,
                ) {
                    Ok(review) => json_response(201, &review),
                    Err(error) => error_response(&error),
                },
                Err(error) => error_response(&error),
            }
        }
        Route::Resource(target) => resource(twin, request, target, query).await,
        Route::NotFound => not_found_page(),
    }
}

/// A review's or token request's body: JSON, or the protobuf client-go sends for `kubectl auth
/// can-i` and `kubectl create token`.
async fn read_protobuf_or_json(request: Request<Incoming>) -> Result<Value, ApiError> {
    let bytes = body_bytes(request).await?;
    if let Some(review) = protobuf::reviews::decode(&bytes) {
        return Ok(review);
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::bad_request(format!("the review is neither JSON nor protobuf: {e}")))
}

/// The most a request body may hold, as kube-apiserver's `MaxRequestBodyBytes` (3 MiB): a
/// client cannot fill the lab's memory with one request.
const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

async fn body_bytes(request: Request<Incoming>) -> Result<bytes::Bytes, ApiError> {
    Ok(
        http_body_util::Limited::new(request.into_body(), MAX_BODY_BYTES)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    ApiError::new(
                        413,
                        "RequestEntityTooLarge",
                        format!("Request entity too large: limit is {MAX_BODY_BYTES}"),
                    )
                } else {
                    ApiError::bad_request(format!("reading the request body: {e}"))
                }
            })?
            .to_bytes(),
    )
}

async fn read_body(request: Request<Incoming>) -> Result<Value, ApiError> {
    read_body_and_bytes(request).await.map(|(_, body)| body)
}

/// The body as sent (field validation reads its keys in order, duplicates too) and parsed.
async fn read_body_and_bytes(
    request: Request<Incoming>,
) -> Result<(bytes::Bytes, Value), ApiError> {
    let bytes = body_bytes(request).await?;
    if bytes.is_empty() {
        return Ok((bytes, Value::Null));
    }
    // Kubernetes' protobuf envelope starts with `k8s\0` (client-go's default for built-in
    // kinds: every imperative `kubectl create`, `run`, `expose`).
    if bytes.starts_with(b"k8s\0") {
        return protobuf::objects::decode_object(&bytes)
            .map(|body| (bytes, body))
            .ok_or_else(|| {
                ApiError::new(
                    415,
                    "UnsupportedMediaType",
                    "the body is protobuf of a kind the lab twin has no definition of: send it as JSON or YAML (`kubectl create -f`)",
                )
            });
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| ApiError::bad_request("the request body is not UTF-8"))?;
    let body = serde_json::from_str(text)
        .or_else(|_| serde_saphyr::from_str::<Value>(text))
        .map_err(|e| {
            ApiError::bad_request(format!("the request body is neither JSON nor YAML: {e}"))
        })?;
    Ok((bytes, body))
}

fn list_options(query: &Query) -> Result<ListOptions, ApiError> {
    let labels = query
        .get("labelSelector")
        .filter(|s| !s.is_empty())
        .map(LabelSelector::parse)
        .transpose()
        .map_err(ApiError::bad_request)?;
    let fields = query
        .get("fieldSelector")
        .filter(|s| !s.is_empty())
        .map(FieldSelector::parse)
        .transpose()
        .map_err(ApiError::bad_request)?;
    let limit = query
        .get("limit")
        .map(|l| {
            l.parse::<usize>()
                .map_err(|_| ApiError::bad_request(format!("invalid limit: {l}")))
        })
        .transpose()?;
    Ok(ListOptions {
        labels,
        fields,
        limit,
        continue_token: query
            .get("continue")
            .filter(|c| !c.is_empty())
            .map(str::to_string),
    })
}

fn list_kind(resource: &ResourceType) -> String {
    format!("{}List", resource.kind)
}

async fn resource(
    twin: Arc<Twin>,
    request: Request<Incoming>,
    target: ResourcePath,
    query: Query,
) -> Response<Body> {
    let Some(resource) = twin.read_kube(|s| {
        s.registry
            .by_plural(&target.group, &target.version, &target.plural)
            .cloned()
    }) else {
        return error_response(&ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        ));
    };
    let namespace = target.namespace.clone().unwrap_or_default();
    if resource.namespaced && target.name.is_some() && target.namespace.is_none() {
        return error_response(&ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        ));
    }
    let subresource = target.subresource.as_deref();
    if let Some(sub) = subresource
        && !resource.subresources.iter().any(|s| s == sub)
    {
        return error_response(&ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        ));
    }
    let accept = header(&request, "accept").to_string();
    let dry_run = query.get("dryRun") == Some("All");
    let directive = Directive::from_query(query.get("fieldValidation"));
    let mut warnings: Vec<String> = Vec::new();
    let method = request.method().clone();
    let name = target.name.clone();
    let result: Result<(u16, Value), ApiError> = match (method, name.as_deref(), subresource) {
        (Method::POST, Some(account), Some("token")) => {
            match read_protobuf_or_json(request).await {
                Ok(body) => {
                    token_request::issue(&twin, &namespace, account, &body).map(|t| (201, t))
                }
                Err(e) => Err(e),
            }
        }
        (_, Some(pod), Some("exec" | "attach")) => {
            return exec::handle(&twin, request, &namespace, pod, &query);
        }
        (Method::GET, Some(pod), Some("log")) => {
            return logs::handle(twin, &namespace, pod, &query).await;
        }
        (Method::GET, Some(name), Some("scale")) => twin
            .read_kube(|s| api::get(s, &resource, &namespace, name))
            .map(|o| (200, api::scale_of(&o))),
        (Method::GET, Some(name), _) => twin.read_kube(|s| {
            let object = api::get(s, &resource, &namespace, name)?;
            if tables::wants_table(&accept) {
                let include = query.get("includeObject").unwrap_or("Metadata");
                return Ok((
                    200,
                    tables::table(
                        &resource,
                        std::slice::from_ref(&object),
                        s.now,
                        include,
                        s.store.resource_version(),
                        true,
                    ),
                ));
            }
            Ok((200, object))
        }),
        (Method::GET, None, None) if query.flag("watch") => {
            return watch::handle(
                &twin,
                &resource,
                target.namespace.as_deref(),
                &query,
                tables::wants_table(&accept),
            );
        }
        (Method::GET, None, None) => {
            return list(
                &twin,
                &resource,
                target.namespace.as_deref(),
                &query,
                &accept,
            )
            .unwrap_or_else(|e| error_response(&e));
        }
        (Method::POST, None, None) => match read_body_and_bytes(request).await {
            Ok((bytes, mut body)) => twin
                .kube(|s| {
                    warnings = check_write(s, &resource, &bytes, &mut body, directive)?;
                    api::create(s, &resource, &namespace, body, dry_run)
                })
                .map(|o| (201, o)),
            Err(e) => Err(e),
        },
        (Method::PUT, Some(name), sub) => match read_body_and_bytes(request).await {
            Ok((bytes, mut body)) => twin
                .kube(|s| {
                    if sub.is_none() {
                        warnings = check_write(s, &resource, &bytes, &mut body, directive)?;
                    }
                    api::replace(s, &resource, &namespace, name, body, sub)
                })
                .map(|o| (200, o)),
            Err(e) => Err(e),
        },
        (Method::PATCH, Some(name), sub) => {
            let content_type = header(&request, "content-type").to_string();
            match PatchType::from_content_type(&content_type) {
                None => Err(ApiError::new(
                    415,
                    "UnsupportedMediaType",
                    format!(
                        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {content_type:?})"
                    ),
                )),
                Some(kind) => match read_body_and_bytes(request).await {
                    // An apply that creates its object answers 201, as the API server does
                    // (and is authorized as a create too).
                    Ok((bytes, body)) => twin.kube(|s| {
                        let existed = api::exists(s, &resource, &namespace, name);
                        if kind == PatchType::Apply {
                            check_apply(s, &resource, &namespace, name, &body)?;
                        }
                        let json_patch = kind == PatchType::Json;
                        let mut check = |s: &KubeState, existing: &Value, patched: &mut Value| {
                            if kind == PatchType::Apply || sub.is_some() {
                                return Ok(());
                            }
                            warnings = check_patch(
                                s, &resource, &bytes, json_patch, existing, patched, directive,
                            )?;
                            Ok(())
                        };
                        api::patch(
                            s, &resource, &namespace, name, kind, &body, sub, dry_run, &mut check,
                        )
                        .map(|o| (if existed { 200 } else { 201 }, o))
                    }),
                    Err(e) => Err(e),
                },
            }
        }
        (Method::DELETE, Some(name), None) => {
            let body = read_body(request).await.unwrap_or(Value::Null);
            let orphan = query.get("propagationPolicy") == Some("Orphan")
                || body["propagationPolicy"] == "Orphan"
                || body["orphanDependents"] == true;
            twin.kube(|s| api::delete(s, &resource, &namespace, name, orphan, dry_run))
                .map(|o| (200, o))
        }
        (Method::DELETE, None, None) => {
            delete_collection(&twin, &resource, target.namespace.as_deref(), &query)
        }
        _ => Err(ApiError::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )),
    };
    match result {
        Ok((code, value)) => with_warnings(json_response(code, &value), &warnings),
        Err(error) => error_response(&error),
    }
}

/// The `Warning` headers of what field validation found (kubectl prints each as `Warning: ...`).
fn with_warnings(mut response: Response<Body>, warnings: &[String]) -> Response<Body> {
    for text in warnings {
        if let Ok(value) = http::HeaderValue::from_str(&warning_header(text)) {
            response.headers_mut().append("warning", value);
        }
    }
    response
}

fn list(
    twin: &Twin,
    resource: &ResourceType,
    namespace: Option<&str>,
    query: &Query,
    accept: &str,
) -> Result<Response<Body>, ApiError> {
    let options = list_options(query)?;
    if tables::wants_table(accept) {
        let (page, now) =
            twin.read_kube(|s| api::list(s, resource, namespace, &options).map(|p| (p, s.now)))?;
        let include = query.get("includeObject").unwrap_or("Metadata");
        let mut table = tables::table(
            resource,
            &page.items,
            now,
            include,
            page.resource_version,
            true,
        );
        if let Some(token) = &page.continue_token {
            table["metadata"]["continue"] = json!(token);
        }
        return Ok(json_response(200, &table));
    }
    if tables::wants_metadata_only(accept) {
        let page = twin.read_kube(|s| api::list(s, resource, namespace, &options))?;
        let mut list = tables::metadata_list(&page.items, page.resource_version);
        if let Some(token) = &page.continue_token {
            list["metadata"]["continue"] = json!(token);
        }
        return Ok(json_response(200, &list));
    }
    let page = twin.read_kube(|s| api::list_json(s, resource, namespace, &options))?;
    let mut metadata = json!({"resourceVersion": page.resource_version.to_string()});
    if let Some(token) = page.continue_token {
        metadata["continue"] = json!(token);
        metadata["remainingItemCount"] = json!(page.remaining);
    }
    // The items are the store's own JSON, joined: a large list costs a copy, not a
    // serialization.
    let head = format!(
        r#"{{"kind":{},"apiVersion":{},"metadata":{},"items":["#,
        json!(list_kind(resource)),
        json!(resource.api_version()),
        metadata
    );
    let size = head.len() + page.items.iter().map(|i| i.len() + 1).sum::<usize>() + 2;
    let mut body = Vec::with_capacity(size);
    body.extend_from_slice(head.as_bytes());
    for (index, item) in page.items.iter().enumerate() {
        if index > 0 {
            body.push(b',');
        }
        body.extend_from_slice(item);
    }
    body.extend_from_slice(b"]}");
    Ok(Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(super::server::full(body))
        .expect("static headers are valid"))
}

fn delete_collection(
    twin: &Twin,
    resource: &ResourceType,
    namespace: Option<&str>,
    query: &Query,
) -> Result<(u16, Value), ApiError> {
    let options = list_options(query)?;
    let deleted = twin.kube(|s| -> Result<Vec<Value>, ApiError> {
        let page = api::list(
            s,
            resource,
            namespace,
            &ListOptions {
                limit: None,
                continue_token: None,
                ..options
            },
        )?;
        page.items
            .iter()
            .map(|o| {
                let ns = o["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let name = o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                api::delete(s, resource, &ns, &name, false, false)
            })
            .collect()
    })?;
    Ok((
        200,
        json!({"kind": list_kind(resource), "apiVersion": resource.api_version(), "metadata": {}, "items": deleted}),
    ))
}
