//! The AWS endpoint on loopback, over HTTPS: one port for EKS (rest-json), EC2 and IAM (query/XML), KMS
//! (JSON with X-Amz-Target), routed
//! by the service in the SigV4 credential scope, as the aws CLI and the SDKs sign requests.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::service::service_fn;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::error::AwsError;
use super::faults::{Injected, Refusal};
use super::wire::{Xml, escape, form};
use super::{actions, ec2, eks, iam, kms, signature, sts};
use crate::auth::sigv4::{Claim, Sent};
use crate::sim::accept::{Handshakes, next_connection, serve_tls};
use crate::sim::kube::http::server::{Body, full};
use crate::sim::recording::Recorded;
use crate::sim::request_path;
use crate::sim::twin::Twin;

/// The largest request body the endpoint reads: far above any EKS, EC2, IAM or KMS call the
/// lab takes, and a client cannot fill the lab's memory with one request.
const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

const REQUEST_ID: &str = "7a62c49f-347e-4fc4-9331-6e8eEXAMPLE";

fn respond(
    status: u16,
    content_type: &str,
    body: String,
    error_type: Option<&str>,
) -> Response<Body> {
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", content_type)
        .header("x-amzn-requestid", REQUEST_ID);
    if let Some(code) = error_type {
        builder = builder.header("x-amzn-errortype", code);
    }
    builder.body(full(body)).expect("static headers are valid")
}

/// A JSON answer to a request that is not an AWS call or is not the lab's to make.
fn plain(status: u16, code: &str, message: &str) -> Response<Body> {
    respond(
        status,
        "application/json",
        json!({"message": message}).to_string(),
        Some(code),
    )
}

/// The twin's own endpoints (`/twin/audit`, `/twin/usage`): the admin token's only.
fn admin(
    twin: &Twin,
    method: &str,
    path: &str,
    query: &BTreeMap<String, String>,
) -> Response<Body> {
    match path {
        "/twin/audit" => {
            if method == "POST" && query.contains_key("reset") {
                twin.aws_audit.clear();
            }
            let entries: Vec<Value> = twin
                .aws_audit
                .entries()
                .into_iter()
                .map(|(action, count)| json!({"action": action, "count": count}))
                .collect();
            respond(
                200,
                "application/json",
                Value::Array(entries).to_string(),
                None,
            )
        }
        "/twin/usage" => {
            let usage = twin.aws(
                |state| json!({"now_s": state.now.as_secs_f64(), "records": state.meter.records}),
            );
            respond(200, "application/json", usage.to_string(), None)
        }
        _ => plain(404, "NotFound", &format!("the lab twin has no {path}")),
    }
}

/// A refused signature as `service` answers it (XML for the query APIs, JSON for EKS).
fn refused_signature(service: &str, refusal: &signature::Refusal) -> Response<Body> {
    let (status, code, message) = signature::answer(service, refusal);
    match service {
        "eks" | "kms" => plain(status, code, &message),
        "ec2" => respond(
            status,
            "text/xml;charset=UTF-8",
            ec2_error(&AwsError::new(status, code, message)),
            None,
        ),
        _ => respond(status, "text/xml", query_error(code, &message), None),
    }
}

fn query_error(code: &str, message: &str) -> String {
    format!(
        "<ErrorResponse xmlns=\"https://iam.amazonaws.com/doc/2010-05-08/\"><Error><Type>Sender</Type><Code>{code}</Code><Message>{}</Message></Error><RequestId>{REQUEST_ID}</RequestId></ErrorResponse>",
        escape(message)
    )
}

fn wall_clock_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

