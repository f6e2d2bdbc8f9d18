//! Routes each request to discovery, health, the REST verbs, watch, logs, exec or the admin
//! endpoints, and encodes the answer as the apiserver does.

use std::sync::Arc;

use http::{Method, Request, Response};
use hyper::body::Incoming;
use serde_json::Value;

use super::health;
use super::incoming::{header, read_protobuf_or_json};
use super::lists::{self, Listed};
use super::routes::{self, Query, ResourcePath, Route};
use super::server::{Body, json_response, text_response};
use super::verbs::{self, Answer, Call};
use super::{admin, discovery, exec, logs, openapi, tables, watch};
use crate::sim::kube::auth::access;
use crate::sim::kube::auth::authentication::User;
use crate::sim::kube::auth::reviews;
use crate::sim::kube::storage::fields::directive::warning_header;
use crate::sim::kube::storage::resources::ResourceType;
use crate::sim::kube::storage::status::ApiError;
use crate::sim::request_path;
use crate::sim::twin::Twin;

pub(crate) fn error_response(error: &ApiError) -> Response<Body> {
    json_response(error.code, &error.to_status())
}

fn not_found_page() -> Response<Body> {
    text_response(404, "404 page not found\n".into())
}

/// A discovery or OpenAPI document, or the plain 404 page where there is none.
fn document_or_not_found(document: Option<Value>) -> Response<Body> {
    match document {
        Some(doc) => json_response(200, &doc),
        None => not_found_page(),
    }
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

pub(crate) async fn handle(twin: Arc<Twin>, request: Request<Incoming>) -> Response<Body> {
    // Every check below and the router read this one normalised path.
    let path = request_path::normalized(request.uri().path());
    let query = Query::parse(request.uri().query());
    let (user, attributes) = match access::admit(&twin, &request, &path, &query) {
        Ok(admitted) => admitted,
        Err(refused) => return error_response(&refused),
    };
    let response = serve(twin.clone(), request, &path, query, &user).await;
    access::audit(&twin, attributes, response.status().as_u16());
    response
}

async fn serve(
    twin: Arc<Twin>,
    request: Request<Incoming>,
    path: &str,
    query: Query,
    user: &User,
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
        Route::Group { group } => {
            document_or_not_found(twin.read_kube(|s| discovery::group(&s.registry, &group)))
        }
        Route::ResourceList { group, version } => document_or_not_found(
            twin.read_kube(|s| discovery::resource_list(&s.registry, &group, &version)),
        ),
        Route::Health { endpoint, check } => health_response(&twin, endpoint, check, &query),
        Route::OpenApiRoot => json_response(200, &twin.read_kube(|s| openapi::root(&s.registry))),
        Route::OpenApi { path } => {
            document_or_not_found(twin.read_kube(|s| openapi::group_version(&s.registry, &path)))
        }
        Route::Admin { path } => admin::handle(&twin, request.method(), &path, &query),
        Route::Resource(target)
            if request.method() == Method::POST
                && target.name.is_none()
                && reviews::is_review(&target.group, &target.version, &target.plural) =>
        {
            review(&twin, request, &target, user).await
        }
        Route::Resource(target) => resource(twin, request, target, query).await,
        Route::NotFound => not_found_page(),
    }
}

fn health_response(
    twin: &Twin,
    endpoint: health::Endpoint,
    check: Option<String>,
    query: &Query,
) -> Response<Body> {
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

/// An access or identity review (`kubectl auth can-i`, `kubectl auth whoami`).
async fn review(
    twin: &Twin,
    request: Request<Incoming>,
    target: &ResourcePath,
    user: &User,
) -> Response<Body> {
    let now = crate::sim::timestamps::rfc3339(crate::clock::Clock::now(twin.clock.as_ref()));
    let answered = read_protobuf_or_json(request).await.and_then(|body| {
        reviews::answer(
            twin,
            user,
            &target.plural,
            target.namespace.as_deref(),
            &body,
            &now,
        )
    });
    match answered {
        Ok(review) => json_response(201, &review),
        Err(error) => error_response(&error),
    }
}

fn resource_not_found() -> ApiError {
    ApiError::new(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

/// The resource type a path names, if the server serves it there (and its subresource).
fn find_resource(twin: &Twin, target: &ResourcePath) -> Result<ResourceType, ApiError> {
    let resource = twin
        .read_kube(|s| {
            s.registry
                .by_plural(&target.group, &target.version, &target.plural)
                .cloned()
        })
        .ok_or_else(resource_not_found)?;
    if resource.namespaced && target.name.is_some() && target.namespace.is_none() {
        return Err(resource_not_found());
    }
    if let Some(sub) = target.subresource.as_deref()
        && !resource.subresources.iter().any(|s| s == sub)
    {
        return Err(resource_not_found());
    }
    Ok(resource)
}

async fn resource(
    twin: Arc<Twin>,
    request: Request<Incoming>,
    target: ResourcePath,
    query: Query,
) -> Response<Body> {
    let resource = match find_resource(&twin, &target) {
        Ok(resource) => resource,
        Err(error) => return error_response(&error),
    };
    let call = Call {
        twin: &twin,
        resource: &resource,
        namespace: target.namespace.as_deref(),
        query: &query,
    };
    let namespace = target.namespace.as_deref().unwrap_or_default();
    let accept = header(&request, "accept").to_string();
    let method = request.method().clone();
    let answer = match (
        method,
        target.name.as_deref(),
        target.subresource.as_deref(),
    ) {
        (Method::POST, Some(account), Some("token")) => verbs::token(&call, account, request).await,
        (_, Some(pod), Some("exec" | "attach")) => {
            return exec::handle(&twin, request, namespace, pod, &query);
        }
        (Method::GET, Some(pod), Some("log")) => {
            return logs::handle(twin.clone(), namespace, pod, &query).await;
        }
        (Method::GET, Some(name), Some("scale")) => verbs::scale(&call, name),
        (Method::GET, Some(name), _) => verbs::get(&call, name, &accept),
        (Method::GET, None, None) if query.flag("watch") => {
            let as_table = tables::wants_table(&accept);
            return watch::handle(&twin, &resource, call.namespace, &query, as_table);
        }
        (Method::GET, None, None) => return list_response(lists::list(&call, &accept)),
        (Method::POST, None, None) => verbs::create(&call, request).await,
        (Method::PUT, Some(name), sub) => verbs::replace(&call, name, sub, request).await,
        (Method::PATCH, Some(name), sub) => verbs::patch(&call, name, sub, request).await,
        (Method::DELETE, Some(name), None) => verbs::delete(&call, name, request).await,
        (Method::DELETE, None, None) => lists::delete_collection(&call, request).await,
        _ => Err(ApiError::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )),
    };
    answer_response(answer)
}

fn answer_response(answer: Result<Answer, ApiError>) -> Response<Body> {
    match answer {
        Ok(answer) => with_warnings(json_response(answer.code, &answer.object), &answer.warnings),
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

fn list_response(listed: Result<Listed, ApiError>) -> Response<Body> {
    match listed {
        Ok(Listed::Document(document)) => json_response(200, &document),
        Ok(Listed::Joined(body)) => Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(super::server::full(body))
            .expect("static headers are valid"),
        Err(error) => error_response(&error),
    }
}
