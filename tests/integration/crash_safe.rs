//! Crash-safe runs: a run killed at any mutating call is put back by `runbook recover` from
//! its journal; SIGTERM and SIGHUP stop a run as Ctrl-C does; one mutating run per target.

use std::process::Command;
use std::time::Duration;

use crate::support::{LabServer, Runbook, helm_available, send_signal, spawn_with_lines};

/// What the aws CLI and kubectl see of the lab: the GPU node group's desired size, the ingress
/// rules of the node SG and the auxiliary SG, and the pods runbook made.
#[derive(Debug, PartialEq)]
pub(crate) struct LabState {
    pub(crate) gpu_desired: i64,
    pub(crate) node_sg: Vec<String>,
    aux_sg: Vec<String>,
    runbook_pods: usize,
    runbook_services: usize,
}

fn json(output: &std::process::Output) -> serde_json::Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON")
}

fn rules(lab: &LabServer, group: &str) -> Vec<String> {
    let value = json(&lab.aws(&[
        "ec2",
        "describe-security-group-rules",
        "--filters",
        &format!("Name=group-id,Values={group}"),
        "--output",
        "json",
    ]));
    let mut rules: Vec<String> = value["SecurityGroupRules"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            format!(
                "{} {} {}-{} {}",
                if r["IsEgress"] == true {
                    "egress"
                } else {
                    "ingress"
                },
                r["IpProtocol"].as_str().unwrap_or_default(),
                r["FromPort"],
                r["ToPort"],
                r["CidrIpv4"]
                    .as_str()
                    .or(r["ReferencedGroupInfo"]["GroupId"].as_str())
                    .unwrap_or_default()
            )
        })
        .collect();
    rules.sort();
    rules
}

pub(crate) fn state(lab: &LabServer) -> LabState {
    let nodegroup = json(&lab.aws(&[
        "eks",
        "describe-nodegroup",
        "--cluster-name",
        "myeks5w",
        "--nodegroup-name",
        "gpu",
        "--output",
        "json",
    ]));
    let made_by_runbook = |resource: &str| {
        let listed = Command::new("/usr/bin/kubectl")
            .arg("--kubeconfig")
            .arg(&lab.kubeconfig)
            .args([
                "get",
                resource,
                "-A",
                "-l",
                "app.kubernetes.io/managed-by=runbook",
                "-o",
                "json",
            ])
            .output()
            .expect("kubectl runs");
        json(&listed)["items"].as_array().map_or(0, Vec::len)
    };
    LabState {
        gpu_desired: nodegroup["nodegroup"]["scalingConfig"]["desiredSize"]
            .as_i64()
            .unwrap_or(-1),
        node_sg: rules(lab, "sg-0abc3456"),
        aux_sg: rules(lab, "sg-0abc1234"),
        runbook_pods: made_by_runbook("pods"),
        runbook_services: made_by_runbook("services"),
    }
}

fn against(lab: &LabServer, args: &[&str]) -> Runbook {
    Runbook::new()
        .lab_env(lab)
        .args(args)
        .args(["--aws-endpoint", &lab.aws_endpoint(), "--kubeconfig"])
        .arg(&lab.kubeconfig)
}

