//! runbooks/accept.rhai on the twin: a p5 fleet judged per node (its counts, EFA devices and
//! their loopbacks, GPU health, NCCL inside it) and at scale, the culprits of a collective that
//! falls short found by group testing along the network (a straggler, a node with an EFA
//! interface down, a slow network block, each named once and no healthy node with them), and
//! the pair sweep on the same fleet for comparison.

use crate::support::{Runbook, helm_available, metric, read_report};

/// The per-node stage at its shallowest: the search at scale is what those tests are about.
const SHALLOW: [&str; 6] = [
    "--set",
    "level=0",
    "--set",
    "in_node=false",
    "--set",
    "efa_loopback=false",
];

const FAULTS: [&str; 6] = [
    "--fault",
    "nic-slow=gpu5:0.5",
    "--fault",
    "efa-down=gpu20:1",
    "--fault",
    "network-slow=gpu70:0.4",
];

/// Runs the acceptance over `nodes` p5 nodes; its exit code, stdout, stderr and report.
fn accept(nodes: u32, extra: &[&str]) -> (i32, String, String, serde_json::Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    let set = format!("gpu_nodes={nodes}");
    let ran = Runbook::new()
        .args([
            "run",
            "runbooks/accept.rhai",
            "--yes",
            "--progress",
            "never",
            "--scenario",
            "empty",
        ])
        .args(["--set", &set, "--report"])
        .arg(&report)
        .args(extra)
        .run();
    (ran.code(), ran.stdout(), ran.stderr(), read_report(&report))
}

#[test]
fn a_healthy_fleet_is_accepted_in_one_run_of_each_collective() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, report) = accept(16, &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("accepted: 16 nodes"), "{stdout}");
    // The search's all-reduce, then all-gather and alltoall once each.
    assert_eq!(metric(&report, "acceptance_collective_runs"), 3.0);
}

#[test]
fn four_healthy_nodes_run_all_three_collectives_each_at_its_own_figure() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, report) = accept(4, &SHALLOW);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // nccl_scale's 4-node figures: all_reduce 356.99, all_gather 330.92, alltoall 54.07.
    for (collective, figure) in [
        ("all_reduce", "figure 356.99"),
        ("all_gather", "figure 330.92"),
        ("alltoall", "figure 54.07"),
    ] {
        let line = stdout
            .lines()
            .find(|l| l.contains(&format!("{collective} at 4 nodes: ")))
            .unwrap_or_else(|| panic!("no {collective} line: {stdout}"));
        assert!(line.contains(" GB/s (") && line.contains(figure), "{line}");
    }
    assert_eq!(metric(&report, "acceptance_collective_runs"), 3.0);
}

#[test]
fn a_collective_outside_the_choices_is_refused_by_name() {
    let (code, stdout, stderr, _) =
        accept(4, &["--set", r#"collectives=["all_gather","broadcast"]"#]);
    assert_ne!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("collectives must be one of \"all_reduce\", \"all_gather\", \"alltoall\", not \"broadcast\""),
        "{stderr}"
    );
}

#[test]
fn a_straggler_a_node_short_of_efa_and_a_slow_block_are_each_named_and_nothing_else() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, report) = accept(72, &[&FAULTS[..], &SHALLOW].concat());
    assert_eq!(code, 1, "{stdout}{stderr}");
    let said = stderr
        .split_once("not accepted: ")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(said.starts_with("3 culprit(s)"), "{said}");
    assert!(
        said.contains("(31 of 32 EFA interfaces (vpc.amazonaws.com/efa); fi_info -p efa lists 31 of 32 EFA devices (missing rdmap233s0))"),
        "{said}"
    );
    assert_eq!(said.matches("\"node ip-").count(), 2, "{said}");
    assert_eq!(said.matches("\"block nn-").count(), 1, "{said}");
    assert!(!stdout.contains("not confirmed"), "{stdout}");
    assert!(
        stdout.contains("pass the fleet without the 2 culprit(s)"),
        "{stdout}"
    );
    assert!(metric(&report, "acceptance_collective_runs") <= 40.0);
    assert_eq!(metric(&report, "acceptance_culprits"), 3.0);
}

