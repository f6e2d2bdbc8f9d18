//! The AWS endpoint on loopback, over HTTPS: one port for EKS (rest-json), EC2 and IAM (query/XML), KMS
//! (JSON with X-Amz-Target), routed
//! by the service in the SigV4 credential scope, as the aws CLI and the SDKs sign requests.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::sync::Arc;

use bytes::Bytes;
use http::request::Parts;
use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::service::service_fn;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::error::AwsError;
use super::identity::Principal;
use super::responses::{ErrorFormat, error, plain, respond};
use super::wire::{Xml, form};
use super::{actions, ec2, eks, iam, kms, responses, signature, sts};
use crate::auth::sigv4::{Claim, Sent};
use crate::sim::accept::{Handshakes, next_connection, serve_tls};
use crate::sim::kube::http::server::Body;
use crate::sim::recording::Recorded;
use crate::sim::request_path;
use crate::sim::twin::Twin;

/// The largest request body the endpoint reads: far above any EKS, EC2, IAM or KMS call the
/// lab takes, and a client cannot fill the lab's memory with one request.
const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// One step of answering a call: `Continue` with what the next step needs, or `Break` with the
/// answer already decided (an admin endpoint's, a refusal, an injected fault).
type Step<T> = ControlFlow<Response<Body>, T>;

/// A request as the endpoint reads it, once.
struct Call<'a> {
    parts: &'a Parts,
    method: String,
    path: String,
    raw_query: String,
    query: BTreeMap<String, String>,
    body: &'a Bytes,
}

impl<'a> Call<'a> {
    fn read(parts: &'a Parts, body: &'a Bytes) -> Self {
        let raw_query = parts.uri.query().unwrap_or_default().to_string();
        Self {
            parts,
            method: parts.method.to_string(),
            path: parts.uri.path().to_string(),
            query: form(&raw_query),
            raw_query,
            body,
        }
    }

    fn header(&self, name: &str) -> Option<&'a str> {
        self.parts.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// What SigV4 checks: the path and query exactly as sent.
    fn sent(&self) -> Sent<'_> {
        Sent {
            method: &self.method,
            path: &self.path,
            raw_query: &self.raw_query,
            headers: &self.parts.headers,
            body: self.body,
        }
    }
}

/// A call whose signature checked out: who made it, for which service, with what.
struct Signed<'a> {
    call: &'a Call<'a>,
    caller: Principal,
    service: String,
    text: String,
    /// The query APIs (EC2, IAM, STS) carry their parameters in the query and the form body
    /// alike; read once, for the IAM action and the service.
    params: BTreeMap<String, String>,
    /// KMS's JSON protocol names the operation in a header, not in `Action`.
    kms_operation: String,
}

impl<'a> Signed<'a> {
    fn new(call: &'a Call<'a>, caller: Principal, claim: Claim) -> Self {
        let service = claim.service;
        let text = String::from_utf8_lossy(call.body).into_owned();
        let mut params = call.query.clone();
        if service != "eks" && service != "kms" {
            params.extend(form(&text));
        }
        let kms_operation = call
            .header("x-amz-target")
            .and_then(|t| t.strip_prefix("TrentService."))
            .unwrap_or_default()
            .to_string();
        Self {
            call,
            caller,
            service,
            text,
            params,
            kms_operation,
        }
    }

    /// The action as the call names it: KMS's in its header, the query APIs' in `Action`.
    fn named_action(&self) -> Option<&str> {
        if self.service == "kms" {
            Some(self.kms_operation.as_str())
        } else {
            self.params.get("Action").map(String::as_str)
        }
    }
}

async fn handle(twin: Arc<Twin>, request: Request<Incoming>) -> Response<Body> {
    let (mut parts, body) = request.into_parts();
    host_from_authority(&mut parts);
    match read_body(body).await {
        Ok(bytes) => answer(twin, parts, bytes).await,
        Err(refused) => refused,
    }
}

/// Over HTTP/2 the host travels as `:authority` (RFC 9113 8.3.1); SigV4 signs it as `host`.
fn host_from_authority(parts: &mut Parts) {
    if !parts.headers.contains_key(http::header::HOST)
        && let Some(authority) = parts.uri.authority()
        && let Ok(host) = http::HeaderValue::from_str(authority.as_str())
    {
        parts.headers.insert(http::header::HOST, host);
    }
}

