//! IAM over the query protocol: the OIDC providers, and the roles (iam_roles).

use std::collections::BTreeMap;

use super::error::AwsError;
use super::state::{AwsState, OidcProvider};
use super::wire::{Xml, iso, numbered};
use super::{iam_inline_policies, iam_roles};

pub(crate) fn handle(
    state: &mut AwsState,
    action: &str,
    params: &BTreeMap<String, String>,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    if let Some(result) = iam_roles::handle(state, action, params, xml) {
        return result;
    }
    if let Some(result) = iam_inline_policies::handle(state, action, params, xml) {
        return result;
    }
    match action {
        "ListOpenIDConnectProviders" => {
            xml.open("OpenIDConnectProviderList");
            for provider in &state.oidc_providers {
                xml.open("member")
                    .leaf("Arn", provider.arn())
                    .close("member");
            }
            xml.close("OpenIDConnectProviderList");
            Ok(())
        }
        "GetOpenIDConnectProvider" => {
            let arn = params
                .get("OpenIDConnectProviderArn")
                .ok_or_else(|| AwsError::new(400, "ValidationError", "1 validation error detected: Value null at 'openIDConnectProviderArn' failed to satisfy constraint: Member must not be null"))?;
            let provider = state
                .oidc_providers
                .iter()
                .find(|p| p.arn() == *arn)
                .ok_or_else(|| {
                    AwsError::new(
                        404,
                        "NoSuchEntity",
                        format!("OpenIDConnect Provider not found for arn {arn}"),
                    )
                })?;
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
        "CreateOpenIDConnectProvider" => {
            let url = params.get("Url").ok_or_else(|| {
                AwsError::new(
                    400,
                    "ValidationError",
                    "1 validation error detected: Value null at 'url' failed to satisfy constraint: Member must not be null",
                )
            })?;
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
        "DeleteOpenIDConnectProvider" => {
            let arn = params
                .get("OpenIDConnectProviderArn")
                .cloned()
                .unwrap_or_default();
            let before = state.oidc_providers.len();
            state.oidc_providers.retain(|p| p.arn() != arn);
            if state.oidc_providers.len() == before {
                return Err(AwsError::new(
                    404,
                    "NoSuchEntity",
                    format!("OpenIDConnect Provider not found for arn {arn}"),
                ));
            }
            Ok(())
        }
        other => Err(AwsError::new(
            400,
            "InvalidAction",
            format!(
                "Could not find operation {other} (the lab twin serves IAM OIDC provider and role actions)"
            ),
        )),
    }
}
