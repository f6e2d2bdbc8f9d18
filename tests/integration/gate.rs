//! runbooks/gate.rhai as deploy/kubernetes/gate.yaml runs it, against `lab serve`: two new GPU
//! nodes join behind the gate's taint (their node group's taints set it), one with a lost GPU;
//! the CronJob's command runs in-cluster as its ServiceAccount, the twin enforcing its RBAC.
//! Observe mode changes nothing; then the gate releases the good node (kubectl sees the taint
//! gone, its birth certificate kept) and isolates the bad one (cordoned, tainted and labelled
//! with its verdict), the known-good node untouched; the rules are held to the requests both
//! ways (every request allowed, every rule used).

use crate::cronjob_drill::{
    cronjob_args_of, deploy, grants_of, held_to_requests, kubectl_ok, leave_a_stale_lease,
    pod_service_account,
};
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
fn the_gate_cronjob_releases_a_good_new_node_and_isolates_a_bad_one_and_its_rbac_is_what_it_calls()
{
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
    kubectl_ok(&binary, &lab, &["apply", "-k", "deploy/kubernetes"]);
    // A Lease left by a runner long gone: the gate takes it over (an update) and later makes
    // its own (a create), so every verb of the lock is used.
    let dir = tempfile::tempdir().expect("temp dir");
    leave_a_stale_lease(&binary, &lab, dir.path());
    let (service_account, pod_env) = pod_service_account(&binary, &lab, dir.path(), "runbook-gate");
    let state = dir.path().join("state");
    std::fs::create_dir(&state).expect("a state folder");
    let cronjob = deploy("gate.yaml")
        .into_iter()
        .find(|o| o["kind"] == "CronJob")
        .expect("the gate's CronJob");
    let args = cronjob_args_of(&cronjob, &service_account, &state);
    lab.reset_audits();
    let gate = |extra: &[&str]| {
        let out = Runbook::new()
            .lab_env(&lab)
            .args(&args)
            .args(extra)
            .command()
            .envs(pod_env.clone())
            .env_remove("RUNBOOK_HISTORY")
            .output()
            .expect("runs");
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
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
    held_to_requests(
        &lab,
        grants_of(&["rbac.yaml", "gate.yaml"], "runbook-gate", false),
    );
}
