//! runbooks/repair-drill.rhai on the twin at virtual time (Xid 79 on a p5 node replaced after
//! the documented ten minutes and the new node passing; Xid 48 rebooted with a new bootID; two
//! broken nodes repaired one at a time; repair held above the unhealthy threshold; a drill
//! refused, breaking nothing, with repair off or repair able to take out more nodes than
//! allowed), and against `lab serve` with kubectl 1.35: the injection as a drill makes it
//! (`dcgmi test --inject` in a privileged pod) read back as the EKS node monitoring agent
//! writes it, and repair cordoning and replacing the node.

use crate::support::{
    LabServer, Runbook, aws_cli_available, helm_available, kubectl, kubectl_run, kubectl_stdin,
    metric, read_report,
};

/// Runs the drill with `extra`; its exit code, stdout, stderr and report.
fn drill(extra: &[&str]) -> (i32, String, String, serde_json::Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    let ran = Runbook::new()
        .args([
            "run",
            "runbooks/repair-drill.rhai",
            "--progress",
            "never",
            "--report",
        ])
        .arg(&report)
        .args(extra)
        .run();
    (ran.code(), ran.stdout(), ran.stderr(), read_report(&report))
}

/// The virtual second of the first stdout line with `words` and a time (`[log] +630s NODE: gone`).
fn seen_at(stdout: &str, words: &str) -> u64 {
    stdout
        .lines()
        .filter(|l| l.contains(words))
        .find_map(|l| {
            l.split_whitespace()
                .find_map(|w| w.strip_prefix('+'))
                .and_then(|w| w.strip_suffix('s'))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or_else(|| panic!("no line with {words:?} and a time in {stdout}"))
}

#[test]
fn xid_79_on_a_p5_node_is_replaced_after_the_documented_wait_and_the_new_node_passes() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, report) = drill(&[
        "--scenario",
        "empty",
        "--set",
        "gpu_instance_type=p5.48xlarge",
        "--set",
        "gpu_nodes=2",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("expected: AcceleratedHardwareReady False (NvidiaXID79Error) within 1m; Replace 10m later"), "{stdout}");
    assert!(stdout.contains("AcceleratedHardwareReady False: NvidiaXID79Error: detected XID-79 on the instance, review kernel logs for additional information."), "{stdout}");
    // The agent reports within its 15 s interval; repair acts 10 minutes after the condition
    // (cordon, drain, the instance terminated in 30 s); the new p5 joins 150 s after its launch.
    assert_eq!(metric(&report, "repair_condition_seconds"), 15.0);
    assert_eq!(metric(&report, "repair_cordon_seconds"), 600.0);
    assert_eq!(metric(&report, "repair_action_seconds"), 615.0);
    assert_eq!(metric(&report, "repair_back_seconds"), 120.0);
    let replaced = stdout
        .lines()
        .find(|l| l.contains("Ready in"))
        .expect("a node Ready in the broken one's place");
    assert!(replaced.contains("(i-"), "{replaced}");
    assert!(
        stdout.contains(": HEALTHY"),
        "the new node passes its checks: {stdout}"
    );
}

#[test]
fn xid_48_is_rebooted_and_the_node_comes_back_with_a_new_boot_id() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, report) = drill(&["--set", "xid=48"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("Reboot 10m later"), "{stdout}");
    // The kubelet goes silent: the node controller marks it Unknown after its 50 s grace.
    assert_eq!(seen_at(&stdout, ": rebooting"), 650);
    let back = stdout
        .lines()
        .find(|l| l.contains("Ready again, boot id"))
        .expect("the same node back");
    assert!(back.ends_with("-boot2"), "a new bootID: {back}");
    assert_eq!(metric(&report, "repair_back_seconds"), 100.0);
}

#[test]
fn two_broken_nodes_are_repaired_one_at_a_time_as_the_parallel_limit_says() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, _) = drill(&["--set", "gpu_nodes=3", "--set", "nodes=2"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let gone: Vec<u64> = stdout
        .lines()
        .filter(|l| l.contains(": gone"))
        .filter_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix('+')))
        .filter_map(|w| w.trim_end_matches('s').parse().ok())
        .collect();
    let first_back = seen_at(&stdout, "Ready in");
    assert_eq!(gone.len(), 2, "{stdout}");
    assert!(
        gone[1] > first_back,
        "the second repair waits for the first: {stdout}"
    );
    assert!(
        stdout.contains("queued until +750s (1 repaired at a time)"),
        "{stdout}"
    );
}

#[test]
fn above_the_unhealthy_threshold_repair_holds_off_and_the_drill_says_so() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, _) = drill(&[
        "--set",
        "gpu_nodes=3",
        "--set",
        "nodes=2",
        "--set",
        r#"repair={"enabled":true,"max_unhealthy_count":1}"#,
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("then no repair: EKS holds off (2 of 3 nodes unhealthy, over maxUnhealthyNodeThresholdCount 1)"), "{stdout}");
    assert_eq!(
        stdout
            .matches("held, as predicted (2 of 3 nodes unhealthy")
            .count(),
        2,
        "{stdout}"
    );
    assert!(
        !stdout.contains(": gone") && !stdout.contains("cordoned"),
        "{stdout}"
    );
}

