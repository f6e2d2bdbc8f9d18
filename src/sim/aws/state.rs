//! The AWS half of the twin's world: VPC, subnets, security groups and rules, instances, the
//! EKS cluster with its node groups, add-ons and updates, and the IAM OIDC provider.

use std::collections::BTreeMap;

use serde_json::Value;
use std::time::Duration;

use super::faults::AwsFaults;
use super::meter::Meter;
use crate::lab;
/// The records whose every field the lab-state file keeps as the twin does: one type each.
pub use crate::lab_state::{
    ClusterConfig, NatGateway, NodegroupTemplate, PlacementGroup, RemoteNetwork, Subnet, Vpc,
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub id: String,
    pub group_id: String,
    pub egress: bool,
    /// `tcp`, `udp`, `icmp` or `-1` (all).
    pub protocol: String,
    pub from_port: i32,
    pub to_port: i32,
    pub cidr: Option<String>,
    pub referenced_group: Option<String>,
    pub description: String,
}

impl Rule {
    /// Same permission (what AWS compares for duplicates), whatever the id and description.
    pub fn same_permission(&self, other: &Rule) -> bool {
        (
            self.group_id.as_str(),
            self.egress,
            self.protocol.as_str(),
            self.from_port,
            self.to_port,
            &self.cidr,
            &self.referenced_group,
        ) == (
            other.group_id.as_str(),
            other.egress,
            other.protocol.as_str(),
            other.from_port,
            other.to_port,
            &other.cidr,
            &other.referenced_group,
        )
    }
}

#[derive(Debug, Clone)]
pub struct SecurityGroup {
    pub id: String,
    pub name: String,
    pub description: String,
    pub vpc_id: String,
}

/// An Elastic IP: allocated, tagged, and held by a NAT gateway until that is deleted.
#[derive(Debug, Clone)]
pub struct Address {
    pub allocation_id: String,
    pub public_ip: String,
    pub name: String,
    pub nat_gateway: Option<String>,
}

/// An IAM role: who may assume it, and the managed policies attached to it.
#[derive(Debug, Clone)]
pub struct Role {
    pub name: String,
    pub path: String,
    pub role_id: String,
    pub trust_policy: String,
    pub description: String,
    pub created_at: Duration,
    pub attached: Vec<String>,
    /// Inline policies: name -> policy document (JSON).
    pub inline: BTreeMap<String, String>,
    pub tags: Vec<(String, String)>,
}

impl Role {
    pub fn arn(&self) -> String {
        format!(
            "arn:aws:iam::{}:role{}{}",
            lab::ACCOUNT_ID,
            self.path,
            self.name
        )
    }
}

#[derive(Debug, Clone)]
pub struct Instance {
    pub id: String,
    pub nodegroup: String,
    pub instance_type: String,
    pub subnet: String,
    pub zone: String,
    pub private_ip: String,
    /// `pending`, `running`, `shutting-down`, `terminated`.
    pub state: String,
    pub groups: Vec<String>,
    pub ami: String,
    pub launched_at: Duration,
    /// The placement group it was launched into (its node group's launch template's).
    pub placement_group: Option<String>,
    /// EFA interfaces attached at launch (its launch template's; none without one).
    pub efa_interfaces: u32,
}

#[derive(Debug, Clone)]
pub struct Nodegroup {
    pub cluster: String,
    pub name: String,
    pub uuid: String,
    pub ami_type: String,
    pub instance_type: String,
    pub desired: i64,
    pub min: i64,
    pub max: i64,
    pub labels: Vec<(String, String)>,
    pub taints: Vec<(String, String, String)>,
    pub subnets: Vec<String>,
    /// The IAM role its instances run as (`nodeRole`).
    pub node_role: String,
    pub status: String,
    pub created_at: Duration,
    pub modified_at: Duration,
    /// The launch template its instances start from (`launchTemplate`), when given.
    pub launch_template: Option<NodegroupTemplate>,
    /// `health.issues`: (code, message) of what keeps it from being ACTIVE.
    pub health_issues: Vec<(String, String)>,
}

/// One network interface of a launch template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateInterface {
    pub device_index: u32,
    pub network_card_index: u32,
    /// `interface` (ENA), `efa` or `efa-only`.
    pub interface_type: String,
    pub groups: Vec<String>,
}

/// An EC2 launch template with the one version the twin keeps (node groups launch from it).
#[derive(Debug, Clone)]
pub struct LaunchTemplate {
    pub id: String,
    pub name: String,
    pub created_at: Duration,
    pub placement_group: Option<String>,
    pub interfaces: Vec<TemplateInterface>,
}

impl LaunchTemplate {
    /// The interfaces that give the instance an EFA device.
    pub fn efa_interfaces(&self) -> u32 {
        let efa = self
            .interfaces
            .iter()
            .filter(|i| i.interface_type.starts_with("efa"))
            .count();
        u32::try_from(efa).unwrap_or(u32::MAX)
    }
}

