//! Elastic IPs: the public address a NAT gateway needs, allocated and released by name.

use aws_sdk_ec2::types::{DomainType, Filter, ResourceType};
use serde_json::{Value, json};

use super::client::AwsClients;
use super::ec2_lifecycle::{missing, tags};
use super::error::AwsError;

impl AwsClients {
    /// A new Elastic IP in the VPC domain, tagged `Name`; returns its allocation id.
    pub async fn allocate_address(&self, name: &str) -> Result<String, AwsError> {
        let out = self
            .sdk()
            .await
            .ec2
            .allocate_address()
            .domain(DomainType::Vpc)
            .tag_specifications(tags(ResourceType::ElasticIp, &[("Name", name)]))
            .send()
            .await
            .map_err(|e| self.failed("AllocateAddress", e))?;
        out.allocation_id()
            .map(str::to_string)
            .ok_or_else(|| missing("AllocateAddress", "an allocation id"))
    }

    /// Elastic IPs (those named `name` when given): #{ allocation_id, public_ip, name,
    /// association_id }.
    pub async fn addresses(&self, name: Option<&str>) -> Result<Vec<Value>, AwsError> {
        let mut call = self.sdk().await.ec2.describe_addresses();
        if let Some(name) = name {
            call = call.filters(Filter::builder().name("tag:Name").values(name).build());
        }
        let out = call
            .send()
            .await
            .map_err(|e| self.failed("DescribeAddresses", e))?;
        Ok(out
            .addresses()
            .iter()
            .map(|a| {
                let name = super::ec2::name_tag(a.tags());
                json!({
                    "allocation_id": a.allocation_id(),
                    "public_ip": a.public_ip(),
                    "name": name,
                    "association_id": a.association_id(),
                })
            })
            .collect())
    }

    pub async fn release_address(&self, allocation_id: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .ec2
            .release_address()
            .allocation_id(allocation_id)
            .send()
            .await
            .map_err(|e| self.failed("ReleaseAddress", e))?;
        Ok(())
    }
}