async fn read_body(body: Incoming) -> Result<Bytes, Response<Body>> {
    match http_body_util::Limited::new(body, MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(plain(
            413,
            "RequestEntityTooLargeException",
            &format!("the request body is over the lab's {MAX_BODY_BYTES}-byte limit"),
        )),
        Err(e) => Err(respond(
            400,
            "text/plain",
            format!("cannot read the request: {e}"),
            None,
        )),
    }
}

async fn answer(twin: Arc<Twin>, parts: Parts, body: Bytes) -> Response<Body> {
    let call = Call::read(&parts, &body);
    match steps(&twin, &call).await {
        ControlFlow::Continue(response) | ControlFlow::Break(response) => response,
    }
}

async fn steps(twin: &Twin, call: &Call<'_>) -> Step<Response<Body>> {
    admin_endpoint(twin, call)?;
    let signed = authenticate(twin, call)?;
    record(twin, &signed);
    authorize(twin, &signed)?;
    inject_faults(twin, &signed).await?;
    ControlFlow::Continue(route(twin, &signed))
}

/// The twin's own endpoints, read as the Kubernetes port's router reads the path
/// (`//twin/usage` is `/twin/usage`; the signature is checked on the path as sent).
fn admin_endpoint(twin: &Twin, call: &Call<'_>) -> Step<()> {
    let normalized = request_path::normalized(&call.path);
    if !request_path::is_admin_endpoint(&normalized) {
        return ControlFlow::Continue(());
    }
    if !twin.secrets.is_admin(call.header("authorization")) {
        return ControlFlow::Break(plain(
            401,
            "Unauthorized",
            "the lab twin's own endpoints take its admin token (Authorization: Bearer, from the env file `lab serve --write-env` wrote: RUNBOOK_LAB_TOKEN)",
        ));
    }
    ControlFlow::Break(admin(twin, &call.method, &normalized, &call.query))
}

/// The twin's own endpoints (`/twin/audit`, `/twin/usage`): the admin token's only.
fn admin(
    twin: &Twin,
    method: &str,
    path: &str,
    query: &BTreeMap<String, String>,
) -> Response<Body> {
    match path {
        "/twin/audit" => audit(twin, method == "POST" && query.contains_key("reset")),
        "/twin/usage" => {
            let usage = twin.aws(
                |state| json!({"now_s": state.now.as_secs_f64(), "records": state.meter.records}),
            );
            respond(200, "application/json", usage.to_string(), None)
        }
        _ => plain(404, "NotFound", &format!("the lab twin has no {path}")),
    }
}