#[derive(Debug, Clone)]
pub struct Update {
    pub id: String,
    pub cluster: String,
    pub nodegroup: Option<String>,
    /// `(errorCode, errorMessage, resourceIds)` of a failed update, as EKS reports them.
    pub errors: Vec<(String, String, Vec<String>)>,
    pub kind: String,
    pub status: String,
    pub params: Vec<(String, String)>,
    pub created_at: Duration,
}

#[derive(Debug, Clone)]
pub struct Addon {
    pub name: String,
    pub version: String,
    pub status: String,
    pub created_at: Duration,
    /// `configurationValues`: the add-on's JSON settings, as given.
    pub configuration_values: Option<String>,
}

/// An EKS Pod Identity association: a ServiceAccount's IAM role.
#[derive(Debug, Clone)]
pub struct PodIdentityAssociation {
    pub id: String,
    pub namespace: String,
    pub service_account: String,
    pub role_arn: String,
    pub created_at: Duration,
}

#[derive(Debug, Clone)]
pub struct Cluster {
    /// What DescribeCluster says it is: the lab-state file's type, so a captured cluster's
    /// fields arrive as they were read.
    pub config: ClusterConfig,
    pub created_at: Duration,
    pub addons: BTreeMap<String, Addon>,
    /// EKS access entries by principal ARN.
    pub access_entries: BTreeMap<String, AccessEntry>,
    /// Pod Identity associations by id.
    pub pod_identity_associations: BTreeMap<String, PodIdentityAssociation>,
}

/// A KMS key: enabled, or pending deletion after its waiting period.
#[derive(Debug, Clone)]
pub struct KmsKey {
    pub id: String,
    pub description: String,
    pub created_at: Duration,
    /// When it is deleted, once ScheduleKeyDeletion was called.
    pub deletion_at: Option<Duration>,
}

impl KmsKey {
    pub fn arn(&self) -> String {
        format!(
            "arn:aws:kms:{}:{}:key/{}",
            lab::REGION,
            lab::ACCOUNT_ID,
            self.id
        )
    }
}

/// An EKS access entry: an IAM principal's Kubernetes identity and access policies.
#[derive(Debug, Clone)]
pub struct AccessEntry {
    pub principal_arn: String,
    pub username: String,
    pub groups: Vec<String>,
    pub kind: String,
    pub created_at: Duration,
    pub modified_at: Duration,
    /// Associated access policies by policy ARN.
    pub policies: BTreeMap<String, AssociatedPolicy>,
}

#[derive(Debug, Clone)]
pub struct AssociatedPolicy {
    pub policy_arn: String,
    /// `cluster`, or `namespace` with its namespaces.
    pub scope: String,
    pub namespaces: Vec<String>,
    pub associated_at: Duration,
    pub modified_at: Duration,
}

#[derive(Debug, Clone)]
pub struct OidcProvider {
    pub url: String,
    pub client_ids: Vec<String>,
    pub thumbprints: Vec<String>,
    pub created_at: Duration,
}

impl OidcProvider {
    pub fn arn(&self) -> String {
        format!(
            "arn:aws:iam::{}:oidc-provider/{}",
            lab::ACCOUNT_ID,
            self.url
        )
    }
}

/// What the AWS side wants to happen later on the virtual clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AwsTimer {
    /// An instance has booted: it runs and its Node joins the cluster.
    InstanceJoins {
        instance: String,
    },
    /// An instance has shut down.
    InstanceTerminated {
        instance: String,
    },
    /// A node group update has finished.
    UpdateDone {
        update: String,
    },
    /// The control plane is up (CREATING -> ACTIVE).
    ClusterActive {
        cluster: String,
    },
    /// The control plane is gone (DELETING -> removed).
    ClusterDeleted {
        cluster: String,
    },
    /// An add-on is installed (CREATING -> ACTIVE) or removed (DELETING -> gone).
    AddonActive {
        cluster: String,
        addon: String,
    },
    AddonDeleted {
        cluster: String,
        addon: String,
    },
    /// An add-on's new settings have reached the cluster.
    AddonConfigured {
        cluster: String,
        addon: String,
    },
    /// A node group is created (CREATING -> ACTIVE) or removed (DELETING -> gone).
    NodegroupActive {
        cluster: String,
        nodegroup: String,
    },
    NodegroupDeleted {
        cluster: String,
        nodegroup: String,
    },
    /// A NAT gateway is available, or deleted.
    NatAvailable {
        id: String,
    },
    NatDeleted {
        id: String,
    },
}

/// How long an instance of a type takes from launch to a Ready node (virtual).
pub fn join_delay(instance_type: &str) -> Duration {
    if instance_type.starts_with('g') || instance_type.starts_with('p') {
        Duration::from_secs(150)
    } else {
        Duration::from_secs(90)
    }
}

/// How long a terminating instance takes to shut down.
pub const SHUTDOWN_DELAY: Duration = Duration::from_secs(30);

