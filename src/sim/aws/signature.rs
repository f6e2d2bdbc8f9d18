//! Every AWS call to the twin is signed by a key it knows, as AWS requires: unsigned, unknown
//! key, wrong signature and stale date are refused with each service's own code.

#[cfg(doc)]
use super::identity::Identities;
use super::identity::Principal;
use crate::auth::secret::Secret;
use crate::auth::sigv4::{Claim, Location, Sent, SigV4Error, verify};

/// How far a header-signed request's `X-Amz-Date` may be from the server's clock.
const SKEW_SECONDS: i64 = 15 * 60;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Missing,
    Malformed(String),
    UnknownKey,
    Mismatch,
    /// A header-signed call from too far away in time, or a presigned URL past its expiry.
    Expired(String),
}

/// The principal that signed `sent`, with the key `signer` looks up (see
/// [`Identities::signer`]), at `now` (Unix seconds of the wall clock: signers sign with
/// theirs, not the twin's virtual one).
pub fn check(
    signer: impl FnOnce(&str) -> Option<(Secret, Principal)>,
    sent: &Sent<'_>,
    now: i64,
) -> Result<(Principal, Claim), Refusal> {
    let claim = Claim::of(sent).map_err(|e| match e {
        SigV4Error::Missing => Refusal::Missing,
        SigV4Error::Malformed(m) => Refusal::Malformed(m),
    })?;
    let Some((secret, principal)) = signer(&claim.access_key_id) else {
        return Err(Refusal::UnknownKey);
    };
    if !verify(secret.expose(), &claim, sent) {
        return Err(Refusal::Mismatch);
    }
    let signed = claim.signed_at();
    match (claim.location, claim.expires) {
        (Location::Header, _) if now - signed > SKEW_SECONDS => {
            return Err(Refusal::Expired(format!(
                "Signature expired: {} is now earlier than {} ({} - 15 min.)",
                claim.amz_date,
                crate::clock::calendar::iso_basic_utc(now - SKEW_SECONDS),
                crate::clock::calendar::iso_basic_utc(now)
            )));
        }
        // A date ahead of the clock, as AWS words it: the signer's clock is fast.
        (Location::Header, _) if signed - now > SKEW_SECONDS => {
            return Err(Refusal::Expired(format!(
                "Signature not yet current: {} is still later than {} ({} + 15 min.)",
                claim.amz_date,
                crate::clock::calendar::iso_basic_utc(now + SKEW_SECONDS),
                crate::clock::calendar::iso_basic_utc(now)
            )));
        }
        // STS takes a presigned GetCallerIdentity for 15 minutes whatever X-Amz-Expires says
        // (EKS tokens rely on it); other services hold a URL to its own expiry.
        (Location::Query, Some(expires)) => {
            let lifetime = if claim.service == "sts" {
                (expires as i64).max(SKEW_SECONDS)
            } else {
                expires as i64
            };
            if now > signed + lifetime {
                return Err(Refusal::Expired("Request has expired".into()));
            }
        }
        _ => {}
    }
    Ok((principal, claim))
}

/// `(HTTP status, code, message)` of a refusal as `service` answers it.
pub fn answer(service: &str, refusal: &Refusal) -> (u16, &'static str, String) {
    const INVALID_TOKEN: &str = "The security token included in the request is invalid.";
    const MISMATCH: &str = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.";
    match (service, refusal) {
        ("eks", Refusal::Missing) => (
            403,
            "MissingAuthenticationTokenException",
            "Missing Authentication Token".into(),
        ),
        ("eks", Refusal::UnknownKey) => (403, "UnrecognizedClientException", INVALID_TOKEN.into()),
        ("eks", Refusal::Mismatch) => (403, "InvalidSignatureException", MISMATCH.into()),
        ("eks", Refusal::Expired(m)) => (403, "InvalidSignatureException", m.clone()),
        ("eks", Refusal::Malformed(m)) => (403, "IncompleteSignatureException", m.clone()),
        ("ec2", Refusal::Missing) => (
            401,
            "MissingAuthenticationToken",
            "Request is missing Authentication Token".into(),
        ),
        ("ec2", Refusal::UnknownKey) => (
            401,
            "AuthFailure",
            "AWS was not able to validate the provided access credentials".into(),
        ),
        ("ec2", Refusal::Expired(m)) => (400, "RequestExpired", m.clone()),
        (_, Refusal::Missing) => (
            403,
            "MissingAuthenticationToken",
            "Request is missing Authentication Token".into(),
        ),
        (_, Refusal::UnknownKey) => (403, "InvalidClientTokenId", INVALID_TOKEN.into()),
        (_, Refusal::Mismatch) => (403, "SignatureDoesNotMatch", MISMATCH.into()),
        (_, Refusal::Expired(m)) => (403, "SignatureDoesNotMatch", m.clone()),
        (_, Refusal::Malformed(m)) => (400, "IncompleteSignature", m.clone()),
    }
}
