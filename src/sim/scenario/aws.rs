//! The lab's AWS account after its Terraform apply: network, security groups with the exact
//! baseline rules, the ACTIVE cluster with its node groups and add-ons, the OIDC provider.

use std::collections::BTreeMap;
use std::time::Duration;

use super::kube_system::SYSTEM_NODES;
use crate::lab;
use crate::sim::aws::iam_roles;
use crate::sim::aws::state::{
    Addon, Address, AwsState, Cluster, ClusterConfig, Instance, NatGateway, Nodegroup,
    OidcProvider, Rule, SecurityGroup, Subnet, Vpc,
};

pub(super) fn deployed(state: &mut AwsState) {
    vpc_and_nat_gateway(state);
    for role in iam_roles::deployed_roles(Duration::ZERO) {
        state.roles.insert(role.name.clone(), role);
    }
    nat_address(state);
    state
        .meter
        .start(lab::NAT_GATEWAY_ID, "nat-gateway", Duration::ZERO);
    state
        .meter
        .start(lab::CLUSTER_NAME, "eks-cluster", Duration::ZERO);
    subnets(state);
    security_groups(state);
    cluster(state);
    nodegroups(state);
    system_instances(state);
    state.oidc_providers.push(OidcProvider {
        url: lab::OIDC_ISSUER.trim_start_matches("https://").into(),
        client_ids: vec!["sts.amazonaws.com".into()],
        thumbprints: vec![lab::OIDC_THUMBPRINT.into()],
        created_at: Duration::ZERO,
    });
}

fn vpc_and_nat_gateway(state: &mut AwsState) {
    state.vpcs.insert(
        lab::VPC_ID.into(),
        Vpc {
            id: lab::VPC_ID.into(),
            cidr: lab::VPC_CIDR.into(),
            name: "myeks5w-vpc".into(),
        },
    );
    state.nat_gateways.insert(
        lab::NAT_GATEWAY_ID.into(),
        NatGateway {
            id: lab::NAT_GATEWAY_ID.into(),
            subnet: "subnet-0abc0001".into(),
            vpc: lab::VPC_ID.into(),
            state: "available".into(),
            name: "myeks5w-nat".into(),
            allocation: Some(lab::NAT_EIP_ALLOCATION_ID.into()),
        },
    );
}

/// The Elastic IP the NAT gateway holds.
fn nat_address(state: &mut AwsState) {
    state.addresses.insert(
        lab::NAT_EIP_ALLOCATION_ID.into(),
        Address {
            allocation_id: lab::NAT_EIP_ALLOCATION_ID.into(),
            public_ip: "3.38.120.15".into(),
            name: "myeks5w-nat-eip".into(),
            nat_gateway: Some(lab::NAT_GATEWAY_ID.into()),
        },
    );
}

fn subnets(state: &mut AwsState) {
    for (id, cidr, zone, public, name) in lab::SUBNETS {
        state.subnets.insert(
            id.into(),
            Subnet {
                id: id.into(),
                vpc: lab::VPC_ID.into(),
                cidr: cidr.into(),
                zone: zone.into(),
                public,
                name: name.into(),
            },
        );
    }
}

/// The lab's security groups with their baseline rules; a rule's source is `self`, another
/// group, or a CIDR.
fn security_groups(state: &mut AwsState) {
    for (id, name, description, rules) in lab::SECURITY_GROUPS {
        state.groups.insert(
            id.into(),
            SecurityGroup {
                id: id.into(),
                name: name.into(),
                description: description.into(),
                vpc_id: lab::VPC_ID.into(),
            },
        );
        for (rule_id, egress, protocol, from, to, source, rule_description) in rules.iter().copied()
        {
            let (cidr, group) = match source {
                "self" => (None, Some(id.to_string())),
                s if s.starts_with("sg-") => (None, Some(s.to_string())),
                s => (Some(s.to_string()), None),
            };
            state.rules.push(Rule {
                id: rule_id.into(),
                group_id: id.into(),
                egress,
                protocol: protocol.into(),
                from_port: from,
                to_port: to,
                cidr,
                referenced_group: group,
                description: rule_description.into(),
            });
        }
    }
}

