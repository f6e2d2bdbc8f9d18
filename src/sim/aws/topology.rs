//! Where instances sit in AWS's network, as DescribeInstanceTopology tells it and EKS labels
//! nodes with it: a set of network nodes per instance, the top layer first and the node the
//! instance hangs from last (3 layers, 4 for p6-b200/p6-b300).
//!
//! AWS does not publish how many instances share a node, so the twin chooses and keeps to it:
//! instances of a supported type fill the blocks of their zone in launch order, 32 to a bottom
//! node, 4 bottom nodes to a middle node, one top node per zone. A 256-node p5 fleet thus spans 8
//! blocks, and a fault on one network node slows exactly the collectives that cross it.
//!
//! Sources: the EC2 User Guide's "How Amazon EC2 instance topology works" and "Prerequisites
//! for Amazon EC2 topology" (supported types; 3 or 4 nodes), botocore's EC2 model
//! (`DescribeInstanceTopology`: `InstanceId.N` and `GroupName.N` at most 100 each,
//! `MaxResults` 1-100 default 20 and not with instance ids, filters `availability-zone`,
//! `instance-type` with `*`/`?` wildcards, `zone-id`; the response's `instanceSet` of `item`s
//! with `networkNodeSet`), and EKS's "Place distributed AI/ML workloads with network topology
//! labels" (`topology.k8s.aws/network-node-layer-1` .. `-4`, values like `nn-e50490a237cb0f01a`).

use super::ec2_query::{Params, Wanted};
use super::error::AwsError;
use super::state::{AwsState, Instance};
use super::wire::Xml;
use crate::lab;

/// Types whose instances DescribeInstanceTopology places under 3 network nodes.
const THREE_LAYERS: &[&str] = &[
    "g6e.xlarge",
    "g6e.2xlarge",
    "g6e.4xlarge",
    "g6e.8xlarge",
    "g6e.12xlarge",
    "g6e.16xlarge",
    "g6e.24xlarge",
    "g6e.48xlarge",
    "g7e.2xlarge",
    "g7e.4xlarge",
    "g7e.8xlarge",
    "g7e.12xlarge",
    "g7e.24xlarge",
    "g7e.48xlarge",
    "hpc6a.48xlarge",
    "hpc6id.32xlarge",
    "hpc7g.4xlarge",
    "hpc7g.8xlarge",
    "hpc7g.16xlarge",
    "hpc7a.12xlarge",
    "hpc7a.24xlarge",
    "hpc7a.48xlarge",
    "hpc7a.96xlarge",
    "p3dn.24xlarge",
    "p4d.24xlarge",
    "p4de.24xlarge",
    "p5.48xlarge",
    "p5e.48xlarge",
    "p5en.48xlarge",
    "p6e-gb200.36xlarge",
    "trn1.2xlarge",
    "trn1.32xlarge",
    "trn1n.32xlarge",
    "trn2.48xlarge",
    "trn2u.48xlarge",
];

/// Types placed under 4 network nodes.
const FOUR_LAYERS: &[&str] = &["p6-b200.48xlarge", "p6-b300.48xlarge"];

/// Instances under one bottom-layer node (the twin's choice; AWS does not publish it).
pub(crate) const BLOCK_SIZE: u32 = 32;
/// Bottom-layer nodes under one middle-layer node.
const BLOCKS_PER_MIDDLE: u32 = 4;
/// On a 4-layer type, instances under one node of the fourth layer.
const FOURTH_LAYER_SIZE: u32 = 16;

/// EKS's label for the `layer`-th node (1 is the top).
pub(crate) fn layer_label(layer: usize) -> String {
    format!("topology.k8s.aws/network-node-layer-{layer}")
}

/// How many network nodes an instance of this type has; 0 where AWS gives none.
fn layers(instance_type: &str) -> u32 {
    if FOUR_LAYERS.contains(&instance_type) {
        4
    } else if THREE_LAYERS.contains(&instance_type) {
        3
    } else {
        0
    }
}

/// The network nodes of the next instance of `instance_type` launched in `zone` (none for a
/// type without a topology), the top layer first.
pub(crate) fn place(state: &mut AwsState, instance_type: &str, zone: &str) -> Vec<String> {
    let layers = layers(instance_type);
    if layers == 0 {
        return Vec::new();
    }
    let slot = state.network_slots.entry(zone.to_string()).or_default();
    let position = *slot;
    *slot += 1;
    let block = position / BLOCK_SIZE;
    let mut nodes = vec![
        node_id(zone, 1, 0),
        node_id(zone, 2, block / BLOCKS_PER_MIDDLE),
        node_id(zone, 3, block),
    ];
    if layers == 4 {
        nodes.push(node_id(zone, 4, position / FOURTH_LAYER_SIZE));
    }
    nodes
}

/// `nn-` and 17 hex digits, hashed from the account, zone, layer and index: the ids are the
/// account's own, as AWS hashes them per account, and the same on every run.
fn node_id(zone: &str, layer: u32, index: u32) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let text = format!("{}/{zone}/{layer}/{index}", lab::ACCOUNT_ID);
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let digits = format!("{hash:016x}{:x}", layer);
    format!("nn-{}", &digits[..17])
}

/// `*` matches any run of characters, `?` zero or one (as DescribeInstanceTopology's
/// `instance-type` filter documents them).
fn wildcard_match(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| wildcard_match(rest, &text[skip..])),
        Some((b'?', rest)) => {
            wildcard_match(rest, text) || (!text.is_empty() && wildcard_match(rest, &text[1..]))
        }
        Some((c, rest)) => text.first() == Some(c) && wildcard_match(rest, &text[1..]),
    }
}

