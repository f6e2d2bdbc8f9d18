//! Guards on a real target, proved against `lab serve` reached as a real account is (its
//! kubeconfig and AWS endpoint): no change without --yes or a terminal, --read-only stops the
//! first change, --max-gpu-nodes a scale past it, --allow whatever it does not name; each
//! before the call is sent, named in the error and listed in the report.

use std::path::Path;

use crate::support::{LabServer, Ran, Runbook, read_report};

fn run_on(lab: &LabServer, runbook: &str, report: &Path, extra: &[&str]) -> Ran {
    Runbook::new()
        .lab_env(lab)
        .args(["run", runbook, "--progress", "never", "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint(), "--report"])
        .arg(report)
        .args(extra)
        .run()
}

/// A value read from the lab with `eval`, which changes nothing.
fn read(lab: &LabServer, expression: &str) -> String {
    let ran = Runbook::new()
        .lab_env(lab)
        .args(["eval", expression, "--json", "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint()])
        .run()
        .expect_code(0);
    ran.stdout().trim().to_string()
}

fn gpu_desired(lab: &LabServer) -> String {
    read(
        lab,
        "eks::nodegroup(\"myeks5w\", \"gpu\").scaling_config.desired_size",
    )
}

/// `[outcome, resource]` of each change the report lists.
fn changes(report: &serde_json::Value) -> Vec<(String, String)> {
    report["changes"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|c| {
                    (
                        c["outcome"].as_str().unwrap_or_default().to_string(),
                        c["resource"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn without_a_terminal_a_real_target_needs_yes_or_read_only() {
    let lab = LabServer::start("600");
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    let refused = run_on(&lab, "runbooks/verify.rhai", &report, &[]).expect_code(2);
    let text = refused.stderr();
    assert!(
        text.contains("there is no terminal to confirm on: pass --yes")
            && text.contains("or --read-only")
            && text.contains("(nothing has run)"),
        "{text}"
    );
    assert!(!report.exists(), "nothing ran, so no report");
    // A verify-only drill says so and needs no one to confirm.
    run_on(&lab, "runbooks/verify.rhai", &report, &["--read-only"]).expect_code(0);
    let report = read_report(&report);
    assert_eq!(report["guards"], serde_json::json!({"read_only": true}));
    assert!(report.get("changes").is_none(), "verify changes nothing");
}

#[test]
fn read_only_stops_the_first_revoke_before_it_is_sent() {
    let lab = LabServer::start("600");
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    let rules = || read(&lab, "ec2::rules(\"sg-0abc3456\").len()");
    let before = rules();
    let ran = run_on(
        &lab,
        "runbooks/aws/sg-rules.rhai",
        &report,
        &["--read-only"],
    )
    .expect_code(1);
    let all = format!("{}{}", ran.stdout(), ran.stderr());
    assert!(
        all.contains("ec2::revoke sg-0abc3456 ingress tcp 1025-65535 from sg-0abc3456 was not sent: the run is --read-only"),
        "{all}"
    );
    assert_eq!(rules(), before, "the rule is still there");
    let report = read_report(&report);
    assert_eq!(
        changes(&report),
        [("refused".to_string(), "sg/sg-0abc3456".to_string())]
    );
    assert_eq!(
        report["steps"][1]["name"], "remove the NCCL path",
        "{report}"
    );
    assert_eq!(report["steps"][1]["status"], "failed");
}

/// gpu-scale-up.rhai with `--yes` and `guards`, which stop it: what it printed, and its report.
fn failed_scale_up(lab: &LabServer, guards: &[&str]) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    let mut extra = vec!["--yes"];
    extra.extend_from_slice(guards);
    let ran = run_on(lab, "runbooks/gpu-scale-up.rhai", &report, &extra).expect_code(1);
    (
        format!("{}{}", ran.stdout(), ran.stderr()),
        read_report(&report),
    )
}

#[test]
fn max_gpu_nodes_stops_a_scale_past_it_and_the_cleanup_still_runs() {
    let lab = LabServer::start("600");
    let (all, report) = failed_scale_up(&lab, &["--max-gpu-nodes", "1"]);
    assert!(
        all.contains("eks::scale_nodegroup myeks5w gpu to 2 was not sent: it asks for 2 GPU nodes and --max-gpu-nodes is 1"),
        "{all}"
    );
    assert_eq!(gpu_desired(&lab), "0", "no GPU node was started");
    assert_eq!(report["guards"], serde_json::json!({"max_gpu_nodes": 1}));
    let listed = report["changes"].as_array().expect("changes");
    assert_eq!(listed[0]["outcome"], "refused");
    assert_eq!(listed[0]["gpu_nodes"], 2);
    // The cleanup's scale to 0 is within the limit: made, and marked as a cleanup's.
    let last = listed.last().expect("the cleanup's change");
    assert_eq!(last["action"], "eks::scale_nodegroup myeks5w gpu to 0");
    assert_eq!(last["outcome"], "done");
    assert_eq!(last["cleanup"], true);
}

#[test]
fn allow_lets_the_named_resources_change_and_stops_the_rest_before_a_helm_install_starts() {
    let lab = LabServer::start("600");
    let (all, report) = failed_scale_up(&lab, &["--allow", "nodegroup/myeks5w/*"]);
    assert!(
        all.contains("namespace/gpu-operator matches no --allow pattern (nodegroup/myeks5w/*): add --allow namespace/gpu-operator if it may change"),
        "{all}"
    );
    // Nothing of the chart went in: every object was held to the guard before the first.
    assert_eq!(
        read(
            &lab,
            "k8s::list(\"DaemonSet\", #{ namespace: \"gpu-operator\" }).len()"
        ),
        "0"
    );
    let listed = changes(&report);
    assert_eq!(
        listed.first(),
        Some(&("done".to_string(), "nodegroup/myeks5w/gpu".to_string())),
        "{report}"
    );
    assert!(
        listed.contains(&("refused".to_string(), "namespace/gpu-operator".to_string())),
        "{listed:?}"
    );
    assert_eq!(gpu_desired(&lab), "0", "the cleanup scaled the GPUs back");
}

/// The run at a terminal (a pty): it rehearses, shows the plan and asks before it starts, and
/// goes on only on a yes. Returns what it showed before the question, and the rest.
fn at_a_terminal(lab: &LabServer, answer: &str) -> (String, String) {
    use expectrl::Expect;
    use std::io::Read;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_runbook"));
    command
        .args([
            "run",
            "runbooks/gpu-scale-up.rhai",
            "--progress",
            "never",
            "--kubeconfig",
        ])
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint()])
        .current_dir(crate::support::repo_root())
        .env("TERM", "xterm");
    for (key, value) in &lab.aws_env {
        command.env(key, value);
    }
    let mut session = expectrl::session::OsSession::spawn(command).expect("a pty");
    session.set_expect_timeout(Some(std::time::Duration::from_secs(30)));
    let shown = session.expect("Go on? [y/N] ").expect("the question");
    let shown = String::from_utf8_lossy(shown.before()).into_owned();
    session.send_line(answer).expect("the pty takes input");
    let mut rest = Vec::new();
    let _ = session.read_to_end(&mut rest);
    (shown, String::from_utf8_lossy(&rest).into_owned())
}

#[test]
fn at_a_terminal_a_run_on_a_real_target_asks_first() {
    let lab = LabServer::start("600");
    let (plan, declined) = at_a_terminal(&lab, "n");
    assert!(
        declined.contains("not confirmed: nothing has run") && !declined.contains("[step]"),
        "{declined}"
    );
    for expected in [
        "plan, rehearsed on the lab twin (captured from the cluster of ",
        "GPU scale-up: eks::scale_nodegroup myeks5w gpu to 2; helm::apply v1/Namespace /gpu-operator;",
        "cleanup GPU node group back to 0: eks::scale_nodegroup myeks5w gpu to 0",
        "it passes after ",
        ", up to 2 GPU nodes; cost while it runs $",
    ] {
        assert!(plan.contains(expected), "{expected} in:\n{plan}");
    }
    assert_eq!(
        gpu_desired(&lab),
        "0",
        "the rehearsal changed nothing there"
    );
    let (_, confirmed) = at_a_terminal(&lab, "y");
    assert!(confirmed.contains("[result] passed:"), "{confirmed}");
}

#[test]
fn max_cost_stops_the_run_once_what_it_started_has_cost_that_much() {
    // On the twin's virtual clock: two g5.xlarge ($2.01/h) pass $0.05 while they join.
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    let ran = Runbook::new()
        .args([
            "run",
            "runbooks/gpu-lab.rhai",
            "--progress",
            "never",
            "--max-cost-usd",
            "0.05",
            "--report",
        ])
        .arg(&report)
        .run()
        .expect_code(1);
    assert!(
        ran.stderr()
            .contains("stopped by --max-cost-usd 0.05: the run has spent $0.0")
            && ran
                .stderr()
                .contains("2 x g5.xlarge of nodegroup/myeks5w/gpu ($2.01/h)); its cleanups run"),
        "{}",
        ran.stderr()
    );
    let report = read_report(&report);
    assert_eq!(report["guards"]["max_cost_usd"], 0.05);
    assert!(
        report["spent_usd"].as_f64().is_some_and(|s| s >= 0.05),
        "{}",
        report["spent_usd"]
    );
    assert_eq!(
        report["defers"][0]["status"], "passed",
        "the GPUs went back to 0"
    );

    // On a real clock (lab serve reached as a real account): $0.0005 is less than two
    // g5.xlarge's 60 s minimum charge ($0.0335), so the scale-up is refused before it is sent.
    let lab = LabServer::start("600");
    let report = dir.path().join("real.json");
    let ran = run_on(
        &lab,
        "runbooks/gpu-scale-up.rhai",
        &report,
        &["--yes", "--max-cost-usd", "0.0005"],
    )
    .expect_code(1);
    assert!(
        ran.stderr().contains(
            "eks::scale_nodegroup myeks5w gpu to 2 was not sent: it starts 2 x g5.xlarge, billed for at least 60 s each ($0.0335 together)"
        ),
        "{}",
        ran.stderr()
    );
    assert_eq!(gpu_desired(&lab), "0", "nothing was started");
    let report = read_report(&report);
    assert!(
        report["spent_usd"].as_f64().is_some_and(|s| s < 0.0005),
        "{}",
        report["spent_usd"]
    );
}
