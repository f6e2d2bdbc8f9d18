//! The EKS bearer token: `k8s-aws-v1.` and the base64url (unpadded) text of a presigned STS
//! `GetCallerIdentity` URL whose signature covers the `x-k8s-aws-id` header (the cluster's
//! name). Made here for the clients, and read here with aws-iam-authenticator's checks
//! (`pkg/token/token.go`) for the twin, which then replays the call to its own STS.

use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::sigv4::{self, Sent};

pub const PREFIX: &str = "k8s-aws-v1.";
pub const CLUSTER_ID_HEADER: &str = "x-k8s-aws-id";
/// A presigned URL's own lifetime, as `aws eks get-token` and aws-iam-authenticator sign it.
pub const URL_EXPIRES: Duration = Duration::from_secs(60);
/// How long the server takes a token after its `X-Amz-Date`, whatever `X-Amz-Expires` says.
pub const ACCEPTED_FOR: Duration = Duration::from_secs(15 * 60);
/// The authenticator refuses longer tokens before decoding them.
const MAX_TOKEN_BYTES: usize = 1024 * 4;
const ALLOWED_PARAMETERS: [&str; 9] = [
    "action",
    "version",
    "x-amz-algorithm",
    "x-amz-credential",
    "x-amz-date",
    "x-amz-expires",
    "x-amz-security-token",
    "x-amz-signature",
    "x-amz-signedheaders",
];

/// The long-term or session keys a token is signed with.
pub struct Keys<'a> {
    pub access_key_id: &'a str,
    pub secret_access_key: &'a str,
    pub session_token: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("{0}")]
    Format(String),
    #[error("cannot presign the STS call: {0}")]
    Signing(String),
}

/// A token for `cluster`, signed at `time` for STS in `region` (`https://sts.REGION.amazonaws.com`
/// unless `sts_endpoint` names another, such as the lab twin's).
pub fn presign(
    keys: &Keys<'_>,
    region: &str,
    cluster: &str,
    sts_endpoint: Option<&str>,
    time: SystemTime,
) -> Result<String, TokenError> {
    use aws_sigv4::http_request::{
        SignableBody, SignableRequest, SignatureLocation, SigningSettings, sign,
    };
    let credentials = aws_credential_types::Credentials::new(
        keys.access_key_id,
        keys.secret_access_key,
        keys.session_token.map(str::to_string),
        None,
        "runbook",
    );
    let identity = credentials.into();
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(URL_EXPIRES);
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("sts")
        .time(time)
        .settings(settings)
        .build()
        .map_err(|e| TokenError::Signing(e.to_string()))?
        .into();
    let base = sts_endpoint.map_or_else(
        || format!("https://sts.{region}.amazonaws.com"),
        |e| e.trim_end_matches('/').to_string(),
    );
    let url = format!("{base}/?Action=GetCallerIdentity&Version=2011-06-15");
    let signable = SignableRequest::new(
        "GET",
        &url,
        std::iter::once((CLUSTER_ID_HEADER, cluster)),
        SignableBody::Bytes(&[]),
    )
    .map_err(|e| TokenError::Signing(e.to_string()))?;
    let (instructions, _) = sign(signable, &params)
        .map_err(|e| TokenError::Signing(e.to_string()))?
        .into_parts();
    let mut request = http::Request::builder()
        .uri(&url)
        .body(())
        .map_err(|e| TokenError::Signing(e.to_string()))?;
    instructions.apply_to_request_http1x(&mut request);
    Ok(format!(
        "{PREFIX}{}",
        URL_SAFE_NO_PAD.encode(request.uri().to_string())
    ))
}

/// A token that passed the authenticator's checks of form and age; its signature is STS's to
/// check (`replay`).
#[derive(Debug, Clone)]
pub struct TokenUrl {
    pub host: String,
    pub raw_query: String,
    pub claim: sigv4::Claim,
}

/// Reads `token` as aws-iam-authenticator does at `now`: prefix, base64url, an https URL to an
/// STS host (`host_allowed`; the twin also takes its own plain-http endpoint there), path `/`,
/// only SigV4 and GetCallerIdentity parameters, `x-k8s-aws-id` signed, `X-Amz-Expires` at most
/// 15 minutes and `X-Amz-Date` less than 15 minutes old. The messages are the authenticator's.
pub fn read(
    token: &str,
    now: SystemTime,
    host_allowed: impl Fn(&str, &str) -> bool,
) -> Result<TokenUrl, TokenError> {
    let url = decode(token)?;
    let host = allowed_host(&url, host_allowed)?;
    if url.path() != "/" {
        return Err(TokenError::Format(
            "unexpected path in pre-signed URL".into(),
        ));
    }
    let raw_query = url.query().unwrap_or_default().to_string();
    check_parameters(&sigv4::pairs(&raw_query))?;
    let claim = fresh_claim(&raw_query, now)?;
    Ok(TokenUrl {
        host,
        raw_query,
        claim,
    })
}