#[test]
fn the_pair_sweep_on_the_same_fleet_never_names_a_block() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, report) = accept(
        72,
        &[&FAULTS[..], &SHALLOW, &["--set", "search=pairs"]].concat(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(!stderr.contains("\"block nn-"), "{stderr}");
    assert_eq!(
        metric(&report, "acceptance_collective_runs"),
        71.0,
        "a ring over the 71 nodes with all their EFA"
    );
}

#[test]
fn a_gpu_swapped_between_acceptances_is_named_against_the_machines_birth_certificate() {
    if !helm_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let history = dir.path().join("history");
    let page = dir.path().join("run.html");
    let history_args = ["--history", history.to_str().expect("path")];
    let (code, stdout, stderr, _) = accept(4, &history_args);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("4 certificates kept: 4 first, 0 drifted"),
        "{stdout}"
    );
    // The same machines again (the twin's are the same instances run after run), one board
    // swapped in GPU 3's slot of the third node.
    let swapped = [
        &history_args[..],
        &["--fault", "gpu-replaced=gpu2/3", "--html"],
        &[page.to_str().expect("path")],
    ]
    .concat();
    let (code, stdout, stderr, report) = accept(4, &swapped);
    assert_eq!(
        code, 0,
        "a swapped board is drift to report, not a failure: {stdout}{stderr}"
    );
    assert!(
        stdout.contains("4 certificates kept: 0 first, 1 drifted"),
        "{stdout}"
    );
    let line = stdout
        .lines()
        .find(|l| l.contains(" swapped: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("since run 1: GPU 00000000:"), "{line}");
    assert!(line.contains("(i-"), "{line}");
    assert_eq!(metric(&report, "acceptance_drifted_machines"), 1.0);
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(
        html.contains("<h2 id=\"certificates\">Birth certificates</h2>"),
        "{html}"
    );
    assert!(
        html.contains("drifted since run 1: GPU 00000000:"),
        "{html}"
    );
}

#[test]
fn a_healthy_fleet_passes_every_per_node_check() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, _) = accept(4, &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("4 of 4 nodes pass every per-node check of a p5.48xlarge"),
        "{stdout}"
    );
    // 90% of the published ~480 GB/s of 8 H100s over NVLink (lab/nccl_figures.rs).
    assert!(
        stdout.contains("NCCL inside each node: 4 of 4 at 432.0 GB/s or more"),
        "{stdout}"
    );
    // The p4d's real 1 MiB loopback, a p5 device having the same 100 Gb/s (lab/efa_loopback.rs).
    assert!(
        stdout.contains("EFA loopback: the slowest device at 2614.25 MB/sec"),
        "{stdout}"
    );
    assert!(stdout.contains("accepted: 4 nodes"), "{stdout}");
}