async fn handle(twin: Arc<Twin>, request: Request<Incoming>) -> Response<Body> {
    let (mut parts, body) = request.into_parts();
    // Over HTTP/2 the host travels as `:authority` (RFC 9113 8.3.1); SigV4 signs it as `host`.
    if !parts.headers.contains_key(http::header::HOST)
        && let Some(authority) = parts.uri.authority()
        && let Ok(host) = http::HeaderValue::from_str(authority.as_str())
    {
        parts.headers.insert(http::header::HOST, host);
    }
    let method = parts.method.to_string();
    let path = parts.uri.path().to_string();
    let raw_query = parts.uri.query().unwrap_or_default().to_string();
    let query = form(&raw_query);
    let bytes = match http_body_util::Limited::new(body, MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return plain(
                413,
                "RequestEntityTooLargeException",
                &format!("the request body is over the lab's {MAX_BODY_BYTES}-byte limit"),
            );
        }
        Err(e) => {
            return respond(
                400,
                "text/plain",
                format!("cannot read the request: {e}"),
                None,
            );
        }
    };
    let authorization = parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok());
    // The admin check reads the path as the Kubernetes port's router does (`//twin/usage` is
    // `/twin/usage`); the signature below is checked on the path as sent.
    let normalized = request_path::normalized(&path);
    if request_path::is_admin_endpoint(&normalized) {
        if !twin.secrets.is_admin(authorization) {
            return plain(
                401,
                "Unauthorized",
                "the lab twin's own endpoints take its admin token (Authorization: Bearer, from the env file `lab serve --write-env` wrote: RUNBOOK_LAB_TOKEN)",
            );
        }
        return admin(&twin, &method, &normalized, &query);
    }
    let sent = Sent {
        method: &method,
        path: &path,
        raw_query: &raw_query,
        headers: &parts.headers,
        body: &bytes,
    };
    let signer = |key: &str| twin.read_aws(|state| state.identities.signer(key));
    let (caller, claim) = match signature::check(signer, &sent, wall_clock_seconds()) {
        Ok(signed) => signed,
        Err(refusal) => {
            // An unsigned call names no service; the query APIs' Version says which it meant.
            let service = Claim::of(&sent).map(|c| c.service).unwrap_or_else(|_| {
                match query.get("Version").map(String::as_str) {
                    Some("2016-11-15") => "ec2",
                    Some("2010-05-08") => "iam",
                    Some("2011-06-15") => "sts",
                    _ => "",
                }
                .to_string()
            });
            if service.is_empty() {
                return plain(
                    403,
                    "MissingAuthenticationTokenException",
                    &format!(
                        "a call the lab twin's AWS endpoint cannot take: {}; it serves eks, ec2, iam, kms and sts to calls signed with the lab's keys (SigV4: source the env file of `lab serve`)",
                        match refusal {
                            signature::Refusal::Malformed(m) => m,
                            _ => "it is not signed".into(),
                        }
                    ),
                );
            }
            return refused_signature(&service, &refusal);
        }
    };
    let service = claim.service.as_str();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if twin.recording.is_on() {
        let header = |name: &str| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        twin.recording.keep(Recorded {
            service: service.to_string(),
            method: method.clone(),
            path: parts
                .uri
                .path_and_query()
                .map(|p| p.to_string())
                .unwrap_or_default(),
            content_type: header("content-type"),
            target: header("x-amz-target"),
            body: text.clone(),
        });
    }
    // The query APIs (EC2, IAM, STS) carry their parameters in the query and the form body
    // alike; read once, for the IAM action here and the service below.
    let mut params = query.clone();
    if service != "eks" && service != "kms" {
        params.extend(form(&text));
    }
    // KMS's JSON protocol names the operation in a header, not in `Action`.
    let kms_operation = parts
        .headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .and_then(|t| t.strip_prefix("TrentService."))
        .unwrap_or_default()
        .to_string();
    let named_action = if service == "kms" {
        Some(kms_operation.as_str())
    } else {
        params.get("Action").map(String::as_str)
    };
    if let Some(action) = actions::iam_action(service, &method, &path, named_action) {
        let refusal = twin.aws(|state| state.faults.refusal(&action));
        twin.aws_audit.record(action.clone());
        if let Some(refusal) = refusal {
            return refused(service, &caller.arn, &action, refusal);
        }
    }
    let request = format!("{service} {method} {path} {text}");
    let (injected, latency) = twin.aws(|state| (state.faults.draw(&request), state.faults.latency));
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    if let Some(injected) = injected {
        return injected_error(service, injected);
    }
    match service {
        "eks" => {
            let body: Value = if text.trim().is_empty() {
                json!({})
            } else {
                serde_json::from_str(&text).unwrap_or(Value::Null)
            };
            match twin.aws(|state| eks::handle(state, &caller.arn, &method, &path, &query, &body)) {
                Ok((status, value)) => respond(status, "application/json", value.to_string(), None),
                Err(error) => respond(
                    error.status,
                    "application/json",
                    json!({"message": error.message}).to_string(),
                    Some(error.code),
                ),
            }
        }
        "ec2" | "iam" | "sts" => {
            let action = params.get("Action").cloned().unwrap_or_default();
            let mut xml = Xml::new();
            let outcome = twin.aws(|state| match service {
                "ec2" => ec2::handle(state, &action, &params, &mut xml),
                "iam" => iam::handle(state, &action, &params, &mut xml),
                _ => sts::handle(&caller, &action, &mut xml),
            });
            let body = xml.finish();
            let namespace = if service == "sts" {
                "https://sts.amazonaws.com/doc/2011-06-15/"
            } else {
                "https://iam.amazonaws.com/doc/2010-05-08/"
            };
            match (service, outcome) {
                ("ec2", Ok(())) => respond(
                    200,
                    "text/xml;charset=UTF-8",
                    format!(
                        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<{action}Response xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"><requestId>{REQUEST_ID}</requestId>{body}</{action}Response>"
                    ),
                    None,
                ),
                ("ec2", Err(error)) => respond(
                    error.status,
                    "text/xml;charset=UTF-8",
                    ec2_error(&error),
                    None,
                ),
                (_, Ok(())) => respond(
                    200,
                    "text/xml",
                    format!(
                        "<{action}Response xmlns=\"{namespace}\"><{action}Result>{body}</{action}Result><ResponseMetadata><RequestId>{REQUEST_ID}</RequestId></ResponseMetadata></{action}Response>"
                    ),
                    None,
                ),
                (_, Err(error)) => respond(
                    error.status,
                    "text/xml",
                    query_error(error.code, &error.message),
                    None,
                ),
            }
        }
        "kms" => {
            let body: Value = serde_json::from_str(&text).unwrap_or_else(|_| json!({}));
            match twin.aws(|state| kms::handle(state, &kms_operation, &body)) {
                Ok(value) => respond(200, "application/x-amz-json-1.1", value.to_string(), None),
                Err(error) => respond(
                    error.status,
                    "application/x-amz-json-1.1",
                    json!({"__type": error.code, "message": error.message}).to_string(),
                    None,
                ),
            }
        }
        other => plain(
            400,
            "UnrecognizedClientException",
            &format!(
                "the lab twin serves eks, ec2, iam, kms and sts; this call is signed for {other}"
            ),
        ),
    }
}

