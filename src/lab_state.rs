//! The lab-state file (`runbook state capture -o lab-state.json`): what the runbooks touch in
//! one lab, read with read-only calls, in a versioned JSON format that the twin can start from
//! (`--scenario @lab-state.json`). docs/lab-state.md describes every field.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `format` of every lab-state file.
pub const FORMAT: &str = "runbook.lab-state";
/// The format's version: a reader refuses a newer one rather than guess.
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabState {
    pub format: String,
    pub version: u32,
    /// When it was read (RFC 3339, UTC): a twin started from it starts at this instant.
    pub captured_at: String,
    pub source: Source,
    pub aws: AwsState,
    pub kubernetes: KubernetesState,
}

/// Where it was read from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The Kubernetes API's URL.
    pub kubernetes: String,
    /// The AWS endpoint (`default` for the SDK's own).
    pub aws: String,
    pub cluster: String,
    pub region: String,
    /// The account the AWS credentials belong to (STS GetCallerIdentity), when it answered.
    pub account: Option<String>,
}

/// The AWS side, ids as the account names them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AwsState {
    pub vpcs: Vec<Vpc>,
    pub subnets: Vec<Subnet>,
    pub nat_gateways: Vec<NatGateway>,
    pub addresses: Vec<Address>,
    pub security_groups: Vec<SecurityGroup>,
    pub cluster: Cluster,
    pub nodegroups: Vec<Nodegroup>,
    pub instances: Vec<Instance>,
    pub oidc_providers: Vec<OidcProvider>,
    /// The roles the cluster and its node groups name that exist.
    pub roles: Vec<Role>,
    /// The placement groups the launch templates and instances name (only when there are any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement_groups: Vec<PlacementGroup>,
    /// The launch templates the node groups launch from (only when there are any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launch_templates: Vec<LaunchTemplate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlacementGroup {
    pub id: String,
    pub name: String,
    /// `cluster`, `spread` or `partition`.
    pub strategy: String,
}

/// A launch template as its default version holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchTemplate {
    pub id: String,
    pub name: String,
    pub placement_group: Option<String>,
    pub interfaces: Vec<TemplateInterface>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplateInterface {
    pub network_card_index: u32,
    pub device_index: u32,
    /// `interface` (ENA), `efa` or `efa-only`.
    pub interface_type: String,
    pub security_groups: Vec<String>,
}

