//! Where GPU instances sit in AWS's network: DescribeInstanceTopology through aws-sdk-ec2
//! (`ec2::instance_topology`) and the aws CLI, and the `topology.k8s.aws/network-node-layer-N`
//! labels EKS puts on their nodes, as kubectl shows them.

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;

use crate::support::{LabServer, aws_cli_available, eval_json, kubectl};

/// A p5 node group of `count` nodes beside the lab's, in a cluster placement group.
fn p5_group(count: u32) -> String {
    format!(
        r#"
let g = eks::nodegroup("myeks5w", "gpu");
let labels = g.labels; labels.tier = "p5";
ec2::create_placement_group("p5-cluster", "cluster");
ec2::create_launch_template(#{{ name: "p5-efa", placement_group: "p5-cluster", efa_interfaces: 32 }});
eks::create_nodegroup("myeks5w", #{{ name: "p5", instance_type: "p5.48xlarge", ami_type: "AL2023_x86_64_NVIDIA",
    desired: 0, min: 0, max: {count}, subnets: g.subnets, node_role: g.node_role, labels: labels, taints: g.taints,
    launch_template: "p5-efa" }});
eks::wait_nodegroup_active("myeks5w", "p5");
eks::scale_nodegroup("myeks5w", "p5", {count});
k8s::wait_nodes(#{{ labels: #{{ tier: "p5" }}, count: {count} }});
"#
    )
}