#[test]
fn a_node_with_an_efa_device_down_fails_per_node_naming_the_device() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, _) = accept(4, &["--fault", "efa-down=gpu2:1"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("31 of 32 EFA interfaces (vpc.amazonaws.com/efa); fi_info -p efa lists 31 of 32 EFA devices (missing rdmap233s0)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("3 of 4 nodes pass every per-node check"),
        "{stdout}"
    );
    assert!(stderr.contains("not accepted: 1 culprit(s)"), "{stderr}");
}

#[test]
fn a_slow_nic_shows_in_every_loopback_of_its_node() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, _) = accept(
        4,
        &[
            "--fault",
            "nic-slow=gpu1:0.5",
            "--set",
            "level=0",
            "--set",
            "in_node=false",
        ],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    // Half the rate: 24.15 us of latency plus twice the 376.95 us the bytes took.
    assert!(
        stdout.contains("EFA loopback: the slowest device at 1347.7 MB/sec"),
        "{stdout}"
    );
    assert!(
        stdout.contains("32 of 32 EFA loopbacks under the floor of 2352.83 MB/sec (slowest rdmap16s0 at 1347.70 MB/sec)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("3 of 4 nodes pass every per-node check"),
        "{stdout}"
    );
}

#[test]
fn a_node_with_its_nvlinks_down_fails_per_node_on_its_gpu_health() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, _) = accept(4, &["--fault", "nvlink-down=gpu1"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "GPU health RESET (dcgmi diag -r 1): RESET (GPU 0000:18:00): xid: Xid 74 (NVLink error)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("0 of 18 NVLinks active"), "{stdout}");
    // NCCL inside the node runs only on the nodes every earlier check passed.
    assert!(stdout.contains("NCCL inside each node: 3 of 3"), "{stdout}");
    assert!(stderr.contains("not accepted: 1 culprit(s)"), "{stderr}");
}

#[test]
fn a_thirty_minute_budget_runs_the_deepest_checks_whose_planned_time_fits() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, report) = accept(4, &["--set", "budget=30m"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // Four nodes at once: DCGM level 3 (15 min), NCCL inside (1), EFA loopback (2), one
    // collective (2): 20 minutes planned, within 30.
    assert!(stdout.contains("DCGM level 3: 15 min planned"), "{stdout}");
    assert!(
        stdout.contains("within 30m: 20 min planned, 11 GPU-hours, $"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "does not fit 30m: DCGM level 4 + NCCL inside the node + EFA loopback (125 min planned)"
        ),
        "{stdout}"
    );
    // The checks ran at that depth: DCGM's level 3 tests on every node, NCCL inside each node,
    // each EFA device's loopback.
    let stress = report["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .filter(|e| e["kind"] == "gpu_health")
        // DCGM 4 runs 7 tests at level 3 (1 at level 1, 3 at level 2).
        .filter(|e| e["data"]["findings"].to_string().contains("7 tests passed"))
        .count();
    assert_eq!(stress, 4, "DCGM level 3 on every node");
    // The four diagnostics ran at once, each its 15 minutes on the twin's clock: the per-node
    // stage takes about a quarter of an hour, not an hour.
    let per_node = report["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find(|s| s["name"] == "per node")
        .and_then(|s| s["virtual_ms"].as_u64())
        .expect("the per-node step");
    assert!(
        (900_000..1_200_000).contains(&per_node),
        "per node took {per_node} ms of virtual time"
    );
    assert!(stdout.contains("NCCL inside each node: 4 of 4"), "{stdout}");
    assert!(
        stdout.contains("EFA loopback: the slowest device at"),
        "{stdout}"
    );
    // A window of hours takes DCGM's level 4: level 3's tests, the pulse test and memtest.
    let (code, stdout, stderr, report) = accept(4, &["--set", "budget=3h"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("DCGM level 4: 120 min planned"), "{stdout}");
    let extended = report["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .filter(|e| e["kind"] == "gpu_health")
        .filter(|e| e["data"]["findings"].to_string().contains("9 tests passed"))
        .count();
    assert_eq!(extended, 4, "DCGM level 4 on every node");
    // Too short a budget for anything is refused before anything starts, saying what it needs.
    let (code, stdout, stderr, _) = accept(4, &["--set", "budget=1m"]);
    assert_ne!(code, 0, "{stdout}");
    assert!(stderr.contains("give at least 2m"), "{stderr}");
    assert!(!stdout.contains("[step] deploy"), "{stdout}");
}

#[test]
fn a_slow_nic_is_found_by_the_all_reduce_and_the_others_run_without_it() {
    if !helm_available() {
        return;
    }
    let extra = [&SHALLOW[..], &["--fault", "nic-slow=gpu1:0.3"]].concat();
    let (code, stdout, stderr, report) = accept(4, &extra);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let said = stderr
        .split_once("not accepted: ")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(said.starts_with("1 culprit(s)"), "{said}");
    assert_eq!(said.matches("\"node ip-").count(), 1, "{said}");
    // The three nodes left pass all-gather and alltoall at the figures for their count.
    for collective in ["all_gather", "alltoall"] {
        let line = stdout
            .lines()
            .find(|l| l.contains(&format!("{collective} at 3 nodes: ")))
            .unwrap_or_else(|| panic!("no {collective} line: {stdout}"));
        assert!(line.ends_with(": ok"), "{line}");
    }
    assert!(metric(&report, "acceptance_collective_runs") > 3.0);
}
