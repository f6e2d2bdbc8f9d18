//! `POST .../serviceaccounts/NAME/token` (TokenRequest, what `kubectl create token` and the
//! kubelet's projected volumes ask for): a bound token for an existing ServiceAccount, for the
//! audiences asked (the API server's by default), valid `expirationSeconds` (an hour by
//! default, ten minutes at least). Tokens live in wall-clock time, as the EKS tokens the same
//! server checks: a drill that fast-forwards the twin's clock does not expire its pod's token.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::auth::secret::Secret;
use crate::auth::service_account_token::{self, Claims};
use crate::clock::dates::rfc3339_utc;
use crate::lab;
use crate::sim::kube::storage::status::ApiError;
use crate::sim::twin::Twin;

/// The audience the API server accepts (EKS's `--api-audiences`).
pub(crate) const API_AUDIENCE: &str = "https://kubernetes.default.svc";

const DEFAULT_SECONDS: i64 = 3600;
const MINIMUM_SECONDS: i64 = 600;

pub(crate) fn wall_clock_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The TokenRequest answered (201), or why not.
pub(crate) fn issue(
    twin: &Twin,
    namespace: &str,
    name: &str,
    body: &Value,
) -> Result<Value, ApiError> {
    let uid = twin.read_kube(|s| {
        s.object_ref("serviceaccounts", namespace, name)
            .map(|o| {
                o["metadata"]["uid"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .ok_or_else(|| ApiError::not_found(&s.built_in("serviceaccounts"), name))
    })?;
    let spec = &body["spec"];
    let mut audiences: Vec<String> = spec["audiences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    if audiences.is_empty() {
        audiences.push(API_AUDIENCE.into());
    }
    let seconds = spec["expirationSeconds"]
        .as_i64()
        .unwrap_or(DEFAULT_SECONDS);
    if seconds < MINIMUM_SECONDS {
        return Err(ApiError::invalid(
            "TokenRequest",
            name,
            &[(
                "spec.expirationSeconds",
                format!(
                    "Invalid value: {seconds}: may not specify a duration less than 10 minutes"
                ),
            )],
        ));
    }
    let now = wall_clock_seconds();
    let claims = Claims {
        namespace: namespace.into(),
        name: name.into(),
        uid,
        audiences: audiences.clone(),
        issued_at: now,
        expires_at: now.saturating_add(seconds),
    };
    let id = Secret::random("");
    let token = service_account_token::issue(
        twin.secrets.service_account_key.expose().as_bytes(),
        lab::OIDC_ISSUER,
        &claims,
        &id.expose()[..32],
    );
    Ok(json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": rfc3339_utc(now)},
        "spec": {"audiences": audiences, "expirationSeconds": seconds, "boundObjectRef": null},
        "status": {"token": token, "expirationTimestamp": rfc3339_utc(claims.expires_at)},
    }))
}
