//! The AWS side of the hybrid lab: the cluster on 1.36 with its remote node and pod networks,
//! the cluster security group open to them on 443 (kubelets and pods reach the API), the
//! hybrid nodes' IAM role and access entry, the Pod Identity Agent add-on with its hybrid
//! DaemonSet and the workloads' Pod Identity associations; the meter bills each hybrid node by
//! its vCPU-hours.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use crate::lab::{self, hybrid};
use crate::sim::aws::pod_identity::associate;
use crate::sim::aws::state::{AccessEntry, Addon, AwsState, Cluster, RemoteNetwork, Role, Rule};

/// `(namespace, ServiceAccount, role)` of the workloads that use Pod Identity.
pub(super) const ASSOCIATIONS: [(&str, &str, &str); 2] = [
    ("ml-pipeline", "trainer", "ml-trainer-role"),
    ("ml-pipeline", "data-loader", "ml-data-loader-role"),
];

fn role(name: &str, service: &str, role_id: &str) -> Role {
    Role {
        name: name.into(),
        path: "/".into(),
        role_id: role_id.into(),
        trust_policy: json!({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": ["sts:AssumeRole", "sts:TagSession"]}],
        })
        .to_string(),
        description: String::new(),
        created_at: Duration::ZERO,
        attached: Vec::new(),
        inline: BTreeMap::new(),
        tags: Vec::new(),
    }
}

fn role_arn(name: &str) -> String {
    format!("arn:aws:iam::{}:role/{name}", lab::ACCOUNT_ID)
}

pub(crate) fn extend(state: &mut AwsState) {
    let node_role = hybrid_node_role();
    state.roles.insert(node_role.name.clone(), node_role);
    for (index, (_, _, name)) in ASSOCIATIONS.iter().enumerate() {
        let workload = role(
            name,
            "pods.eks.amazonaws.com",
            &format!("AROALABPODROLE00000{index}"),
        );
        state.roles.insert(workload.name.clone(), workload);
    }
    open_api_to_remote_networks(state);
    let Some(cluster) = state.clusters.get_mut(lab::CLUSTER_NAME) else {
        return;
    };
    make_hybrid(cluster);
    // EKS bills each connected hybrid node by its vCPUs.
    for node in &hybrid::HYBRID_NODES {
        state.meter.start(
            node.name,
            &lab::cost::hybrid_node_kind(node.vcpus),
            Duration::ZERO,
        );
    }
    for (namespace, account, role) in ASSOCIATIONS {
        // Fixed data on a cluster made above: an error here is a bug in this file.
        if let Err(error) = associate(
            state,
            lab::CLUSTER_NAME,
            namespace,
            account,
            &role_arn(role),
        ) {
            panic!("hybrid scenario association rejected: {}", error.message);
        }
    }
}

/// The role the hybrid nodes' SSM activation gives them.
fn hybrid_node_role() -> Role {
    let mut node_role = role(
        hybrid::HYBRID_NODE_ROLE,
        "ssm.amazonaws.com",
        "AROALABHYBRIDROLE0001",
    );
    node_role.attached = vec![
        "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore".into(),
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly".into(),
    ];
    // nodeadm reads the cluster; the Pod Identity Agent on the host needs eks-auth.
    node_role.inline.insert(
        "hybrid-nodes".into(),
        json!({
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Action": "eks:DescribeCluster", "Resource": "*"},
                {"Effect": "Allow", "Action": "eks-auth:AssumeRoleForPodIdentity", "Resource": "*"},
            ],
        })
        .to_string(),
    );
    node_role
}

/// The cluster security group's rules that let the remote nodes and pods reach the API on 443.
fn open_api_to_remote_networks(state: &mut AwsState) {
    for (id, egress, cidr, description) in [
        (
            "sgr-0c00000000000003",
            false,
            hybrid::REMOTE_NODE_CIDR,
            "Hybrid nodes to cluster API",
        ),
        (
            "sgr-0c00000000000004",
            false,
            hybrid::REMOTE_POD_CIDR,
            "Hybrid pods to cluster API (webhooks' callers)",
        ),
    ] {
        state.rules.push(Rule {
            id: id.into(),
            group_id: lab::CLUSTER_SG.into(),
            egress,
            protocol: "tcp".into(),
            from_port: 443,
            to_port: 443,
            cidr: Some(cidr.into()),
            referenced_group: None,
            description: description.into(),
        });
    }
}

/// The cluster on the hybrid version with its remote networks, the hybrid add-ons and the
/// hybrid nodes' access entry.
fn make_hybrid(cluster: &mut Cluster) {
    cluster.config.version = hybrid::KUBERNETES_VERSION.into();
    cluster.config.remote_network = Some(RemoteNetwork {
        node_cidrs: vec![hybrid::REMOTE_NODE_CIDR.into()],
        pod_cidrs: vec![hybrid::REMOTE_POD_CIDR.into()],
    });
    for (name, version) in hybrid::HYBRID_ADDONS {
        cluster.addons.insert(
            name.into(),
            Addon {
                name: name.into(),
                version: version.into(),
                status: "ACTIVE".into(),
                created_at: Duration::ZERO,
                configuration_values: (name == "eks-pod-identity-agent")
                    .then(|| hybrid::POD_IDENTITY_HYBRID_CONFIG.to_string()),
            },
        );
    }
    let principal = role_arn(hybrid::HYBRID_NODE_ROLE);
    cluster.access_entries.insert(
        principal.clone(),
        AccessEntry {
            principal_arn: principal,
            username: "system:node:{{SessionName}}".into(),
            groups: Vec::new(),
            kind: "HYBRID_LINUX".into(),
            created_at: Duration::ZERO,
            modified_at: Duration::ZERO,
            policies: BTreeMap::new(),
        },
    );
}
