//! IAM over the query protocol: the OIDC providers.

use std::collections::BTreeMap;

use super::error::AwsError;
use super::state::AwsState;
use super::wire::{Xml, iso};

pub fn handle(
    state: &mut AwsState,
    action: &str,
    params: &BTreeMap<String, String>,
    xml: &mut Xml,
) -> Result<(), AwsError> {
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
        other => Err(AwsError::new(
            400,
            "InvalidAction",
            format!(
                "Could not find operation {other} (the lab twin serves IAM OIDC provider actions)"
            ),
        )),
    }
}
