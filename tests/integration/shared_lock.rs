//! One target, one lock, whatever machine or state folder a runner has: runs with state folders
//! of their own against one `lab serve` meet at the Lease in its cluster, a target is one
//! target however its address is spelt, and a killed runner's Lease is taken over.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::{LabServer, Runbook, kubectl, kubectl_run, send_signal, spawn_with_lines};

/// A runner of its own: its own state folder (journals, the local lock), as a CI job has.
struct Runner {
    state: tempfile::TempDir,
}

impl Runner {
    fn new() -> Self {
        Self {
            state: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// runbook against `lab` through `kubeconfig` (one spelling of the lab's address).
    fn against(&self, lab: &LabServer, kubeconfig: &Path, args: &[&str]) -> Runbook {
        Runbook::new()
            .lab_env(lab)
            .env("XDG_STATE_HOME", self.state.path())
            .args(args)
            .args(["--aws-endpoint", &lab.aws_endpoint(), "--kubeconfig"])
            .arg(kubeconfig)
    }
}

/// The lab's kubeconfig with its server spelt otherwise: `https://127.0.0.1:PORT/`,
/// `https://localhost:PORT`.
fn spellings(lab: &LabServer, dir: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(&lab.kubeconfig).expect("the lab's kubeconfig");
    let localhost = lab.url.replace("127.0.0.1", "localhost");
    [format!("{}/", lab.url), localhost]
        .iter()
        .enumerate()
        .map(|(n, server)| {
            let path = dir.join(format!("kubeconfig-{n}"));
            std::fs::write(&path, text.replace(&lab.url, server)).expect("write");
            path
        })
        .collect()
}

/// The run id a run prints first: `[run] FILE (real clock, run r...)`.
fn run_id(line: &str) -> String {
    line.split("run ")
        .last()
        .and_then(|rest| rest.strip_suffix(')'))
        .expect("a run id")
        .to_string()
}

/// Starts the runbook that waits to be interrupted, and waits until it is in its step: what
/// it holds by then it holds until stopped.
fn holder(runner: &Runner, lab: &LabServer) -> (std::process::Child, String) {
    let command = runner
        .against(
            lab,
            &lab.kubeconfig,
            &[
                "run",
                "--yes",
                "runbooks/core/interrupt.rhai",
                "--progress",
                "never",
            ],
        )
        .command();
    let (child, lines) = spawn_with_lines(command);
    let mut id = None;
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the first run reaches its wait");
        if line.starts_with("[run] ") {
            id = Some(run_id(&line));
        }
        if line.contains("waiting for NCCL to hang") {
            break;
        }
    }
    (child, id.expect("the run said its id"))
}

fn holder_identity(lab: &LabServer) -> Option<String> {
    let kubectl = kubectl("1.32")?;
    let (code, out, err) = kubectl_run(
        &kubectl,
        lab,
        &[
            "get",
            "lease",
            "-n",
            "runbook",
            "target-lock",
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ],
    );
    match code {
        0 => Some(out),
        _ if err.contains("NotFound") => Some(String::new()),
        _ => panic!("kubectl get lease: {err}"),
    }
}

#[test]
fn runners_with_their_own_state_meet_at_the_lease_however_the_target_is_spelt() {
    let lab = LabServer::start("600");
    let dir = tempfile::tempdir().expect("temp dir");
    let first = Runner::new();
    let (child, first_id) = holder(&first, &lab);
    if let Some(identity) = holder_identity(&lab) {
        assert!(identity.starts_with(&format!("{first_id}@")), "{identity}");
        // kubectl's table shows who holds it, as a real API server prints Leases.
        let kubectl = kubectl("1.32").expect("gated above");
        let (_, table, _) = kubectl_run(&kubectl, &lab, &["get", "lease", "-n", "runbook"]);
        let mut lines = table.lines();
        let header: Vec<&str> = lines
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        assert_eq!(header, ["NAME", "HOLDER", "AGE"], "{table}");
        assert!(
            lines.any(|l| l.starts_with("target-lock") && l.contains(&first_id)),
            "{table}"
        );
    }
    for kubeconfig in spellings(&lab, dir.path()) {
        let second = Runner::new();
        let started = Instant::now();
        let refused = second
            .against(
                &lab,
                &kubeconfig,
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
        let took = started.elapsed();
        let err = refused.stderr();
        assert!(
            err.contains(&format!("in use by run {first_id}")),
            "{}: {err}",
            kubeconfig.display()
        );
        assert!(err.contains("runbooks/core/interrupt.rhai, on "), "{err}");
        assert!(err.contains("the Lease runbook/target-lock"), "{err}");
        assert!(err.contains("--wait-lock"), "{err}");
        assert!(took < Duration::from_secs(5), "refused after {took:?}");
    }
    // A run that only reads takes no lock: a monitoring verify runs beside a drill.
    Runner::new()
        .against(
            &lab,
            &lab.kubeconfig,
            &[
                "run",
                "--read-only",
                "runbooks/verify.rhai",
                "--progress",
                "never",
            ],
        )
        .run()
        .expect_code(0);
    // One that waits starts once the first has ended.
    let waiting = Runner::new()
        .against(
            &lab,
            &spellings(&lab, dir.path())[1],
            &[
                "run",
                "--yes",
                "runbooks/verify.rhai",
                "--progress",
                "never",
                "--wait-lock",
                "2m",
            ],
        )
        .command()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    std::thread::sleep(Duration::from_secs(2));
    send_signal(&child, "INT");
    let first_out = child.wait_with_output().expect("exits");
    assert_eq!(first_out.status.code(), Some(130));
    let waited = waiting.wait_with_output().expect("exits");
    let err = String::from_utf8_lossy(&waited.stderr);
    assert_eq!(waited.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!(
            "waiting up to 2m0s for the target's lock, held by run {first_id}"
        )) || err.contains("waiting up to"),
        "{err}"
    );
    // Given back at the end: no Lease is left behind.
    if let Some(identity) = holder_identity(&lab) {
        assert_eq!(identity, "", "the Lease is gone after the runs");
    }
}

#[test]
fn a_killed_runners_lease_is_taken_over_and_its_run_recovered_however_the_target_is_spelt() {
    let lab = LabServer::start("600");
    let dir = tempfile::tempdir().expect("temp dir");
    let killed = Runner::new();
    let ran = killed
        .against(
            &lab,
            &lab.kubeconfig,
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
    assert_eq!(
        ran.status.code(),
        Some(137),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let killed_id = run_id(
        String::from_utf8_lossy(&ran.stdout)
            .lines()
            .find(|l| l.starts_with("[run] "))
            .expect("the run said its id"),
    );
    assert!(lab.gpu_desired() > 0, "the killed run scaled the GPUs up");
    if let Some(identity) = holder_identity(&lab) {
        assert!(
            identity.starts_with(&format!("{killed_id}@")),
            "the killed run's Lease stays: {identity}"
        );
    }
    // Another runner takes the Lease over at once (the killed process is gone from this
    // machine) and says whose it was and how to put its changes back.
    let spelt = spellings(&lab, dir.path());
    let next = Runner::new()
        .against(
            &lab,
            &spelt[1],
            &[
                "run",
                "--yes",
                "runbooks/core/params.rhai",
                "--progress",
                "never",
            ],
        )
        .run();
    let err = next.stderr();
    assert!(
        err.contains(&format!("took over the target's lock from run {killed_id}")),
        "{err}"
    );
    assert!(
        err.contains(&format!("runbook recover {killed_id}")),
        "{err}"
    );
    // Its own runner recovers it through another spelling of the same target.
    let recovered = killed
        .against(&lab, &spelt[0], &["recover"])
        .run()
        .expect_code(0);
    assert!(
        recovered
            .stdout()
            .contains(&format!("[recover] run {killed_id}")),
        "{}",
        recovered.stdout()
    );
    assert!(
        recovered.stdout().contains("[result] recovered"),
        "{}",
        recovered.stdout()
    );
    assert_eq!(lab.gpu_desired(), 0);
}
