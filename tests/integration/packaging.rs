//! What the README's deploy/ folder ships, each checked by the real tool that reads it.

use crate::support::repo_root;

#[test]
fn the_alert_rules_pass_their_promtool_tests_and_use_series_runbook_writes() {
    let Some(promtool) = crate::support::promtool() else {
        return;
    };
    let dir = repo_root().join("deploy/prometheus");
    for args in [
        &["check", "rules", "runbook-alerts.yml"][..],
        &["test", "rules", "runbook-alerts.test.yml"],
    ] {
        let out = std::process::Command::new(&promtool)
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("promtool runs");
        assert!(
            out.status.success(),
            "promtool {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Every series an alert reads is one a run writes (the textfile snapshot shows them all).
    let rules = std::fs::read_to_string(dir.join("runbook-alerts.yml")).expect("readable");
    let written =
        std::fs::read_to_string(repo_root().join("snapshots/gpu-lab-metrics-textfile.snap"))
            .expect("the textfile snapshot");
    let used: Vec<&str> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("expr: "))
        .flat_map(|expr| expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .filter(|word| word.starts_with("runbook_"))
        .collect();
    assert!(used.len() >= 4, "{used:?}");
    for series in used {
        assert!(
            written.contains(&format!("# TYPE {series} gauge")),
            "`{series}` is not a series runbook writes"
        );
    }
}
