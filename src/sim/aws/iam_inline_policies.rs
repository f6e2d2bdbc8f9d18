//! A role's inline policies (PutRolePolicy, GetRolePolicy, ListRolePolicies,
//! DeleteRolePolicy): documents kept as given and served URL-encoded, as IAM does.

use std::collections::BTreeMap;

use percent_encoding::utf8_percent_encode;

use super::error::AwsError;
use super::iam_roles::{ENCODED, param, role_missing};
use super::state::AwsState;
use super::wire::Xml;

type Params = BTreeMap<String, String>;

fn policy_missing(role: &str, name: &str) -> AwsError {
    AwsError::new(
        404,
        "NoSuchEntity",
        format!("The role policy with name {name} cannot be found (role {role})."),
    )
}

/// Answers an inline-policy action; None when `action` is not one.
pub(crate) fn handle(
    state: &mut AwsState,
    action: &str,
    params: &Params,
    xml: &mut Xml,
) -> Option<Result<(), AwsError>> {
    Some(match action {
        "PutRolePolicy" => put(state, params),
        "GetRolePolicy" => get(state, params, xml),
        "ListRolePolicies" => list(state, params, xml),
        "DeleteRolePolicy" => delete(state, params),
        _ => return None,
    })
}

fn put(state: &mut AwsState, params: &Params) -> Result<(), AwsError> {
    let role = param(params, "RoleName", "roleName")?;
    let name = param(params, "PolicyName", "policyName")?.to_string();
    let document = param(params, "PolicyDocument", "policyDocument")?.to_string();
    if serde_json::from_str::<serde_json::Value>(&document).is_err() {
        return Err(AwsError::new(
            400,
            "MalformedPolicyDocument",
            "Syntax errors in policy.",
        ));
    }
    let record = state
        .roles
        .get_mut(role)
        .ok_or_else(|| role_missing(role))?;
    record.inline.insert(name, document);
    Ok(())
}

fn get(state: &AwsState, params: &Params, xml: &mut Xml) -> Result<(), AwsError> {
    let role = param(params, "RoleName", "roleName")?;
    let name = param(params, "PolicyName", "policyName")?;
    let record = state.roles.get(role).ok_or_else(|| role_missing(role))?;
    let document = record
        .inline
        .get(name)
        .ok_or_else(|| policy_missing(role, name))?;
    xml.leaf("RoleName", role).leaf("PolicyName", name).leaf(
        "PolicyDocument",
        utf8_percent_encode(document, ENCODED).to_string(),
    );
    Ok(())
}

fn list(state: &AwsState, params: &Params, xml: &mut Xml) -> Result<(), AwsError> {
    let role = param(params, "RoleName", "roleName")?;
    let record = state.roles.get(role).ok_or_else(|| role_missing(role))?;
    xml.open("PolicyNames");
    for name in record.inline.keys() {
        xml.leaf("member", name);
    }
    xml.close("PolicyNames").leaf("IsTruncated", false);
    Ok(())
}

fn delete(state: &mut AwsState, params: &Params) -> Result<(), AwsError> {
    let role = param(params, "RoleName", "roleName")?;
    let name = param(params, "PolicyName", "policyName")?;
    let record = state
        .roles
        .get_mut(role)
        .ok_or_else(|| role_missing(role))?;
    record
        .inline
        .remove(name)
        .map(|_| ())
        .ok_or_else(|| policy_missing(role, name))
}