/// The IAM actions called so far, with their counts; cleared first when `reset`.
fn audit(twin: &Twin, reset: bool) -> Response<Body> {
    if reset {
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

fn wall_clock_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The call's signer and service, or its refusal as the service it meant would word it.
fn authenticate<'a>(twin: &Twin, call: &'a Call<'a>) -> Step<Signed<'a>> {
    let sent = call.sent();
    let signer = |key: &str| twin.read_aws(|state| state.identities.signer(key));
    match signature::check(signer, &sent, wall_clock_seconds()) {
        Ok((caller, claim)) => ControlFlow::Continue(Signed::new(call, caller, claim)),
        Err(refusal) => ControlFlow::Break(refused_signature(call, &sent, &refusal)),
    }
}

fn refused_signature(
    call: &Call<'_>,
    sent: &Sent<'_>,
    refusal: &signature::Refusal,
) -> Response<Body> {
    let service = intended_service(call, sent);
    if service.is_empty() {
        return plain(
            403,
            "MissingAuthenticationTokenException",
            &format!(
                "a call the lab twin's AWS endpoint cannot take: {}; it serves eks, ec2, iam, kms and sts to calls signed with the lab's keys (SigV4: source the env file of `lab serve`)",
                match refusal {
                    signature::Refusal::Malformed(m) => m.as_str(),
                    _ => "it is not signed",
                }
            ),
        );
    }
    let (status, code, message) = signature::answer(&service, refusal);
    error(
        ErrorFormat::of_refusal(&service),
        &AwsError::new(status, code, message),
    )
}

/// The service a call is signed for; an unsigned call names none, and the query APIs'
/// `Version` says which it meant.
fn intended_service(call: &Call<'_>, sent: &Sent<'_>) -> String {
    Claim::of(sent).map(|c| c.service).unwrap_or_else(|_| {
        match call.query.get("Version").map(String::as_str) {
            Some("2016-11-15") => "ec2",
            Some("2010-05-08") => "iam",
            Some("2011-06-15") => "sts",
            _ => "",
        }
        .to_string()
    })
}

/// Keeps the call while the twin records requests.
fn record(twin: &Twin, signed: &Signed<'_>) {
    if !twin.recording.is_on() {
        return;
    }
    let call = signed.call;
    let header = |name: &str| call.header(name).map(str::to_string);
    twin.recording.keep(Recorded {
        service: signed.service.clone(),
        method: call.method.clone(),
        path: call
            .parts
            .uri
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default(),
        content_type: header("content-type"),
        target: header("x-amz-target"),
        body: signed.text.clone(),
    });
}

/// Audits the call's IAM action and refuses it when the identity may not make it.
fn authorize(twin: &Twin, signed: &Signed<'_>) -> Step<()> {
    let call = signed.call;
    let service = signed.service.as_str();
    let Some(action) =
        actions::iam_action(service, &call.method, &call.path, signed.named_action())
    else {
        return ControlFlow::Continue(());
    };
    let refusal = twin.aws(|state| state.faults.refusal(&action));
    twin.aws_audit.record(action.clone());
    match refusal {
        Some(refusal) => ControlFlow::Break(responses::refused(
            service,
            &signed.caller.arn,
            &action,
            refusal,
        )),
        None => ControlFlow::Continue(()),
    }
}

/// The faults drawn for this call: its added latency, then a throttle or server error.
async fn inject_faults(twin: &Twin, signed: &Signed<'_>) -> Step<()> {
    let call = signed.call;
    let request = format!(
        "{} {} {} {}",
        signed.service, call.method, call.path, signed.text
    );
    let (injected, latency) = twin.aws(|state| (state.faults.draw(&request), state.faults.latency));
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    match injected {
        Some(injected) => ControlFlow::Break(responses::injected(&signed.service, injected)),
        None => ControlFlow::Continue(()),
    }
}

fn route(twin: &Twin, signed: &Signed<'_>) -> Response<Body> {
    match signed.service.as_str() {
        "eks" => serve_eks(twin, signed),
        "ec2" | "iam" | "sts" => serve_query(twin, signed),
        "kms" => serve_kms(twin, signed),
        other => plain(
            400,
            "UnrecognizedClientException",
            &format!(
                "the lab twin serves eks, ec2, iam, kms and sts; this call is signed for {other}"
            ),
        ),
    }
}

fn serve_eks(twin: &Twin, signed: &Signed<'_>) -> Response<Body> {
    let call = signed.call;
    let body: Value = if signed.text.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(&signed.text).unwrap_or(Value::Null)
    };
    let caller = &signed.caller.arn;
    match twin.aws(|state| eks::handle(state, caller, &call.method, &call.path, &call.query, &body))
    {
        Ok((status, value)) => respond(status, "application/json", value.to_string(), None),
        Err(e) => error(ErrorFormat::Json, &e),
    }
}

/// EC2, IAM and STS: the query protocol, answered in XML.
fn serve_query(twin: &Twin, signed: &Signed<'_>) -> Response<Body> {
    let service = signed.service.as_str();
    let params = &signed.params;
    let action = params.get("Action").cloned().unwrap_or_default();
    let mut xml = Xml::new();
    let outcome = twin.aws(|state| match service {
        "ec2" => ec2::handle(state, &action, params, &mut xml),
        "iam" => iam::handle(state, &action, params, &mut xml),
        _ => sts::handle(&signed.caller, &action, &mut xml),
    });
    let body = xml.finish();
    match outcome {
        Ok(()) if service == "ec2" => responses::ec2_answer(&action, &body),
        Ok(()) => responses::query_answer(service, &action, &body),
        Err(e) => error(ErrorFormat::of(service), &e),
    }
}

fn serve_kms(twin: &Twin, signed: &Signed<'_>) -> Response<Body> {
    let body: Value = serde_json::from_str(&signed.text).unwrap_or_else(|_| json!({}));
    match twin.aws(|state| kms::handle(state, &signed.kms_operation, &body)) {
        Ok(value) => respond(200, "application/x-amz-json-1.1", value.to_string(), None),
        Err(e) => error(ErrorFormat::KmsJson, &e),
    }
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
