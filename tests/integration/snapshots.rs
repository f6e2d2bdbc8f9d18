//! `snapshot()`: new, matched, mismatched with a diff, and accepted with --update-snapshots.

use std::path::Path;

use crate::support::{Runbook, read_report};

fn run(dir: &Path, extra: &[&str], code: i32) -> (serde_json::Value, String) {
    let report = dir.join("report.json");
    // --snapshot-dir names a folder that must exist; the runbook's own folder inside it is
    // made on the first snapshot.
    let _ = std::fs::create_dir(dir.join("snapshots"));
    let ran = Runbook::new()
        .args([
            "run",
            "runbooks/core/snapshot.rhai",
            "--progress",
            "never",
            "--report",
        ])
        .arg(&report)
        .arg("--snapshot-dir")
        .arg(dir.join("snapshots"))
        .args(extra)
        .run()
        .expect_code(code);
    (read_report(&report), ran.stdout() + ran.stderr().as_str())
}

fn outcomes(report: &serde_json::Value) -> Vec<String> {
    report["snapshots"]
        .as_array()
        .expect("snapshots listed")
        .iter()
        .map(|s| {
            format!(
                "{}={}",
                s["name"].as_str().unwrap_or(""),
                s["outcome"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[test]
fn snapshots_are_new_then_match_then_mismatch_then_update() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (first, _) = run(dir.path(), &[], 0);
    assert_eq!(outcomes(&first), ["addons=new", "node=new"]);
    let stored = std::fs::read_to_string(dir.path().join("snapshots/core/snapshot/addons.yaml"))
        .expect("written");
    assert!(
        stored.starts_with("coredns:\n  replicas: 2\n"),
        "stable key order:\n{stored}"
    );

    let (second, _) = run(dir.path(), &[], 0);
    assert_eq!(outcomes(&second), ["addons=matched", "node=matched"]);

    let (third, output) = run(dir.path(), &["--set", "version=v1.13.9-eksbuild.1"], 1);
    assert_eq!(
        outcomes(&third),
        ["addons=mismatched"],
        "the failing step stops the run"
    );
    assert!(
        output.contains("-  version: v1.13.2-eksbuild.4\n"),
        "unified diff shown:\n{output}"
    );
    assert!(
        output.contains("+  version: v1.13.9-eksbuild.1\n"),
        "unified diff shown:\n{output}"
    );
    assert!(
        output.contains("--update-snapshots"),
        "says how to accept:\n{output}"
    );

    let (fourth, _) = run(
        dir.path(),
        &["--set", "version=v1.13.9-eksbuild.1", "--update-snapshots"],
        0,
    );
    assert_eq!(outcomes(&fourth), ["addons=updated", "node=matched"]);
    let (fifth, _) = run(dir.path(), &["--set", "version=v1.13.9-eksbuild.1"], 0);
    assert_eq!(outcomes(&fifth), ["addons=matched", "node=matched"]);
}