/// A refused call as each service answers it: EKS `AccessDeniedException` and
/// `ExpiredTokenException` (JSON), EC2 `UnauthorizedOperation` and IAM `AccessDenied` (XML),
/// and the query APIs' `ExpiredToken`, all HTTP 403.
fn refused(service: &str, caller: &str, action: &str, refusal: Refusal) -> Response<Body> {
    let (code, message) = match (service, refusal) {
        ("eks", Refusal::TokenExpired) => (
            "ExpiredTokenException",
            "The security token included in the request is expired".to_string(),
        ),
        (_, Refusal::TokenExpired) => (
            "ExpiredToken",
            "The security token included in the request is expired".to_string(),
        ),
        ("eks", Refusal::Denied) => (
            "AccessDeniedException",
            format!(
                "User: {caller} is not authorized to perform: {action} on resource: * because no identity-based policy allows the {action} action"
            ),
        ),
        ("ec2", Refusal::Denied) => (
            "UnauthorizedOperation",
            format!(
                "You are not authorized to perform this operation. User: {caller} is not authorized to perform: {action} because no identity-based policy allows the {action} action"
            ),
        ),
        (_, Refusal::Denied) => (
            "AccessDenied",
            format!(
                "User: {caller} is not authorized to perform: {action} on resource: * because no identity-based policy allows the {action} action"
            ),
        ),
    };
    match service {
        "eks" | "kms" => respond(
            403,
            "application/json",
            json!({"message": message}).to_string(),
            Some(code),
        ),
        "ec2" => respond(
            403,
            "text/xml;charset=UTF-8",
            ec2_error(&AwsError::new(403, code, message)),
            None,
        ),
        _ => respond(
            403,
            "text/xml",
            format!(
                "<ErrorResponse xmlns=\"https://iam.amazonaws.com/doc/2010-05-08/\"><Error><Type>Sender</Type><Code>{code}</Code><Message>{}</Message></Error><RequestId>{REQUEST_ID}</RequestId></ErrorResponse>",
                escape(&message)
            ),
            None,
        ),
    }
}

