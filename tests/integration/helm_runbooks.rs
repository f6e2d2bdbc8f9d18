//! `helm::` from runbooks: the render summary the lab previews, install on the twin, and what a
//! user sees when helm is missing or a chart is broken.

use crate::support::{Runbook, helm_available};
use crate::with_snapshots;

fn eval(script: &str, env: &[(&str, &str)], code: i32) -> (String, String) {
    let mut command = Runbook::new().args(["eval", "--json", script]).command();
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("runs");
    assert_eq!(
        output.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_gpu_operator_preview_summary() {
    if !helm_available() {
        return;
    }
    let (out, _) = eval(
        r#"helm::summary(helm::template("charts/gpu-operator", #{ namespace: "gpu-operator", set: #{ "driver.enabled": false, "toolkit.enabled": false } }))"#,
        &[],
        0,
    );
    let summary: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(summary["total"], 27);
    with_snapshots!({ insta::assert_json_snapshot!("helm-gpu-operator-summary", summary) });
}

#[test]
fn the_chart_installs_on_the_twin_and_the_operator_makes_its_daemonsets() {
    if !helm_available() {
        return;
    }
    let (out, _) = eval(
        r#"let objects = helm::template("charts/gpu-operator", #{ namespace: "gpu-operator", include_crds: true, set: #{ "nfd.enabled": false } });
           let installed = helm::apply(objects, #{ namespace: "gpu-operator", wait: "5m" });
           #{ crds: installed.crds.len(), skipped: installed.hooks_skipped.len(), rolled_out: installed.rolled_out,
              daemonsets: k8s::list("DaemonSet", #{ namespace: "gpu-operator" }).map(|d| d.metadata.name) }"#,
        &[],
        0,
    );
    let value: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        value["crds"], 2,
        "ClusterPolicy and NVIDIADriver, NFD's off"
    );
    assert_eq!(
        value["skipped"], 4,
        "the pre-upgrade CRD hook is not part of an install"
    );
    assert_eq!(
        value["rolled_out"],
        serde_json::json!(["Deployment/gpu-operator"])
    );
    assert_eq!(
        value["daemonsets"],
        serde_json::json!([
            "gpu-feature-discovery",
            "nvidia-dcgm-exporter",
            "nvidia-device-plugin-daemonset",
            "nvidia-operator-validator"
        ]),
        "the operator makes its DaemonSets from the ClusterPolicy"
    );
}

#[test]
fn missing_helm_says_how_to_install_it() {
    let (_, stderr) = eval(
        r#"helm::template("charts/gpu-operator")"#,
        &[("RUNBOOK_HELM", "/nonexistent/helm")],
        1,
    );
    assert!(stderr.contains("HelmNotInstalled"), "{stderr}");
    assert!(stderr.contains("scripts/install-tools.sh"), "{stderr}");
}

#[test]
fn a_broken_chart_gives_helms_error_with_the_chart_path() {
    if !helm_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let chart = dir.path().join("broken");
    std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: broken\nversion: 0.1.0\n",
    )
    .expect("write");
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "kind: ConfigMap\nmetadata:\n  name: {{ .Values.name\n",
    )
    .expect("write");
    // A chart outside the current folder is read when --allow-read names its folder.
    let script = format!(r#"helm::template("{}")"#, chart.display());
    let refused = Runbook::new().args(["eval", &script]).run().expect_code(1);
    assert!(
        refused.stderr().contains("--allow-read"),
        "{}",
        refused.stderr()
    );
    let allowed = Runbook::new()
        .args(["eval", "--allow-read"])
        .arg(dir.path())
        .arg(&script)
        .run()
        .expect_code(1);
    let stderr = allowed.stderr();
    assert!(stderr.contains("HelmFailed"), "{stderr}");
    assert!(stderr.contains("broken/templates/cm.yaml"), "{stderr}");
    let missing = format!(r#"helm::template("{}/nothing-here")"#, dir.path().display());
    let (_, stderr) = eval(&missing, &[], 1);
    assert!(stderr.contains("nothing-here"), "{stderr}");
}
