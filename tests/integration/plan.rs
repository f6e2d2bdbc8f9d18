//! `runbook plan`: a rehearsal on the twin lists what a run makes, in order, and nothing else.

use crate::support::{Runbook, read_report};
use crate::with_snapshots;

fn actions(list: &serde_json::Value) -> Vec<String> {
    list.as_array()
        .expect("a list of changes")
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["action"].as_str().unwrap_or_default(),
                c["outcome"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn the_plan_of_the_drill_lists_what_its_run_then_makes() {
    let planned = Runbook::new()
        .args(["plan", "runbooks/gpu-lab.rhai"])
        .run()
        .expect_code(0);
    let text = planned.stdout();
    for expected in [
        "eks::scale_nodegroup myeks5w gpu to 2  [nodegroup/myeks5w/gpu, 2 GPU nodes]",
        "ec2::revoke sg-",
        "ec2::authorize sg-",
        "helm::apply v1/Namespace /gpu-operator",
        "eks::scale_nodegroup myeks5w gpu to 0",
        "it passes after",
        "cost while it runs: $",
    ] {
        assert!(text.contains(expected), "{expected} in:\n{text}");
    }
    with_snapshots!({ insta::assert_snapshot!("plan-gpu-lab", text) });

    let json = Runbook::new()
        .args(["plan", "runbooks/gpu-lab.rhai", "--json"])
        .run()
        .expect_code(0);
    let plan: serde_json::Value = serde_json::from_str(&json.stdout()).expect("json");
    let mut planned: Vec<String> = Vec::new();
    for group in ["steps", "cleanups"] {
        for step in plan[group].as_array().expect("groups") {
            planned.extend(actions(&step["changes"]));
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    Runbook::new()
        .args([
            "run",
            "runbooks/gpu-lab.rhai",
            "--progress",
            "never",
            "--report",
        ])
        .arg(&report)
        .run()
        .expect_code(0);
    let changes = read_report(&report)["changes"].clone();
    let (cleanups, steps): (Vec<serde_json::Value>, Vec<serde_json::Value>) = changes
        .as_array()
        .expect("the run's changes")
        .iter()
        .cloned()
        .partition(|c| c["cleanup"] == true);
    // The plan lists steps' changes first and the cleanups' after.
    let mut made = actions(&serde_json::Value::Array(steps));
    made.extend(actions(&serde_json::Value::Array(cleanups)));
    assert_eq!(planned, made, "the plan lists exactly what the run made");
}

#[test]
fn a_plan_says_where_a_guard_would_stop_the_run_and_refuses_real_targets() {
    let planned = Runbook::new()
        .args(["plan", "runbooks/gpu-scale-up.rhai", "--max-gpu-nodes", "1"])
        .run()
        .expect_code(0);
    let text = planned.stdout();
    assert!(
        text.contains("eks::scale_nodegroup myeks5w gpu to 2  [nodegroup/myeks5w/gpu, 2 GPU nodes, refused by a guard]"),
        "{text}"
    );
    assert!(text.contains("it fails after"), "{text}");
    assert!(text.contains("  where: "), "{text}");
    let refused = Runbook::new()
        .args([
            "plan",
            "runbooks/verify.rhai",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
        ])
        .run()
        .expect_code(2);
    assert!(
        refused
            .stderr()
            .contains("runbook plan rehearses on the lab twin"),
        "{}",
        refused.stderr()
    );
    let reads_only = Runbook::new()
        .args(["plan", "runbooks/verify.rhai"])
        .run()
        .expect_code(0);
    assert!(
        reads_only
            .stdout()
            .contains("no changes: every call it makes only reads"),
        "{}",
        reads_only.stdout()
    );
}
