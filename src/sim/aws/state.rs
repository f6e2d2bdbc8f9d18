//! The AWS half of the twin's world: VPC, subnets, security groups and rules, instances, the
//! EKS cluster with its node groups, add-ons and updates, and the IAM OIDC provider.

use std::collections::BTreeMap;

use serde_json::Value;
use std::time::Duration;

use super::faults::AwsFaults;
use super::meter::Meter;
use crate::lab;
/// The records whose every field the lab-state file keeps as the twin does: one type each.
pub(crate) use crate::lab_state::{
    ClusterConfig, NatGateway, NodegroupTemplate, PlacementGroup, RemoteNetwork, Subnet, Vpc,
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub(crate) id: String,
    pub(crate) group_id: String,
    pub(crate) egress: bool,
    /// `tcp`, `udp`, `icmp` or `-1` (all).
    pub(crate) protocol: String,
    pub(crate) from_port: i32,
    pub(crate) to_port: i32,
    pub(crate) cidr: Option<String>,
    pub(crate) referenced_group: Option<String>,
    pub(crate) description: String,
}

impl Rule {
    /// Same permission (what AWS compares for duplicates), whatever the id and description.
    pub(crate) fn same_permission(&self, other: &Rule) -> bool {
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
pub(crate) struct SecurityGroup {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) vpc_id: String,
}

/// An Elastic IP: allocated, tagged, and held by a NAT gateway until that is deleted.
#[derive(Debug, Clone)]
pub(crate) struct Address {
    pub(crate) allocation_id: String,
    pub(crate) public_ip: String,
    pub(crate) name: String,
    pub(crate) nat_gateway: Option<String>,
}

/// An IAM role: who may assume it, and the managed policies attached to it.
#[derive(Debug, Clone)]
pub(crate) struct Role {
    pub(crate) name: String,
    pub(crate) path: String,
    pub(crate) role_id: String,
    pub(crate) trust_policy: String,
    pub(crate) description: String,
    pub(crate) created_at: Duration,
    pub(crate) attached: Vec<String>,
    /// Inline policies: name -> policy document (JSON).
    pub(crate) inline: BTreeMap<String, String>,
    pub(crate) tags: Vec<(String, String)>,
}

impl Role {
    pub(crate) fn arn(&self) -> String {
        format!(
            "arn:aws:iam::{}:role{}{}",
            lab::ACCOUNT_ID,
            self.path,
            self.name
        )
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Instance {
    pub(crate) id: String,
    pub(crate) nodegroup: String,
    pub(crate) instance_type: String,
    pub(crate) subnet: String,
    pub(crate) zone: String,
    pub(crate) private_ip: String,
    /// `pending`, `running`, `shutting-down`, `terminated`.
    pub(crate) state: String,
    pub(crate) groups: Vec<String>,
    pub(crate) ami: String,
    pub(crate) launched_at: Duration,
    /// The placement group it was launched into (its node group's launch template's).
    pub(crate) placement_group: Option<String>,
    /// EFA interfaces attached at launch (its launch template's; none without one).
    pub(crate) efa_interfaces: u32,
    /// Where it sits in AWS's network, the top layer first (topology.rs); none for a type
    /// DescribeInstanceTopology does not cover.
    pub(crate) network_nodes: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Nodegroup {
    pub(crate) cluster: String,
    pub(crate) name: String,
    pub(crate) uuid: String,
    pub(crate) ami_type: String,
    pub(crate) instance_type: String,
    pub(crate) desired: i64,
    pub(crate) min: i64,
    pub(crate) max: i64,
    pub(crate) labels: Vec<(String, String)>,
    pub(crate) taints: Vec<(String, String, String)>,
    pub(crate) subnets: Vec<String>,
    /// The IAM role its instances run as (`nodeRole`).
    pub(crate) node_role: String,
    pub(crate) status: String,
    pub(crate) created_at: Duration,
    pub(crate) modified_at: Duration,
    /// The launch template its instances start from (`launchTemplate`), when given.
    pub(crate) launch_template: Option<NodegroupTemplate>,
    /// `health.issues`: (code, message) of what keeps it from being ACTIVE.
    pub(crate) health_issues: Vec<(String, String)>,
    /// `nodeRepairConfig` as DescribeNodegroup answers it, when one was given (node_repair.rs).
    pub(crate) node_repair: Option<serde_json::Value>,
    /// Its Kubernetes version and AMI release (`version`, `releaseVersion`): its cluster's when
    /// made, an UpdateNodegroupVersion's once that has finished (eks_versions.rs).
    pub(crate) version: String,
    pub(crate) release_version: String,
    /// `updateConfig` as given (`maxUnavailable` or `maxUnavailablePercentage`); EKS's default,
    /// one node, when none was (nodegroup_update_config.rs).
    pub(crate) update_config: Option<serde_json::Value>,
}

/// One network interface of a launch template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TemplateInterface {
    pub(crate) device_index: u32,
    pub(crate) network_card_index: u32,
    /// `interface` (ENA), `efa` or `efa-only`.
    pub(crate) interface_type: String,
    pub(crate) groups: Vec<String>,
}

/// An EC2 launch template with the one version the twin keeps (node groups launch from it).
#[derive(Debug, Clone)]
pub(crate) struct LaunchTemplate {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) created_at: Duration,
    pub(crate) placement_group: Option<String>,
    pub(crate) interfaces: Vec<TemplateInterface>,
}

impl LaunchTemplate {
    /// The interfaces that give the instance an EFA device.
    pub(crate) fn efa_interfaces(&self) -> u32 {
        let efa = self
            .interfaces
            .iter()
            .filter(|i| i.interface_type.starts_with("efa"))
            .count();
        u32::try_from(efa).unwrap_or(u32::MAX)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Update {
    pub(crate) id: String,
    pub(crate) cluster: String,
    pub(crate) nodegroup: Option<String>,
    /// `(errorCode, errorMessage, resourceIds)` of a failed update, as EKS reports them.
    pub(crate) errors: Vec<(String, String, Vec<String>)>,
    pub(crate) kind: String,
    pub(crate) status: String,
    pub(crate) params: Vec<(String, String)>,
    pub(crate) created_at: Duration,
}

#[derive(Debug, Clone)]
pub(crate) struct Addon {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) status: String,
    pub(crate) created_at: Duration,
    /// `configurationValues`: the add-on's JSON settings, as given.
    pub(crate) configuration_values: Option<String>,
}

/// An EKS Pod Identity association: a ServiceAccount's IAM role.
#[derive(Debug, Clone)]
pub(crate) struct PodIdentityAssociation {
    pub(crate) id: String,
    pub(crate) namespace: String,
    pub(crate) service_account: String,
    pub(crate) role_arn: String,
    pub(crate) created_at: Duration,
}

#[derive(Debug, Clone)]
pub(crate) struct Cluster {
    /// What DescribeCluster says it is: the lab-state file's type, so a captured cluster's
    /// fields arrive as they were read.
    pub(crate) config: ClusterConfig,
    pub(crate) created_at: Duration,
    pub(crate) addons: BTreeMap<String, Addon>,
    /// EKS access entries by principal ARN.
    pub(crate) access_entries: BTreeMap<String, AccessEntry>,
    /// Pod Identity associations by id.
    pub(crate) pod_identity_associations: BTreeMap<String, PodIdentityAssociation>,
    /// Its control plane logs and endpoint access, as UpdateClusterConfig changes them.
    pub(crate) settings: super::cluster_settings::ClusterSettings,
}

/// A KMS key: enabled, or pending deletion after its waiting period.
#[derive(Debug, Clone)]
pub(crate) struct KmsKey {
    pub(crate) id: String,
    pub(crate) description: String,
    pub(crate) created_at: Duration,
    /// When it is deleted, once ScheduleKeyDeletion was called.
    pub(crate) deletion_at: Option<Duration>,
}

impl KmsKey {
    pub(crate) fn arn(&self) -> String {
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
pub(crate) struct AccessEntry {
    pub(crate) principal_arn: String,
    pub(crate) username: String,
    pub(crate) groups: Vec<String>,
    pub(crate) kind: String,
    pub(crate) created_at: Duration,
    pub(crate) modified_at: Duration,
    /// Associated access policies by policy ARN.
    pub(crate) policies: BTreeMap<String, AssociatedPolicy>,
}

#[derive(Debug, Clone)]
pub(crate) struct AssociatedPolicy {
    pub(crate) policy_arn: String,
    /// `cluster`, or `namespace` with its namespaces.
    pub(crate) scope: String,
    pub(crate) namespaces: Vec<String>,
    pub(crate) associated_at: Duration,
    pub(crate) modified_at: Duration,
}

#[derive(Debug, Clone)]
pub(crate) struct OidcProvider {
    pub(crate) url: String,
    pub(crate) client_ids: Vec<String>,
    pub(crate) thumbprints: Vec<String>,
    pub(crate) created_at: Duration,
}

impl OidcProvider {
    pub(crate) fn arn(&self) -> String {
        format!(
            "arn:aws:iam::{}:oidc-provider/{}",
            lab::ACCOUNT_ID,
            self.url
        )
    }
}

/// What the AWS side wants to happen later on the virtual clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AwsTimer {
    /// A node that node auto repair watches has been unhealthy for its wait (sim/repair).
    RepairDue {
        instance: String,
    },
    /// A node group's repair configuration changed: repair looks at its nodes as they are.
    RepairScan {
        nodegroup: String,
    },
    /// An instance has booted: it runs and its Node joins the cluster.
    InstanceJoins {
        instance: String,
    },
    /// An instance was asked to reboot (RebootInstances).
    InstanceRebooting {
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
pub(crate) fn join_delay(instance_type: &str) -> Duration {
    if instance_type.starts_with('g') || instance_type.starts_with('p') {
        Duration::from_secs(150)
    } else {
        Duration::from_secs(90)
    }
}

/// How long a terminating instance takes to shut down.
pub(crate) const SHUTDOWN_DELAY: Duration = Duration::from_secs(30);

/// A node EKS node auto repair watches or repairs, by its instance (sim/repair).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeRepair {
    pub(crate) node: String,
    pub(crate) cluster: String,
    pub(crate) nodegroup: String,
    /// The failing condition and its reason, as the node showed them.
    pub(crate) condition: String,
    pub(crate) reason: String,
    /// When its wait is over (an earlier watch's timer firing before it is stale).
    pub(crate) due: std::time::Duration,
    /// The action under way (`Replace`, `Reboot`), once repair acts.
    pub(crate) acting: Option<&'static str>,
    /// The instance launched in its place (Replace).
    pub(crate) replacement: Option<String>,
}

#[derive(Default)]
pub(crate) struct AwsState {
    pub(crate) now: Duration,
    /// Nodes node auto repair watches or repairs, by instance id.
    pub(crate) repairs: BTreeMap<String, NodeRepair>,
    pub(crate) vpcs: BTreeMap<String, Vpc>,
    pub(crate) nat_gateways: BTreeMap<String, NatGateway>,
    /// Elastic IPs by allocation id.
    pub(crate) addresses: BTreeMap<String, Address>,
    /// IAM roles by name.
    pub(crate) roles: BTreeMap<String, Role>,
    /// KMS keys by key id, and aliases (`alias/eks/myeks5w`) to key ids.
    pub(crate) kms_keys: BTreeMap<String, KmsKey>,
    pub(crate) kms_aliases: BTreeMap<String, String>,
    pub(crate) clusters: BTreeMap<String, Cluster>,
    /// By (cluster, node group).
    pub(crate) nodegroups: BTreeMap<(String, String), Nodegroup>,
    pub(crate) updates: BTreeMap<String, Update>,
    pub(crate) subnets: BTreeMap<String, Subnet>,
    pub(crate) groups: BTreeMap<String, SecurityGroup>,
    pub(crate) rules: Vec<Rule>,
    pub(crate) instances: BTreeMap<String, Instance>,
    /// How many instances with a network topology each zone has placed (topology.rs).
    pub(crate) network_slots: BTreeMap<String, u32>,
    /// Placement groups by name.
    pub(crate) placement_groups: BTreeMap<String, PlacementGroup>,
    /// Launch templates by id.
    pub(crate) launch_templates: BTreeMap<String, LaunchTemplate>,
    pub(crate) oidc_providers: Vec<OidcProvider>,
    pub(crate) timers: Vec<(Duration, AwsTimer)>,
    /// Node groups whose new instances never join (a fault for drills), by name.
    pub(crate) failing_joins: std::collections::BTreeSet<String>,
    /// Instances started by the cluster's autoscaler, with what their nodes register as.
    pub(crate) autoscaled: BTreeMap<String, crate::sim::launch::LaunchRequest>,
    /// What has been billed, for the cost meter.
    pub(crate) meter: Meter,
    /// Throttling, server errors and latency injected into AWS calls.
    pub(crate) faults: AwsFaults,
    /// Answers to EKS calls made with a `clientRequestToken`, by method, path and token, with
    /// the body they came with: the same call again gets the same answer.
    pub(crate) idempotent: BTreeMap<String, (Value, (u16, Value))>,
    /// The CA of the twin's Kubernetes API once it serves: DescribeCluster's
    /// `certificateAuthority` for the lab's cluster.
    pub(crate) kube_ca_pem: Option<String>,
    /// IAM users and the access keys every call is signed with.
    pub(crate) identities: super::identity::Identities,
    sequence: u64,
}

impl AwsState {
    /// A deterministic id with a prefix: `i-0f00000000000001`, `sgr-0f00000000000001`.
    pub(crate) fn next_id(&mut self, prefix: &str) -> String {
        self.sequence += 1;
        format!("{prefix}-0f{:015x}", self.sequence)
    }

    /// Moves the id sequence past an id of its own form (`i-0f00000000000001`) that a captured
    /// twin made, so that new ids never repeat one.
    pub(crate) fn skip_id(&mut self, id: &str) {
        let taken = id
            .rsplit_once("-0f")
            .filter(|(_, hex)| hex.len() == 15)
            .and_then(|(_, hex)| u64::from_str_radix(hex, 16).ok());
        if let Some(taken) = taken {
            self.sequence = self.sequence.max(taken);
        }
    }

    /// A deterministic UUID (node group ids, update ids).
    pub(crate) fn next_uuid(&mut self) -> String {
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

    pub(crate) fn schedule(&mut self, after: Duration, timer: AwsTimer) {
        self.timers.push((self.now + after, timer));
    }

    /// The live instances of a node group (not shutting down or terminated).
    pub(crate) fn live_instances(&self, nodegroup: &str) -> Vec<&Instance> {
        self.instances
            .values()
            .filter(|i| {
                i.nodegroup == nodegroup && matches!(i.state.as_str(), "pending" | "running")
            })
            .collect()
    }

    /// A free private address in a subnet, deterministic.
    pub(crate) fn next_private_ip(&mut self, subnet: &str) -> String {
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
