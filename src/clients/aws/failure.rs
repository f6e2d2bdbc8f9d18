//! An AWS SDK error that is not the service's own answer, in one line: a connection that failed
//! (refused, a name that does not resolve, TLS, no answer in time), an answer from something
//! that is not an AWS API, credentials or a region missing; each says where and what to do.
//! The SDK's own Display of these is a Debug dump of its layers.

use std::error::Error as StdError;

use aws_credential_types::provider::error::CredentialsError;
use aws_sdk_eks::config::http::HttpResponse;
use aws_sdk_eks::error::SdkError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;

use super::client::Timeouts;
use crate::clients::connection::{self, Cause, chain, find};
use crate::clock::format_duration;

/// The code scripts catch and the one-line message.
pub(super) struct Failure {
    pub(super) code: &'static str,
    pub(super) message: String,
}

/// Where the calls went, for the message and the advice that fits it.
pub(super) struct Destination<'a> {
    /// The endpoint URL (the lab twin, an emulator), or how AWS itself is named.
    pub(super) endpoint: &'a str,
    /// Calls go to an endpoint URL rather than to AWS.
    pub(super) custom: bool,
    /// The timeouts in force, for the message that one ran out.
    pub(super) timeouts: Timeouts,
}

impl Destination<'_> {
    fn unreachable_advice(&self) -> &'static str {
        if self.custom {
            "is `runbook lab serve` (or the emulator) running there? its env file names the AWS port (AWS_ENDPOINT_URL)"
        } else {
            "check the network path to AWS (VPN, proxy, HTTPS_PROXY, a private endpoint)"
        }
    }
}

/// None when the error is the service's own answer (its code and message say it all).
pub(super) fn describe<E>(
    error: &SdkError<E, HttpResponse>,
    to: &Destination<'_>,
) -> Option<Failure>
where
    E: ProvideErrorMetadata + StdError + Send + Sync + 'static,
{
    match error {
        SdkError::ServiceError(service) if service.err().code().is_some() => None,
        SdkError::ServiceError(service) => Some(not_aws(service.raw(), to)),
        SdkError::ResponseError(response) => Some(not_aws(response.raw(), to)),
        SdkError::TimeoutError(_) => Some(Failure {
            code: "ConnectionError",
            message: format!(
                "no answer from {} within {} (--request-timeout): {}",
                to.endpoint,
                format_duration(to.timeouts.attempt),
                to.unreachable_advice()
            ),
        }),
        SdkError::DispatchFailure(dispatch) => {
            Some(dispatch_failure(error, dispatch.is_timeout(), to))
        }
        _ => Some(construction(error)),
    }
}

