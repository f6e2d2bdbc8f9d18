//! NVLink and EFA on the twin: a p5 node's eight H100s through nvidia-smi and the project's
//! parsers, and NCCL across two p5 nodes over sockets (a fallback a drill must catch), over EFA
//! only once the EFA device plugin runs and the security group lets EFA through both ways, and
//! broken again when the self rule goes.

use crate::support::{Runbook, eval_json, helm_available};

/// Two p5.48xlarge nodes with the GPU Operator, beside the lab's GPU group, launched from a
/// template with 32 EFA interfaces into a cluster placement group.
const TWO_P5_NODES: &str = r#"
import "gpu" as gpu;
let g = eks::nodegroup("myeks5w", "gpu");
let labels = g.labels; labels.tier = "p5";
let node_sg = ec2::security_groups().filter(|s| s.group_name == "myeks5w-node")[0].group_id;
ec2::create_placement_group("p5-cluster", "cluster");
ec2::create_launch_template(#{ name: "p5-efa", placement_group: "p5-cluster", efa_interfaces: 32, security_groups: [node_sg] });
eks::create_nodegroup("myeks5w", #{ name: "p5", instance_type: "p5.48xlarge", ami_type: "AL2023_x86_64_NVIDIA",
    desired: 0, min: 0, max: 4, subnets: g.subnets, node_role: g.node_role, labels: labels, taints: g.taints,
    launch_template: "p5-efa" });
eks::wait_nodegroup_active("myeks5w", "p5");
eks::scale_nodegroup("myeks5w", "p5", 2);
k8s::wait_nodes(#{ labels: #{ tier: "p5" }, count: 2 });
helm::apply(gpu::render_gpu_operator(#{ chart: "charts/gpu-operator", chart_version: "" }, true), #{ namespace: "gpu-operator", wait: "10m" });
wait_until(#{ timeout: "5m", interval: "5s", what: "the device plugin on each p5 node" },
    || k8s::nodes(#{ tier: "p5" }).all(|n| n.allocatable["nvidia.com/gpu"] != ()));
let run = |efa| nccl::all_reduce(#{ selector: "tier=p5", nodes: 2, gpus_per_node: 8, efa_per_node: efa,
    min_bytes: "1G", max_bytes: "16G", timeout: "15m", algorithm: "Ring" });
let brief = |r| #{ status: r.status, network: r.network, peak: r.peak_busbw, ranks: r.ranks.len(),
    summary: r.summary, errors: r.errors, warnings: r.warnings, ofi: r.ofi_version, algorithm: r.algorithm };
"#;

/// The EFA device plugin as eks-charts' aws-efa-k8s-device-plugin chart deploys it (release
/// `efa` in kube-system), on the p5 nodes.
const EFA_PLUGIN: &str = r#"
k8s::apply(#{ apiVersion: "apps/v1", kind: "DaemonSet",
    metadata: #{ name: "efa-aws-efa-k8s-device-plugin", namespace: "kube-system" },
    spec: #{ selector: #{ matchLabels: #{ name: "efa-aws-efa-k8s-device-plugin" } },
        template: #{ metadata: #{ labels: #{ name: "efa-aws-efa-k8s-device-plugin" } },
            spec: #{ hostNetwork: true, priorityClassName: "system-node-critical",
                nodeSelector: #{ "node.kubernetes.io/instance-type": "p5.48xlarge" },
                tolerations: [#{ key: "CriticalAddonsOnly", operator: "Exists" }, #{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
                containers: [#{ name: "aws-efa-k8s-device-plugin",
                    image: "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.20" }] } } } });
