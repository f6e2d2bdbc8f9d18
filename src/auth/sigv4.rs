//! AWS Signature Version 4, the checking side: what a request claims (the `Authorization`
//! header, or a presigned URL's `X-Amz-*` query), the canonical request rebuilt from what was
//! sent, and the signature recomputed with the secret key (the SDK's own key derivation) and
//! compared in constant time. Clocks and key lookup are the caller's.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use sha2::{Digest, Sha256};

use super::secret::constant_time_eq;
use crate::clock::dates::parse_iso_basic_utc;

pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// The payload hash a presigned URL may be signed with instead of the body's.
const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";

/// SigV4 encodes everything but the unreserved characters of RFC 3986.
const STRICT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Where a request carried its signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// `Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...`.
    Header,
    /// A presigned URL: `X-Amz-Algorithm`, `X-Amz-Credential`, ... in the query.
    Query,
}

/// What a request says about its signature, before anything is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub access_key_id: String,
    /// `YYYYMMDD` of the credential scope.
    pub scope_date: String,
    pub region: String,
    pub service: String,
    pub signed_headers: Vec<String>,
    pub signature: String,
    /// `X-Amz-Date` (`20260101T000000Z`).
    pub amz_date: String,
    /// A presigned URL's `X-Amz-Expires`, in seconds.
    pub expires: Option<u64>,
    pub location: Location,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SigV4Error {
    #[error("the request is not signed (no Authorization header and no X-Amz-Signature)")]
    Missing,
    #[error("the request's signature is malformed: {0}")]
    Malformed(String),
}

/// A request as it was sent: the path and query exactly as on the wire.
pub struct Sent<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub raw_query: &'a str,
    pub headers: &'a http::HeaderMap,
    pub body: &'a [u8],
}

impl Claim {
    /// The claim of a request: its `Authorization` header, else its presigned query.
    pub fn of(sent: &Sent<'_>) -> Result<Self, SigV4Error> {
        match sent.headers.get("authorization") {
            Some(value) => {
                let text = value
                    .to_str()
                    .map_err(|_| SigV4Error::Malformed("Authorization is not text".into()))?;
                let date = sent
                    .headers
                    .get("x-amz-date")
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| SigV4Error::Malformed("no X-Amz-Date header".into()))?;
                Self::from_header(text, date)
            }
            None => Self::from_query(&pairs(sent.raw_query)),
        }
    }

    fn from_header(authorization: &str, amz_date: &str) -> Result<Self, SigV4Error> {
        let Some(rest) = authorization.strip_prefix(ALGORITHM) else {
            let shown: String = authorization.split_whitespace().take(1).collect();
            return Err(SigV4Error::Malformed(format!(
                "the Authorization header is `{shown} ...`, not {ALGORITHM}"
            )));
        };
        let field = |name: &str| {
            rest.split(',')
                .map(str::trim)
                .find_map(|part| part.strip_prefix(name)?.strip_prefix('='))
                .ok_or_else(|| SigV4Error::Malformed(format!("no {name}= in Authorization")))
        };
        Self::from_parts(
            field("Credential")?,
            field("SignedHeaders")?,
            field("Signature")?,
            amz_date,
            None,
            Location::Header,
        )
    }

    fn from_query(pairs: &[(String, String)]) -> Result<Self, SigV4Error> {
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        let Some(algorithm) = get("X-Amz-Algorithm") else {
            return Err(SigV4Error::Missing);
        };
        if algorithm != ALGORITHM {
            return Err(SigV4Error::Malformed(format!(
                "X-Amz-Algorithm is {algorithm}, not {ALGORITHM}"
            )));
        }
        let need =
            |name: &str| get(name).ok_or_else(|| SigV4Error::Malformed(format!("no {name}")));
        let expires = need("X-Amz-Expires")?
            .parse::<u64>()
            .map_err(|_| SigV4Error::Malformed("X-Amz-Expires is not a number".into()))?;
        Self::from_parts(
            need("X-Amz-Credential")?,
            need("X-Amz-SignedHeaders")?,
            need("X-Amz-Signature")?,
            need("X-Amz-Date")?,
            Some(expires),
            Location::Query,
        )
    }

    fn from_parts(
        credential: &str,
        signed_headers: &str,
        signature: &str,
        amz_date: &str,
        expires: Option<u64>,
        location: Location,
    ) -> Result<Self, SigV4Error> {
        let scope: Vec<&str> = credential.split('/').collect();
        let [key, date, region, service, "aws4_request"] = scope.as_slice() else {
            return Err(SigV4Error::Malformed(format!(
                "the credential `{}/...` is not KEY/DATE/REGION/SERVICE/aws4_request",
                scope.first().unwrap_or(&"")
            )));
        };
        if parse_iso_basic_utc(amz_date).is_none() {
            return Err(SigV4Error::Malformed(format!(
                "X-Amz-Date `{amz_date}` is not YYYYMMDDTHHMMSSZ"
            )));
        }
        Ok(Self {
            access_key_id: (*key).to_string(),
            scope_date: (*date).to_string(),
            region: (*region).to_string(),
            service: (*service).to_string(),
            signed_headers: signed_headers.split(';').map(str::to_string).collect(),
            signature: signature.to_ascii_lowercase(),
            amz_date: amz_date.to_string(),
            expires,
            location,
        })
    }

    /// Unix seconds of `X-Amz-Date` (checked to parse when the claim was read).
    pub fn signed_at(&self) -> i64 {
        parse_iso_basic_utc(&self.amz_date).unwrap_or_default()
    }

    fn scope(&self) -> String {
        format!(
            "{}/{}/{}/aws4_request",
            self.scope_date, self.region, self.service
        )
    }
}