fn dispatch_failure(
    error: &(dyn StdError + 'static),
    timed_out: bool,
    to: &Destination<'_>,
) -> Failure {
    if let Some(credentials) = find::<CredentialsError>(error) {
        return credentials_failure(credentials);
    }
    let texts = chain(error);
    let innermost = texts.last().cloned().unwrap_or_default();
    let cause = if timed_out {
        Cause::TimedOut
    } else {
        connection::cause(error)
    };
    let (cause, advice) = match cause {
        Cause::TimedOut => (
            format!(
                "no connection within {} (--connect-timeout)",
                format_duration(to.timeouts.connect)
            ),
            to.unreachable_advice().to_string(),
        ),
        Cause::Refused => (
            "the connection was refused".to_string(),
            to.unreachable_advice().to_string(),
        ),
        Cause::Unresolvable => (
            "its host name does not resolve".to_string(),
            "check the URL's host, or DNS on this machine".to_string(),
        ),
        Cause::Tls => (
            format!("the TLS handshake failed ({innermost})"),
            "is it an http:// endpoint given as https://, or a certificate this machine does not trust? (a private CA: set AWS_CA_BUNDLE to its PEM file, as `lab serve`'s env file does)".to_string(),
        ),
        // A TLS server's alert read as an HTTP response.
        Cause::Other
            if innermost.contains("invalid HTTP version") && to.endpoint.starts_with("http://") =>
        {
            (
                "it did not answer in HTTP".to_string(),
                "is it an https:// endpoint given as http://? (`lab serve`'s AWS endpoint is https, as AWS_ENDPOINT_URL in its env file says)".to_string(),
            )
        }
        Cause::Other if texts.join(" ").to_lowercase().contains("region") => {
            return region_failure(&innermost);
        }
        Cause::Other => (innermost, to.unreachable_advice().to_string()),
    };
    Failure {
        code: "ConnectionError",
        message: format!("cannot reach {}: {cause}: {advice}", to.endpoint),
    }
}

fn credentials_failure(error: &CredentialsError) -> Failure {
    let text = chain(error).join(": ");
    let lower = text.to_lowercase();
    let advice = if lower.contains("sso") && (lower.contains("expired") || lower.contains("token"))
    {
        "the SSO session has expired or was never started: run `aws sso login` (with --profile as for this run)"
    } else if lower.contains("expired") {
        "the credentials have expired: refresh them (`aws sso login`, a new session token, or the role's web identity)"
    } else {
        "set AWS_PROFILE or pass --profile, run `aws configure` or `aws sso login`, or give the pod a role (IRSA or EKS Pod Identity)"
    };
    // The default chain ends with instance metadata: off EC2 its failure means none of the
    // providers before it had credentials either.
    let cause = match error {
        CredentialsError::CredentialsNotLoaded(_) => "no AWS credentials were found (environment, profile, SSO, web identity, instance metadata)".to_string(),
        _ if lower.contains("imds") => format!(
            "no AWS credentials were found (environment, profile, SSO, web identity; instance metadata: {})",
            chain(error).last().map_or("no answer", String::as_str)
        ),
        _ => format!("the AWS credentials could not be loaded ({text})"),
    };
    Failure {
        code: "CredentialsError",
        message: format!("{cause}: {advice}"),
    }
}

fn region_failure(detail: &str) -> Failure {
    Failure {
        code: "RegionError",
        message: format!(
            "no AWS region ({detail}): pass --region, set AWS_REGION, or give the profile a region"
        ),
    }
}

fn construction(error: &(dyn StdError + 'static)) -> Failure {
    if let Some(credentials) = find::<CredentialsError>(error) {
        return credentials_failure(credentials);
    }
    let texts = chain(error);
    let innermost = texts.last().cloned().unwrap_or_default();
    if texts.join(" ").to_lowercase().contains("region") {
        return region_failure(&innermost);
    }
    Failure {
        code: "RequestError",
        message: format!("the request could not be built: {innermost}"),
    }
}

/// An HTTP answer the SDK could not read as the service's: its status and the start of its
/// body say what answered instead.
fn not_aws(raw: &HttpResponse, to: &Destination<'_>) -> Failure {
    let status = raw.status().as_u16();
    let content_type = raw
        .headers()
        .get("content-type")
        .unwrap_or("no content type");
    let body = raw
        .body()
        .bytes()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let first_line = crate::clients::excerpt::first_line(&body);
    let advice = if to.custom {
        "is this the AWS port of `lab serve` (AWS_ENDPOINT_URL in its env file), not its Kubernetes port, or the emulator's?"
    } else {
        "a proxy or captive portal may be answering for AWS (HTTPS_PROXY, VPN)"
    };
    Failure {
        code: "NotAnAwsApi",
        message: format!(
            "{} answered HTTP {status} ({content_type}: `{first_line}`), which is not an AWS API: {advice}",
            to.endpoint
        ),
    }
}

/// What to do about a service's answer that is about the caller rather than the request: no
/// permission, credentials expired, a key AWS does not know.
pub(super) fn advice_for_code(code: &str) -> Option<&'static str> {
    match code {
        "AccessDenied"
        | "AccessDeniedException"
        | "UnauthorizedOperation"
        | "UnauthorizedAccess" => Some(
            "the identity's policies do not allow that action: add it (deploy/aws/drill-policy.json holds what the scheduled drill calls), or run as an identity that has it",
        ),
        "ExpiredToken" | "ExpiredTokenException" | "RequestExpired" => Some(
            "the session's credentials have expired: refresh them (`aws sso login`, a new session token) and run again; check this machine's clock too",
        ),
        "InvalidClientTokenId"
        | "UnrecognizedClientException"
        | "SignatureDoesNotMatch"
        | "AuthFailure" => Some(
            "AWS does not accept these credentials (an unknown access key, or the wrong secret): check the profile with `aws sts get-caller-identity`",
        ),
        _ => None,
    }
}