wait_until(#{ timeout: "5m", interval: "5s", what: "32 EFA devices on each p5 node" },
    || k8s::nodes(#{ tier: "p5" }).all(|n| n.allocatable["vpc.amazonaws.com/efa"] == "32"));
"#;

#[test]
fn a_p5_node_shows_eight_h100s_on_nvlink_through_nvidia_smi() {
    if !helm_available() {
        return;
    }
    let seen = eval_json(&format!(
        r#"{TWO_P5_NODES}
let answers = nvml::query(#{{ nodes: #{{ tier: "p5" }} }});
let eights = k8s::nodes(#{{ tier: "p5" }}).map(|n| n.allocatable["nvidia.com/gpu"]);
k8s::apply(#{{ apiVersion: "v1", kind: "Pod", metadata: #{{ name: "smi", namespace: "default" }},
    spec: #{{ nodeSelector: #{{ tier: "p5" }}, tolerations: [#{{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }}],
        containers: [#{{ name: "cuda", image: "nvidia/cuda:12.9.0-base-ubuntu24.04", command: ["sleep", "infinity"],
            resources: #{{ limits: #{{ "nvidia.com/gpu": "8" }} }} }}] }} }});
wait_until(#{{ timeout: "2m", interval: "2s", what: "the probe pod running" }},
    || k8s::pods(#{{ namespace: "default" }}).filter(|p| p.name == "smi" && p.phase == "Running").len() == 1);
#{{ eights: eights, errors: answers.map(|a| a.error), names: answers[0].gpus.map(|g| g.name), memory: answers[0].gpus.map(|g| g["memory.total"]),
   topo: k8s::exec("smi", ["nvidia-smi", "topo", "-m"]).stdout,
   links: k8s::exec("smi", ["nvidia-smi", "nvlink", "-s"]).stdout,
   placed: ec2::instances().filter(|i| i.nodegroup == "p5").map(|i| [i.placement_group, i.efa_interfaces]) }}"#
    ));
    assert_eq!(seen["eights"], serde_json::json!(["8", "8"]));
    assert_eq!(
        seen["placed"],
        serde_json::json!([["p5-cluster", 32], ["p5-cluster", 32]])
    );
    assert_eq!(seen["errors"], serde_json::json!([null, null]));
    assert_eq!(seen["names"].as_array().map(Vec::len), Some(8));
    assert!(
        seen["names"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n == "NVIDIA H100 80GB HBM3")
    );
    assert!(
        seen["memory"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m == 81559)
    );
    let topo = seen["topo"].as_str().unwrap_or_default();
    assert!(topo.contains("GPU0\t X \tNV18\tNV18"), "{topo}");
    assert!(topo.contains("0-47,96-143\t0"), "{topo}");
    let links = seen["links"].as_str().unwrap_or_default();
    assert_eq!(links.matches("26.562 GB/s").count(), 8 * 18, "{links}");
}

#[test]
fn nccl_across_p5_nodes_uses_efa_only_with_its_plugin_and_self_rules_and_falls_back_to_sockets() {
    if !helm_available() {
        return;
    }
    let seen = eval_json(&format!(
        r#"{TWO_P5_NODES}
let sockets = brief.call(run.call(0));
let no_plugin = brief.call(run.call(32));
{EFA_PLUGIN}
let no_self_rule = brief.call(run.call(32));
let ingress = ec2::authorize(node_sg, #{{ direction: "ingress", protocol: "all", source: "self", description: "EFA: all traffic from the group itself" }});
let egress = ec2::authorize(node_sg, #{{ direction: "egress", protocol: "all", source: "self", description: "EFA: all traffic to the group itself" }});
let efa = brief.call(run.call(32));
ec2::revoke(node_sg, egress);
let blocked = brief.call(run.call(32));
#{{ sockets: sockets, no_plugin: no_plugin, no_self_rule: no_self_rule, efa: efa, blocked: blocked }}"#
    ));
    let run = |name: &str| &seen[name];
    // Without EFA devices NCCL goes over the pods' eth0: it works, two orders of magnitude slow.
    assert_eq!(run("sockets")["status"], "ok", "{}", run("sockets"));
    assert_eq!(run("sockets")["network"], "Socket");
    assert_eq!(run("sockets")["ranks"], 16);
    let socket_peak = run("sockets")["peak"].as_f64().unwrap_or_default();
    assert!((5.0..15.0).contains(&socket_peak), "{socket_peak}");
    // Asking for EFA without the device plugin: the workers never schedule.
    assert_eq!(run("no_plugin")["status"], "error");
    let why = run("no_plugin")["summary"].as_str().unwrap_or_default();
    assert!(why.contains("Insufficient vpc.amazonaws.com/efa"), "{why}");
    // EFA devices, but the node group's security group only lets TCP in from itself: the
    // handshake over EFA never completes and aws-ofi-nccl reports error 4126.
    assert_ne!(run("no_self_rule")["status"], "ok");
    let failure = run("no_self_rule").to_string();
    assert!(
        failure.contains("Error: 4126 (Unresponsive receiver"),
        "{failure}"
    );
    assert_eq!(run("no_self_rule")["network"], "Libfabric");
    // With both self rules NCCL runs over EFA at the published 2x p5 bus bandwidth.
    assert_eq!(run("efa")["status"], "ok", "{}", run("efa"));
    assert_eq!(run("efa")["network"], "Libfabric");
    let efa_peak = run("efa")["peak"].as_f64().unwrap_or_default();
    assert!((440.0..500.0).contains(&efa_peak), "{efa_peak}");
    assert!(efa_peak > 40.0 * socket_peak);
    // The release a baseline is kept by, and the ring every rank was asked for, as NCCL's and
    // aws-ofi-nccl's INFO lines say them.
    assert_eq!(run("efa")["ofi"], "1.13.2-aws");
    assert_eq!(run("efa")["algorithm"], "Ring");
    // Taking the egress self rule away breaks it again, even with egress 0.0.0.0/0 in place.
    assert_ne!(run("blocked")["status"], "ok");
    assert!(run("blocked").to_string().contains("4126"));
}

#[test]
fn faults_on_one_gpu_of_an_eight_gpu_node_are_judged_on_that_gpu() {
    if !helm_available() {
        return;
    }
    // The lab's own GPU group is at 0, so the p5 nodes are gpu0 and gpu1.
    let script = format!(
        r#"{TWO_P5_NODES}
let verdicts = gpu::health(#{{ nodes: #{{ tier: "p5" }}, instance_type: "p5.48xlarge" }});
#{{ verdicts: verdicts.map(|v| #{{ verdict: v.verdict, reasons: v.reasons }}),
   allocatable: k8s::nodes(#{{ tier: "p5" }}).map(|n| n.allocatable["nvidia.com/gpu"]) }}"#
    );
    let out = Runbook::new()
        .args([
            "eval",
            "--json",
            "--fault",
            "gpu-missing=gpu0/5",
            "--fault",
            "gpu-xid=gpu1/3:79",
            "--fault",
            "nvlink-down=gpu0/2",
        ])
        .arg(&script)
        .run()
        .expect_code(0);
    let seen: serde_json::Value = serde_json::from_str(&out.stdout()).expect("JSON");
    // The device plugin offers 7 of 8 on the first (one off the bus) and 7 on the second (one lost).
    assert_eq!(seen["allocatable"], serde_json::json!(["7", "7"]), "{seen}");
    let verdicts = seen["verdicts"].as_array().expect("verdicts");
    assert_eq!(verdicts.len(), 2);
    for verdict in verdicts {
        assert_ne!(verdict["verdict"], "HEALTHY", "{verdict}");
    }
    let said = seen["verdicts"].to_string();
    assert!(
        said.contains('7') && said.contains('8'),
        "the missing GPU is counted: {said}"
    );
    assert!(said.contains("79"), "the Xid 79 is named: {said}");
    // GPU 2's NVLinks, read from nvidia-smi nvlink -s against the catalog's 18 per H100.
    assert!(
        said.contains("RESET (GPU 2): nvlink: 0 of 18 NVLinks active (inactive: 0, 1, 2"),
        "the links down are named: {said}"
    );
}

#[test]
fn a_node_group_without_efa_interfaces_in_its_launch_template_gets_no_efa_devices() {
    if !helm_available() {
        return;
    }
    // The same p5 nodes with a template that attaches no EFA interface: the device plugin
    // runs and finds nothing, so workers that ask for EFA stay Pending.
    let script = TWO_P5_NODES.replace("efa_interfaces: 32", "efa_interfaces: 0");
    let seen = eval_json(&format!(
        r#"{script}
{plugin}
let r = run.call(32);
#{{ status: r.status, summary: r.summary, efa: k8s::nodes(#{{ tier: "p5" }}).map(|n| n.allocatable["vpc.amazonaws.com/efa"]),
   placed: ec2::instances().filter(|i| i.nodegroup == "p5").map(|i| i.efa_interfaces) }}"#,
        plugin = EFA_PLUGIN.replace(
            "n.allocatable[\"vpc.amazonaws.com/efa\"] == \"32\"",
            "k8s::pods(#{ namespace: \"kube-system\" }).filter(|p| p.name.starts_with(\"efa-\") && p.phase == \"Running\").len() == 2"
        ),
    ));
    assert_eq!(seen["placed"], serde_json::json!([0, 0]), "{seen}");
    assert_eq!(seen["efa"], serde_json::json!([null, null]), "{seen}");
    assert_eq!(seen["status"], "error", "{seen}");
    let why = seen["summary"].as_str().unwrap_or_default();
    assert!(why.contains("Insufficient vpc.amazonaws.com/efa"), "{why}");
}

#[test]
fn kubectl_sees_eight_gpus_and_thirty_two_efa_devices_on_a_p5_node() {
    let Some(binary) = crate::support::kubectl("1.35") else {
        return;
    };
    let lab = crate::support::LabServer::start("600");
    let endpoint = lab.aws_endpoint();
    // The p5 group from a template with 32 EFA interfaces, NVIDIA's device plugin standalone
    // (no helm here) and the EFA device plugin.
    let script = format!(
        r#"{}
k8s::apply(#{{ apiVersion: "apps/v1", kind: "DaemonSet",
    metadata: #{{ name: "nvidia-device-plugin-daemonset", namespace: "kube-system" }},
    spec: #{{ selector: #{{ matchLabels: #{{ name: "nvidia-device-plugin-ds" }} }},
        template: #{{ metadata: #{{ labels: #{{ name: "nvidia-device-plugin-ds" }} }},
            spec: #{{ tolerations: [#{{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }}],
                containers: [#{{ name: "nvidia-device-plugin-ctr", image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.1" }}] }} }} }} }});
{EFA_PLUGIN}
k8s::nodes(#{{ tier: "p5" }}).len()"#,
        TWO_P5_NODES
            .split("helm::apply")
            .next()
            .expect("the p5 group comes first")
            .replace("import \"gpu\" as gpu;", "")
    );
    let out = Runbook::new()
        .lab_env(&lab)
        .args(["eval", "--aws-endpoint", &endpoint, "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .arg(&script)
        .run()
        .expect_code(0);
    assert_eq!(out.stdout().trim(), "2");
    let output = std::process::Command::new(&binary)
        .arg("--kubeconfig")
        .arg(&lab.kubeconfig)
        .args([
            "get",
            "nodes",
            "-l",
            "tier=p5",
            "-o",
            r#"jsonpath={range .items[*]}{.status.allocatable.nvidia\.com/gpu} {.status.allocatable.vpc\.amazonaws\.com/efa}{"\n"}{end}"#,
        ])
        .output()
        .expect("kubectl runs");
    let seen = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(seen, "8 32\n8 32\n");
}

#[test]
fn a_p5_node_whose_nvswitch_fabric_never_registered_is_rebooted_and_its_peer_passes() {
    if !helm_available() {
        return;
    }
    // The p5 nodes are gpu0 and gpu1 (the lab's own GPU group is at 0).
    let script = format!(
        r#"{TWO_P5_NODES}
let verdicts = gpu::health(#{{ nodes: #{{ tier: "p5" }}, level: 0, instance_type: "p5.48xlarge" }});
verdicts.map(|v| #{{ verdict: v.verdict, reasons: v.reasons,
    fabric: v.findings.filter(|f| f.check == "nvswitch_fabric").map(|f| f.observed) }})"#
    );
    let out = Runbook::new()
        .args(["eval", "--json", "--fault", "fabric-down=gpu0"])
        .arg(&script)
        .run()
        .expect_code(0);
    let seen: serde_json::Value = serde_json::from_str(&out.stdout()).expect("JSON");
    assert_eq!(seen[0]["verdict"], "REBOOT", "{seen}");
    assert_eq!(
        seen[0]["reasons"][0], "REBOOT (GPU 0): nvswitch_fabric: fabric Not Started, status N/A",
        "{seen}"
    );
    assert_eq!(seen[0]["fabric"].as_array().map(Vec::len), Some(8));
    assert_eq!(seen[1]["verdict"], "HEALTHY", "{seen}");
    assert_eq!(seen[1]["fabric"][7], "fabric Completed, status Success");
}
