//! runbooks/gate.rhai against `lab serve`: two new GPU nodes join behind the gate's taint (their
//! node group's taints set it), one with a lost GPU; observe mode changes nothing, then the gate
//! releases the good node (kubectl sees the taint gone, its birth certificate kept) and isolates
//! the bad one (cordoned, tainted and labelled with its verdict), the known-good node untouched.

use crate::support::{LabServer, Runbook, helm_available, kubectl, kubectl_run};

/// A second GPU node group whose nodes join with the gate's taint, beside the lab's GPU group
/// at one node (the known-good one), the GPU operator installed; answers the gated nodes.
const NEW_NODES: &str = r#"
import "gpu" as gpu;
let g = eks::nodegroup("myeks5w", "gpu");
let taints = g.taints;
taints.push(#{ key: "runbook.dev/gate", value: "pending" });
eks::create_nodegroup("myeks5w", #{ name: "gpu-new", instance_type: "g5.xlarge", ami_type: "AL2023_x86_64_NVIDIA",
    desired: 0, min: 0, max: 2, subnets: g.subnets, node_role: g.node_role, labels: g.labels, taints: taints });
eks::wait_nodegroup_active("myeks5w", "gpu-new");
eks::scale_nodegroup("myeks5w", "gpu", 1);
eks::scale_nodegroup("myeks5w", "gpu-new", 2);
k8s::wait_nodes(#{ labels: #{ tier: "gpu" }, count: 3, timeout: "20m" });
helm::apply(gpu::render_gpu_operator(#{ chart: "charts/gpu-operator", chart_version: "" }, true), #{ namespace: "gpu-operator", wait: "10m" });
let gated = k8s::nodes(#{ tier: "gpu" }).filter(|n| n.taints.some(|t| t.key == "runbook.dev/gate")).map(|n| n.name);
gated.sort();
gated
"#;

#[test]
fn the_gate_releases_a_good_new_node_and_isolates_a_bad_one_through_kubectls_eyes() {
    if !helm_available() {
        return;
    }
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("600", &[]);
    let endpoint = lab.aws_endpoint();
    let made = Runbook::new()
        .lab_env(&lab)
        .args(["eval", "--aws-endpoint", &endpoint, "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .arg(NEW_NODES)
        .run()
        .expect_code(0)
        .stdout();
    // eval prints an array a line per item: `- NAME`.
    let gated: Vec<&str> = made.lines().filter_map(|l| l.strip_prefix("- ")).collect();
    assert_eq!(gated.len(), 2, "{made}");
    let (good, bad) = (gated[0], gated[1]);
    lab.admin(&format!("faults?set=gpu-xid={bad}:79"));
    let dir = tempfile::tempdir().expect("temp dir");
    let history = dir.path().join("history");
    let gate = |extra: &[&str]| {
        let ran = Runbook::new()
            .lab_env(&lab)
            .args(["run", "--yes", "runbooks/gate.rhai", "--progress", "never"])
            .args(["--aws-endpoint", &endpoint, "--kubeconfig"])
            .arg(&lab.kubeconfig)
            .arg("--history")
            .arg(&history)
            .args(extra)
            .run();
        (ran.code(), format!("{}{}", ran.stdout(), ran.stderr()))
    };
    let node = |name: &str| {
        let (code, out, err) = kubectl_run(
            &binary,
            &lab,
            &[
                "get",
                "node",
                name,
                "-o",
                "jsonpath={.spec.unschedulable}|{.spec.taints[*].key}|{.metadata.labels.runbook\\.dev/gpu-health}",
            ],
        );
        assert_eq!(code, 0, "{err}");
        out
    };
    let gated_state = "|nvidia.com/gpu runbook.dev/gate|";

    let (code, out) = gate(&["--set", "mode=observe"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "2 node(s) at the gate, 2 checked by this run; 1 known-good node(s) to pair with"
        ),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "{good}: would be released (observe mode: nothing done)"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "{bad}: would be isolated as REBOOT (observe mode: nothing done)"
        )),
        "{out}"
    );
    assert_eq!(node(good), gated_state, "observe mode changes nothing");
    assert_eq!(node(bad), gated_state, "observe mode changes nothing");

    let (code, out) = gate(&[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!("{good} + ")),
        "the good node ran beside the known-good one: {out}"
    );
    assert!(out.contains(&format!("{good}: released")), "{out}");
    assert!(
        out.contains(&format!("{bad}: isolated as REBOOT until ")),
        "{out}"
    );
    assert!(out.contains("1 released, 1 isolated, 0 waiting"), "{out}");
    assert_eq!(
        node(good),
        "|nvidia.com/gpu|",
        "kubectl sees the good node in service"
    );
    assert_eq!(
        node(bad),
        "true|nvidia.com/gpu runbook.dev/gate runbook.dev/gpu-health|REBOOT",
        "kubectl sees the bad node isolated, still behind the gate"
    );

    // The next run finds nothing to check: the isolated node stays out until its release.
    let (code, out) = gate(&[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 node(s) at the gate"), "{out}");
    assert!(
        out.contains("1 gated node(s) isolated, out until their release"),
        "{out}"
    );
}
