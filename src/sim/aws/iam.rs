//! IAM over the query protocol: one function an action, chosen by `handle`'s table; the OIDC
//! providers here, the roles in iam_roles (listed in iam_role_list) and their inline policies
//! in iam_inline_policies.

use super::error::AwsError;
use super::iam_inline_policies::{
    delete_role_policy, get_role_policy, list_role_policies, put_role_policy,
};
use super::iam_roles::{
    Params, attach_role_policy, create_role, delete_role, detach_role_policy, get_role,
    list_attached_role_policies, param,
};
use super::state::{AwsState, OidcProvider};
use super::wire::{Xml, iso, numbered};

pub(crate) fn handle(
    state: &mut AwsState,
    action: &str,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    match action {
        "CreateRole" => create_role(state, params, xml),
        "GetRole" => get_role(state, params, xml),
        "ListRoles" => super::iam_role_list::list_roles(state, params, xml),
        "DeleteRole" => delete_role(state, params),
        "AttachRolePolicy" => attach_role_policy(state, params),
        "DetachRolePolicy" => detach_role_policy(state, params),
        "ListAttachedRolePolicies" => list_attached_role_policies(state, params, xml),
        "PutRolePolicy" => put_role_policy(state, params),
        "GetRolePolicy" => get_role_policy(state, params, xml),
        "ListRolePolicies" => list_role_policies(state, params, xml),
        "DeleteRolePolicy" => delete_role_policy(state, params),
        "ListOpenIDConnectProviders" => list_oidc_providers(state, xml),
        "GetOpenIDConnectProvider" => get_oidc_provider(state, params, xml),
        "CreateOpenIDConnectProvider" => create_oidc_provider(state, params, xml),
        "DeleteOpenIDConnectProvider" => delete_oidc_provider(state, params),
        other => Err(AwsError::new(
            400,
            "InvalidAction",
            format!(
                "Could not find operation {other} (the lab twin serves IAM OIDC provider and role actions)"
            ),
        )),
    }
}

fn provider_missing(arn: &str) -> AwsError {
    AwsError::new(
        404,
        "NoSuchEntity",
        format!("OpenIDConnect Provider not found for arn {arn}"),
    )
}

fn list_oidc_providers(state: &AwsState, xml: &mut Xml) -> Result<(), AwsError> {
    xml.open("OpenIDConnectProviderList");
    for provider in &state.oidc_providers {
        xml.open("member")
            .leaf("Arn", provider.arn())
            .close("member");
    }
    xml.close("OpenIDConnectProviderList");
    Ok(())
}

fn get_oidc_provider(state: &AwsState, params: &Params, xml: &mut Xml) -> Result<(), AwsError> {
    let arn = param(
        params,
        "OpenIDConnectProviderArn",
        "openIDConnectProviderArn",
    )?;
    let provider = state
        .oidc_providers
        .iter()
        .find(|p| p.arn() == arn)
        .ok_or_else(|| provider_missing(arn))?;
    xml.leaf("Url", &provider.url).open("ClientIDList");
    for id in &provider.client_ids {
        xml.leaf("member", id);
    }
    xml.close("ClientIDList").open("ThumbprintList");
    for thumbprint in &provider.thumbprints {
        xml.leaf("member", thumbprint);
    }
    xml.close("ThumbprintList")
        .leaf("CreateDate", iso(provider.created_at))
        .raw("<Tags/>");
    Ok(())
}

/// One provider a URL (given with or without `https://`, kept without).
fn create_oidc_provider(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let url = param(params, "Url", "url")?;
    let url = url.trim_start_matches("https://").to_string();
    if state.oidc_providers.iter().any(|p| p.url == url) {
        return Err(AwsError::new(
            409,
            "EntityAlreadyExists",
            format!("Provider with url https://{url} already exists."),
        ));
    }
    let provider = OidcProvider {
        url,
        client_ids: numbered(params, "ClientIDList.member"),
        thumbprints: numbered(params, "ThumbprintList.member"),
        created_at: state.now,
    };
    xml.leaf("OpenIDConnectProviderArn", provider.arn());
    state.oidc_providers.push(provider);
    Ok(())
}

fn delete_oidc_provider(state: &mut AwsState, params: &Params) -> Result<(), AwsError> {
    let arn = params
        .get("OpenIDConnectProviderArn")
        .cloned()
        .unwrap_or_default();
    let before = state.oidc_providers.len();
    state.oidc_providers.retain(|p| p.arn() != arn);
    if state.oidc_providers.len() == before {
        return Err(provider_missing(&arn));
    }
    Ok(())
}
