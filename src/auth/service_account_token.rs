//! Bound ServiceAccount tokens in the shape the API server's TokenRequest issues them: a JWT
//! whose claims name the issuer, the audiences, the expiry and the ServiceAccount (namespace,
//! name, uid). Signed with HMAC-SHA256 under the lab's own key: the twin is the only one that
//! verifies them, and clients never look inside.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::hmac;
use serde_json::{Value, json};

/// What a token says about its ServiceAccount and lifetime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub audiences: Vec<String>,
    /// Unix seconds.
    pub issued_at: i64,
    pub expires_at: i64,
}

impl Claims {
    /// `system:serviceaccount:NAMESPACE:NAME`.
    pub fn subject(&self) -> String {
        format!("system:serviceaccount:{}:{}", self.namespace, self.name)
    }
}

fn key(secret: &[u8]) -> hmac::Key {
    hmac::Key::new(hmac::HMAC_SHA256, secret)
}

/// A signed token for `claims`, issued by `issuer`, with `id` as its `jti`.
pub fn issue(secret: &[u8], issuer: &str, claims: &Claims, id: &str) -> String {
    let header = json!({"alg": "HS256", "typ": "JWT"});
    let payload = json!({
        "aud": claims.audiences,
        "exp": claims.expires_at,
        "iat": claims.issued_at,
        "nbf": claims.issued_at,
        "iss": issuer,
        "jti": id,
        "sub": claims.subject(),
        "kubernetes.io": {
            "namespace": claims.namespace,
            "serviceaccount": {"name": claims.name, "uid": claims.uid},
        },
    });
    let signed = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(payload.to_string())
    );
    let signature = hmac::sign(&key(secret), signed.as_bytes());
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
}

/// Whether a bearer token has a JWT's shape (three base64url parts, the first `{"`).
pub fn looks_like_one(token: &str) -> bool {
    token.starts_with("eyJ") && token.split('.').count() == 3
}

/// The claims of a token signed with `secret` that has not expired at `now` (unix seconds),
/// or why it is refused.
pub fn read(secret: &[u8], token: &str, now: i64) -> Result<Claims, String> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("not a JWT (three dot-separated parts)".into());
    };
    let signature = URL_SAFE_NO_PAD
        .decode(signature)
        .map_err(|_| "its signature is not base64url".to_string())?;
    hmac::verify(
        &key(secret),
        format!("{header}.{payload}").as_bytes(),
        &signature,
    )
    .map_err(|_| {
        "its signature does not verify with this lab's key (a token of another lab, or altered)"
            .to_string()
    })?;
    let payload: Value = URL_SAFE_NO_PAD
        .decode(payload)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or("its claims are not JSON")?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let account = &payload["kubernetes.io"];
    let claims = Claims {
        namespace: text(&account["namespace"]),
        name: text(&account["serviceaccount"]["name"]),
        uid: text(&account["serviceaccount"]["uid"]),
        audiences: payload["aud"]
            .as_array()
            .into_iter()
            .flatten()
            .map(text)
            .collect(),
        issued_at: payload["iat"].as_i64().unwrap_or_default(),
        expires_at: payload["exp"].as_i64().unwrap_or_default(),
    };
    if claims.expires_at <= now {
        return Err(format!(
            "the token of {} expired {} s ago",
            claims.subject(),
            now - claims.expires_at
        ));
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> Claims {
        Claims {
            namespace: "runbook-drill".into(),
            name: "runbook-drill".into(),
            uid: "0000-1".into(),
            audiences: vec!["https://kubernetes.default.svc".into()],
            issued_at: 1_000,
            expires_at: 4_600,
        }
    }

    #[test]
    fn a_token_reads_back_until_it_expires_and_only_with_its_key() {
        let token = issue(b"lab key", "https://issuer", &claims(), "id-1");
        assert!(looks_like_one(&token));
        assert_eq!(read(b"lab key", &token, 1_001), Ok(claims()));
        assert!(
            read(b"lab key", &token, 4_600)
                .expect_err("expired")
                .contains("expired 0 s ago")
        );
        assert!(
            read(b"other key", &token, 1_001)
                .expect_err("another lab")
                .contains("does not verify")
        );
        let mut parts: Vec<&str> = token.split('.').collect();
        let forged = URL_SAFE_NO_PAD.encode(
            r#"{"exp":9999,"kubernetes.io":{"namespace":"kube-system","serviceaccount":{"name":"admin"}}}"#,
        );
        parts[1] = &forged;
        assert!(
            read(b"lab key", &parts.join("."), 1_001).is_err(),
            "claims cannot be swapped"
        );
        assert!(read(b"lab key", "a.b", 1_001).is_err());
        assert!(!looks_like_one("k8s-aws-v1.abc"));
    }
}
