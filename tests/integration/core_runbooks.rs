//! The runbooks under `runbooks/core/` that exercise the host: each report is a snapshot.

use crate::support::{Runbook, read_report, redact_wall_text};
use crate::with_snapshots;

fn run_with_report(runbook: &str, extra: &[&str], code: i32) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    std::fs::create_dir(dir.path().join("snapshots")).expect("snapshot folder");
    Runbook::new()
        .args(["run", runbook, "--report"])
        .arg(&report)
        .arg("--snapshot-dir")
        .arg(dir.path().join("snapshots"))
        .args(extra)
        .run()
        .expect_code(code);
    read_report(&report)
}

#[test]
fn defers_run_last_in_first_out_on_success() {
    let report = run_with_report("runbooks/core/defer-order.rhai", &[], 0);
    with_snapshots!({ insta::assert_json_snapshot!("defer-order-pass", report) });
}

#[test]
fn defers_run_after_a_failed_step_and_later_steps_do_not() {
    let report = run_with_report(
        "runbooks/core/defer-order.rhai",
        &["--set", "outcome=fail"],
        1,
    );
    with_snapshots!({ insta::assert_json_snapshot!("defer-order-fail", report) });
}

#[test]
fn defers_run_after_a_script_error() {
    let report = run_with_report(
        "runbooks/core/defer-order.rhai",
        &["--set", "outcome=script-error"],
        2,
    );
    with_snapshots!({ insta::assert_json_snapshot!("defer-order-script-error", report) });
}

#[test]
fn a_failing_cleanup_is_reported_and_the_others_still_run() {
    let report = run_with_report("runbooks/core/failing-cleanup.rhai", &[], 3);
    with_snapshots!({ insta::assert_json_snapshot!("failing-cleanup", report) });
}

#[test]
fn wait_until_fails_with_the_last_value_after_the_virtual_timeout() {
    let report = run_with_report("runbooks/core/wait-timeout.rhai", &[], 1);
    assert_eq!(
        report["virtual_ms"], 120_000,
        "the 2m timeout passed on the virtual clock"
    );
    with_snapshots!({ insta::assert_json_snapshot!("wait-timeout", report) });
}

#[test]
fn wait_until_and_retry_poll_and_back_off_on_the_clock() {
    let report = run_with_report("runbooks/core/wait-and-retry.rhai", &[], 0);
    with_snapshots!({ insta::assert_json_snapshot!("wait-and-retry", report) });
}

#[test]
fn steps_nest_and_a_caught_failure_is_still_recorded() {
    let report = run_with_report("runbooks/core/steps.rhai", &[], 1);
    with_snapshots!({ insta::assert_json_snapshot!("steps", report) });
}

#[test]
fn params_take_set_overrides_in_the_default_type() {
    let report = run_with_report(
        "runbooks/core/params.rhai",
        &[
            "--set",
            "gpu_nodes=4",
            "--set",
            "destroy=true",
            "--set",
            "timeout=20m",
            "--set",
            r#"zones=["ap-northeast-2a"]"#,
        ],
        0,
    );
    with_snapshots!({ insta::assert_json_snapshot!("params-overrides", report) });
}

#[test]
fn set_reads_a_value_from_a_file_with_at() {
    let dir = tempfile::tempdir().expect("temp dir");
    let value = dir.path().join("cluster.txt");
    std::fs::write(&value, "lab-from-file").expect("write value");
    let report = dir.path().join("report.json");
    let ran = Runbook::new()
        .args([
            "run",
            "runbooks/core/params.rhai",
            "--progress",
            "never",
            "--set",
        ])
        .arg(format!("cluster=@{}", value.display()))
        .arg("--allow-read")
        .arg(dir.path())
        .arg("--report")
        .arg(&report)
        .run()
        .expect_code(0);
    assert!(
        ran.stdout().contains("cluster=lab-from-file"),
        "{}",
        ran.stdout()
    );
    // The report says where the value came from, never what the file holds.
    assert_eq!(
        read_report(&report)["parameters"]["cluster"],
        format!("@{}", value.display())
    );
}

#[test]
fn plain_output_is_greppable_lines_without_control_codes() {
    let ran = Runbook::new()
        .args([
            "run",
            "runbooks/core/defer-order.rhai",
            "--progress",
            "never",
        ])
        .run()
        .expect_code(0);
    let stdout = ran.stdout();
    assert!(
        !stdout.contains('\u{1b}'),
        "no escape codes in plain output:\n{stdout}"
    );
    with_snapshots!({
        insta::assert_snapshot!("defer-order-plain-output", redact_wall_text(&stdout))
    });
}

#[test]
fn junit_has_one_case_per_step_with_failure_messages() {
    let dir = tempfile::tempdir().expect("temp dir");
    let junit = dir.path().join("junit.xml");
    Runbook::new()
        .args([
            "run",
            "runbooks/core/defer-order.rhai",
            "--set",
            "outcome=fail",
            "--junit",
        ])
        .arg(&junit)
        .run()
        .expect_code(1);
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    assert!(xml.contains(r#"<testcase name="open resources""#), "{xml}");
    assert!(xml.contains(r#"<failure message="assertion failed: the resource answered wrongly (at runbooks/core/defer-order.rhai:15:19)""#), "{xml}");
    assert_eq!(
        xml.matches("<testcase ").count(),
        2,
        "the step after the failure never ran: {xml}"
    );
}
