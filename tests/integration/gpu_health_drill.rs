//! `runbooks/gpu-health.rhai` on the twin: with no fault every node is HEALTHY and the run
//! passes; with each hardware fault the drill names exactly the faulty node with the verdict
//! the documented table gives, isolates it, fails, and still scales back to 0. What a user
//! sees is a snapshot per fault.

use crate::support::{LabServer, Runbook, helm_available, kubectl, kubectl_run, redact_wall_text};
use crate::with_snapshots;

/// The twin's GPU nodes in name order: `gpuN` of a fault names the N-th.
const NODES: [&str; 4] = [
    "ip-192-168-13-228.ap-northeast-2.compute.internal",
    "ip-192-168-13-80.ap-northeast-2.compute.internal",
    "ip-192-168-14-46.ap-northeast-2.compute.internal",
    "ip-192-168-14-9.ap-northeast-2.compute.internal",
];

fn drill(fault: Option<&str>, code: i32) -> String {
    let mut runbook =
        Runbook::new().args(["run", "runbooks/gpu-health.rhai", "--progress", "never"]);
    if let Some(fault) = fault {
        runbook = runbook.args(["--fault", fault]);
    }
    let ran = runbook.run().expect_code(code);
    redact_wall_text(&format!("{}{}", ran.stdout(), ran.stderr()))
}

#[test]
fn a_healthy_fleet_passes_and_goes_back_to_zero() {
    if !helm_available() {
        return;
    }
    let out = drill(None, 0);
    for node in NODES {
        assert!(out.contains(&format!("[log] {node}: HEALTHY")), "{out}");
    }
    assert!(out.contains("[log] 4 pairs, all ok"), "{out}");
    assert!(
        out.contains("[defer pass] GPU node group back to 0"),
        "{out}"
    );
    with_snapshots!({ insta::assert_snapshot!("gpu-health-no-fault", out) });
}

#[test]
fn each_fault_is_found_on_exactly_its_node_with_its_verdict() {
    if !helm_available() {
        return;
    }
    for (fault, node, verdict, name) in [
        ("gpu-xid=gpu1:79", 1, "REBOOT", "gpu-health-xid-79"),
        (
            "gpu-row-remap-pending=gpu2",
            2,
            "ISOLATE",
            "gpu-health-row-remap-pending",
        ),
        (
            "gpu-ecc-uncorrectable=gpu0:2",
            0,
            "RESET",
            "gpu-health-ecc-uncorrectable",
        ),
        ("gpu-missing=gpu3", 3, "REBOOT", "gpu-health-gpu-missing"),
        ("nic-slow=gpu1:0.3", 1, "ISOLATE", "gpu-health-nic-slow"),
        (
            "gpu-recovery-action=gpu2:node-reboot",
            2,
            "REBOOT",
            "gpu-health-recovery-action",
        ),
    ] {
        let out = drill(Some(fault), 1);
        let faulty = NODES[node];
        assert!(
            out.contains(&format!("[log] {faulty}: isolated as {verdict} until ")),
            "{fault}: {out}"
        );
        let isolated = out.matches(": isolated as ").count();
        assert_eq!(
            isolated, 1,
            "{fault}: only the faulty node is isolated\n{out}"
        );
        for other in NODES.iter().filter(|n| **n != faulty) {
            assert!(
                !out.contains(&format!("[log] {other}: isolated")),
                "{fault}: {out}"
            );
        }
        assert!(
            out.contains("[defer pass] GPU node group back to 0"),
            "{fault}: {out}"
        );
        with_snapshots!({ insta::assert_snapshot!(name, out) });
    }
}

#[test]
fn a_power_cap_and_a_narrow_pcie_link_are_monitored_on_their_gpus_and_pass() {
    if !helm_available() {
        return;
    }
    let ran = Runbook::new()
        .args(["run", "runbooks/gpu-health.rhai", "--progress", "never"])
        .args(["--fault", "gpu-power-capped=gpu0:150"])
        .args(["--fault", "gpu-pcie-degraded=gpu3:4"])
        .run()
        .expect_code(0);
    let out = ran.stdout();
    let said = |node: usize, verdict: &str, reason: &str| {
        assert!(
            out.contains(&format!(
                "[log] {}: {verdict}\n[log]   {reason}",
                NODES[node]
            )),
            "{} {verdict} {reason}\n{out}",
            NODES[node]
        );
    };
    said(
        0,
        "MONITOR",
        "MONITOR (GPU 0): power_limit: power limit 150 W of the default 300 W",
    );
    said(
        3,
        "MONITOR",
        "MONITOR (GPU 0): pcie_link_width: PCIe x4 (the GPU's maximum x16)",
    );
    for node in [1, 2] {
        assert!(
            out.contains(&format!("[log] {}: HEALTHY", NODES[node])),
            "{out}"
        );
    }
    assert!(
        !out.contains(": isolated as "),
        "MONITOR isolates nothing: {out}"
    );
}