/// The query's pairs, percent-decoded (`+` is a plus: SigV4 clients encode spaces as `%20`).
pub fn pairs(raw_query: &str) -> Vec<(String, String)> {
    raw_query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |s: &str| percent_decode_str(s).decode_utf8_lossy().into_owned();
            (decode(k), decode(v))
        })
        .collect()
}

fn encode(text: &str) -> String {
    utf8_percent_encode(text, STRICT).to_string()
}

/// The canonical request of `sent` under `claim`, with `payload_hash`.
fn canonical_request(sent: &Sent<'_>, claim: &Claim, payload_hash: &str) -> String {
    // Services other than S3 sign the path encoded once more than it is sent.
    let path = if sent.path.is_empty() { "/" } else { sent.path };
    let uri: Vec<String> = path.split('/').map(encode).collect();
    let mut query: Vec<(String, String)> = pairs(sent.raw_query)
        .into_iter()
        .filter(|(k, _)| claim.location == Location::Header || k != "X-Amz-Signature")
        .map(|(k, v)| (encode(&k), encode(&v)))
        .collect();
    query.sort();
    let query: Vec<String> = query.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    let headers: String = claim
        .signed_headers
        .iter()
        .map(|name| {
            let values: Vec<String> = sent
                .headers
                .get_all(name.as_str())
                .iter()
                .map(|v| {
                    String::from_utf8_lossy(v.as_bytes())
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            format!("{name}:{}\n", values.join(","))
        })
        .collect();
    format!(
        "{}\n{}\n{}\n{headers}\n{}\n{payload_hash}",
        sent.method,
        uri.join("/"),
        query.join("&"),
        claim.signed_headers.join(";"),
    )
}

fn signature_of(secret: &str, claim: &Claim, canonical: &str) -> String {
    let string_to_sign = format!(
        "{ALGORITHM}\n{}\n{}\n{}",
        claim.amz_date,
        claim.scope(),
        hex::encode(Sha256::digest(canonical.as_bytes()))
    );
    let date = parse_iso_basic_utc(&format!("{}T000000Z", claim.scope_date)).unwrap_or_default();
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(date.max(0) as u64);
    let key =
        aws_sigv4::sign::v4::generate_signing_key(secret, time, &claim.region, &claim.service);
    aws_sigv4::sign::v4::calculate_signature(key, string_to_sign.as_bytes())
}

/// Whether `sent` carries `claim`'s signature made with `secret` (the claim's access key's).
pub fn verify(secret: &str, claim: &Claim, sent: &Sent<'_>) -> bool {
    let declared = sent
        .headers
        .get("x-amz-content-sha256")
        .and_then(|v| v.to_str().ok());
    let body_hash = hex::encode(Sha256::digest(sent.body));
    let mut candidates = vec![declared.map_or(body_hash.clone(), str::to_string)];
    if claim.location == Location::Query {
        // A presigned URL says nothing of its body: some signers hash the empty body, others
        // sign UNSIGNED-PAYLOAD (botocore for some services).
        candidates.push(UNSIGNED_PAYLOAD.to_string());
    }
    candidates.iter().any(|hash| {
        let expected = signature_of(secret, claim, &canonical_request(sent, claim, hash));
        constant_time_eq(expected.as_bytes(), claim.signature.as_bytes())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // AWS's documented example (Signature Version 4 test suite, `get-vanilla`): the key, time
    // and signature are published in the SigV4 docs.
    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

    fn vanilla() -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            "host",
            "example.amazonaws.com"
                .parse()
                .unwrap_or_else(|_| unreachable!()),
        );
        headers.insert(
            "x-amz-date",
            "20150830T123600Z"
                .parse()
                .unwrap_or_else(|_| unreachable!()),
        );
        headers.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
                .parse()
                .unwrap_or_else(|_| unreachable!()),
        );
        headers
    }

    fn sent<'a>(headers: &'a http::HeaderMap, query: &'a str) -> Sent<'a> {
        Sent {
            method: "GET",
            path: "/",
            raw_query: query,
            headers,
            body: b"",
        }
    }

    #[test]
    fn the_published_get_vanilla_example_verifies() {
        let headers = vanilla();
        let request = sent(&headers, "");
        let claim = Claim::of(&request).expect("a claim");
        assert_eq!(claim.access_key_id, "AKIDEXAMPLE");
        assert_eq!(claim.service, "service");
        assert!(verify(SECRET, &claim, &request));
        assert!(!verify("another secret", &claim, &request));
    }

    #[test]
    fn any_change_to_what_was_signed_breaks_it() {
        let headers = vanilla();
        let claim = Claim::of(&sent(&headers, "")).expect("a claim");
        assert!(!verify(
            SECRET,
            &claim,
            &sent(&headers, "Action=DeleteCluster")
        ));
        let mut moved = vanilla();
        moved.insert(
            "host",
            "evil.example.com"
                .parse()
                .unwrap_or_else(|_| unreachable!()),
        );
        assert!(!verify(SECRET, &claim, &sent(&moved, "")));
        let mut zeroed = claim.clone();
        zeroed.signature = "00".into();
        assert!(!verify(SECRET, &zeroed, &sent(&headers, "")));
    }

    #[test]
    fn unsigned_and_malformed_requests_say_what_is_missing() {
        let empty = http::HeaderMap::new();
        assert_eq!(
            Claim::of(&sent(&empty, "Action=X")),
            Err(SigV4Error::Missing)
        );
        let mut basic = http::HeaderMap::new();
        basic.insert(
            "authorization",
            "Basic abc".parse().unwrap_or_else(|_| unreachable!()),
        );
        basic.insert(
            "x-amz-date",
            "20150830T123600Z"
                .parse()
                .unwrap_or_else(|_| unreachable!()),
        );
        let error = Claim::of(&sent(&basic, "")).expect_err("not SigV4");
        assert!(error.to_string().contains("`Basic ...`"), "{error}");
        let presigned = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20150830%2Fus-east-1%2Fsts%2Faws4_request&X-Amz-Date=nope&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=ab";
        let error = Claim::of(&sent(&empty, presigned)).expect_err("bad date");
        assert!(error.to_string().contains("`nope`"), "{error}");
    }

    #[test]
    fn canonical_query_sorts_encoded_pairs_and_drops_the_signature_of_a_presigned_url() {
        let headers = http::HeaderMap::new();
        let query = "b=2&a=x%20y&X-Amz-Signature=ff&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20150830%2Fus-east-1%2Fsts%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host";
        let request = sent(&headers, query);
        let claim = Claim::of(&request).expect("presigned");
        assert_eq!(claim.expires, Some(60));
        let canonical = canonical_request(&request, &claim, "h");
        let line = canonical.lines().nth(2).unwrap_or_default();
        assert!(
            line.starts_with("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F2015"),
            "{line}"
        );
        assert!(line.ends_with("&a=x%20y&b=2"), "{line}");
        assert!(!line.contains("X-Amz-Signature"));
    }
}