#[test]
fn a_drill_nothing_would_repair_or_that_could_take_out_two_nodes_breaks_nothing() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, _) = drill(&["--set", r#"repair={"enabled":false}"#]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "node auto repair is off for node group gpu (nodeRepairConfig.enabled is not true)"
        ),
        "{stderr}"
    );
    let (code, stdout, stderr, _) = drill(&[
        "--set",
        "gpu_nodes=3",
        "--set",
        "nodes=2",
        "--set",
        r#"repair={"enabled":true,"max_parallel_count":2}"#,
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("repair may take 2 nodes of gpu out at once (it repairs 2 at a time"),
        "{stderr}"
    );
    for out in [&stdout, &stderr] {
        assert!(!out.contains("injected on GPU"), "nothing injected: {out}");
    }
}

/// On `lab serve`: the agent's add-on, repair on, two GPU nodes; the first one's name.
const SETUP: &str = r#"
eks::create_addon("myeks5w", "eks-node-monitoring-agent");
eks::wait_addon_active("myeks5w", "eks-node-monitoring-agent", "15m");
eks::update_node_repair("myeks5w", "gpu", #{ enabled: true });
eks::scale_nodegroup("myeks5w", "gpu", 2);
k8s::wait_nodes(#{ labels: #{ tier: "gpu" }, count: 2, timeout: "20m" });
let names = k8s::nodes(#{ tier: "gpu" }).map(|n| n.name);
names.sort();
names[0]
"#;

/// A privileged pod on `node` with DCGM's tools, as a drill's probe.
fn injector(node: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"injector","namespace":"default"}},
"spec":{{"nodeName":"{node}","hostNetwork":true,"tolerations":[{{"operator":"Exists"}}],
"containers":[{{"name":"dcgm","image":"nvcr.io/nvidia/cloud-native/dcgm:4.2.3-1-ubuntu22.04",
"command":["sleep","infinity"],"securityContext":{{"privileged":true}},
"env":[{{"name":"NVIDIA_VISIBLE_DEVICES","value":"all"}}]}}]}}}}"#
    )
}