#[test]
fn a_runbooks_own_policy_turns_an_application_xid_into_a_reboot() {
    if !helm_available() {
        return;
    }
    // By the default table Xid 31 is the application's: the node stays in service.
    let out = drill(Some("gpu-xid=gpu1:31"), 0);
    assert!(
        out.contains(&format!("[log] {}: MONITOR", NODES[1])),
        "{out}"
    );
    // A fleet that wants it out after one: its own rule, from a file.
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = dir.path().join("policy.json");
    std::fs::write(
        &policy,
        r#"{"rules": [{"name": "no-page-faults", "xid": [31], "count": 1, "window": "1h", "scope": "same_gpu", "action": "REBOOT"}]}"#,
    )
    .expect("write");
    let ran = Runbook::new()
        .args(["run", "runbooks/gpu-health.rhai", "--progress", "never"])
        .args(["--fault", "gpu-xid=gpu1:31", "--allow-read"])
        .arg(dir.path())
        .arg("--set")
        .arg(format!("policy=@{}", policy.display()))
        .run()
        .expect_code(1);
    let out = ran.stdout();
    assert!(
        out.contains("REBOOT (GPU 0000:00:1e): xid_repeated: Xid 31 1 times on the same GPU within 1h (no-page-faults)"),
        "{out}"
    );
    assert!(
        out.contains(&format!("[log] {}: isolated as REBOOT until ", NODES[1])),
        "{out}"
    );
    // A policy with a wrong key is refused with where and what it takes.
    std::fs::write(
        &policy,
        r#"{"rules": [{"xid": 31, "action": "REBOOT", "windw": "1h"}]}"#,
    )
    .expect("write");
    let refused = Runbook::new()
        .args([
            "run",
            "runbooks/gpu-health.rhai",
            "--progress",
            "never",
            "--allow-read",
        ])
        .arg(dir.path())
        .arg("--set")
        .arg(format!("policy=@{}", policy.display()))
        .run()
        .expect_code(1);
    let said = format!("{}{}", refused.stdout(), refused.stderr());
    assert!(
        said.contains("nvml::policy: policy.rules[0]: unknown key `windw`; a rule has name, xid, count, window, burst, scope, action, source"),
        "{said}"
    );
}

#[test]
fn an_xid_79_that_comes_back_after_two_reboots_isolates_its_machine() {
    if !helm_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let history = dir.path().join("history");
    let run = || {
        let ran = Runbook::new()
            .args(["run", "runbooks/gpu-health.rhai", "--progress", "never"])
            .args(["--fault", "gpu-xid=gpu1:79", "--history"])
            .arg(&history)
            .run()
            .expect_code(1);
        ran.stdout()
    };
    for _ in 0..2 {
        let out = run();
        assert!(
            out.contains(&format!("[log] {}: isolated as REBOOT until ", NODES[1])),
            "{out}"
        );
    }
    // The third time the same Xid on the same GPU of the same machine: the reboots did not
    // clear it.
    let out = run();
    assert!(
        out.contains("ISOLATE (GPU 0000:00:1e): recurring: xid called for REBOOT again: 2 earlier REBOOTs within 168h did not clear it"),
        "{out}"
    );
    assert!(
        out.contains(&format!("[log] {}: isolated as ISOLATE until ", NODES[1])),
        "{out}"
    );
    // The record, by the node's name and by its machine.
    let record = Runbook::new()
        .args(["history", "gpu", NODES[1], "--json", "--history"])
        .arg(&history)
        .run()
        .expect_code(0)
        .stdout();
    let rows: serde_json::Value = serde_json::from_str(&record).expect("JSON");
    let verdicts: Vec<&str> = rows
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["verdict"].as_str())
        .collect();
    assert_eq!(verdicts, ["ISOLATE", "REBOOT", "REBOOT"], "{record}");
    let machine = rows[0]["machine"].as_str().expect("machine");
    assert!(machine.starts_with("i-"), "{machine}");
    let table = Runbook::new()
        .args(["history", "gpu", machine, "--history"])
        .arg(&history)
        .run()
        .expect_code(0)
        .stdout();
    assert_eq!(table.lines().count(), 4, "{table}");
    assert!(
        table.lines().nth(1).is_some_and(|l| l.contains("ISOLATE")),
        "{table}"
    );
    // A healthy node has a record of HEALTHY runs.
    let healthy = Runbook::new()
        .args(["history", "gpu", NODES[0], "--history"])
        .arg(&history)
        .run()
        .expect_code(0)
        .stdout();
    assert_eq!(healthy.matches("HEALTHY").count(), 3, "{healthy}");
}