/// Kills `runbook` at each of its mutating calls in turn (the process exits right after call
/// N is answered, before the journal hears of it), recovers, and checks the lab is as before.
fn kill_at_every_mutation(runbook: &str, extra: &[&str]) -> usize {
    let mut n = 1;
    loop {
        let lab = LabServer::start("600");
        let before = state(&lab);
        let mut args = vec!["run", "--yes", runbook, "--progress", "never"];
        args.extend(extra);
        let ran = against(&lab, &args)
            .command()
            .env("RUNBOOK_CRASH_AFTER_MUTATION", n.to_string())
            .output()
            .expect("runs");
        if ran.status.code() != Some(137) {
            assert_eq!(
                ran.status.code(),
                Some(0),
                "{runbook} finished before mutation {n} but did not pass:\n{}",
                String::from_utf8_lossy(&ran.stderr)
            );
            return n - 1;
        }
        let recovered = against(&lab, &["recover"]).run().expect_code(0);
        let out = recovered.stdout();
        assert!(
            out.contains("[result] recovered"),
            "{runbook} killed at {n}:\n{out}"
        );
        // Scaling back waits on the lab's clock; the Nodes leave with the instances.
        assert_eq!(
            state(&lab),
            before,
            "{runbook} killed at mutation {n}, recovered:\n{out}"
        );
        let again = against(&lab, &["recover"]).run().expect_code(0);
        assert!(
            again.stdout().contains("nothing to recover"),
            "a second recover does nothing: {}",
            again.stdout()
        );
        assert_eq!(state(&lab), before);
        n += 1;
    }
}

#[test]
fn a_kill_at_any_mutation_of_the_gpu_scale_up_is_recovered() {
    if !helm_available() {
        return;
    }
    let mutations = kill_at_every_mutation("runbooks/gpu-scale-up.rhai", &[]);
    assert!(mutations >= 2, "{mutations} mutations");
}

#[test]
fn a_kill_at_any_mutation_of_the_block_experiment_is_recovered() {
    if !helm_available() {
        return;
    }
    let mutations = kill_at_every_mutation(
        "runbooks/sg-block-experiment.rhai",
        &["--set", "blocked_timeout=3s"],
    );
    assert!(mutations >= 6, "{mutations} mutations");
}

#[test]
fn recover_dry_run_says_what_it_would_do_and_does_nothing() {
    if !helm_available() {
        return;
    }
    let lab = LabServer::start("600");
    let ran = against(
        &lab,
        &[
            "run",
            "--yes",
            "runbooks/gpu-scale-up.rhai",
            "--progress",
            "never",
        ],
    )
    .command()
    .env("RUNBOOK_CRASH_AFTER_MUTATION", "1")
    .output()
    .expect("runs");
    assert_eq!(ran.status.code(), Some(137));
    let listed = Runbook::new()
        .args(["recover", "--list"])
        .run()
        .expect_code(0);
    assert!(
        listed
            .stdout()
            .contains("would undo: node group gpu of myeks5w back to 0"),
        "{}",
        listed.stdout()
    );
    let dry = against(&lab, &["recover", "--dry-run"])
        .run()
        .expect_code(0);
    assert!(
        dry.stdout()
            .contains("[would undo] node group gpu of myeks5w back to 0"),
        "{}",
        dry.stdout()
    );
    assert_eq!(state(&lab).gpu_desired, 2, "a dry run changes nothing");
    // The next run against the lab names the killed one and the command that recovers it.
    let next = against(
        &lab,
        &[
            "run",
            "--yes",
            "runbooks/verify.rhai",
            "--progress",
            "never",
        ],
    )
    .run();
    assert!(
        next.stderr()
            .contains("was killed before its cleanups finished; `runbook recover r"),
        "{}",
        next.stderr()
    );
    against(&lab, &["recover"]).run().expect_code(0);
    assert_eq!(state(&lab).gpu_desired, 0);
}