/// A fault as each service reports it: EKS `ThrottlingException` (429) and
/// `ServerException` (500), EC2 `RequestLimitExceeded` (503) and `InternalError` (500), IAM
/// `Throttling` (400) and `ServiceFailure` (500).
fn injected_error(service: &str, injected: Injected) -> Response<Body> {
    let (status, code, message) = match (service, injected) {
        ("eks", Injected::Throttled) => (429, "ThrottlingException", "Rate exceeded"),
        ("kms", Injected::Throttled) => (400, "ThrottlingException", "Rate exceeded"),
        ("kms", Injected::ServerError) => (
            500,
            "KMSInternalException",
            "An internal error occurred (injected by the lab twin)",
        ),
        ("eks", Injected::ServerError) => (
            500,
            "ServerException",
            "An internal error occurred (injected by the lab twin)",
        ),
        ("ec2", Injected::Throttled) => (503, "RequestLimitExceeded", "Request limit exceeded."),
        ("ec2", Injected::ServerError) => (
            500,
            "InternalError",
            "An internal error has occurred (injected by the lab twin)",
        ),
        (_, Injected::Throttled) => (400, "Throttling", "Rate exceeded"),
        (_, Injected::ServerError) => (
            500,
            "ServiceFailure",
            "Request processing has failed due to some unknown error (injected by the lab twin)",
        ),
    };
    let error = AwsError::new(status, code, message);
    match service {
        "eks" => respond(
            status,
            "application/json",
            json!({"message": message}).to_string(),
            Some(code),
        ),
        "kms" => respond(
            status,
            "application/x-amz-json-1.1",
            json!({"__type": code, "message": message}).to_string(),
            None,
        ),
        "ec2" => respond(status, "text/xml;charset=UTF-8", ec2_error(&error), None),
        _ => respond(
            status,
            "text/xml",
            format!(
                "<ErrorResponse xmlns=\"https://iam.amazonaws.com/doc/2010-05-08/\"><Error><Type>Sender</Type><Code>{code}</Code><Message>{}</Message></Error><RequestId>{REQUEST_ID}</RequestId></ErrorResponse>",
                escape(message)
            ),
            None,
        ),
    }
}

fn ec2_error(error: &AwsError) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>{}</Code><Message>{}</Message></Error></Errors><RequestID>{REQUEST_ID}</RequestID></Response>",
        error.code,
        escape(&error.message)
    )
}

/// Binds 127.0.0.1 (port 0: an ephemeral port) and serves HTTPS in the background with the
/// lab's TLS identity (the Kubernetes API's: one CA for the lab), as AWS endpoints take
/// nothing but HTTPS. It offers HTTP/2 by ALPN beside HTTP/1.1: which protocol a real endpoint
/// speaks varies by service, and the SDKs take either.
pub(crate) async fn start(
    twin: Arc<Twin>,
    port: u16,
    acceptor: TlsAcceptor,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let address = listener.local_addr()?;
    let _ = twin.aws_authority.set(address.to_string());
    tokio::spawn(async move {
        let handshakes = Handshakes::default();
        loop {
            let Some(stream) = next_connection(&listener, &handshakes).await else {
                continue;
            };
            twin.requests.count_aws_connection();
            let twin = twin.clone();
            let service = service_fn(move |request| {
                let twin = twin.clone();
                async move {
                    twin.requests.count_aws();
                    Ok::<_, Infallible>(handle(twin, request).await)
                }
            });
            tokio::spawn(serve_tls(stream, acceptor.clone(), service));
        }
    });
    Ok(address)
}
