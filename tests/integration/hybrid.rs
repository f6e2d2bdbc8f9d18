//! The hybrid lab (`--scenario hybrid`, seed 004) as real clients see it, and its audit: every
//! rule of `runbooks/hybrid/audit.rhai` passes on the scenario and fails, alone, on a fault made
//! the way an operator would make it (kubectl, the aws CLI) against `lab serve`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::{LabServer, Runbook, aws_cli_available, kubectl, read_report, report_with};
use crate::with_snapshots;

const A100_HOST: &str = "mi-0a1b2c3d4e5f60201";
const CPU_HOST: &str = "mi-0a1b2c3d4e5f60101";

/// kubectl against the lab; `input` goes to its stdin (`apply -f -`). Asserts success.
fn kubectl_on(binary: &PathBuf, lab: &LabServer, args: &[&str], input: Option<&str>) -> String {
    let mut child = Command::new(binary)
        .arg("--kubeconfig")
        .arg(&lab.kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    if let Some(text) = input {
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(text.as_bytes())
            .expect("stdin");
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("kubectl ends");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "kubectl {}\n{stdout}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn aws_ok(lab: &LabServer, args: &[&str]) -> Value {
    let out = lab.aws(args);
    assert!(
        out.status.success(),
        "aws {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

#[test]
fn kubectl_and_the_aws_cli_see_the_hybrid_lab_as_a_real_one() {
    let Some(kubectl) = kubectl("1.35") else {
        return;
    };
    if !aws_cli_available() {
        return;
    }
    let lab = LabServer::start_with("60", &["--scenario", "hybrid"]);
    let k = |args: &[&str]| kubectl_on(&kubectl, &lab, args, None);

    let hybrid = k(&[
        "get",
        "nodes",
        "-l",
        "eks.amazonaws.com/compute-type=hybrid",
        "-o",
        "name",
    ]);
    assert_eq!(hybrid.lines().count(), 5, "{hybrid}");
    let wide = k(&["get", "nodes", "-L", "example.com/location", "--no-headers"]);
    assert_eq!(wide.matches(" onprem").count(), 5, "{wide}");
    assert_eq!(wide.matches(" cloud").count(), 2, "{wide}");
    assert!(wide.contains("v1.36.0-eks-0a1b2c3"), "{wide}");
    let version: Value = serde_json::from_str(&k(&["version", "-o", "json"])).expect("json");
    assert_eq!(version["serverVersion"]["minor"], "36");

    let described = k(&["describe", "node", A100_HOST]);
    for expected in [
        "eks.amazonaws.com/compute-type=hybrid:NoSchedule",
        "nvidia.com/mig-1g.5gb:  7",
        "eks-hybrid:///ap-northeast-2/myeks5w/mi-0a1b2c3d4e5f60201",
        "PodCIDR:",
    ] {
        assert!(described.contains(expected), "{expected} in\n{described}");
    }
    assert!(
        !described.contains("topology.kubernetes.io/zone"),
        "a hybrid node has no zone label by default:\n{described}"
    );
    let slices = k(&["get", "resourceslices"]);
    let header: Vec<&str> = slices
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "NODE", "DRIVER", "POOL", "AGE"],
        "{slices}"
    );
    assert!(
        slices.contains("mi-0a1b2c3d4e5f60203") && slices.contains("gpu.nvidia.com"),
        "{slices}"
    );
    let devices = k(&[
        "get",
        "resourceslices",
        "-o",
        "jsonpath={.items[0].spec.devices[*].name}",
    ]);
    assert_eq!(devices, "gpu-0 gpu-1");
    assert!(k(&["get", "deviceclass", "gpu.nvidia.com", "-o", "name"]).contains("gpu.nvidia.com"));
    // Pods on hybrid nodes take addresses from the remote pod network.
    let ips = k(&[
        "get",
        "pods",
        "-n",
        "gpu-operator",
        "-o",
        "jsonpath={.items[*].status.podIP}",
    ]);
    assert!(ips.split(' ').any(|ip| ip.starts_with("10.85.")), "{ips}");

    let cluster = aws_ok(&lab, &["eks", "describe-cluster", "--name", "myeks5w"]);
    assert_eq!(
        cluster["cluster"]["remoteNetworkConfig"]["remoteNodeNetworks"][0]["cidrs"][0],
        "10.80.0.0/16"
    );
    assert_eq!(cluster["cluster"]["version"], "1.36");
    let associations = aws_ok(
        &lab,
        &[
            "eks",
            "list-pod-identity-associations",
            "--cluster-name",
            "myeks5w",
        ],
    );
    assert_eq!(
        associations["associations"].as_array().map(Vec::len),
        Some(2),
        "{associations}"
    );
    let addon = aws_ok(
        &lab,
        &[
            "eks",
            "describe-addon",
            "--cluster-name",
            "myeks5w",
            "--addon-name",
            "eks-pod-identity-agent",
        ],
    );
    assert_eq!(
        addon["addon"]["configurationValues"],
        r#"{"daemonsets":{"hybrid":{"create":true}}}"#
    );

    // A cut link: after the node-monitor grace period the node is Unknown and tainted.
    lab.admin(&format!("faults?set=link-down={CPU_HOST}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let status = k(&["get", "node", CPU_HOST, "--no-headers"]);
        if status.contains("NotReady") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still {status}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let described = k(&["describe", "node", CPU_HOST]);
    for expected in [
        "node.kubernetes.io/unreachable:NoExecute",
        "node.kubernetes.io/unreachable:NoSchedule",
        "Kubelet stopped posting node status.",
        "NodeStatusUnknown",
    ] {
        assert!(described.contains(expected), "{expected} in\n{described}");
    }
}

/// One fault: what to do to the lab, and the one audit step it must fail.
struct Fault {
    step: &'static str,
    kubectl: &'static [&'static str],
    input: Option<&'static str>,
    aws: &'static [&'static str],
    /// Words the failure must hold.
    says: &'static [&'static str],
}

const STANDALONE_PLUGIN: &str = r#"{"apiVersion": "apps/v1", "kind": "DaemonSet",
 "metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": "kube-system"},
 "spec": {"selector": {"matchLabels": {"name": "nvidia-device-plugin"}},
  "template": {"metadata": {"labels": {"name": "nvidia-device-plugin"}},
   "spec": {"nodeSelector": {"nvidia.com/gpu.present": "true"}, "tolerations": [{"operator": "Exists"}],
    "containers": [{"name": "plugin", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"}]}}}}"#;

const MIG_80GB_POD: &str = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big-slice", "namespace": "default"},
 "spec": {"containers": [{"name": "train", "image": "nvcr.io/nvidia/pytorch:25.01-py3", "resources": {"limits": {"nvidia.com/mig-4g.40gb": 1}}}]}}"#;

const WHOLE_GPU_POD: &str = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "whole-gpu", "namespace": "default"},
 "spec": {"nodeSelector": {"nvidia.com/device-plugin.config": "l4-shared"},
  "tolerations": [{"operator": "Exists"}],
  "containers": [{"name": "infer", "image": "nvcr.io/nvidia/tritonserver:25.01-py3", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}"#;

const CONTRACTOR_BINDING: &str = r#"{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
 "metadata": {"name": "contractor-debug"},
 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "hybrid-node-debugger"},
 "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "contractor@example.com"}]}"#;

const FAULTS: &[Fault] = &[
    Fault {
        step: "hybrid node labels",
        kubectl: &[
            "label",
            "node",
            CPU_HOST,
            "topology.kubernetes.io/zone=ap-northeast-2a",
        ],
        input: None,
        aws: &[],
        says: &["an AWS availability zone", "real failure domains"],
    },
    Fault {
        step: "hybrid taint tolerated by infrastructure",
        kubectl: &[
            "patch",
            "daemonset",
            "nvidia-dcgm-exporter",
            "-n",
            "gpu-operator",
            "--type",
            "json",
            "-p",
            r#"[{"op": "replace", "path": "/spec/template/spec/tolerations", "value": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}]"#,
        ],
        input: None,
        aws: &[],
        says: &[
            "gpu-operator/nvidia-dcgm-exporter does not tolerate",
            "CNI, DNS and GPU",
        ],
    },
    Fault {
        step: "CoreDNS on both sides",
        kubectl: &[
            "patch",
            "deployment",
            "coredns",
            "-n",
            "kube-system",
            "--type",
            "json",
            "-p",
            r#"[{"op": "remove", "path": "/spec/template/spec/topologySpreadConstraints"}]"#,
        ],
        input: None,
        aws: &[],
        says: &[
            "no topologySpreadConstraint on example.com/location",
            "minDomains 2",
        ],
    },
    Fault {
        step: "add-on placement",
        kubectl: &[
            "patch",
            "deployment",
            "aws-load-balancer-controller",
            "-n",
            "kube-system",
            "-p",
            r#"{"spec": {"template": {"spec": {"nodeSelector": {"example.com/location": "onprem"}}}}}"#,
        ],
        input: None,
        aws: &[],
        says: &[
            "load balancer controller pod",
            "webhook mpod.elbv2.k8s.aws",
            "belong on cloud nodes",
        ],
    },
    Fault {
        step: "hybrid add-on versions",
        kubectl: &[],
        input: None,
        aws: &[
            "eks",
            "update-addon",
            "--cluster-name",
            "myeks5w",
            "--addon-name",
            "eks-node-monitoring-agent",
            "--addon-version",
            "v1.1.2-eksbuild.1",
        ],
        says: &["eks-node-monitoring-agent is v1.1.2-eksbuild.1, below 1.2.0-eksbuild.1"],
    },
    Fault {
        step: "Karpenter version for the cluster",
        kubectl: &[
            "set",
            "image",
            "deployment/karpenter",
            "-n",
            "kube-system",
            "karpenter=public.ecr.aws/karpenter/controller:1.12.4",
        ],
        input: None,
        aws: &[],
        says: &[
            "Karpenter 1.12.4 (kube-system/karpenter) is older than 1.13.0",
            "1.37 needs 1.15.x",
        ],
    },
    Fault {
        step: "one GPU allocation manager per GPU",
        kubectl: &["apply", "-f", "-"],
        input: Some(STANDALONE_PLUGIN),
        aws: &[],
        says: &[
            "has 2 allocation managers",
            "standalone device plugin",
            "DRA driver gpu.nvidia.com",
        ],
    },
    Fault {
        step: "MIG profiles",
        kubectl: &["apply", "-f", "-"],
        input: Some(MIG_80GB_POD),
        aws: &[],
        says: &[
            "default/big-slice requests nvidia.com/mig-4g.40gb",
            "A100 80GB",
        ],
    },
    Fault {
        step: "time-slicing",
        kubectl: &["apply", "-f", "-"],
        input: Some(WHOLE_GPU_POD),
        aws: &[],
        says: &[
            "default/whole-gpu requests nvidia.com/gpu",
            "only nvidia.com/gpu.shared",
        ],
    },
    Fault {
        step: "hybrid observability",
        kubectl: &["delete", "daemonset", "dcgm-exporter", "-n", "monitoring"],
        input: None,
        aws: &[],
        says: &[
            "GPU node mi-0a1b2c3d4e5f60203 runs no DCGM exporter",
            "no EC2 IMDS",
        ],
    },
    Fault {
        step: "Pod Identity on hybrid nodes",
        kubectl: &[
            "delete",
            "daemonset",
            "eks-pod-identity-agent-hybrid",
            "-n",
            "kube-system",
        ],
        input: None,
        aws: &[],
        says: &["runs no eks-pod-identity-agent-hybrid pod", "six steps"],
    },
    Fault {
        step: "endpoint reachability",
        kubectl: &[],
        input: None,
        aws: &[
            "ec2",
            "revoke-security-group-ingress",
            "--group-id",
            "sg-0abc5678",
            "--security-group-rule-ids",
            "sgr-0c00000000000003",
        ],
        says: &[
            "session A, kubelets 10.80.0.0/16 -> API 443 is blocked",
            "private endpoint",
        ],
    },
    Fault {
        step: "RBAC review",
        kubectl: &["apply", "-f", "-"],
        input: Some(CONTRACTOR_BINDING),
        aws: &[],
        says: &[
            "User:contractor@example.com can get nodes/proxy",
            "not read-only",
        ],
    },
];

/// Runs the audit against the lab (read-only) and returns its report.
fn audit(lab: &LabServer) -> Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    Runbook::new()
        .lab_env(lab)
        .args([
            "run",
            "runbooks/hybrid/audit.rhai",
            "--read-only",
            "--progress",
            "never",
            "--kubeconfig",
        ])
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint(), "--report"])
        .arg(&report)
        .run();
    read_report(&report)
}

/// `(name, error)` of the audit's failed steps.
fn failed_steps(report: &Value) -> Vec<(String, String)> {
    report["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["status"] == "failed")
        .map(|s| {
            (
                s["name"].as_str().unwrap_or_default().to_string(),
                s["error"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_audit_rule_passes_on_the_hybrid_lab_and_fails_alone_on_its_fault() {
    let Some(kubectl) = kubectl("1.35") else {
        return;
    };
    if !aws_cli_available() {
        return;
    }
    let lab = LabServer::start_with("60", &["--scenario", "hybrid"]);
    let clean = audit(&lab);
    assert_eq!(clean["status"], "passed", "{:?}", failed_steps(&clean));
    assert_eq!(clean["steps"].as_array().map(Vec::len), Some(13));
    drop(lab);

    for fault in FAULTS {
        let lab = LabServer::start_with("60", &["--scenario", "hybrid"]);
        if !fault.kubectl.is_empty() {
            kubectl_on(&kubectl, &lab, fault.kubectl, fault.input);
        }
        if !fault.aws.is_empty() {
            aws_ok(&lab, fault.aws);
        }
        // Let controllers act on it (a rollout's new pods start 3 s later on the twin's clock).
        lab.admin("advance?by=30s");
        let report = audit(&lab);
        let failed = failed_steps(&report);
        let names: Vec<&str> = failed.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, [fault.step], "{:?}", failed);
        for words in fault.says {
            assert!(failed[0].1.contains(words), "`{words}` in: {}", failed[0].1);
        }
    }
}

#[test]
fn run_with_irsa_is_added_to_the_cloudwatch_agent_without_losing_its_entries() {
    let Some(kubectl) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("60", &["--scenario", "hybrid"]);
    // Someone replaced the list: RUN_WITH_IRSA is gone, the other entries stay.
    kubectl_on(
        &kubectl,
        &lab,
        &[
            "patch",
            "amazoncloudwatchagent",
            "cloudwatch-agent",
            "-n",
            "amazon-cloudwatch",
            "--type",
            "json",
            "-p",
            r#"[{"op": "remove", "path": "/spec/env/3"}]"#,
        ],
        None,
    );
    let report = audit(&lab);
    let failed = failed_steps(&report);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0].1.contains("no RUN_WITH_IRSA=True"),
        "{}",
        failed[0].1
    );
    let fixed = Runbook::new()
        .lab_env(&lab)
        .args(["eval", "--json", r#"import "hybrid_gpu" as g; g::add_run_with_irsa("amazon-cloudwatch", "cloudwatch-agent")"#, "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint()])
        .run()
        .expect_code(0);
    let names: Value = serde_json::from_str(fixed.stdout().trim()).expect("json");
    assert_eq!(
        names,
        serde_json::json!(["K8S_NODE_NAME", "HOST_IP", "K8S_NAMESPACE", "RUN_WITH_IRSA"])
    );
    assert_eq!(audit(&lab)["status"], "passed");
}

/// `runbook eval --json` of a script with more arguments (the scenario, faults): its answer.
fn eval_json(extra: &[&str], script: &str) -> Value {
    let out = Runbook::new()
        .args(["eval", "--json"])
        .args(extra)
        .arg(script)
        .run()
        .expect_code(0);
    serde_json::from_str(out.stdout().trim()).expect("json")
}

/// A metric's value in a run's report.
fn metric_of(report: &Value, name: &str) -> Option<Value> {
    report["metrics"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["name"] == name)
        .map(|m| m["value"].clone())
}

#[test]
fn the_link_loss_drill_times_the_eviction_and_nothing_moves_back() {
    let report = report_with(
        "runbooks/hybrid/link-loss.rhai",
        &["--scenario", "hybrid"],
        0,
    );
    let steps = report["steps"].as_array().expect("steps");
    assert_eq!(
        steps[2]["virtual_ms"], 50_000,
        "Unknown after the 50 s grace period"
    );
    let metric = |name: &str| metric_of(&report, name);
    assert_eq!(metric("node_unknown_after_seconds"), Some(50.0.into()));
    assert_eq!(
        metric("pods_evicted_after_seconds"),
        Some(350.0.into()),
        "50 s to Unknown, then the default 300 s toleration"
    );
    for snapshot in report["snapshots"].as_array().expect("snapshots") {
        assert_eq!(snapshot["outcome"], "matched", "{snapshot}");
    }
    with_snapshots!({ insta::assert_json_snapshot!("hybrid-link-loss", report) });
}

#[test]
fn the_twins_meter_bills_hybrid_nodes_by_the_vcpu_hour() {
    let billed = eval_json(
        &["--scenario", "hybrid"],
        r#"sleep("1h"); let hybrid = cost::report().lines.filter(|l| l.kind.starts_with("eks-hybrid-node")); #{ nodes: hybrid.len(), per_hour: hybrid.map(|l| l.usd_per_hour).reduce(|a, b| a + b, 0.0), running: hybrid.all(|l| l.running) }"#,
    );
    assert_eq!(billed["nodes"], 5);
    assert_eq!(billed["running"], true);
    // Five hosts of 32 vCPUs at $0.020 a vCPU-hour: $3.20 an hour, $28,032 a year of 8,760 hours,
    // half the seed's $56,064 for ten such nodes.
    let per_hour = billed["per_hour"].as_f64().expect("a number");
    assert!((per_hour - 3.2).abs() < 1e-9, "{per_hour}");
    assert!((per_hour * 8760.0 - 28_032.0).abs() < 1e-6);
}

#[test]
fn the_burst_drill_waits_out_the_quota_bursts_to_the_limit_and_cleans_up() {
    let report = report_with("runbooks/hybrid/burst.rhai", &["--scenario", "hybrid"], 0);
    for snapshot in report["snapshots"].as_array().expect("snapshots") {
        assert_eq!(snapshot["outcome"], "matched", "{snapshot}");
    }
    let metric = |name: &str| metric_of(&report, name);
    assert_eq!(
        metric("burst_nodes").and_then(|v| v.as_f64()),
        Some(4.0),
        "8 vCPUs of limit: four t3.medium"
    );
    let defers = report["defers"].as_array().expect("defers");
    assert!(defers.iter().all(|d| d["status"] == "passed"), "{defers:?}");
    with_snapshots!({ insta::assert_json_snapshot!("hybrid-burst", report) });
}

#[test]
fn a_subnet_out_of_addresses_keeps_a_burst_pending_with_ec2s_reason() {
    let answer = eval_json(
        &["--scenario", "hybrid", "--fault", "subnet-ips-exhausted=on"],
        r#"k8s::apply(#{ apiVersion: "v1", kind: "Pod", metadata: #{ name: "burst", namespace: "default" },
                spec: #{ nodeSelector: #{ "karpenter.sh/nodepool": "cloud-burst-pool" },
                         tolerations: [#{ key: "example.com/burst", operator: "Exists" }],
                         containers: [#{ name: "app", image: "nginx", resources: #{ requests: #{ cpu: "500m" } } }] } });
               sleep("5s");
               let claim = k8s::list("NodeClaim")[0];
               #{ launched: claim.status.conditions.filter(|c| c.type == "Launched")[0], pod: k8s::get("Pod", "burst", "default").status.phase }"#,
    );
    assert_eq!(answer["pod"], "Pending");
    assert_eq!(answer["launched"]["status"], "False");
    assert_eq!(
        answer["launched"]["reason"],
        "InsufficientFreeAddressesInSubnet"
    );
    assert!(
        answer["launched"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not enough free addresses in subnet")),
        "{answer}"
    );
}

#[test]
fn the_pod_identity_agents_hybrid_daemonset_follows_the_add_ons_settings() {
    let Some(kubectl) = kubectl("1.35") else {
        return;
    };
    if !aws_cli_available() {
        return;
    }
    let lab = LabServer::start_with("60", &["--scenario", "hybrid"]);
    let update = |settings: &str| {
        aws_ok(
            &lab,
            &[
                "eks",
                "update-addon",
                "--cluster-name",
                "myeks5w",
                "--addon-name",
                "eks-pod-identity-agent",
                "--configuration-values",
                settings,
            ],
        );
        lab.admin("advance?by=30s");
    };
    let hybrid_daemonsets = || {
        kubectl_on(
            &kubectl,
            &lab,
            &["get", "daemonsets", "-n", "kube-system", "-o", "name"],
            None,
        )
        .lines()
        .filter(|l| l.ends_with("eks-pod-identity-agent-hybrid"))
        .count()
    };
    assert_eq!(hybrid_daemonsets(), 1);
    update("{}");
    assert_eq!(hybrid_daemonsets(), 0, "settings without it remove it");
    let failed = failed_steps(&audit(&lab));
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0].1.contains("do not create the hybrid DaemonSet")
            && failed[0]
                .1
                .contains("runs no eks-pod-identity-agent-hybrid pod"),
        "{}",
        failed[0].1
    );
    update(r#"{"daemonsets":{"hybrid":{"create":true}}}"#);
    assert_eq!(
        hybrid_daemonsets(),
        1,
        "the add-on's setting brings it back"
    );
    assert_eq!(audit(&lab)["status"], "passed");
}

#[test]
fn a_capture_of_a_hybrid_cluster_keeps_its_networks_settings_and_associations() {
    let lab = LabServer::start_with("60", &["--scenario", "hybrid"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("lab-state.json");
    Runbook::new()
        .lab_env(&lab)
        .args(["state", "capture", "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint(), "-o"])
        .arg(&file)
        .run()
        .expect_code(0);
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("written")).expect("json");
    let cluster = &state["aws"]["cluster"];
    assert_eq!(cluster["remote_network"]["node_cidrs"][0], "10.80.0.0/16");
    assert_eq!(cluster["remote_network"]["pod_cidrs"][0], "10.85.0.0/16");
    assert_eq!(
        cluster["pod_identity_associations"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    let agent = cluster["addons"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["name"] == "eks-pod-identity-agent")
        .expect("the agent");
    assert_eq!(
        agent["configuration_values"],
        r#"{"daemonsets":{"hybrid":{"create":true}}}"#
    );
    // A twin of the capture answers with them.
    let scenario = format!("@{}", file.display());
    let answer = eval_json(
        &["--scenario", &scenario],
        r#"#{ remote: eks::cluster("myeks5w").remote_network_config, associations: eks::pod_identity_associations("myeks5w").len(), hybrid_nodes: k8s::nodes(#{ "eks.amazonaws.com/compute-type": "hybrid" }).len() }"#,
    );
    assert_eq!(answer["remote"]["remote_pod_networks"][0], "10.85.0.0/16");
    assert_eq!(answer["associations"], 2);
    assert_eq!(answer["hybrid_nodes"], 5);
}