/// The launch template a node group names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodegroupTemplate {
    pub id: String,
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vpc {
    pub id: String,
    pub cidr: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subnet {
    pub id: String,
    pub vpc: String,
    pub cidr: String,
    pub zone: String,
    /// Whether instances get a public address (`MapPublicIpOnLaunch`).
    pub public: bool,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NatGateway {
    pub id: String,
    pub subnet: String,
    pub vpc: String,
    pub state: String,
    pub name: String,
    pub allocation: Option<String>,
}

/// An Elastic IP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Address {
    pub allocation_id: String,
    pub public_ip: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecurityGroup {
    pub id: String,
    pub name: String,
    pub description: String,
    pub vpc: String,
    /// Ingress first, then egress, each by port.
    pub rules: Vec<Rule>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub id: String,
    /// `ingress` or `egress`.
    pub direction: String,
    /// `tcp`, `udp`, `icmp` or `-1` (all).
    pub protocol: String,
    pub from_port: i32,
    pub to_port: i32,
    /// A CIDR, a security group id, or `self`.
    pub source: String,
    pub description: String,
}

/// An EKS cluster in a lab-state file: its configuration, as the twin keeps it too, and what
/// it holds (add-ons, access entries, Pod Identity associations).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cluster {
    #[serde(flatten)]
    pub config: ClusterConfig,
    pub created_at: String,
    pub addons: Vec<Addon>,
    pub access_entries: Vec<AccessEntry>,
    /// EKS Pod Identity associations, when there are any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pod_identity_associations: Vec<PodIdentityAssociation>,
}

/// What DescribeCluster says a cluster is: one type for the lab-state file and the twin's
/// account (`sim::aws::state::Cluster` holds one), so a field `state capture` reads reaches a
/// twin started from the file with no conversion written for it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    pub name: String,
    pub status: String,
    pub version: String,
    pub platform_version: String,
    pub endpoint: String,
    /// The IAM role the control plane acts as (`roleArn`).
    pub role_arn: String,
    pub vpc: String,
    pub subnets: Vec<String>,
    pub security_groups: Vec<String>,
    pub cluster_security_group: String,
    pub oidc_issuer: String,
    /// `accessConfig.authenticationMode`: API, API_AND_CONFIG_MAP or CONFIG_MAP.
    pub authentication_mode: String,
    /// The KMS key ARN that encrypts its Secrets (`encryptionConfig`), if one does.
    pub secrets_key: Option<String>,
    /// Hybrid nodes' networks (`remoteNetworkConfig`), on a cluster that has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_network: Option<RemoteNetwork>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteNetwork {
    pub node_cidrs: Vec<String>,
    pub pod_cidrs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PodIdentityAssociation {
    pub id: String,
    pub namespace: String,
    pub service_account: String,
    pub role_arn: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Addon {
    pub name: String,
    pub version: String,
    pub status: String,
    /// Its `configurationValues`, when it has settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration_values: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessEntry {
    pub principal_arn: String,
    pub username: String,
    pub groups: Vec<String>,
    /// `STANDARD`, `EC2_LINUX`, ...
    pub kind: String,
    pub policies: Vec<AccessPolicy>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessPolicy {
    pub policy_arn: String,
    /// `cluster`, or `namespace` with its namespaces.
    pub scope: String,
    pub namespaces: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nodegroup {
    pub name: String,
    pub status: String,
    pub ami_type: String,
    pub instance_types: Vec<String>,
    pub min: i64,
    pub max: i64,
    pub desired: i64,
    pub subnets: Vec<String>,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub node_role: String,
    pub created_at: String,
    /// Only for a group launched from a launch template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_template: Option<NodegroupTemplate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Taint {
    pub key: String,
    pub value: String,
    /// As Kubernetes spells it: `NoSchedule`, `NoExecute`, `PreferNoSchedule`.
    pub effect: String,
}

/// An instance of the cluster's VPC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    pub id: String,
    pub state: String,
    pub instance_type: String,
    pub zone: String,
    pub subnet: String,
    pub private_ip: String,
    pub security_groups: Vec<String>,
    pub image: String,
    /// The managed node group it belongs to (`eks:nodegroup-name`), if any.
    pub nodegroup: Option<String>,
    /// Only for an instance in a placement group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_group: Option<String>,
    /// Its EFA interfaces (only when it has any).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub efa_interfaces: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcProvider {
    /// Without `https://`.
    pub url: String,
    pub client_ids: Vec<String>,
    pub thumbprints: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Role {
    pub name: String,
    pub path: String,
    pub role_id: String,
    /// The trust policy document.
    pub trust_policy: Value,
    pub description: String,
    /// ARNs of the managed policies attached.
    pub attached_policies: Vec<String>,
}

/// The Kubernetes side.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KubernetesState {
    /// Objects as the API serves them (with `apiVersion` and `kind`), less `resourceVersion`
    /// and `managedFields`, which only mean something to the server they came from; ordered
    /// by kind, namespace and name.
    pub objects: Vec<Value>,
    /// Secrets by name only: they are listed as metadata, so their data is never read.
    pub secrets: Vec<SecretName>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretName {
    pub namespace: String,
    pub name: String,
}

/// Why a lab-state file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("{path}: not a lab-state file: {source}")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
    #[error(
        "{path}: `format` is `{found}`, not `{FORMAT}`: write one with `runbook state capture`"
    )]
    Format { path: String, found: String },
    #[error(
        "{path}: lab-state version {found} is newer than this runbook reads ({VERSION}): update runbook, or capture again with this one"
    )]
    Version { path: String, found: u32 },
    #[error(
        "{path}: `version` is missing or 0; lab-state files start at version 1: write one with `runbook state capture`"
    )]
    NoVersion { path: String },
    #[error("{path}: {what}; fix the file, or capture again with `runbook state capture`")]
    Invalid { path: String, what: String },
}

impl LabState {
    /// Parses and checks a lab-state file's text; `path` names it in errors.
    pub fn parse(path: &str, text: &str) -> Result<Self, FormatError> {
        let parse_error = |source| FormatError::Parse {
            path: path.to_string(),
            source,
        };
        // Format and version first: a newer file may have fields this one does not know.
        let value: Value = serde_json::from_str(text).map_err(parse_error)?;
        let found = value["format"].as_str().unwrap_or_default();
        if found != FORMAT {
            return Err(FormatError::Format {
                path: path.to_string(),
                found: found.to_string(),
            });
        }
        let version = value["version"].as_u64().unwrap_or(0);
        if version == 0 {
            return Err(FormatError::NoVersion {
                path: path.to_string(),
            });
        }
        if version > u64::from(VERSION) {
            return Err(FormatError::Version {
                path: path.to_string(),
                found: u32::try_from(version).unwrap_or(u32::MAX),
            });
        }
        let state: LabState = serde_json::from_value(value).map_err(parse_error)?;
        state.check().map_err(|what| FormatError::Invalid {
            path: path.to_string(),
            what,
        })?;
        Ok(state)
    }

    /// What EKS itself would never hold: a node group's sizes out of order or below zero.
    fn check(&self) -> Result<(), String> {
        for group in &self.aws.nodegroups {
            let (min, desired, max) = (group.min, group.desired, group.max);
            if min < 0 || desired < 0 || max < 1 {
                return Err(format!(
                    "node group {} has min {min}, desired {desired}, max {max}: sizes are at least 0 (max at least 1)",
                    group.name
                ));
            }
            if !(min <= desired && desired <= max) {
                return Err(format!(
                    "node group {} has min {min}, desired {desired}, max {max}: EKS keeps min <= desired <= max",
                    group.name
                ));
            }
        }
        Ok(())
    }

    /// The two captures with what differs between any two reads of one lab set aside: when
    /// and where from.
    pub fn same_lab(&self, other: &LabState) -> bool {
        (&self.aws, &self.kubernetes) == (&other.aws, &other.kubernetes)
    }
}
