//! `runbook plan`: a rehearsal on the twin lists what a run makes, in order, and nothing else.

use crate::support::{LabServer, Runbook, read_report};
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

/// `[action outcome]` of the changes a run's report lists, steps' first and the cleanups'
/// after, as a plan lists them.
fn made_actions(report: &std::path::Path) -> Vec<String> {
    let changes = read_report(report)["changes"].clone();
    let (cleanups, steps): (Vec<serde_json::Value>, Vec<serde_json::Value>) = changes
        .as_array()
        .expect("the run's changes")
        .iter()
        .cloned()
        .partition(|c| c["cleanup"] == true);
    let mut made = actions(&serde_json::Value::Array(steps));
    made.extend(actions(&serde_json::Value::Array(cleanups)));
    made
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
    let planned = planned_actions(&plan);
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
    let made = made_actions(&report);
    assert_eq!(planned, made, "the plan lists exactly what the run made");
}

#[test]
fn a_plan_says_where_a_guard_would_stop_the_run() {
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
    // AWS elsewhere with the embedded twin's Kubernetes: the rehearsal would send its AWS
    // changes there, so it is refused.
    let refused = Runbook::new()
        .args([
            "plan",
            "runbooks/verify.rhai",
            "--aws-endpoint",
            "http://127.0.0.1:9",
        ])
        .run()
        .expect_code(2);
    assert!(
        refused
            .stderr()
            .contains("add --kubeconfig or --cluster for its Kubernetes side"),
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

/// `[action outcome]` of a plan's changes, steps' first.
fn planned_actions(plan: &serde_json::Value) -> Vec<String> {
    let mut planned = Vec::new();
    for group in ["steps", "cleanups"] {
        for step in plan[group].as_array().expect("groups") {
            planned.extend(actions(&step["changes"]));
        }
    }
    planned
}

/// The AWS actions `lab serve` has answered, and the meter's records (what runs, since when).
fn aws_calls_and_meter(lab: &LabServer) -> (Vec<String>, serde_json::Value) {
    let audit: serde_json::Value =
        serde_json::from_str(&lab.get(&format!("{}/twin/audit", lab.aws_endpoint())))
            .expect("json");
    let actions = audit
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|a| a["action"].as_str().map(str::to_string))
        .collect();
    let usage: serde_json::Value =
        serde_json::from_str(&lab.get(&format!("{}/twin/usage", lab.aws_endpoint())))
            .expect("json");
    (actions, usage["records"].clone())
}

/// On a real clock the blocked NCCL runs wait their whole timeout: 3 s (30 minutes of a lab
/// served at 600x) rather than the drill's 3 minutes.
const BLOCKED_QUICKLY: [&str; 2] = ["--set", "blocked_timeout=3s"];

/// An NCCL job's name ends with the clock's instant (`nccl-allreduce-5bde98`): plan and run
/// start at different instants.
fn without_job_suffix(action: &str) -> String {
    match action.split_once("nccl-allreduce-") {
        Some((head, tail)) => {
            let rest = tail.split_once(' ').map_or("", |(_, rest)| rest);
            format!("{head}nccl-allreduce-* {rest}")
        }
        None => action.to_string(),
    }
}

#[test]
fn a_plan_of_a_real_target_only_reads_it_and_its_run_then_makes_the_planned_calls() {
    let lab = LabServer::start("600");
    let (_, meter_before) = aws_calls_and_meter(&lab);
    let planned = Runbook::new()
        .lab_env(&lab)
        .args(["plan", "runbooks/gpu-lab.rhai", "--json"])
        .args(BLOCKED_QUICKLY)
        .arg("--kubeconfig")
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint()])
        .run()
        .expect_code(0);
    let plan: serde_json::Value = serde_json::from_str(&planned.stdout()).expect("json");
    assert!(
        plan["target"]
            .as_str()
            .is_some_and(|t| t.starts_with("the lab twin (captured from the cluster of ")),
        "{}",
        plan["target"]
    );
    assert_eq!(plan["status"], "passed", "{plan}");
    let (called, meter_after) = aws_calls_and_meter(&lab);
    for action in &called {
        let operation = action.split(':').nth(1).unwrap_or_default();
        assert!(
            ["Describe", "List", "Get"]
                .iter()
                .any(|read| operation.starts_with(read)),
            "the plan sent {action} to the real target ({called:?})"
        );
    }
    assert_eq!(
        meter_before, meter_after,
        "nothing started or stopped there"
    );
    let kube: serde_json::Value =
        serde_json::from_str(&lab.get(&format!("{}/twin/audit", lab.url))).expect("json");
    for request in kube.as_array().expect("an array") {
        assert!(
            ["get", "list"].contains(&request["verb"].as_str().unwrap_or_default()),
            "the plan sent {request} to the real target"
        );
    }
    let planned = planned_actions(&plan);
    for expected in [
        "eks::scale_nodegroup myeks5w gpu to 2 done",
        "helm::apply v1/Namespace /gpu-operator done",
        "eks::scale_nodegroup myeks5w gpu to 0 done",
    ] {
        assert!(
            planned.iter().any(|a| a == expected),
            "{expected} in {planned:?}"
        );
    }
    let revokes = planned
        .iter()
        .filter(|a| a.starts_with("ec2::revoke "))
        .count();
    let authorizes = planned
        .iter()
        .filter(|a| a.starts_with("ec2::authorize "))
        .count();
    assert!(revokes >= 2 && authorizes >= 2, "{planned:?}");

    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    Runbook::new()
        .lab_env(&lab)
        .args([
            "run",
            "runbooks/gpu-lab.rhai",
            "--yes",
            "--progress",
            "never",
        ])
        .args(BLOCKED_QUICKLY)
        .arg("--kubeconfig")
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint(), "--report"])
        .arg(&report)
        .run()
        .expect_code(0);
    let made = made_actions(&report);
    assert_eq!(
        planned
            .iter()
            .map(|a| without_job_suffix(a))
            .collect::<Vec<_>>(),
        made.iter()
            .map(|a| without_job_suffix(a))
            .collect::<Vec<_>>(),
        "the run made exactly the planned calls"
    );
}
