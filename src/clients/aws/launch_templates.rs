//! Placement groups and launch templates: what an EFA node group launches from (a cluster
//! placement group; one EFA interface per network card).

use aws_sdk_ec2::types::{
    LaunchTemplateInstanceNetworkInterfaceSpecificationRequest as InterfaceRequest,
    LaunchTemplatePlacementRequest, PlacementStrategy, RequestLaunchTemplateData, ResourceType,
};
use serde_json::{Value, json};

use super::client::AwsClients;
use super::ec2_lifecycle::{missing, tags};
use super::error::AwsError;

/// What `ec2::create_launch_template` makes: interfaces by network card, each `efa` (the first
/// on device 0, the rest on device 1, as AWS's EFA guide lays them out) or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchTemplateSpec {
    pub name: String,
    pub placement_group: Option<String>,
    pub efa_interfaces: u32,
    pub security_groups: Vec<String>,
}

impl AwsClients {
    /// A placement group (`cluster`, `spread` or `partition`); returns its id.
    pub async fn create_placement_group(
        &self,
        name: &str,
        strategy: &str,
    ) -> Result<String, AwsError> {
        let out = self
            .sdk()
            .await
            .ec2
            .create_placement_group()
            .group_name(name)
            .strategy(PlacementStrategy::from(strategy))
            .tag_specifications(tags(ResourceType::PlacementGroup, &[("Name", name)]))
            .send()
            .await
            .map_err(|e| self.failed("CreatePlacementGroup", e))?;
        out.placement_group()
            .and_then(|g| g.group_id())
            .map(str::to_string)
            .ok_or_else(|| missing("CreatePlacementGroup", "a group id"))
    }

    /// Placement groups: #{ group_name, group_id, strategy, state }.
    pub async fn placement_groups(&self) -> Result<Vec<Value>, AwsError> {
        let out = self
            .sdk()
            .await
            .ec2
            .describe_placement_groups()
            .send()
            .await
            .map_err(|e| self.failed("DescribePlacementGroups", e))?;
        Ok(out
            .placement_groups()
            .iter()
            .map(|g| {
                json!({
                    "group_name": g.group_name(),
                    "group_id": g.group_id(),
                    "strategy": g.strategy().map(|s| s.as_str()),
                    "state": g.state().map(|s| s.as_str()),
                })
            })
            .collect())
    }

    pub async fn delete_placement_group(&self, name: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .ec2
            .delete_placement_group()
            .group_name(name)
            .send()
            .await
            .map_err(|e| self.failed("DeletePlacementGroup", e))?;
        Ok(())
    }

    /// A launch template with `spec`'s interfaces and placement; returns its id.
    pub async fn create_launch_template(
        &self,
        spec: &LaunchTemplateSpec,
    ) -> Result<String, AwsError> {
        let mut data = RequestLaunchTemplateData::builder();
        for card in 0..spec.efa_interfaces {
            let card = i32::try_from(card).unwrap_or(i32::MAX);
            data = data.network_interfaces(
                InterfaceRequest::builder()
                    .device_index(i32::from(card > 0))
                    .network_card_index(card)
                    .interface_type("efa")
                    .set_groups(Some(spec.security_groups.clone()))
                    .delete_on_termination(true)
                    .build(),
            );
        }
        if let Some(group) = &spec.placement_group {
            data = data.placement(
                LaunchTemplatePlacementRequest::builder()
                    .group_name(group)
                    .build(),
            );
        }
        let out = self
            .sdk()
            .await
            .ec2
            .create_launch_template()
            .launch_template_name(&spec.name)
            .launch_template_data(data.build())
            .send()
            .await
            .map_err(|e| self.failed("CreateLaunchTemplate", e))?;
        out.launch_template()
            .and_then(|t| t.launch_template_id())
            .map(str::to_string)
            .ok_or_else(|| missing("CreateLaunchTemplate", "a launch template id"))
    }

    /// Launch templates with what their default version holds: #{ launch_template_id, name,
    /// placement_group, efa_interfaces, interfaces: [#{ network_card_index, device_index,
    /// interface_type, security_groups }] }. One paged DescribeLaunchTemplateVersions for every template's
    /// `$Default` (EC2 answers that with no template named), not one call per template.
    pub async fn launch_templates(&self) -> Result<Vec<Value>, AwsError> {
        let sdk = self.sdk().await;
        let mut found = Vec::new();
        let mut next_token = None;
        loop {
            let out = sdk
                .ec2
                .describe_launch_template_versions()
                .versions("$Default")
                .set_next_token(next_token.take())
                .send()
                .await
                .map_err(|e| self.failed("DescribeLaunchTemplateVersions", e))?;
            for version in out.launch_template_versions() {
                let Some(id) = version.launch_template_id() else {
                    continue;
                };
                let data = version.launch_template_data();
                let interfaces: Vec<Value> = data
                    .map(|d| d.network_interfaces())
                    .unwrap_or_default()
                    .iter()
                    .map(|n| {
                        json!({
                            "network_card_index": n.network_card_index(),
                            "device_index": n.device_index(),
                            "interface_type": n.interface_type(),
                            "security_groups": n.groups(),
                        })
                    })
                    .collect();
                let efa = interfaces
                    .iter()
                    .filter(|n| {
                        n["interface_type"]
                            .as_str()
                            .is_some_and(|t| t.starts_with("efa"))
                    })
                    .count();
                found.push(json!({
                    "launch_template_id": id,
                    "name": version.launch_template_name(),
                    "placement_group": data.and_then(|d| d.placement()).and_then(|p| p.group_name()),
                    "efa_interfaces": efa,
                    "interfaces": interfaces,
                }));
            }
            match out.next_token() {
                Some(token) if !token.is_empty() => next_token = Some(token.to_string()),
                _ => return Ok(found),
            }
        }
    }

    pub async fn delete_launch_template(&self, name: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .ec2
            .delete_launch_template()
            .launch_template_name(name)
            .send()
            .await
            .map_err(|e| self.failed("DeleteLaunchTemplate", e))?;
        Ok(())
    }
}
