//! How the twin's AWS endpoint writes its answers: each protocol's success envelope (EC2's and
//! the IAM/STS query protocol's XML) and each service's errors, whether the service refused the
//! call, the lab refused it before (signature, access, an expired token) or a fault was drawn.

use http::Response;
use serde_json::json;

use super::error::AwsError;
use super::faults::{Injected, Refusal};
use super::wire::escape;
use crate::sim::kube::http::server::{Body, full};

const REQUEST_ID: &str = "7a62c49f-347e-4fc4-9331-6e8eEXAMPLE";

const EXPIRED_TOKEN: &str = "The security token included in the request is expired";

pub(super) fn respond(
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
pub(super) fn plain(status: u16, code: &str, message: &str) -> Response<Body> {
    respond(
        status,
        "application/json",
        json!({"message": message}).to_string(),
        Some(code),
    )
}

/// How a service writes an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ErrorFormat {
    /// EKS's rest-json: `{"message"}` with the code in `x-amzn-errortype`.
    Json,
    /// KMS's JSON 1.1: `{"__type", "message"}`.
    KmsJson,
    /// EC2's `<Response><Errors>` XML.
    Ec2Xml,
    /// The IAM and STS query protocol's `<ErrorResponse>` XML.
    QueryXml,
}

impl ErrorFormat {
    /// The errors `service` itself answers with (its own refusals, injected faults).
    pub(super) fn of(service: &str) -> Self {
        match service {
            "eks" => Self::Json,
            "kms" => Self::KmsJson,
            _ => Self::of_refusal(service),
        }
    }

    /// The lab's refusals before a call reaches its service (its signature, its access):
    /// KMS's are written as EKS writes them.
    pub(super) fn of_refusal(service: &str) -> Self {
        match service {
            "eks" | "kms" => Self::Json,
            "ec2" => Self::Ec2Xml,
            _ => Self::QueryXml,
        }
    }
}

pub(super) fn error(format: ErrorFormat, error: &AwsError) -> Response<Body> {
    let (status, code, message) = (error.status, error.code, &error.message);
    match format {
        ErrorFormat::Json => plain(status, code, message),
        ErrorFormat::KmsJson => respond(
            status,
            "application/x-amz-json-1.1",
            json!({"__type": code, "message": message}).to_string(),
            None,
        ),
        ErrorFormat::Ec2Xml => respond(status, "text/xml;charset=UTF-8", ec2_error(error), None),
        ErrorFormat::QueryXml => respond(status, "text/xml", query_error(code, message), None),
    }
}

fn query_error(code: &str, message: &str) -> String {
    format!(
        "<ErrorResponse xmlns=\"https://iam.amazonaws.com/doc/2010-05-08/\"><Error><Type>Sender</Type><Code>{code}</Code><Message>{}</Message></Error><RequestId>{REQUEST_ID}</RequestId></ErrorResponse>",
        escape(message)
    )
}

fn ec2_error(error: &AwsError) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>{}</Code><Message>{}</Message></Error></Errors><RequestID>{REQUEST_ID}</RequestID></Response>",
        error.code,
        escape(&error.message)
    )
}

/// An EC2 action's answer around the body its handler wrote.
pub(super) fn ec2_answer(action: &str, body: &str) -> Response<Body> {
    respond(
        200,
        "text/xml;charset=UTF-8",
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<{action}Response xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"><requestId>{REQUEST_ID}</requestId>{body}</{action}Response>"
        ),
        None,
    )
}

/// An IAM or STS action's answer around the body its handler wrote.
pub(super) fn query_answer(service: &str, action: &str, body: &str) -> Response<Body> {
    let namespace = if service == "sts" {
        "https://sts.amazonaws.com/doc/2011-06-15/"
    } else {
        "https://iam.amazonaws.com/doc/2010-05-08/"
    };
    respond(
        200,
        "text/xml",
        format!(
            "<{action}Response xmlns=\"{namespace}\"><{action}Result>{body}</{action}Result><ResponseMetadata><RequestId>{REQUEST_ID}</RequestId></ResponseMetadata></{action}Response>"
        ),
        None,
    )
}

/// A refused call as each service answers it: EKS `AccessDeniedException` and
/// `ExpiredTokenException` (JSON), EC2 `UnauthorizedOperation` and IAM `AccessDenied` (XML),
/// and the query APIs' `ExpiredToken`, all HTTP 403.
pub(super) fn refused(
    service: &str,
    caller: &str,
    action: &str,
    refusal: Refusal,
) -> Response<Body> {
    let (code, message) = match (service, refusal) {
        ("eks", Refusal::TokenExpired) => ("ExpiredTokenException", EXPIRED_TOKEN.to_string()),
        (_, Refusal::TokenExpired) => ("ExpiredToken", EXPIRED_TOKEN.to_string()),
        ("eks", Refusal::Denied) => ("AccessDeniedException", not_authorized(caller, action)),
        ("ec2", Refusal::Denied) => (
            "UnauthorizedOperation",
            format!(
                "You are not authorized to perform this operation. User: {caller} is not authorized to perform: {action} because no identity-based policy allows the {action} action"
            ),
        ),
        (_, Refusal::Denied) => ("AccessDenied", not_authorized(caller, action)),
    };
    error(
        ErrorFormat::of_refusal(service),
        &AwsError::new(403, code, message),
    )
}

fn not_authorized(caller: &str, action: &str) -> String {
    format!(
        "User: {caller} is not authorized to perform: {action} on resource: * because no identity-based policy allows the {action} action"
    )
}

/// A fault as each service reports it: EKS `ThrottlingException` (429) and
/// `ServerException` (500), EC2 `RequestLimitExceeded` (503) and `InternalError` (500), IAM
/// `Throttling` (400) and `ServiceFailure` (500).
pub(super) fn injected(service: &str, injected: Injected) -> Response<Body> {
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
    error(
        ErrorFormat::of(service),
        &AwsError::new(status, code, message),
    )
}