#[test]
fn kubectl_sees_the_agents_condition_and_events_and_repair_replacing_the_node() {
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    if !aws_cli_available() {
        return;
    }
    let lab = LabServer::start("600");
    let endpoint = lab.aws_endpoint();
    let node = Runbook::new()
        .lab_env(&lab)
        .args(["eval", "--aws-endpoint", &endpoint, "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .arg(SETUP)
        .run()
        .expect_code(0)
        .stdout()
        .trim()
        .to_string();
    let applied = kubectl_stdin(&binary, &lab, &["apply", "-f", "-"], &injector(&node));
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let kubectl = |args: &[&str]| {
        let (code, out, err) = kubectl_run(&binary, &lab, args);
        assert_eq!(code, 0, "kubectl {args:?}: {out}{err}");
        out
    };
    kubectl(&[
        "wait",
        "--for=condition=Ready",
        "pod/injector",
        "--timeout=60s",
    ]);
    for xid in ["79", "13"] {
        let out = kubectl(&[
            "exec", "injector", "--", "dcgmi", "test", "--inject", "--gpuid", "0", "-f", "230",
            "-v", xid,
        ]);
        assert_eq!(out, "Successfully injected field info.\n");
    }
    lab.admin("advance?by=20s");
    let condition = kubectl(&[
        "get",
        "node",
        &node,
        "-o",
        r#"jsonpath={.status.conditions[?(@.type=="AcceleratedHardwareReady")].status}|{.status.conditions[?(@.type=="AcceleratedHardwareReady")].reason}|{.status.conditions[?(@.type=="AcceleratedHardwareReady")].message}"#,
    ]);
    assert_eq!(
        condition,
        "False|NvidiaXID79Error|detected XID-79 on the instance, review kernel logs for additional information."
    );
    let events = kubectl(&[
        "get",
        "events",
        "--field-selector",
        &format!("involvedObject.name={node},reason=AcceleratedHardwareReady"),
        "-o",
        "jsonpath={range .items[*]}{.type}|{.source.component}|{.message}{\"\\n\"}{end}",
    ]);
    assert_eq!(
        events,
        "Warning|eks-node-monitoring-agent|NvidiaXID13Warning: detected unknown XID-13 on the instance, review kernel logs for additional information.\n"
    );
    // Ten minutes after the condition repair cordons the node (the kubelet's event says so);
    // 30 s later it is gone, and a new one joins in its place.
    lab.admin("advance?by=13m");
    let cordoned = kubectl(&[
        "get",
        "events",
        "--field-selector",
        &format!("involvedObject.name={node},reason=NodeNotSchedulable"),
        "-o",
        "jsonpath={.items[*].message}",
    ]);
    assert_eq!(
        cordoned,
        format!("Node {node} status is now: NodeNotSchedulable")
    );
    let (code, _, err) = kubectl_run(&binary, &lab, &["get", "node", &node]);
    assert_eq!(code, 1, "replaced: {err}");
    let nodes = kubectl(&[
        "get",
        "nodes",
        "-l",
        "tier=gpu",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    ]);
    assert_eq!(
        nodes.split_whitespace().count(),
        2,
        "a new node in its place: {nodes}"
    );
    // The aws CLI reboots the new node's instance: kubectl sees it back with a new boot id and
    // the kubelet's Rebooted event; an instance EC2 does not know is refused in EC2's words.
    let fresh = nodes
        .split_whitespace()
        .find(|n| *n != node)
        .expect("the other node")
        .to_string();
    let provider = kubectl(&["get", "node", &fresh, "-o", "jsonpath={.spec.providerID}"]);
    let instance = provider
        .rsplit('/')
        .next()
        .expect("an instance id")
        .to_string();
    let rebooted = lab.aws(&["ec2", "reboot-instances", "--instance-ids", &instance]);
    assert!(
        rebooted.status.success(),
        "{}",
        String::from_utf8_lossy(&rebooted.stderr)
    );
    lab.admin("advance?by=4m");
    let boot = kubectl(&[
        "get",
        "node",
        &fresh,
        "-o",
        "jsonpath={.status.nodeInfo.bootID}",
    ]);
    assert_eq!(boot, format!("{instance}-boot2"));
    let events = kubectl(&[
        "get",
        "events",
        "--field-selector",
        &format!("involvedObject.name={fresh},reason=Rebooted"),
        "-o",
        "jsonpath={.items[*].message}",
    ]);
    assert_eq!(
        events,
        format!("Node {fresh} has been rebooted, boot id: {boot}")
    );
    let unknown = lab.aws(&[
        "ec2",
        "reboot-instances",
        "--instance-ids",
        "i-0123456789abcdef0",
    ]);
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("(InvalidInstanceID.NotFound)"),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
}

#[test]
fn runbooks_own_loop_isolates_heals_by_hand_and_releases_timed_the_same_way() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, report) = drill(&["--set", "by=runbook"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // The first check after the injection finds the Xid in the kernel log and isolates.
    assert!(
        stdout.contains(": REBOOT: REBOOT (GPU 0000:00:1e): xid: Xid 79"),
        "{stdout}"
    );
    assert!(seen_at(&stdout, "isolated (REBOOT)") < 60, "{stdout}");
    // Half an hour later a person reboots it (at the first check after, each check's DCGM
    // diagnostic taking its 20 s); it is back with a new boot id and released after three
    // passing checks five minutes apart.
    let rebooted = seen_at(&stdout, "rebooted by hand");
    let healed = seen_at(&stdout, "Ready again, boot id");
    let released = seen_at(&stdout, "released after 3 passing checks");
    assert!((1800..2000).contains(&rebooted), "{stdout}");
    assert!(
        healed - rebooted <= 200 && released > healed + 600,
        "{stdout}"
    );
    assert_eq!(
        metric(&report, "repair_total_seconds"),
        released as f64,
        "{stdout}"
    );
    let evidence = report["evidence"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["kind"] == "repair_drill"))
        .expect("the drill's evidence");
    let stages: Vec<&str> = evidence["data"]["nodes"][0]["stages"]
        .as_array()
        .expect("stages")
        .iter()
        .filter_map(|s| s["stage"].as_str())
        .collect();
    assert_eq!(stages, ["detected", "isolated", "healed", "released"]);
}

/// A node already failing when repair is turned on: EKS watches continuously, so its wait
/// counts from the condition, not from the change.
const LATE_REPAIR: &str = r#"
eks::create_addon("myeks5w", "eks-node-monitoring-agent");
eks::wait_addon_active("myeks5w", "eks-node-monitoring-agent", "15m");
eks::scale_nodegroup("myeks5w", "gpu", 1);
k8s::wait_nodes(#{ labels: #{ tier: "gpu" }, count: 1, timeout: "20m" });
sleep("1m");
let node = k8s::nodes(#{ tier: "gpu" })[0].name;
nvml::inject_xid(node, 79, #{});
sleep("2m");
eks::update_node_repair("myeks5w", "gpu", #{ enabled: true });
sleep("7m");
let cordoned = k8s::get("Node", node).spec.unschedulable == true;
sleep("2m");
let gone = true;
try { k8s::get("Node", node); gone = false; } catch (e) { }
[cordoned, gone]
"#;

#[test]
fn repair_turned_on_after_a_node_failed_acts_on_it_from_its_condition() {
    let out = Runbook::new()
        .args(["eval", "--json", LATE_REPAIR])
        .run()
        .expect_code(0)
        .stdout();
    let seen: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    // Not yet 10 minutes after the condition at 9 minutes; replaced by 11.
    assert_eq!(seen, serde_json::json!([false, true]));
}