/// The URL in the token: not too large, the prefix, base64url, a URL.
fn decode(token: &str) -> Result<url::Url, TokenError> {
    let format = |m: String| TokenError::Format(m);
    if token.len() > MAX_TOKEN_BYTES {
        return Err(format("token is too large".into()));
    }
    let Some(encoded) = token.strip_prefix(PREFIX) else {
        return Err(format(format!(
            "token is missing expected \"{PREFIX}\" prefix"
        )));
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(encoded)
        .map_err(|e| format(format!("the token is not base64url: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|_| format("the token is not a URL".into()))?;
    url::Url::parse(&text).map_err(|e| format(format!("the token is not a URL: {e}")))
}

/// The URL's `host[:port]`, when `host_allowed` takes it with the URL's scheme.
fn allowed_host(
    url: &url::Url,
    host_allowed: impl Fn(&str, &str) -> bool,
) -> Result<String, TokenError> {
    let host = match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        (None, _) => String::new(),
    };
    if host_allowed(url.scheme(), &host) {
        return Ok(host);
    }
    Err(TokenError::Format(if url.scheme() == "https" {
        format!("unexpected hostname \"{host}\" in pre-signed URL")
    } else {
        format!("unexpected scheme \"{}\" in pre-signed URL", url.scheme())
    }))
}

/// Only SigV4 and GetCallerIdentity parameters, each once; the action GetCallerIdentity,
/// `x-k8s-aws-id` signed, `X-Amz-Expires` at most 15 minutes.
fn check_parameters(pairs: &[(String, String)]) -> Result<(), TokenError> {
    let format = |m: String| TokenError::Format(m);
    for (key, _) in pairs {
        if !ALLOWED_PARAMETERS.contains(&key.to_ascii_lowercase().as_str()) {
            return Err(format(format!("non-whitelisted query parameter \"{key}\"")));
        }
        if pairs
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(key))
            .count()
            > 1
        {
            return Err(format(
                "query parameter with multiple values not supported".into(),
            ));
        }
    }
    let get = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    if get("action") != Some("GetCallerIdentity") {
        return Err(format(
            "unexpected action parameter in pre-signed URL".into(),
        ));
    }
    let signed = get("x-amz-signedheaders").unwrap_or_default();
    if !signed
        .split(';')
        .any(|h| h.eq_ignore_ascii_case(CLUSTER_ID_HEADER))
    {
        return Err(format(format!(
            "client did not sign the {CLUSTER_ID_HEADER} header in the pre-signed URL"
        )));
    }
    let expires = get("x-amz-expires").and_then(|e| e.parse::<i64>().ok());
    if !expires.is_some_and(|e| (0..=900).contains(&e)) {
        return Err(format(format!(
            "invalid X-Amz-Expires parameter in pre-signed URL: {}",
            expires.unwrap_or_default()
        )));
    }
    Ok(())
}

/// The URL's SigV4 claim, refused when its `X-Amz-Date` is [`ACCEPTED_FOR`] old at `now`.
fn fresh_claim(raw_query: &str, now: SystemTime) -> Result<sigv4::Claim, TokenError> {
    let empty = http::HeaderMap::new();
    let claim = sigv4::Claim::of(&Sent {
        method: "GET",
        path: "/",
        raw_query,
        headers: &empty,
        body: b"",
    })
    .map_err(|e| TokenError::Format(e.to_string()))?;
    let now_s = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    if now_s > claim.signed_at() + ACCEPTED_FOR.as_secs() as i64 {
        return Err(TokenError::Format(format!(
            "X-Amz-Date parameter is expired (15 minute expiration) {}",
            crate::clock::dates::rfc3339_utc(claim.signed_at())
        )));
    }
    Ok(claim)
}

impl TokenUrl {
    /// The headers of the call the server makes to STS for `cluster`: a token signed for
    /// another cluster's name then fails STS's signature check.
    pub fn replay_headers(&self, cluster: &str) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        if let Ok(host) = self.host.parse() {
            headers.insert("host", host);
        }
        if let Ok(cluster) = cluster.parse() {
            headers.insert(CLUSTER_ID_HEADER, cluster);
        }
        headers
    }
}

/// The hosts of AWS's public STS endpoints: `sts.amazonaws.com` and `sts.REGION.amazonaws.com`.
pub fn is_sts_host(host: &str) -> bool {
    host == "sts.amazonaws.com"
        || host
            .strip_prefix("sts.")
            .and_then(|rest| rest.strip_suffix(".amazonaws.com"))
            .is_some_and(|region| {
                !region.is_empty()
                    && region
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: Keys<'static> = Keys {
        access_key_id: "AKIDEXAMPLE",
        secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        session_token: None,
    };

    fn at(unix: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(unix)
    }

    fn sts_only(scheme: &str, host: &str) -> bool {
        scheme == "https" && is_sts_host(host)
    }

    fn token_at(unix: u64) -> String {
        presign(&KEYS, "ap-northeast-2", "myeks5w", None, at(unix)).expect("presigned")
    }

    #[test]
    fn a_token_has_the_shape_of_aws_eks_get_token() {
        let token = token_at(1_767_225_600);
        let url = read(&token, at(1_767_225_600), sts_only).expect("valid");
        assert_eq!(url.host, "sts.ap-northeast-2.amazonaws.com");
        assert_eq!(url.claim.service, "sts");
        assert_eq!(url.claim.expires, Some(60));
        assert_eq!(url.claim.signed_headers, ["host", "x-k8s-aws-id"]);
        assert_eq!(url.claim.amz_date, "20260101T000000Z");
        let replayed_for = |cluster: &str| {
            sigv4::verify(
                KEYS.secret_access_key,
                &url.claim,
                &Sent {
                    method: "GET",
                    path: "/",
                    raw_query: &url.raw_query,
                    headers: &url.replay_headers(cluster),
                    body: b"",
                },
            )
        };
        assert!(replayed_for("myeks5w"));
        assert!(
            !replayed_for("other"),
            "a token is good for the cluster it names only"
        );
    }

    #[test]
    fn old_tokens_foreign_hosts_and_stray_parameters_are_refused_as_the_authenticator_does() {
        let token = token_at(1_767_225_600);
        let late = read(&token, at(1_767_225_600 + 15 * 60 + 1), sts_only).expect_err("old");
        assert!(
            late.to_string()
                .starts_with("X-Amz-Date parameter is expired (15 minute expiration)"),
            "{late}"
        );
        assert!(read(&token, at(1_767_225_600 + 15 * 60), sts_only).is_ok());
        let foreign = presign(
            &KEYS,
            "ap-northeast-2",
            "myeks5w",
            Some("https://sts.example.com"),
            at(1_767_225_600),
        )
        .expect("presigned");
        let error = read(&foreign, at(1_767_225_600), sts_only).expect_err("foreign host");
        assert_eq!(
            error.to_string(),
            "unexpected hostname \"sts.example.com\" in pre-signed URL"
        );
        let plain = format!(
            "{PREFIX}{}",
            URL_SAFE_NO_PAD.encode("https://sts.amazonaws.com/?Action=GetCallerIdentity&Action2=x")
        );
        let error = read(&plain, at(0), sts_only).expect_err("stray");
        assert_eq!(
            error.to_string(),
            "non-whitelisted query parameter \"Action2\""
        );
        let unsigned = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode("https://sts.amazonaws.com/?Action=GetCallerIdentity&X-Amz-SignedHeaders=host&X-Amz-Expires=60"));
        let error = read(&unsigned, at(0), sts_only).expect_err("no cluster header");
        assert!(
            error
                .to_string()
                .contains("did not sign the x-k8s-aws-id header"),
            "{error}"
        );
        assert!(
            read("Bearer abc", at(0), sts_only)
                .expect_err("prefix")
                .to_string()
                .contains("prefix")
        );
    }

    #[test]
    fn sts_hosts_are_aws_own() {
        assert!(is_sts_host("sts.amazonaws.com"));
        assert!(is_sts_host("sts.ap-northeast-2.amazonaws.com"));
        assert!(!is_sts_host("sts.amazonaws.com.evil.io"));
        assert!(!is_sts_host("sts..amazonaws.com"));
        assert!(!is_sts_host("sts.a/b.amazonaws.com"));
    }
}
