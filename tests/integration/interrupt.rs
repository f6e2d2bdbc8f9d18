//! Ctrl-C: the first stops the run and lets cleanups finish (exit 130); the second aborts
//! them and says which were skipped.

use std::process::Child;
use std::sync::mpsc;
use std::time::Duration;

use crate::support::{Runbook, read_report, spawn_with_lines};

fn send_sigint(child: &Child) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// Starts the interrupt runbook on the real clock and returns once it is inside its wait.
fn start(extra: &[&str], report: &std::path::Path) -> (Child, mpsc::Receiver<String>) {
    let command = Runbook::new()
        .args([
            "run",
            "runbooks/core/interrupt.rhai",
            "--clock",
            "real",
            "--progress",
            "never",
            "--report",
        ])
        .arg(report)
        .args(extra)
        .command();
    let (child, rx) = spawn_with_lines(command);
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the runbook reaches its wait");
        if line.contains("waiting for NCCL to hang") {
            break;
        }
    }
    (child, rx)
}

fn finish(child: Child) -> (i32, String) {
    let output = child.wait_with_output().expect("exits");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn first_ctrl_c_runs_the_cleanups_and_exits_130() {
    let dir = tempfile::tempdir().expect("temp dir");
    let report_path = dir.path().join("report.json");
    let (child, rx) = start(&[], &report_path);
    send_sigint(&child);
    let (code, stderr) = finish(child);
    let stdout: Vec<String> = rx.try_iter().collect();
    assert_eq!(code, 130, "stderr:\n{stderr}");
    assert!(
        stdout.iter().any(|l| l == "[log] cleanup: restored"),
        "{stdout:#?}"
    );
    let report = read_report(&report_path);
    assert_eq!(report["status"], "interrupted");
    assert_eq!(report["steps"][0]["status"], "interrupted");
    assert_eq!(report["defers"][0]["status"], "passed");
}

#[test]
fn second_ctrl_c_aborts_and_names_the_skipped_cleanups() {
    let dir = tempfile::tempdir().expect("temp dir");
    let report_path = dir.path().join("report.json");
    let (child, rx) = start(&["--set", "cleanup_takes=60s"], &report_path);
    send_sigint(&child);
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the cleanup starts");
        if line.contains("cleanup: restoring") {
            break;
        }
    }
    send_sigint(&child);
    let (code, stderr) = finish(child);
    assert_eq!(code, 130);
    assert!(
        stderr.contains("aborted: these cleanups did not run:\n  - restore the security group"),
        "{stderr}"
    );
    let report = read_report(&report_path);
    assert_eq!(report["status"], "interrupted");
    assert_eq!(report["defers"][0]["status"], "skipped");
}