/// What a DescribeInstanceTopology call asks for.
struct Asked {
    ids: Wanted,
    groups: Wanted,
    zones: Wanted,
    zone_ids: Wanted,
    types: Vec<String>,
    page_size: usize,
    start: usize,
}

impl Asked {
    fn read(params: &Params) -> Result<Self, AwsError> {
        let ids = Wanted::listed(params, "InstanceId");
        let groups = Wanted::listed(params, "GroupName");
        for (list, given) in [
            ("InstanceIds", ids.values().len()),
            ("GroupNames", groups.values().len()),
        ] {
            if given > 100 {
                return Err(invalid(format!(
                    "The parameter {list} has {given} values; the maximum is 100."
                )));
            }
        }
        let page_size = match params.get("MaxResults") {
            None => 20,
            Some(_) if !ids.values().is_empty() => {
                return Err(AwsError::new(
                    400,
                    "InvalidParameterCombination",
                    "The parameter MaxResults cannot be used with the parameter InstanceIds",
                ));
            }
            Some(text) => match text.parse::<usize>() {
                Ok(n) if (1..=100).contains(&n) => n,
                _ => {
                    return Err(invalid(format!(
                        "Value ( {text} ) for parameter maxResults is invalid. Parameter must be between 1 and 100."
                    )));
                }
            },
        };
        let start = match params.get("NextToken") {
            None => 0,
            Some(token) => token
                .strip_prefix("topology-")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| invalid(format!("The token '{token}' is invalid.")))?,
        };
        Ok(Self {
            ids,
            groups,
            zones: Wanted::filtered(params, "availability-zone"),
            zone_ids: Wanted::filtered(params, "zone-id"),
            types: Wanted::filtered(params, "instance-type").values().to_vec(),
            page_size,
            start,
        })
    }

    fn accepts(&self, instance: &Instance) -> bool {
        self.ids.accepts(&instance.id)
            && self
                .groups
                .accepts(instance.placement_group.as_deref().unwrap_or_default())
            && self.zones.accepts(&instance.zone)
            && self.zone_ids.accepts(lab::zone_id(&instance.zone))
            && (self.types.is_empty()
                || self
                    .types
                    .iter()
                    .any(|t| wildcard_match(t.as_bytes(), instance.instance_type.as_bytes())))
    }
}

fn invalid(message: String) -> AwsError {
    AwsError::new(400, "InvalidParameterValue", message)
}

/// DescribeInstanceTopology: the account's instances that have not terminated, a page at a
/// time; an instance shows its network nodes only while it runs, and only for a supported
/// type (the model's documentation of `NetworkNodes`).
pub(super) fn describe_instance_topology(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let asked = Asked::read(params)?;
    super::instance_ids::check_ids(state, asked.ids.values())?;
    let matching: Vec<&Instance> = state
        .instances
        .values()
        .filter(|i| i.state != "terminated" && asked.accepts(i))
        .collect();
    let end = (asked.start + asked.page_size).min(matching.len());
    let page = matching.get(asked.start..end).unwrap_or_default();
    xml.items("instanceSet", page.iter().copied(), |xml, instance| {
        xml.leaf("instanceId", &instance.id)
            .leaf("instanceType", &instance.instance_type);
        if let Some(group) = &instance.placement_group {
            xml.leaf("groupName", group);
        }
        let nodes: &[String] = if instance.state == "running" {
            &instance.network_nodes
        } else {
            &[]
        };
        xml.items("networkNodeSet", nodes, |xml, node| {
            xml.raw(&super::wire::escape(node));
        });
        xml.leaf("availabilityZone", &instance.zone)
            .leaf("zoneId", lab::zone_id(&instance.zone));
    });
    if end < matching.len() {
        xml.leaf("nextToken", format!("topology-{end}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_fill_blocks_of_32_in_launch_order() {
        let mut state = AwsState::default();
        let nodes: Vec<Vec<String>> = (0..70)
            .map(|_| place(&mut state, "p5.48xlarge", "ap-northeast-2a"))
            .collect();
        assert_eq!(nodes[0].len(), 3);
        assert!(nodes[0][2].starts_with("nn-") && nodes[0][2].len() == 20);
        assert_eq!(nodes[0], nodes[31]);
        assert_ne!(nodes[31][2], nodes[32][2]);
        // Blocks 0..3 share a middle node; the fifth block (from instance 128) does not.
        assert_eq!(nodes[32][1], nodes[0][1]);
        assert_eq!(nodes[69][0], nodes[0][0]);
        assert!(place(&mut state, "t3.medium", "ap-northeast-2a").is_empty());
        assert_eq!(
            place(&mut state, "p6-b200.48xlarge", "ap-northeast-2c").len(),
            4
        );
        // Another zone is another spine.
        assert_ne!(
            place(&mut state, "p5.48xlarge", "ap-northeast-2c")[0],
            nodes[0][0]
        );
    }

    #[test]
    fn type_filters_take_the_documented_wildcards() {
        assert!(wildcard_match(b"p5*", b"p5en.48xlarge"));
        assert!(wildcard_match(b"p4d?.24xlarge", b"p4de.24xlarge"));
        assert!(wildcard_match(b"p4d?.24xlarge", b"p4d.24xlarge"));
        assert!(!wildcard_match(b"p5.48xlarge", b"p5e.48xlarge"));
    }
}