/// The block experiment against a lab, stopped by `signal` once both rules are revoked.
fn stop_the_block_experiment_with(signal: &str, code: i32) {
    let lab = LabServer::start("600");
    let before = state(&lab);
    let command = against(
        &lab,
        &[
            "run",
            "--yes",
            "runbooks/sg-block-experiment.rhai",
            "--progress",
            "never",
            "--set",
            "blocked_timeout=2h",
        ],
    )
    .command();
    let (child, rx) = spawn_with_lines(command);
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the runbook reaches the blocked NCCL run");
        if line.contains("[step] block experiment > without the auxiliary VPC allow too") {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        rules(&lab, "sg-0abc1234")
            .iter()
            .all(|r| r.starts_with("egress"))
    );
    send_signal(&child, signal);
    let output = child.wait_with_output().expect("exits");
    assert_eq!(
        output.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(state(&lab), before, "after SIG{signal}");
}

#[test]
fn sigterm_in_the_block_experiment_restores_the_rules_and_exits_143() {
    if !helm_available() {
        return;
    }
    stop_the_block_experiment_with("TERM", 143);
}

#[test]
fn sighup_in_the_block_experiment_restores_the_rules_and_exits_129() {
    if !helm_available() {
        return;
    }
    stop_the_block_experiment_with("HUP", 129);
}

#[test]
fn a_second_run_against_the_same_lab_is_refused_naming_the_first() {
    let lab = LabServer::start("600");
    let command = against(
        &lab,
        &[
            "run",
            "--yes",
            "runbooks/core/interrupt.rhai",
            "--progress",
            "never",
        ],
    )
    .command();
    let (child, rx) = spawn_with_lines(command);
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the first run reaches its wait");
        if line.contains("waiting for NCCL to hang") {
            break;
        }
    }
    let second = against(
        &lab,
        &[
            "run",
            "--yes",
            "runbooks/verify.rhai",
            "--progress",
            "never",
        ],
    )
    .run()
    .expect_code(2);
    let err = second.stderr();
    assert!(err.contains("is in use by run r"), "{err}");
    assert!(err.contains("runbooks/core/interrupt.rhai"), "{err}");
    assert!(err.contains("--wait-lock"), "{err}");
    send_signal(&child, "INT");
    let output = child.wait_with_output().expect("exits");
    assert_eq!(output.status.code(), Some(130));
    // Free again once the first run has ended.
    against(
        &lab,
        &[
            "run",
            "--yes",
            "runbooks/verify.rhai",
            "--progress",
            "never",
        ],
    )
    .run()
    .expect_code(0);
}

#[test]
fn a_kill_at_any_mutation_of_the_drill_is_recovered() {
    if !helm_available() {
        return;
    }
    let mutations =
        kill_at_every_mutation("runbooks/gpu-lab.rhai", &["--set", "blocked_timeout=3s"]);
    assert!(mutations >= 8, "{mutations} mutations");
}

#[test]
fn a_kill_at_random_moments_of_the_drill_is_recovered() {
    if !helm_available() {
        return;
    }
    // Four moments drawn from a fixed seed (splitmix64): the same ones every run.
    let mut seed: u64 = 0x005e_ed0f_c0de;
    for _ in 0..4 {
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let after = Duration::from_millis(300 + (z ^ (z >> 31)) % 6_000);
        let lab = LabServer::start("600");
        let before = state(&lab);
        let mut child = against(
            &lab,
            &[
                "run",
                "--yes",
                "runbooks/gpu-lab.rhai",
                "--progress",
                "never",
                "--set",
                "blocked_timeout=3s",
            ],
        )
        .command()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts");
        std::thread::sleep(after);
        let _ = child.kill(); // SIGKILL: no cleanup runs
        let _ = child.wait();
        let recovered = against(&lab, &["recover"]).run().expect_code(0);
        assert_eq!(
            state(&lab),
            before,
            "killed after {after:?}, recovered:\n{}",
            recovered.stdout()
        );
    }
}

#[test]
fn only_the_newest_fifty_journals_of_ended_runs_are_kept() {
    let state = tempfile::tempdir().expect("temp dir");
    let runbook = state.path().join("tiny.rhai");
    std::fs::write(&runbook, "step(\"one\", || 1);\n").expect("write");
    for _ in 0..53 {
        Runbook::new()
            .args(["run", "--yes", "--progress", "never", "--history", "off"])
            .arg(&runbook)
            .env("XDG_STATE_HOME", state.path())
            .run()
            .expect_code(0);
    }
    let runs = std::fs::read_dir(state.path().join("runbook/runs"))
        .expect("the journals' folder")
        .count();
    assert_eq!(runs, 50);
}
