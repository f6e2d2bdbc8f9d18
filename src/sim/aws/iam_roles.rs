//! IAM roles over the query protocol: CreateRole, GetRole, DeleteRole, AttachRolePolicy,
//! DetachRolePolicy and ListAttachedRolePolicies, with IAM's errors (a role that exists, a
//! policy that is not an attachable AWS managed one, a role deleted with policies attached).

use std::collections::BTreeMap;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::error::AwsError;
use super::state::{AwsState, Role};
use super::wire::{Xml, iso, members};
use crate::lab;

/// A query-protocol call's parameters.
pub(super) type Params = BTreeMap<String, String>;

/// The AWS managed policies the twin knows: those the lab's roles hold.
fn attachable(arn: &str) -> bool {
    lab::CLUSTER_ROLE_POLICIES.contains(&arn) || lab::NODE_ROLE_POLICIES.contains(&arn)
}

/// IAM returns policy documents URL-encoded; RFC 3986's unreserved characters stay as they are.
pub(super) const ENCODED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn validation(field: &str) -> AwsError {
    AwsError::new(
        400,
        "ValidationError",
        format!(
            "1 validation error detected: Value null at '{field}' failed to satisfy constraint: Member must not be null"
        ),
    )
}

pub(super) fn param<'a>(params: &'a Params, key: &str, field: &str) -> Result<&'a str, AwsError> {
    params
        .get(key)
        .map(String::as_str)
        .ok_or_else(|| validation(field))
}

/// The `RoleName` a call names, held to IAM's pattern and length before anything is looked up,
/// as every role action's API reference bounds it (`[\w+=,.@-]+`, 1 to 64): GetRole and the
/// others answer ValidationError as CreateRole does (parameters::iam_name).
pub(super) fn role_name(params: &Params) -> Result<&str, AwsError> {
    let name = param(params, "RoleName", "roleName")?;
    super::parameters::iam_name("roleName", name, 64)?;
    Ok(name)
}

fn role_missing(name: &str) -> AwsError {
    AwsError::new(
        404,
        "NoSuchEntity",
        format!("The role with name {name} cannot be found."),
    )
}

fn role_xml(xml: &mut Xml, role: &Role) {
    xml.open("Role");
    role_fields(xml, role);
    xml.open("Tags");
    for (key, value) in &role.tags {
        xml.open("member")
            .leaf("Key", key)
            .leaf("Value", value)
            .close("member");
    }
    xml.close("Tags").close("Role");
}

/// A role's fields as GetRole and ListRoles show them (ListRoles leaves its tags out).
pub(super) fn role_fields(xml: &mut Xml, role: &Role) {
    xml.leaf("Path", &role.path)
        .leaf("RoleName", &role.name)
        .leaf("RoleId", &role.role_id)
        .leaf("Arn", role.arn())
        .leaf("CreateDate", iso(role.created_at))
        .leaf(
            "AssumeRolePolicyDocument",
            utf8_percent_encode(&role.trust_policy, ENCODED),
        )
        .leaf("Description", &role.description)
        .leaf("MaxSessionDuration", 3600);
}

/// `Tags.member.N.Key` / `.Value`.
fn tags(params: &Params) -> Vec<(String, String)> {
    members(params, "Tags.member")
        .iter()
        .filter_map(|tag| Some((tag.get("Key")?.clone(), tag.text("Value"))))
        .collect()
}

pub(super) fn existing_role<'a>(state: &'a AwsState, name: &str) -> Result<&'a Role, AwsError> {
    state.roles.get(name).ok_or_else(|| role_missing(name))
}

pub(super) fn existing_role_mut<'a>(
    state: &'a mut AwsState,
    name: &str,
) -> Result<&'a mut Role, AwsError> {
    state.roles.get_mut(name).ok_or_else(|| role_missing(name))
}

pub(super) fn create_role(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let name = role_name(params)?.to_string();
    let trust_policy = param(
        params,
        "AssumeRolePolicyDocument",
        "assumeRolePolicyDocument",
    )?;
    if serde_json::from_str::<serde_json::Value>(trust_policy).is_err() {
        return Err(AwsError::new(
            400,
            "MalformedPolicyDocument",
            "This policy contains invalid Json",
        ));
    }
    if state.roles.contains_key(&name) {
        return Err(AwsError::new(
            409,
            "EntityAlreadyExists",
            format!("Role with name {name} already exists."),
        ));
    }
    let sequence = state.next_id("r");
    let role = Role {
        role_id: format!("AROA{}", sequence.trim_start_matches("r-0f").to_uppercase()),
        path: params.get("Path").cloned().unwrap_or_else(|| "/".into()),
        trust_policy: trust_policy.to_string(),
        description: params.get("Description").cloned().unwrap_or_default(),
        created_at: state.now,
        attached: Vec::new(),
        inline: std::collections::BTreeMap::new(),
        tags: tags(params),
        name: name.clone(),
    };
    role_xml(xml, &role);
    state.roles.insert(name, role);
    Ok(())
}

