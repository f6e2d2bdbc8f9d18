//! `runbook state capture` against `lab serve` reached as a real account is (its kubeconfig
//! and AWS endpoint): read-only calls only, Secrets by name without their data, and a twin
//! started from the file (`lab serve --scenario @FILE`) captures back to the same lab.

use std::path::Path;

use serde_json::Value;

use crate::support::{LabServer, Runbook};

pub fn capture(lab: &LabServer, output: &Path) {
    Runbook::new()
        .lab_env(lab)
        .args(["state", "capture", "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint(), "-o"])
        .arg(output)
        .run()
        .expect_code(0);
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the lab-state file")).expect("json")
}

/// The AWS actions and Kubernetes verbs the lab has answered since its audits were reset.
fn calls(lab: &LabServer) -> (Vec<String>, Vec<String>) {
    let aws: Value = serde_json::from_str(&lab.get(&format!("{}/twin/audit", lab.aws_endpoint())))
        .expect("json");
    let kube: Value =
        serde_json::from_str(&lab.get(&format!("{}/twin/audit", lab.url))).expect("json");
    let strings = |list: &Value, field: &str| -> Vec<String> {
        let mut all: Vec<String> = list
            .as_array()
            .expect("an array")
            .iter()
            .filter_map(|entry| entry[field].as_str().map(str::to_string))
            .collect();
        all.sort();
        all.dedup();
        all
    };
    (strings(&aws, "action"), strings(&kube, "verb"))
}

#[test]
fn a_capture_reads_only_and_a_twin_of_it_captures_back_the_same() {
    let lab = LabServer::start("60");
    let dir = tempfile::tempdir().expect("temp dir");
    // A Secret whose data must never reach the file.
    Runbook::new()
        .lab_env(&lab)
        .args(["eval", r#"k8s::apply(#{apiVersion: "v1", kind: "Secret", metadata: #{name: "registry", namespace: "kube-system"}, stringData: #{password: "s3cr3t-value"}})"#, "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint()])
        .run()
        .expect_code(0);
    lab.reset_audits();
    let first = dir.path().join("lab-state.json");
    capture(&lab, &first);

    let (aws, verbs) = calls(&lab);
    assert!(!aws.is_empty() && !verbs.is_empty(), "{aws:?} {verbs:?}");
    for action in &aws {
        let operation = action.split(':').nth(1).unwrap_or_default();
        assert!(
            ["Describe", "List", "Get"]
                .iter()
                .any(|read| operation.starts_with(read)),
            "{action} is not a read ({aws:?})"
        );
    }
    for verb in &verbs {
        assert!(
            ["get", "list"].contains(&verb.as_str()),
            "{verb} ({verbs:?})"
        );
    }

    let text = std::fs::read_to_string(&first).expect("written");
    assert!(
        !text.contains("s3cr3t") && !text.contains("czNjcjN0"),
        "no Secret data"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&first)
        .expect("exists")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let state = json(&first);
    assert_eq!(state["format"], "runbook.lab-state");
    assert_eq!(state["version"], 1);
    assert!(
        state["kubernetes"]["secrets"]
            .as_array()
            .expect("secrets")
            .contains(&serde_json::json!({"namespace": "kube-system", "name": "registry"})),
        "{}",
        state["kubernetes"]["secrets"]
    );
    let aws_state = &state["aws"];
    assert_eq!(aws_state["cluster"]["name"], "myeks5w");
    assert_eq!(aws_state["nodegroups"].as_array().map(Vec::len), Some(2));
    let rules: usize = aws_state["security_groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| g["rules"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(rules >= 10, "the groups' rules are read: {rules}");
    let kinds: std::collections::BTreeSet<&str> = state["kubernetes"]["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .filter_map(|o| o["kind"].as_str())
        .collect();
    for kind in [
        "Namespace",
        "Node",
        "DaemonSet",
        "Deployment",
        "Service",
        "ConfigMap",
        "Pod",
    ] {
        assert!(kinds.contains(kind), "{kind} in {kinds:?}");
    }
    drop(lab);

    // eval (and run, repl) start the embedded twin from the file too.
    let read = Runbook::new()
        .args(["eval", "[k8s::nodes().len(), eks::nodegroup(\"myeks5w\", \"gpu\").scaling_config.desired_size]", "--json", "--scenario"])
        .arg(format!("@{}", first.display()))
        .run()
        .expect_code(0);
    let read: Value = serde_json::from_str(&read.stdout()).expect("json");
    assert_eq!(read, serde_json::json!([2, 0]));

    let twin = LabServer::start_with("60", &["--scenario", &format!("@{}", first.display())]);
    let second = dir.path().join("again.json");
    capture(&twin, &second);
    let again = json(&second);
    assert_eq!(again["aws"], state["aws"], "the AWS side is the same");
    assert_eq!(
        again["kubernetes"], state["kubernetes"],
        "the Kubernetes side is the same"
    );
}

#[test]
fn a_lab_state_file_that_is_not_one_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("state.json");
    std::fs::write(&file, r#"{"format": "runbook.lab-state", "version": 9}"#).expect("written");
    let refused = Runbook::new()
        .args(["eval", "1", "--scenario"])
        .arg(format!("@{}", file.display()))
        .run()
        .expect_code(2);
    let text = refused.stderr();
    assert!(
        text.contains("state.json: lab-state version 9 is newer than this runbook reads (1)"),
        "{text}"
    );
    std::fs::write(&file, "{}").expect("written");
    let refused = Runbook::new()
        .args(["eval", "1", "--scenario"])
        .arg(format!("@{}", file.display()))
        .run()
        .expect_code(2);
    assert!(
        refused
            .stderr()
            .contains("is ``, not `runbook.lab-state`: write one with `runbook state capture`"),
        "{}",
        refused.stderr()
    );
}

/// A p5 group launched from an EFA launch template into a cluster placement group, with
/// NVIDIA's and the EFA device plugins, beside the lab's groups; no p5 node runs yet.
const P5_GROUP: &str = r#"
let g = eks::nodegroup("myeks5w", "gpu");
let labels = g.labels; labels.tier = "p5";
let node_sg = ec2::security_groups().filter(|s| s.group_name == "myeks5w-node")[0].group_id;
ec2::create_placement_group("p5-cluster", "cluster");
ec2::create_launch_template(#{ name: "p5-efa", placement_group: "p5-cluster", efa_interfaces: 32, security_groups: [node_sg] });
eks::create_nodegroup("myeks5w", #{ name: "p5", instance_type: "p5.48xlarge", ami_type: "AL2023_x86_64_NVIDIA",
    desired: 0, min: 0, max: 4, subnets: g.subnets, node_role: g.node_role, labels: labels, taints: g.taints,
    launch_template: "p5-efa" });
eks::wait_nodegroup_active("myeks5w", "p5");
let plugin = |name, image, selector| #{ apiVersion: "apps/v1", kind: "DaemonSet",
    metadata: #{ name: name, namespace: "kube-system" },
    spec: #{ selector: #{ matchLabels: #{ name: name } },
        template: #{ metadata: #{ labels: #{ name: name } },
            spec: #{ nodeSelector: selector,
                tolerations: [#{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
                containers: [#{ name: name, image: image }] } } } };
k8s::apply(plugin.call("nvidia-device-plugin-daemonset", "nvcr.io/nvidia/k8s-device-plugin:v0.17.1", #{}));
k8s::apply(plugin.call("efa-aws-efa-k8s-device-plugin",
    "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.20",
    #{ "node.kubernetes.io/instance-type": "p5.48xlarge" }));
"#;

/// The rehearsal of the captured p5 group: two nodes, each with 8 GPUs and 32 EFA devices,
/// in the placement group; back to 0 after.
const P5_REHEARSAL: &str = r#"
step("p5 scale-up", || {
    eks::scale_nodegroup("myeks5w", "p5", 2);
    k8s::wait_nodes(#{ labels: #{ tier: "p5" }, count: 2, timeout: "20m" });
    wait_until(#{ timeout: "5m", interval: "5s", what: "8 GPUs and 32 EFA devices on each p5 node" },
        || k8s::nodes(#{ tier: "p5" }).all(|n| n.allocatable["nvidia.com/gpu"] == "8"
            && n.allocatable["vpc.amazonaws.com/efa"] == "32"));
    let p5 = ec2::instances().filter(|i| i.instance_type == "p5.48xlarge" && i.state == "running");
    assert(p5.len() == 2 && p5.all(|i| i.placement_group == "p5-cluster" && i.efa_interfaces == 32), `${p5}`);
    print(`${p5.len()} p5.48xlarge in p5-cluster with 8 GPUs and 32 EFA devices each`);
});
eks::scale_nodegroup("myeks5w", "p5", 0);
"#;

#[test]
fn a_captured_p5_group_rehearses_with_its_gpus_efa_and_placement_group() {
    let lab = LabServer::start("600");
    let endpoint = lab.aws_endpoint();
    Runbook::new()
        .lab_env(&lab)
        .args(["eval", "--aws-endpoint", &endpoint, "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .arg(P5_GROUP)
        .run()
        .expect_code(0);
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("lab-state.json");
    capture(&lab, &file);
    drop(lab);
    let state = json(&file);
    let aws = &state["aws"];
    assert_eq!(aws["placement_groups"][0]["name"], "p5-cluster", "{aws}");
    assert_eq!(aws["placement_groups"][0]["strategy"], "cluster");
    let template = &aws["launch_templates"][0];
    assert_eq!(template["name"], "p5-efa");
    assert_eq!(template["placement_group"], "p5-cluster");
    assert_eq!(template["interfaces"].as_array().map(Vec::len), Some(32));
    let p5 = aws["nodegroups"]
        .as_array()
        .expect("node groups")
        .iter()
        .find(|n| n["name"] == "p5")
        .expect("the p5 group");
    assert_eq!(p5["launch_template"]["name"], "p5-efa");
    assert_eq!(p5["launch_template"]["id"], template["id"]);

    let scenario = format!("@{}", file.display());
    let rehearsal = dir.path().join("p5.rhai");
    std::fs::write(&rehearsal, P5_REHEARSAL).expect("write");
    let ran = Runbook::new()
        .arg("run")
        .arg(&rehearsal)
        .args(["--yes", "--progress", "never", "--scenario", &scenario])
        .run();
    let out = ran.stdout();
    assert!(
        out.contains("2 p5.48xlarge in p5-cluster with 8 GPUs and 32 EFA devices each"),
        "{out}\n{}",
        ran.stderr()
    );
    ran.expect_code(0);

    // Its plan prices the p5 instances; a $1 budget stops the scale-up before it is sent.
    let planned = Runbook::new()
        .arg("plan")
        .arg(&rehearsal)
        .args(["--scenario", &scenario])
        .run()
        .expect_code(0)
        .stdout();
    let priced = planned
        .lines()
        .filter(|l| l.contains(" p5.48xlarge ") && l.ends_with("(started by the run)"))
        .count();
    assert_eq!(priced, 2, "{planned}");
    let refused = Runbook::new()
        .arg("run")
        .arg(&rehearsal)
        .args(["--yes", "--max-cost-usd", "1", "--scenario", &scenario])
        .run()
        .expect_code(1)
        .stderr();
    assert!(
        refused
            .contains("it starts 2 x p5.48xlarge, billed for at least 60 s each ($1.83 together)"),
        "{refused}"
    );
}
