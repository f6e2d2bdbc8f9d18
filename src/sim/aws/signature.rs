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
pub(crate) enum Refusal {
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
pub(crate) fn check(
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
        (Location::Header, _) => {
            if let Some(refusal) = header_date_refusal(&claim.amz_date, signed, now) {
                return Err(Refusal::Expired(refusal));
            }
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

/// Why a header-signed call's X-Amz-Date is refused, in AWS's words: more than 15 minutes
/// behind the clock (expired), or ahead of it (the signer's clock is fast: not yet current).
fn header_date_refusal(amz_date: &str, signed: i64, now: i64) -> Option<String> {
    use crate::clock::dates::iso_basic_utc;
    if now - signed > SKEW_SECONDS {
        Some(format!(
            "Signature expired: {amz_date} is now earlier than {} ({} - 15 min.)",
            iso_basic_utc(now - SKEW_SECONDS),
            iso_basic_utc(now)
        ))
    } else if signed - now > SKEW_SECONDS {
        Some(format!(
            "Signature not yet current: {amz_date} is still later than {} ({} + 15 min.)",
            iso_basic_utc(now + SKEW_SECONDS),
            iso_basic_utc(now)
        ))
    } else {
        None
    }
}

/// `(HTTP status, code, message)` of a refusal as `service` answers it.
pub(crate) fn answer(service: &str, refusal: &Refusal) -> (u16, &'static str, String) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_behind_is_expired_and_one_ahead_is_not_yet_current() {
        let now = 1_796_400_000;
        let behind = header_date_refusal("20261204T150000Z", now - 16 * 60, now).unwrap();
        assert!(
            behind.starts_with("Signature expired: 20261204T150000Z is now earlier than"),
            "{behind}"
        );
        let ahead = header_date_refusal("20261204T170000Z", now + 60 * 60, now).unwrap();
        assert!(
            ahead.starts_with("Signature not yet current: 20261204T170000Z is still later than")
                && ahead.ends_with("+ 15 min.)"),
            "{ahead}"
        );
        assert_eq!(header_date_refusal("x", now + 14 * 60, now), None);
        assert_eq!(header_date_refusal("x", now - 14 * 60, now), None);
    }
}