pub(super) fn get_role(state: &AwsState, params: &Params, xml: &mut Xml) -> Result<(), AwsError> {
    let name = role_name(params)?;
    role_xml(xml, existing_role(state, name)?);
    Ok(())
}

/// IAM deletes only a role with no policies left, attached or inline.
pub(super) fn delete_role(state: &mut AwsState, params: &Params) -> Result<(), AwsError> {
    let name = role_name(params)?;
    let found = existing_role(state, name)?;
    if !found.attached.is_empty() || !found.inline.is_empty() {
        return Err(AwsError::new(
            409,
            "DeleteConflict",
            "Cannot delete entity, must detach all policies first.",
        ));
    }
    state.roles.remove(name);
    Ok(())
}

/// The role and the policy ARN an AttachRolePolicy or DetachRolePolicy names.
fn role_and_policy<'a>(
    state: &'a mut AwsState,
    params: &Params,
) -> Result<(&'a mut Role, String), AwsError> {
    let name = role_name(params)?;
    let policy = param(params, "PolicyArn", "policyArn")?.to_string();
    Ok((existing_role_mut(state, name)?, policy))
}

/// Attaches one of the AWS managed policies the twin knows (again: no change).
pub(super) fn attach_role_policy(state: &mut AwsState, params: &Params) -> Result<(), AwsError> {
    let (role, policy) = role_and_policy(state, params)?;
    if !attachable(&policy) {
        return Err(AwsError::new(
            404,
            "NoSuchEntity",
            format!(
                "Policy {policy} does not exist or is not attachable. (The lab twin knows the AWS managed policies of the lab's roles: {}.)",
                lab::CLUSTER_ROLE_POLICIES
                    .iter()
                    .chain(lab::NODE_ROLE_POLICIES.iter())
                    .map(|p| p.rsplit('/').next().unwrap_or(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    if !role.attached.contains(&policy) {
        role.attached.push(policy);
    }
    Ok(())
}

pub(super) fn detach_role_policy(state: &mut AwsState, params: &Params) -> Result<(), AwsError> {
    let (role, policy) = role_and_policy(state, params)?;
    let before = role.attached.len();
    role.attached.retain(|p| *p != policy);
    if role.attached.len() == before {
        return Err(AwsError::new(
            404,
            "NoSuchEntity",
            format!("Policy {policy} was not found."),
        ));
    }
    Ok(())
}

pub(super) fn list_attached_role_policies(
    state: &AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let name = role_name(params)?;
    let found = existing_role(state, name)?;
    xml.open("AttachedPolicies");
    for arn in &found.attached {
        xml.open("member")
            .leaf("PolicyName", arn.rsplit('/').next().unwrap_or(arn))
            .leaf("PolicyArn", arn)
            .close("member");
    }
    xml.close("AttachedPolicies").leaf("IsTruncated", false);
    Ok(())
}

/// The lab's two roles as the seed's apply leaves them.
pub(crate) fn deployed_roles(now: std::time::Duration) -> Vec<Role> {
    let trust = |service: &str| {
        serde_json::json!({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
        })
        .to_string()
    };
    vec![
        Role {
            name: lab::CLUSTER_ROLE.into(),
            path: "/".into(),
            role_id: "AROALABCLUSTERROLE0001".into(),
            trust_policy: trust("eks.amazonaws.com"),
            description: String::new(),
            created_at: now,
            attached: lab::CLUSTER_ROLE_POLICIES.map(str::to_string).to_vec(),
            inline: std::collections::BTreeMap::new(),
            tags: Vec::new(),
        },
        Role {
            name: lab::NODE_ROLE.into(),
            path: "/".into(),
            role_id: "AROALABNODEROLE000001".into(),
            trust_policy: trust("ec2.amazonaws.com"),
            description: String::new(),
            created_at: now,
            attached: lab::NODE_ROLE_POLICIES.map(str::to_string).to_vec(),
            inline: std::collections::BTreeMap::new(),
            tags: Vec::new(),
        },
    ]
}
