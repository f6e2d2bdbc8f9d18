//! A role's inline policies (PutRolePolicy, GetRolePolicy, ListRolePolicies,
//! DeleteRolePolicy): documents kept as given and served URL-encoded, as IAM does.

use percent_encoding::utf8_percent_encode;

use super::error::AwsError;
use super::iam_roles::{ENCODED, Params, existing_role, existing_role_mut, param, role_name};
use super::state::AwsState;
use super::wire::Xml;

fn policy_missing(role: &str, name: &str) -> AwsError {
    AwsError::new(
        404,
        "NoSuchEntity",
        format!("The role policy with name {name} cannot be found (role {role})."),
    )
}

pub(super) fn put_role_policy(state: &mut AwsState, params: &Params) -> Result<(), AwsError> {
    let role = role_name(params)?;
    let name = param(params, "PolicyName", "policyName")?.to_string();
    let document = param(params, "PolicyDocument", "policyDocument")?.to_string();
    if serde_json::from_str::<serde_json::Value>(&document).is_err() {
        return Err(AwsError::new(
            400,
            "MalformedPolicyDocument",
            "Syntax errors in policy.",
        ));
    }
    let record = existing_role_mut(state, role)?;
    record.inline.insert(name, document);
    Ok(())
}

pub(super) fn get_role_policy(
    state: &AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let role = role_name(params)?;
    let name = param(params, "PolicyName", "policyName")?;
    let record = existing_role(state, role)?;
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

pub(super) fn list_role_policies(
    state: &AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let role = role_name(params)?;
    let record = existing_role(state, role)?;
    xml.open("PolicyNames");
    for name in record.inline.keys() {
        xml.leaf("member", name);
    }
    xml.close("PolicyNames").leaf("IsTruncated", false);
    Ok(())
}

pub(super) fn delete_role_policy(state: &mut AwsState, params: &Params) -> Result<(), AwsError> {
    let role = role_name(params)?;
    let name = param(params, "PolicyName", "policyName")?;
    let record = existing_role_mut(state, role)?;
    record
        .inline
        .remove(name)
        .map(|_| ())
        .ok_or_else(|| policy_missing(role, name))
}
