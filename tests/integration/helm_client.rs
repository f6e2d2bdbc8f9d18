//! The helm client (the library, not the binary) against the real helm 4 (`.tools/bin/helm` from scripts/install-tools.sh)
//! and the offline gpu-operator chart in `charts/`: the lab's render preview, its toggles, and
//! helm's own errors.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::support::repo_root;

use runbook::clients::helm::{
    HelmError, RenderedObject, Summary, TemplateOptions, locate, summary, template,
};
use serde_json::{Value, json};

/// helm 4 from scripts/install-tools.sh. None (with a message) when it is not installed, unless
/// RUNBOOK_REQUIRE_TOOLS is set (CI), which fails.
fn helm() -> Option<PathBuf> {
    let path = repo_root().join(".tools/bin/helm");
    let found = path.exists().then(|| path.clone());
    crate::support::gate(found, || {
        format!(
            "helm not found at {} (run scripts/install-tools.sh)",
            path.display()
        )
    })
}

fn chart() -> String {
    repo_root()
        .join("charts/gpu-operator")
        .to_string_lossy()
        .into_owned()
}

/// The lab's preview: `-n gpu-operator --set driver.enabled=false --set toolkit.enabled=false`.
fn lab_preview() -> TemplateOptions {
    TemplateOptions {
        set: vec![
            ("driver.enabled".into(), "false".into()),
            ("toolkit.enabled".into(), "false".into()),
        ],
        ..TemplateOptions::new("gpu-operator", "gpu-operator")
    }
}

async fn render(opts: &TemplateOptions) -> Option<Vec<RenderedObject>> {
    let helm = helm()?;
    Some(
        template(&helm, &chart(), opts)
            .await
            .expect("helm template"),
    )
}