#[derive(Default)]
pub struct AwsState {
    pub now: Duration,
    pub vpcs: BTreeMap<String, Vpc>,
    pub nat_gateways: BTreeMap<String, NatGateway>,
    /// Elastic IPs by allocation id.
    pub addresses: BTreeMap<String, Address>,
    /// IAM roles by name.
    pub roles: BTreeMap<String, Role>,
    /// KMS keys by key id, and aliases (`alias/eks/myeks5w`) to key ids.
    pub kms_keys: BTreeMap<String, KmsKey>,
    pub kms_aliases: BTreeMap<String, String>,
    pub clusters: BTreeMap<String, Cluster>,
    /// By (cluster, node group).
    pub nodegroups: BTreeMap<(String, String), Nodegroup>,
    pub updates: BTreeMap<String, Update>,
    pub subnets: BTreeMap<String, Subnet>,
    pub groups: BTreeMap<String, SecurityGroup>,
    pub rules: Vec<Rule>,
    pub instances: BTreeMap<String, Instance>,
    /// Placement groups by name.
    pub placement_groups: BTreeMap<String, PlacementGroup>,
    /// Launch templates by id.
    pub launch_templates: BTreeMap<String, LaunchTemplate>,
    pub oidc_providers: Vec<OidcProvider>,
    pub timers: Vec<(Duration, AwsTimer)>,
    /// Node groups whose new instances never join (a fault for drills), by name.
    pub failing_joins: std::collections::BTreeSet<String>,
    /// Instances started by the cluster's autoscaler, with what their nodes register as.
    pub autoscaled: BTreeMap<String, crate::sim::launch::LaunchRequest>,
    /// What has been billed, for the cost meter.
    pub meter: Meter,
    /// Throttling, server errors and latency injected into AWS calls.
    pub faults: AwsFaults,
    /// Answers to EKS calls made with a `clientRequestToken`, by method, path and token, with
    /// the body they came with: the same call again gets the same answer.
    pub idempotent: BTreeMap<String, (Value, (u16, Value))>,
    /// The CA of the twin's Kubernetes API once it serves: DescribeCluster's
    /// `certificateAuthority` for the lab's cluster.
    pub kube_ca_pem: Option<String>,
    /// IAM users and the access keys every call is signed with.
    pub identities: super::identity::Identities,
    sequence: u64,
}

impl AwsState {
    /// A deterministic id with a prefix: `i-0f00000000000001`, `sgr-0f00000000000001`.
    pub fn next_id(&mut self, prefix: &str) -> String {
        self.sequence += 1;
        format!("{prefix}-0f{:015x}", self.sequence)
    }

    /// Moves the id sequence past an id of its own form (`i-0f00000000000001`) that a captured
    /// twin made, so that new ids never repeat one.
    pub fn skip_id(&mut self, id: &str) {
        let taken = id
            .rsplit_once("-0f")
            .filter(|(_, hex)| hex.len() == 15)
            .and_then(|(_, hex)| u64::from_str_radix(hex, 16).ok());
        if let Some(taken) = taken {
            self.sequence = self.sequence.max(taken);
        }
    }

    /// A deterministic UUID (node group ids, update ids).
    pub fn next_uuid(&mut self) -> String {
        self.sequence += 1;
        let n = self.sequence;
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            n.wrapping_mul(2_654_435_761) & 0xffff_ffff,
            n & 0xffff,
            n & 0xfff,
            (n >> 3) & 0xfff,
            n.wrapping_mul(40_503)
        )
    }

    pub fn schedule(&mut self, after: Duration, timer: AwsTimer) {
        self.timers.push((self.now + after, timer));
    }

    /// The live instances of a node group (not shutting down or terminated).
    pub fn live_instances(&self, nodegroup: &str) -> Vec<&Instance> {
        self.instances
            .values()
            .filter(|i| {
                i.nodegroup == nodegroup && matches!(i.state.as_str(), "pending" | "running")
            })
            .collect()
    }

    /// A free private address in a subnet, deterministic.
    pub fn next_private_ip(&mut self, subnet: &str) -> String {
        let cidr = self
            .subnets
            .get(subnet)
            .map_or("192.168.12.0/22", |s| s.cidr.as_str())
            .to_string();
        let base: Vec<u32> = cidr
            .split('/')
            .next()
            .unwrap_or("192.168.12.0")
            .split('.')
            .filter_map(|p| p.parse().ok())
            .collect();
        let taken: Vec<String> = self
            .instances
            .values()
            .map(|i| i.private_ip.clone())
            .collect();
        let mut offset = 0x150 + (self.sequence as u32 % 7) * 37;
        loop {
            let third = base.get(2).copied().unwrap_or(12) + offset / 256;
            let ip = format!(
                "{}.{}.{}.{}",
                base.first().copied().unwrap_or(192),
                base.get(1).copied().unwrap_or(168),
                third,
                offset % 256
            );
            if !taken.contains(&ip) && !offset.is_multiple_of(256) {
                return ip;
            }
            offset += 1;
        }
    }
}
