//! `parallel`: branches' steps keep their names and the order given, every branch runs to its
//! end, the first failure is raised with how each ended, cleanups inside branches run, and
//! Ctrl-C stops all branches.

use std::time::Duration;

use crate::support::{Runbook, read_report, report_with, send_signal, spawn_with_lines};

fn names(steps: &serde_json::Value) -> Vec<String> {
    steps
        .as_array()
        .map(|s| {
            s.iter()
                .map(|s| {
                    format!(
                        "{} {}",
                        s["name"].as_str().unwrap_or(""),
                        s["status"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn branches_keep_their_step_names_and_the_order_given() {
    let report = report_with("runbooks/core/parallel.rhai", &[], 0);
    let checks = &report["steps"][0];
    assert_eq!(checks["name"], "checks");
    assert_eq!(
        names(&checks["steps"]),
        ["first passed", "second passed", "third passed"]
    );
    assert_eq!(names(&checks["steps"][1]["steps"]), ["inner passed"]);
    // On the virtual clock the branches take turns: the same history every run.
    assert_eq!(checks["virtual_ms"], 4000);
    let ran = Runbook::new()
        .args(["run", "runbooks/core/parallel.rhai", "--progress", "never"])
        .run()
        .expect_code(0);
    assert!(
        ran.stdout().contains("results [1, 2, 3]"),
        "{}",
        ran.stdout()
    );
    assert!(
        ran.stdout().contains("[pass] checks > second > inner"),
        "{}",
        ran.stdout()
    );
}

#[test]
fn on_a_real_clock_the_branches_wait_at_the_same_time() {
    let report = report_with(
        "runbooks/core/parallel.rhai",
        &["--clock", "real", "--set", "wait=1s"],
        0,
    );
    let checks = &report["steps"][0];
    assert_eq!(
        names(&checks["steps"]),
        ["first passed", "second passed", "third passed"]
    );
    // Two 1 s waits side by side take one second of the run's clock, not two.
    let took = checks["virtual_ms"].as_u64().expect("a duration");
    assert!((1000..1900).contains(&took), "the branches took {took} ms");
}

#[test]
fn a_failing_branch_lets_the_others_finish_and_its_error_is_raised() {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    let ran = Runbook::new()
        .args([
            "run",
            "runbooks/core/parallel.rhai",
            "--progress",
            "never",
            "--set",
            "fail=true",
            "--report",
        ])
        .arg(&report)
        .run()
        .expect_code(1);
    let report = read_report(&report);
    assert_eq!(
        names(&report["steps"][0]["steps"]),
        ["first passed", "second passed", "third failed"]
    );
    assert!(
        ran.stderr().contains("third failed on purpose"),
        "{}",
        ran.stderr()
    );
    assert!(
        ran.stdout()
            .contains("parallel: #1 passed, #2 passed, #3 failed"),
        "{}",
        ran.stdout()
    );
    assert!(
        ran.stdout().contains("third cleaned up"),
        "the branch's cleanup ran:\n{}",
        ran.stdout()
    );
    assert!(!ran.stdout().contains("results"), "{}", ran.stdout());
}

#[test]
fn ctrl_c_stops_every_branch_and_the_cleanups_still_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    let command = Runbook::new()
        .args([
            "run",
            "runbooks/core/parallel.rhai",
            "--clock",
            "real",
            "--progress",
            "never",
            "--set",
            "wait=10m",
            "--report",
        ])
        .arg(&report)
        .command();
    let (child, rx) = spawn_with_lines(command);
    // The branches are threads that start in any order on a loaded machine, so Ctrl-C goes
    // only once the first and second wait and the third is done.
    let (mut first_waits, mut second_waits, mut third_done) = (false, false, false);
    while !(first_waits && second_waits && third_done) {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the branches start");
        first_waits |= line.contains("[step] checks > first");
        second_waits |= line.contains("[step] checks > second > inner");
        third_done |= line.contains("[pass] checks > third");
    }
    send_signal(&child, "INT");
    let output = child.wait_with_output().expect("exits");
    assert_eq!(output.status.code(), Some(130));
    let report = read_report(&report);
    assert_eq!(
        names(&report["steps"][0]["steps"]),
        ["first interrupted", "second interrupted", "third passed"]
    );
    let stdout: Vec<String> = rx.try_iter().collect();
    assert!(
        stdout.iter().any(|l| l.contains("third cleaned up")),
        "{stdout:?}"
    );
}