#[test]
fn the_slow_nic_is_named_by_the_pair_sweep_not_the_health_check() {
    if !helm_available() {
        return;
    }
    let out = drill(Some("nic-slow=gpu1:0.3"), 1);
    assert!(
        out.contains(&format!("[log] {}: HEALTHY", NODES[1])),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "2 of 4 pairs failed; the node common to them is {}",
            NODES[1]
        )),
        "{out}"
    );
    assert!(
        out.contains("peak bus bandwidth 0.33 GB/s is under the 0.50 GB/s floor"),
        "{out}"
    );
}

fn drill_with(args: &[&str], code: i32) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    let ran = Runbook::new()
        .args([
            "run",
            "runbooks/gpu-health.rhai",
            "--progress",
            "never",
            "--report",
        ])
        .arg(&report)
        .args(args)
        .run()
        .expect_code(code);
    (
        format!("{}{}", ran.stdout(), ran.stderr()),
        crate::support::read_report(&report),
    )
}

fn metric(report: &serde_json::Value, name: &str) -> Option<f64> {
    report["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)?["value"]
        .as_f64()
}

const THREE_SICK: [&str; 6] = [
    "--fault",
    "gpu-xid=gpu0:79",
    "--fault",
    "gpu-xid=gpu1:79",
    "--fault",
    "gpu-xid=gpu2:79",
];

#[test]
fn the_breaker_refuses_the_third_of_four_nodes_and_observe_mode_acts_on_nothing() {
    if !helm_available() {
        return;
    }
    let (out, report) = drill_with(&THREE_SICK, 1);
    for node in &NODES[..2] {
        assert!(
            out.contains(&format!("[log] {node}: isolated as REBOOT")),
            "{out}"
        );
    }
    assert!(
        out.contains(&format!(
            "[log] {}: REBOOT, not isolated: circuit breaker: 2 of 4 GPU nodes were isolated in the last 10 min, and one more would pass 50% (2 nodes)",
            NODES[2]
        )),
        "{out}"
    );
    assert_eq!(metric(&report, "gpu_nodes_isolated"), Some(2.0));
    assert_eq!(metric(&report, "gpu_isolations_refused"), Some(1.0));

    // A cap per run stops at one, naming the cap.
    let mut capped = THREE_SICK.to_vec();
    capped.extend(["--set", "max_isolations=1"]);
    let (out, report) = drill_with(&capped, 1);
    assert!(
        out.contains("this run already isolated 1 node(s), its cap (`per_run`: 1)"),
        "{out}"
    );
    assert_eq!(metric(&report, "gpu_nodes_isolated"), Some(1.0));

    // Observe: every verdict and what would be done, no node touched.
    let mut observe = THREE_SICK.to_vec();
    observe.extend(["--set", "mode=observe"]);
    let (out, report) = drill_with(&observe, 1);
    for node in &NODES[..3] {
        assert!(
            out.contains(&format!(
                "[log] {node}: would be isolated as REBOOT (observe mode: nothing done)"
            )),
            "{out}"
        );
    }
    assert_eq!(metric(&report, "gpu_isolations_observed"), Some(3.0));
    assert_eq!(metric(&report, "gpu_nodes_isolated"), Some(0.0));
    let quarantines = report["changes"].as_array().map_or(0, |c| {
        c.iter()
            .filter(|c| {
                c["action"]
                    .as_str()
                    .is_some_and(|a| a.starts_with("k8s::quarantine"))
            })
            .count()
    });
    assert_eq!(
        quarantines, 0,
        "observe mode changes nothing: {}",
        report["changes"]
    );
}

/// The drill against one lab twin (lab serve) run after run with one history, as a scheduled
/// drill runs it: a node isolated for an Xid stays out while its streak of passing checks is
/// short, goes back after `release_after` of them, and kubectl then sees it as it was.
#[test]
fn an_isolated_node_is_released_after_two_passing_checks_and_kubectl_sees_it_clean() {
    if !helm_available() {
        return;
    }
    let Some(binary) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start_with("600", &["--fault", "gpu-xid=gpu1:79"]);
    let endpoint = lab.aws_endpoint();
    let dir = tempfile::tempdir().expect("temp dir");
    let history = dir.path().join("history");
    // The GPU nodes up before the drill runs, so that it neither scales them nor puts them back.
    Runbook::new()
        .lab_env(&lab)
        .args(["eval", "--aws-endpoint", &endpoint, "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .arg(r#"eks::scale_nodegroup("myeks5w", "gpu", 2); k8s::wait_nodes(#{ labels: #{ tier: "gpu" }, count: 2, timeout: "15m" }).len()"#)
        .run()
        .expect_code(0);
    let drill = |code: i32| {
        let ran = Runbook::new()
            .lab_env(&lab)
            .args([
                "run",
                "--yes",
                "runbooks/gpu-health.rhai",
                "--progress",
                "never",
            ])
            .args(["--aws-endpoint", &endpoint, "--kubeconfig"])
            .arg(&lab.kubeconfig)
            .args([
                "--set",
                "gpu_nodes=2",
                "--set",
                "release_after=2",
                "--history",
            ])
            .arg(&history)
            .run()
            .expect_code(code);
        format!("{}{}", ran.stdout(), ran.stderr())
    };
    let out = drill(1);
    // The second of the two GPU nodes in name order (the fault's gpu1).
    let sick = out
        .lines()
        .find_map(|l| l.strip_prefix("[log] ")?.strip_suffix(": REBOOT"))
        .unwrap_or_else(|| panic!("a REBOOT node: {out}"))
        .to_string();
    let sick = sick.as_str();
    let node_state = || {
        let (code, out, err) = kubectl_run(
            &binary,
            &lab,
            &[
                "get",
                "node",
                sick,
                "-o",
                "jsonpath={.spec.unschedulable}|{.spec.taints[*].key}|{.metadata.labels.runbook\\.dev/gpu-health}",
            ],
        );
        assert_eq!(code, 0, "{err}");
        out
    };
    assert!(
        out.contains(&format!("[log] {sick}: isolated as REBOOT until ")),
        "{out}"
    );
    assert_eq!(
        node_state(),
        "true|nvidia.com/gpu runbook.dev/gpu-health|REBOOT"
    );

    lab.admin("faults?heal=gpu1");
    let out = drill(0);
    assert!(
        out.contains(&format!(
            "[log] {sick}: stays isolated, 1 of 2 passing checks in a row"
        )),
        "{out}"
    );
    assert!(
        out.contains("1 node(s) passed the health check: too few to pair"),
        "{out}"
    );
    assert_eq!(
        node_state(),
        "true|nvidia.com/gpu runbook.dev/gpu-health|REBOOT"
    );

    let out = drill(0);
    assert!(
        out.contains(&format!(
            "[log] {sick}: released after 2 passing checks in a row"
        )),
        "{out}"
    );
    // Back in service: the pair sweep runs with it in the same run.
    assert!(
        out.contains("1 pairs, all ok") || out.contains("1 pair, all ok"),
        "{out}"
    );
    assert_eq!(
        node_state(),
        "|nvidia.com/gpu|",
        "kubectl sees the node as it was"
    );
}

#[test]
fn a_dcgm_that_hangs_is_named_by_its_watchdog_not_passed_as_healthy() {
    if !helm_available() {
        return;
    }
    // The watchdog waits on the run's clock: a minute of virtual time, longer than a level-1
    // diagnostic takes (20 s on the twin), which the healthy nodes' diagnostics finish in.
    let (out, report) = drill_with(
        &["--fault", "dcgm-hang=gpu2", "--set", "dcgm_timeout=1m"],
        1,
    );
    let hung = NODES[2];
    assert!(out.contains(&format!("[log] {hung}: MONITOR")), "{out}");
    assert!(
        out.contains(
            "MONITOR: dcgm_watchdog: dcgmi diag -r 1 gave no answer within 1m (the DCGM watchdog)"
        ),
        "{out}"
    );
    for node in [NODES[0], NODES[1], NODES[3]] {
        assert!(out.contains(&format!("[log] {node}: HEALTHY")), "{out}");
    }
    // Not a sick GPU: nothing is isolated; not a pass either: the run says what was not examined.
    assert_eq!(metric(&report, "gpu_nodes_isolated"), Some(0.0));
    assert!(
        out.contains(&format!(
            "1 GPU node(s) not fully examined: [\"{hung}: dcgmi diag -r 1 gave no answer within 1m"
        )),
        "{out}"
    );
}
