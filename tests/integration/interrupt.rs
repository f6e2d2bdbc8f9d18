//! Ctrl-C: the first stops the run and lets cleanups finish (exit 130); the second aborts
//! them and says which were skipped.

use std::process::Child;
use std::sync::mpsc;
use std::time::Duration;

use crate::support::{Runbook, read_report, send_signal, spawn_with_lines};

fn send_sigint(child: &Child) {
    send_signal(child, "INT");
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

/// Ctrl-C, then a second one once the cleanup has started; answers the exit code, stderr and
/// the report.
fn abort_in_the_cleanup(extra: &[&str]) -> (i32, String, serde_json::Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    let report_path = dir.path().join("report.json");
    let mut args = vec!["--set", "cleanup_takes=60s"];
    args.extend(extra);
    let (child, rx) = start(&args, &report_path);
    send_sigint(&child);
    // Into the cleanup: past its call to the cluster when it makes one (the first request of
    // the run, a TLS handshake, can take longer than any fixed pause on a loaded machine).
    let calls = extra.contains(&"cleanup_calls=true");
    let wanted = if calls {
        "cleanup: called the cluster"
    } else {
        "cleanup: restoring"
    };
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the cleanup starts");
        if line.contains(wanted) {
            break;
        }
    }
    send_sigint(&child);
    let (code, stderr) = finish(child);
    (code, stderr, read_report(&report_path))
}

#[test]
fn second_ctrl_c_aborts_and_names_the_skipped_cleanups_with_exit_3() {
    let (code, stderr, report) = abort_in_the_cleanup(&[]);
    assert_eq!(code, 3, "a cleanup did not finish: {stderr}");
    assert!(
        stderr.contains(
            "aborted: a second signal came before the cleanups finished\ncleanup did not finish: something may be left behind (exit 3)\n  - restore the security group: did not run"
        ),
        "{stderr}"
    );
    assert_eq!(report["status"], "interrupted");
    assert_eq!(report["defers"][0]["status"], "skipped");
}

#[test]
fn a_cleanup_aborted_after_its_first_call_is_cut_short_not_skipped() {
    let (code, stderr, report) = abort_in_the_cleanup(&["--set", "cleanup_calls=true"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains(
            "  - restore the security group: cut short by the second Ctrl-C after it had sent calls"
        ),
        "{stderr}"
    );
    assert_eq!(report["defers"][0]["status"], "cut_short");
}