/// The ACTIVE cluster with the seed's add-ons and its creator's admin access entry.
fn cluster(state: &mut AwsState) {
    state.clusters.insert(
        lab::CLUSTER_NAME.into(),
        Cluster {
            config: cluster_config(),
            created_at: Duration::ZERO,
            addons: addons(),
            pod_identity_associations: BTreeMap::new(),
            settings: crate::sim::aws::cluster_settings::ClusterSettings::default(),
            // Terraform applied as the lab's user: the creator's admin entry.
            access_entries: std::iter::once((
                crate::sim::aws::identity::user_arn(crate::sim::aws::identity::LAB_USER),
                crate::sim::aws::access_entries::creator_entry(
                    &crate::sim::aws::identity::user_arn(crate::sim::aws::identity::LAB_USER),
                    Duration::ZERO,
                ),
            ))
            .collect(),
        },
    );
}

fn cluster_config() -> ClusterConfig {
    ClusterConfig {
        name: lab::CLUSTER_NAME.into(),
        status: "ACTIVE".into(),
        version: lab::KUBERNETES_VERSION.into(),
        platform_version: lab::PLATFORM_VERSION.into(),
        endpoint: lab::CLUSTER_ENDPOINT.into(),
        role_arn: format!(
            "arn:aws:iam::{}:role/{}",
            lab::ACCOUNT_ID,
            lab::CLUSTER_ROLE
        ),
        subnets: lab::PRIVATE_SUBNETS
            .iter()
            .map(|s| (*s).to_string())
            .collect(),
        security_groups: vec![lab::NODE_SG.into()],
        cluster_security_group: lab::CLUSTER_SG.into(),
        vpc: lab::VPC_ID.into(),
        oidc_issuer: lab::OIDC_ISSUER.into(),
        authentication_mode: "API_AND_CONFIG_MAP".into(),
        secrets_key: None,
        remote_network: None,
    }
}

/// The seed's add-ons, ACTIVE at the versions they resolve to.
fn addons() -> BTreeMap<String, Addon> {
    lab::ADDONS
        .iter()
        .map(|(name, version)| {
            let version = lab::resolved_addon_version(name, version);
            (
                (*name).to_string(),
                Addon {
                    name: (*name).into(),
                    version,
                    status: "ACTIVE".into(),
                    created_at: Duration::ZERO,
                    configuration_values: None,
                },
            )
        })
        .collect()
}

fn nodegroups(state: &mut AwsState) {
    for fact in &lab::NODEGROUPS {
        let uuid = state.next_uuid();
        state.nodegroups.insert(
            (lab::CLUSTER_NAME.into(), fact.name.into()),
            Nodegroup {
                cluster: lab::CLUSTER_NAME.into(),
                name: fact.name.into(),
                uuid,
                ami_type: fact.ami_type.into(),
                instance_type: fact.instance_type.into(),
                desired: fact.desired,
                min: fact.min,
                max: fact.max,
                labels: fact
                    .labels
                    .iter()
                    .map(|(k, v)| ((*k).into(), (*v).into()))
                    .collect(),
                taints: fact
                    .taints
                    .iter()
                    .map(|(k, v, e)| ((*k).into(), (*v).into(), (*e).into()))
                    .collect(),
                subnets: fact.subnets.iter().map(|s| (*s).to_string()).collect(),
                node_role: format!("arn:aws:iam::{}:role/{}", lab::ACCOUNT_ID, lab::NODE_ROLE),
                status: "ACTIVE".into(),
                created_at: Duration::ZERO,
                modified_at: Duration::ZERO,
                launch_template: None,
                health_issues: Vec::new(),
                node_repair: None,
                version: lab::KUBERNETES_VERSION.into(),
                release_version: crate::sim::aws::ami_releases::release_for(
                    lab::KUBERNETES_VERSION,
                ),
                update_config: None,
            },
        );
    }
}

/// The primary node group's t3.medium instances that the system nodes run on, metered from
/// the start.
fn system_instances(state: &mut AwsState) {
    for (instance, _, _) in SYSTEM_NODES {
        state
            .meter
            .start(instance, lab::T3_MEDIUM.instance_type, Duration::ZERO);
    }
    for (instance, zone, ip) in SYSTEM_NODES {
        let subnet = if zone.ends_with('a') {
            "subnet-0abc9012"
        } else {
            "subnet-0abc0006"
        };
        state.instances.insert(
            instance.into(),
            Instance {
                id: instance.into(),
                nodegroup: "primary".into(),
                instance_type: lab::T3_MEDIUM.instance_type.into(),
                subnet: subnet.into(),
                zone: zone.into(),
                private_ip: ip.into(),
                state: "running".into(),
                groups: vec![lab::NODE_SG.into(), lab::AUX_SG.into()],
                ami: lab::AMI_STANDARD.into(),
                launched_at: Duration::ZERO,
                placement_group: None,
                efa_interfaces: 0,
                // A t3.medium has no topology to tell.
                network_nodes: Vec::new(),
            },
        );
    }
}