fn find<'a>(objects: &'a [RenderedObject], kind: &str, name: &str) -> &'a RenderedObject {
    objects
        .iter()
        .find(|o| o.kind() == kind && o.name() == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

fn kinds(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect()
}

fn chart_counts(summary: &Summary) -> Vec<(&str, u64, u64, u64)> {
    summary
        .by_chart
        .iter()
        .map(|c| (c.chart.as_str(), c.resources, c.hooks, c.crds))
        .collect()
}

#[tokio::test]
async fn lab_preview_renders_27_objects() {
    let Some(objects) = render(&lab_preview()).await else {
        return;
    };
    let summary = summary(&objects);
    assert_eq!(summary.total, 27);
    assert_eq!(
        chart_counts(&summary),
        [
            ("gpu-operator", 7, 4, 0),
            ("node-feature-discovery", 12, 4, 0)
        ]
    );
    assert_eq!(
        summary.by_chart[0].kinds,
        kinds(&[
            ("ClusterPolicy", 1),
            ("ClusterRole", 1),
            ("ClusterRoleBinding", 1),
            ("Deployment", 1),
            ("Role", 1),
            ("RoleBinding", 1),
            ("ServiceAccount", 1),
        ])
    );
    assert_eq!(
        summary.by_chart[1].kinds,
        kinds(&[
            ("ClusterRole", 2),
            ("ClusterRoleBinding", 2),
            ("ConfigMap", 2),
            ("DaemonSet", 1),
            ("Deployment", 2),
            ("Role", 1),
            ("RoleBinding", 1),
            ("ServiceAccount", 1),
        ])
    );
    let hooks: Vec<(&str, &str, Option<i64>, &str, &str)> = summary
        .hooks
        .iter()
        .map(|h| {
            (
                h.chart.as_str(),
                h.hook.as_str(),
                h.weight,
                h.kind.as_str(),
                h.name.as_str(),
            )
        })
        .collect();
    let prune = "gpu-operator-node-feature-discovery-prune";
    let nfd = "node-feature-discovery";
    assert_eq!(
        hooks,
        [
            (nfd, "post-delete", None, "ClusterRole", prune),
            (nfd, "post-delete", None, "ClusterRoleBinding", prune),
            (nfd, "post-delete", None, "Job", prune),
            (nfd, "post-delete", None, "ServiceAccount", prune),
            (
                "gpu-operator",
                "pre-upgrade",
                Some(0),
                "ClusterRole",
                "gpu-operator-upgrade-crd-hook-role"
            ),
            (
                "gpu-operator",
                "pre-upgrade",
                Some(0),
                "ClusterRoleBinding",
                "gpu-operator-upgrade-crd-hook-binding"
            ),
            (
                "gpu-operator",
                "pre-upgrade",
                Some(0),
                "ServiceAccount",
                "gpu-operator-upgrade-crd-hook-sa"
            ),
            (
                "gpu-operator",
                "pre-upgrade",
                Some(1),
                "Job",
                "gpu-operator-upgrade-crd"
            ),
        ]
    );
    assert_eq!(
        summary.to_string(),
        "27 objects\n\
         gpu-operator: 7 resources [ClusterPolicy 1, ClusterRole 1, ClusterRoleBinding 1, \
         Deployment 1, Role 1, RoleBinding 1, ServiceAccount 1] + 4 hooks (pre-upgrade)\n\
         node-feature-discovery: 12 resources [ClusterRole 2, ClusterRoleBinding 2, ConfigMap 2, \
         DaemonSet 1, Deployment 2, Role 1, RoleBinding 1, ServiceAccount 1] + 4 hooks \
         (post-delete)"
    );
    // The GPU DaemonSets are not in the render: the operator makes them from the ClusterPolicy.
    let daemonsets: Vec<&str> = objects
        .iter()
        .filter(|o| o.kind() == "DaemonSet")
        .map(RenderedObject::name)
        .collect();
    assert_eq!(daemonsets, ["gpu-operator-node-feature-discovery-worker"]);
}

#[tokio::test]
async fn operator_deployment_has_the_image_and_scheduling_of_nvidias() {
    let Some(objects) = render(&lab_preview()).await else {
        return;
    };
    let operator = find(&objects, "Deployment", "gpu-operator");
    assert_eq!(operator.namespace(), "gpu-operator");
    assert_eq!(operator.chart, "gpu-operator");
    assert_eq!(operator.source, "gpu-operator/templates/operator.yaml");
    let pod = &operator.object["spec"]["template"]["spec"];
    assert_eq!(
        pod["containers"][0]["image"],
        "nvcr.io/nvidia/gpu-operator:v26.3.1"
    );
    assert_eq!(
        pod["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["preference"]
            ["matchExpressions"][0]["key"],
        "node-role.kubernetes.io/control-plane"
    );
    let worker = find(
        &objects,
        "DaemonSet",
        "gpu-operator-node-feature-discovery-worker",
    );
    assert_eq!(worker.chart, "node-feature-discovery");
    let tolerations = &worker.object["spec"]["template"]["spec"]["tolerations"];
    assert!(
        tolerations
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["key"] == "nvidia.com/gpu"),
        "{tolerations}"
    );
}

#[tokio::test]
async fn cluster_policy_reflects_the_toggles() {
    let Some(objects) = render(&lab_preview()).await else {
        return;
    };
    let policy = find(&objects, "ClusterPolicy", "cluster-policy");
    assert_eq!(policy.api_version(), "nvidia.com/v1");
    let spec = &policy.object["spec"];
    for (component, enabled) in [
        ("driver", false),
        ("toolkit", false),
        ("devicePlugin", true),
        ("dcgmExporter", true),
        ("gfd", true),
    ] {
        assert_eq!(spec[component]["enabled"], enabled, "{component}");
    }
    assert_eq!(
        spec["daemonsets"]["tolerations"],
        json!([{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}])
    );
    assert_eq!(spec["validator"]["version"], "v26.3.1");

    let Some(defaults) = render(&TemplateOptions::new("gpu-operator", "gpu-operator")).await else {
        return;
    };
    assert_eq!(defaults.len(), 27);
    let spec = &find(&defaults, "ClusterPolicy", "cluster-policy").object["spec"];
    assert_eq!(spec["driver"]["enabled"], true);
    assert_eq!(spec["toolkit"]["enabled"], true);
}

#[tokio::test]
async fn without_nfd_the_subchart_and_its_hooks_are_gone() {
    let opts = TemplateOptions {
        set: vec![("nfd.enabled".into(), "false".into())],
        ..lab_preview()
    };
    let Some(objects) = render(&opts).await else {
        return;
    };
    let summary = summary(&objects);
    assert_eq!(summary.total, 11);
    assert_eq!(chart_counts(&summary), [("gpu-operator", 7, 4, 0)]);
    // The CRD-upgrade Job no longer applies NFD's CRDs either.
    let job = find(&objects, "Job", "gpu-operator-upgrade-crd");
    let args = job.object["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
    assert!(!args.contains("nfd-api-crds"), "{args}");
}

#[tokio::test]
async fn include_crds_adds_each_charts_crds() {
    let opts = TemplateOptions {
        include_crds: true,
        kube_version: Some("1.35.0".into()),
        ..lab_preview()
    };
    let Some(objects) = render(&opts).await else {
        return;
    };
    let summary = summary(&objects);
    assert_eq!(summary.total, 32);
    assert_eq!(
        chart_counts(&summary),
        [
            ("gpu-operator", 7, 4, 2),
            ("node-feature-discovery", 12, 4, 3)
        ]
    );
    let policy = find(
        &objects,
        "CustomResourceDefinition",
        "clusterpolicies.nvidia.com",
    );
    assert!(policy.is_crd);
    assert_eq!(
        policy.source,
        "gpu-operator/crds/nvidia.com_clusterpolicies.yaml"
    );
    assert_eq!(policy.object["spec"]["scope"], "Cluster");
    assert_eq!(policy.object["spec"]["names"]["kind"], "ClusterPolicy");
    let version = &policy.object["spec"]["versions"][0];
    assert_eq!(version["name"], "v1");
    assert_eq!(version["subresources"]["status"], json!({}));

    let opts = TemplateOptions {
        set: vec![("nfd.enabled".into(), "false".into())],
        ..opts
    };
    let Some(objects) = render(&opts).await else {
        return;
    };
    let crds: Vec<&str> = objects
        .iter()
        .filter(|o| o.is_crd)
        .map(RenderedObject::name)
        .collect();
    assert_eq!(
        crds,
        ["clusterpolicies.nvidia.com", "nvidiadrivers.nvidia.com"]
    );
}

#[tokio::test]
async fn values_and_set_string_reach_the_templates() {
    let opts = TemplateOptions {
        values: vec![
            json!({"operator": {"version": "v0.0.1-lab"}, "nfd": {"enabled": true}}),
            json!({"nfd": {"enabled": false}}),
        ],
        // A comma in a --set value would split it into two assignments if not escaped.
        set_string: vec![("operator.logging.level".into(), "debug,verbose".into())],
        ..lab_preview()
    };
    let Some(objects) = render(&opts).await else {
        return;
    };
    // The later values file wins.
    assert_eq!(objects.len(), 11);
    let container = &find(&objects, "Deployment", "gpu-operator").object["spec"]["template"]["spec"]
        ["containers"][0];
    assert_eq!(container["image"], "nvcr.io/nvidia/gpu-operator:v0.0.1-lab");
    let args = container["args"].as_array().unwrap();
    assert!(
        args.contains(&Value::from("--zap-log-level=debug,verbose")),
        "{args:?}"
    );
}

#[tokio::test]
async fn a_kube_version_below_the_charts_range_is_helms_error() {
    let Some(helm) = helm() else {
        return;
    };
    let opts = TemplateOptions {
        kube_version: Some("1.15.0".into()),
        ..lab_preview()
    };
    let error = template(&helm, &chart(), &opts).await.unwrap_err();
    assert!(matches!(error, HelmError::Failed { .. }), "{error:?}");
    assert!(
        error.to_string().ends_with(
            "failed: chart requires kubeVersion: >= 1.16.0-0 which is incompatible with \
             Kubernetes v1.15.0"
        ),
        "{error}"
    );
}

#[tokio::test]
async fn a_broken_template_is_helms_error_naming_the_chart() {
    let Some(helm) = helm() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let chart_dir = dir.path().join("broken");
    std::fs::create_dir_all(chart_dir.join("templates")).unwrap();
    std::fs::write(
        chart_dir.join("Chart.yaml"),
        "apiVersion: v2\nname: broken\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        chart_dir.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name\n",
    )
    .unwrap();
    let chart = chart_dir.to_string_lossy().into_owned();
    let error = template(&helm, &chart, &TemplateOptions::default())
        .await
        .unwrap_err();
    let HelmError::Failed {
        chart: failed,
        stderr,
    } = &error
    else {
        panic!("expected helm's failure, got {error:?}");
    };
    assert_eq!(failed, &chart);
    assert!(
        stderr.starts_with("parse error at (broken/templates/cm.yaml:"),
        "{stderr}"
    );
    assert!(!stderr.contains("--debug"), "{stderr}");
    assert_eq!(
        error.to_string(),
        format!("helm template {chart} failed: {stderr}")
    );
}

#[tokio::test]
async fn a_missing_chart_is_helms_error() {
    let Some(helm) = helm() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let chart = dir
        .path()
        .join("no-such-chart")
        .to_string_lossy()
        .into_owned();
    let error = template(&helm, &chart, &TemplateOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(error, HelmError::Failed { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!("helm template {chart} failed: path \"{chart}\" not found")
    );
}

#[tokio::test]
async fn a_binary_that_is_not_there_cannot_run() {
    let missing = Path::new("/nonexistent/bin/helm");
    let error = template(missing, &chart(), &TemplateOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(error, HelmError::Spawn { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "cannot run helm at /nonexistent/bin/helm"
    );
}

#[test]
fn no_helm_anywhere_is_not_installed() {
    let dir = tempfile::tempdir().unwrap();
    // RUNBOOK_HELM pointing nowhere does not fall back to PATH or the project.
    let error = locate(
        None,
        Some(OsStr::new("/nonexistent/bin/helm")),
        Some(OsStr::new("")),
        &repo_root(),
    )
    .unwrap_err();
    assert!(matches!(error, HelmError::NotInstalled { .. }), "{error:?}");
    // An empty PATH, outside any project.
    let error = locate(None, None, Some(OsStr::new("")), dir.path()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "helm not found (not on PATH): run scripts/install-tools.sh (puts helm 4 in .tools/bin), \
         install helm from https://helm.sh/docs/intro/install/, or set RUNBOOK_HELM=/path/to/helm"
    );
}

#[test]
fn the_projects_helm_is_found_from_inside_it() {
    if helm().is_none() {
        return;
    }
    let found = locate(None, None, Some(OsStr::new("")), &repo_root().join("src")).unwrap();
    assert_eq!(found, repo_root().join(".tools/bin/helm"));
}
