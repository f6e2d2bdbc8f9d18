//! IAM ListRoles: the account's roles by name, those under `PathPrefix` (default `/`), a page
//! of `MaxItems` (1 to 1000, default 100, the IAM API reference) at a time, the next page from
//! the `Marker` the last one answered with. IAM's markers are opaque; the twin's is the name of
//! the role the next page starts at.

use super::error::AwsError;
use super::iam_roles::{Params, role_fields};
use super::state::{AwsState, Role};
use super::wire::Xml;

/// `MaxItems`, bounded as the API reference bounds it, in AWS's request-validation words.
fn max_items(params: &Params) -> Result<usize, AwsError> {
    let Some(text) = params.get("MaxItems") else {
        return Ok(100);
    };
    let validation = |constraint: &str| {
        AwsError::new(
            400,
            "ValidationError",
            format!(
                "1 validation error detected: Value '{text}' at 'maxItems' failed to satisfy constraint: {constraint}"
            ),
        )
    };
    match text.parse::<i64>() {
        Ok(n) if n < 1 => Err(validation(
            "Member must have value greater than or equal to 1",
        )),
        Ok(n) if n > 1000 => Err(validation(
            "Member must have value less than or equal to 1000",
        )),
        Ok(n) => Ok(usize::try_from(n).unwrap_or(100)),
        Err(_) => Err(validation("Member must be an integer")),
    }
}

pub(super) fn list_roles(state: &AwsState, params: &Params, xml: &mut Xml) -> Result<(), AwsError> {
    let prefix = params.get("PathPrefix").map_or("/", String::as_str);
    let limit = max_items(params)?;
    let marker = params.get("Marker").map_or("", String::as_str);
    let mut roles = state
        .roles
        .values()
        .filter(|r| r.path.starts_with(prefix) && r.name.as_str() >= marker);
    let page: Vec<&Role> = roles.by_ref().take(limit).collect();
    let next = roles.next();
    xml.open("Roles");
    for role in page {
        xml.open("member");
        role_fields(xml, role);
        xml.close("member");
    }
    xml.close("Roles").leaf("IsTruncated", next.is_some());
    if let Some(next) = next {
        xml.leaf("Marker", &next.name);
    }
    Ok(())
}
