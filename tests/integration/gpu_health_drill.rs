//! `runbooks/gpu-health.rhai` on the twin: with no fault every node is HEALTHY and the run
//! passes; with each hardware fault the drill names exactly the faulty node with the verdict
//! the documented table gives, isolates it, fails, and still scales back to 0. What a user
//! sees is a snapshot per fault.

use crate::support::{Runbook, helm_available, redact_wall_text};
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