#[test]
fn forty_p5_instances_fill_a_block_of_32_and_their_nodes_carry_it_as_labels() {
    let seen = eval_json(&format!(
        r#"{}
let topology = ec2::instance_topology(#{{ instance_type: "p5*" }});
let all = ec2::instance_topology();
let labelled = k8s::nodes(#{{ tier: "p5" }}).map(|n| [n.instance_id,
    n.labels["topology.k8s.aws/network-node-layer-1"], n.labels["topology.k8s.aws/network-node-layer-2"],
    n.labels["topology.k8s.aws/network-node-layer-3"]]);
let some = ec2::instance_topology(#{{ instance_ids: [topology[0].instance_id] }});
let refused = "";
try {{ ec2::instance_topology(#{{ instance_ids: ["i-0f0000000000fffff"] }}); }} catch (e) {{ refused = `${{e}}`; }}
#{{ topology: topology, all: all.len(), others: all.filter(|i| i.instance_type != "p5.48xlarge").map(|i| i.network_nodes.len()),
   labelled: labelled, some: some, refused: refused }}"#,
        p5_group(40)
    ));
    let topology = seen["topology"].as_array().expect("an array");
    assert_eq!(topology.len(), 40, "{seen:#}");
    let layer = |i: usize| -> BTreeSet<&str> {
        topology
            .iter()
            .map(|t| t["network_nodes"][i].as_str().unwrap_or_default())
            .collect()
    };
    assert_eq!(
        (layer(0).len(), layer(1).len(), layer(2).len()),
        (1, 1, 2),
        "one spine, one middle node, two blocks: {seen:#}"
    );
    let per_block: Vec<usize> = layer(2)
        .iter()
        .map(|b| {
            topology
                .iter()
                .filter(|t| t["network_nodes"][2] == *b)
                .count()
        })
        .collect();
    assert_eq!(
        per_block.iter().copied().collect::<BTreeSet<_>>(),
        BTreeSet::from([8, 32])
    );
    for t in topology {
        assert_eq!(t["group_name"], "p5-cluster");
        assert!(
            t["network_nodes"][2]
                .as_str()
                .is_some_and(|n| n.starts_with("nn-") && n.len() == 20)
        );
    }
    // Every node is labelled with its instance's network nodes.
    for row in seen["labelled"].as_array().expect("nodes") {
        let instance = topology
            .iter()
            .find(|t| t["instance_id"] == row[0])
            .unwrap_or_else(|| panic!("no topology for {row}"));
        let row = row.as_array().expect("a row");
        assert_eq!(
            row[1..],
            instance["network_nodes"].as_array().expect("nodes")[..]
        );
    }
    assert!(seen["all"].as_u64().unwrap_or(0) > 40);
    assert!(
        seen["others"]
            .as_array()
            .expect("others")
            .iter()
            .all(|n| n == 0),
        "types without a topology have no network nodes: {seen:#}"
    );
    assert_eq!(seen["some"].as_array().map(Vec::len), Some(1));
    assert!(
        seen["refused"]
            .as_str()
            .is_some_and(|e| e.contains("InvalidInstanceID.NotFound")),
        "{seen:#}"
    );
}

#[test]
fn the_aws_cli_pages_through_the_topology_and_kubectl_shows_the_labels() {
    if !aws_cli_available() {
        return;
    }
    let lab = LabServer::start("600");
    let aws = |args: &[&str]| {
        let out = lab.aws(args);
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let json = |args: &[&str]| -> Value {
        let (code, stdout, stderr) = aws(&[args, &["--output", "json"]].concat());
        assert_eq!(code, 0, "aws {}: {stdout}{stderr}", args.join(" "));
        serde_json::from_str(&stdout).expect("JSON")
    };
    let gpu = json(&[
        "eks",
        "describe-nodegroup",
        "--cluster-name",
        "myeks5w",
        "--nodegroup-name",
        "gpu",
    ]);
    let subnets: Vec<&str> = gpu["nodegroup"]["subnets"]
        .as_array()
        .expect("subnets")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let role = gpu["nodegroup"]["nodeRole"].as_str().expect("role");
    let mut create = vec![
        "eks",
        "create-nodegroup",
        "--cluster-name",
        "myeks5w",
        "--nodegroup-name",
        "p5",
        "--instance-types",
        "p5.48xlarge",
        "--ami-type",
        "AL2023_x86_64_NVIDIA",
        "--scaling-config",
        "minSize=0,maxSize=4,desiredSize=3",
        "--node-role",
        role,
        "--subnets",
    ];
    create.extend(subnets.iter().copied());
    json(&create);
    lab.admin("advance?by=10m");
    let topology = json(&[
        "ec2",
        "describe-instance-topology",
        "--filters",
        "Name=instance-type,Values=p5*",
    ]);
    let instances = topology["Instances"].as_array().expect("Instances");
    assert_eq!(instances.len(), 3, "{topology:#}");
    for instance in instances {
        let nodes = instance["NetworkNodes"].as_array().expect("NetworkNodes");
        assert_eq!(nodes.len(), 3, "{instance:#}");
        assert_eq!(instance["ZoneId"], "apne2-az1");
    }
    // One instance a page: the CLI's own pagination follows NextToken to the end.
    let paged = json(&[
        "ec2",
        "describe-instance-topology",
        "--page-size",
        "1",
        "--filters",
        "Name=instance-type,Values=p5.48xlarge",
    ]);
    assert_eq!(paged["Instances"], topology["Instances"]);
    let (_, first, _) = aws(&[
        "ec2",
        "describe-instance-topology",
        "--max-results",
        "1",
        "--no-paginate",
        "--output",
        "json",
    ]);
    assert!(first.contains("\"NextToken\""), "{first}");
    let id = instances[0]["InstanceId"].as_str().expect("id");
    let (code, _, stderr) = aws(&[
        "ec2",
        "describe-instance-topology",
        "--instance-ids",
        id,
        "--max-results",
        "5",
    ]);
    assert_ne!(code, 0);
    assert!(stderr.contains("(InvalidParameterCombination)"), "{stderr}");
    let (code, _, stderr) = aws(&["ec2", "describe-instance-topology", "--max-results", "500"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("(InvalidParameterValue)"), "{stderr}");
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let out = Command::new(binary)
        .arg("--kubeconfig")
        .arg(&lab.kubeconfig)
        .args(["get", "nodes", "-l", "node.kubernetes.io/instance-type=p5.48xlarge", "-o",
            "jsonpath={range .items[*]}{.spec.providerID} {.metadata.labels.topology\\.k8s\\.aws/network-node-layer-3}{\"\\n\"}{end}"])
        .output()
        .expect("kubectl runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 3, "{text}");
    for line in text.lines() {
        let (provider, block) = line.split_once(' ').expect("two columns");
        let instance = instances
            .iter()
            .find(|i| provider.ends_with(i["InstanceId"].as_str().unwrap_or("?")))
            .unwrap_or_else(|| panic!("{line}"));
        assert_eq!(instance["NetworkNodes"][2], block, "{line}");
    }
}
