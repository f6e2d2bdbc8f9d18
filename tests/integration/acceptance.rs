//! runbooks/accept.rhai on the twin: a p5 fleet judged per node and at scale, the culprits of a
//! collective that falls short found by group testing along the network (a straggler, a node
//! with an EFA interface down, a slow network block, each named once and no healthy node with
//! them), and the pair sweep on the same fleet for comparison.

use crate::support::{Runbook, helm_available, metric, read_report};

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
fn a_healthy_fleet_is_accepted_in_one_collective() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, report) = accept(16, &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("accepted: 16 nodes"), "{stdout}");
    assert_eq!(metric(&report, "acceptance_collective_runs"), 1.0);
}

#[test]
fn a_straggler_a_node_short_of_efa_and_a_slow_block_are_each_named_and_nothing_else() {
    if !helm_available() {
        return;
    }
    let (code, stdout, stderr, report) = accept(72, &FAULTS);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let said = stderr
        .split_once("not accepted: ")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(said.starts_with("3 culprit(s)"), "{said}");
    assert!(
        said.contains("(31 of 32 EFA interfaces (vpc.amazonaws.com/efa))"),
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
    let (code, stdout, stderr, report) =
        accept(72, &[&FAULTS[..], &["--set", "search=pairs"]].concat());
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
