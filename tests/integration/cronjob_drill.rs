//! The in-cluster drill as deploy/kubernetes ships it, against `lab serve`: kubectl 1.35
//! applies the manifests (and a server-side dry run of them), the CronJob's own command runs
//! with `--in-cluster` (its ServiceAccount's token, CA and the service address, as the pod
//! has them), the twin enforcing its RBAC, and the rules are held to the requests the drill made:
//! every request allowed by a rule, every rule used. Its IAM
//! policy (deploy/aws) is held to the AWS calls the same way.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{LabServer, Runbook, assert_succeeded, helm_available, kubectl, repo_root};

/// The non-resource URLs every authenticated identity may GET on a real cluster (the default
/// ClusterRoles system:discovery and system:public-info-viewer), so no drill role grants them.
const DEFAULT_NON_RESOURCE_URLS: &[&str] = &[
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
];

/// AWS actions no IAM policy grants or denies: STS GetCallerIdentity ("no permissions are
/// required to perform this operation", the STS API reference), which names the target's account
/// for runbook's locks and journals.
const NEEDS_NO_PERMISSION: &[&str] = &["sts:GetCallerIdentity"];

fn yaml_documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("readable");
    text.split("\n---")
        .map(|doc| serde_saphyr::from_str::<Value>(doc).expect("valid YAML"))
        .filter(|doc| !doc.is_null())
        .collect()
}

pub(crate) fn deploy(file: &str) -> Vec<Value> {
    yaml_documents(&repo_root().join("deploy/kubernetes").join(file))
}

/// One rule of a Role (namespace Some) or ClusterRole (None), and whether a request used it.
pub(crate) struct Grant {
    namespace: Option<String>,
    rule: Value,
    used: bool,
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

pub(crate) fn allows(grant: &Grant, request: &Value) -> bool {
    let rule = &grant.rule;
    let resource = match request["subresource"].as_str() {
        Some(sub) => format!("{}/{sub}", request["resource"].as_str().unwrap_or_default()),
        None => request["resource"].as_str().unwrap_or_default().to_string(),
    };
    let namespace_ok = match &grant.namespace {
        None => true,
        Some(ns) => request["namespace"].as_str() == Some(ns),
    };
    let names = strings(&rule["resourceNames"]);
    namespace_ok
        && strings(&rule["apiGroups"]).contains(&request["apiGroup"].as_str().unwrap_or_default())
        && strings(&rule["resources"]).contains(&resource.as_str())
        && strings(&rule["verbs"]).contains(&request["verb"].as_str().unwrap_or_default())
        && (names.is_empty() || request["name"].as_str().is_some_and(|n| names.contains(&n)))
}

/// Every rule of the roles bound to the drill's ServiceAccount; every role of rbac.yaml is.
fn drill_grants() -> Vec<Grant> {
    grants_of(&["rbac.yaml"], "runbook-drill", true)
}

/// Every rule of the roles in `files` bound to `service_account` (in runbook-drill), one grant
/// per verb and resource; with `every_role_bound`, a role bound to nothing fails the test.
pub(crate) fn grants_of(
    files: &[&str],
    service_account: &str,
    every_role_bound: bool,
) -> Vec<Grant> {
    let objects: Vec<Value> = files.iter().flat_map(|f| deploy(f)).collect();
    let bound: Vec<(&str, Option<String>)> = objects
        .iter()
        .filter(|o| o["kind"] == "RoleBinding" || o["kind"] == "ClusterRoleBinding")
        .filter(|o| {
            o["subjects"].as_array().is_some_and(|s| {
                s.iter().any(|s| {
                    s["kind"] == "ServiceAccount"
                        && s["name"] == service_account
                        && s["namespace"] == "runbook-drill"
                })
            })
        })
        .map(|b| {
            (
                b["roleRef"]["name"].as_str().unwrap_or_default(),
                b["metadata"]["namespace"].as_str().map(str::to_string),
            )
        })
        .collect();
    let mut grants = Vec::new();
    for role in &objects {
        let kind = role["kind"].as_str().unwrap_or_default();
        if kind != "Role" && kind != "ClusterRole" {
            continue;
        }
        let name = role["metadata"]["name"].as_str().unwrap_or_default();
        let namespace = role["metadata"]["namespace"].as_str().map(str::to_string);
        let is_bound = bound.iter().any(|(n, ns)| *n == name && *ns == namespace);
        assert!(
            is_bound || !every_role_bound,
            "{kind} {name} is bound to nothing"
        );
        if !is_bound {
            continue;
        }
        for rule in role["rules"].as_array().into_iter().flatten() {
            // One grant per verb and resource, so that "used" means each of them was.
            for verb in strings(&rule["verbs"]) {
                for resource in strings(&rule["resources"]) {
                    let mut one = rule.clone();
                    one["verbs"] = serde_json::json!([verb]);
                    one["resources"] = serde_json::json!([resource]);
                    grants.push(Grant {
                        namespace: namespace.clone(),
                        rule: one,
                        used: false,
                    });
                }
            }
        }
    }
    grants
}

#[test]
fn the_rbac_grants_nothing_on_secrets_no_node_proxy_and_no_wildcards() {
    let gate = grants_of(&["rbac.yaml", "gate.yaml"], "runbook-gate", false);
    assert!(!gate.is_empty());
    for grant in drill_grants().into_iter().chain(gate) {
        let rule = &grant.rule;
        let text = rule.to_string();
        assert!(!text.contains('*'), "a wildcard: {text}");
        for forbidden in ["secrets", "nodes/proxy", "escalate", "bind", "impersonate"] {
            assert!(!text.contains(forbidden), "{forbidden} granted: {text}");
        }
        if strings(&rule["resources"]).contains(&"pods/exec") {
            assert_eq!(
                grant.namespace.as_deref(),
                Some("runbook-drill"),
                "exec only on the drill's own pods"
            );
        }
    }
}

/// The CronJob's container arguments, with the image's paths (runbooks under /opt/runbook,
/// the state volume) moved to this machine and the ServiceAccount's files taken from `pod`.
fn cronjob_args(pod: &Path, state: &Path) -> Vec<String> {
    cronjob_args_of(&deploy("cronjob.yaml")[0], pod, state)
}

/// The same for `cronjob`.
pub(crate) fn cronjob_args_of(cronjob: &Value, pod: &Path, state: &Path) -> Vec<String> {
    let container = &cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0];
    let mounts: Vec<&str> = container["volumeMounts"]
        .as_array()
        .expect("mounts")
        .iter()
        .filter_map(|m| m["mountPath"].as_str())
        .collect();
    assert!(mounts.contains(&"/var/lib/runbook"));
    let mut args: Vec<String> = strings(&container["args"])
        .into_iter()
        .map(|arg| match arg {
            "/var/lib/runbook" => state.display().to_string(),
            other => other
                .replace("/var/lib/runbook/", &format!("{}/", state.display()))
                .replace("/opt/runbook/", &format!("{}/", repo_root().display())),
        })
        .collect();
    assert!(args.iter().any(|a| a == "--in-cluster"), "{args:?}");
    args.extend(["--service-account-dir".into(), pod.display().to_string()]);
    args
}

/// What the kubelet mounts into the drill's pod: a token of its ServiceAccount (`kubectl
/// create token`, a TokenRequest), the cluster's CA and the namespace; and the
/// KUBERNETES_SERVICE_HOST/PORT it is given, pointing at `lab`.
pub(crate) fn pod_service_account(
    kubectl: &Path,
    lab: &LabServer,
    dir: &Path,
    service_account: &str,
) -> (PathBuf, [(String, String); 2]) {
    let mounted = dir.join("serviceaccount");
    std::fs::create_dir(&mounted).expect("a folder");
    let token = kubectl_ok(
        kubectl,
        lab,
        &["create", "token", service_account, "-n", "runbook-drill"],
    );
    std::fs::write(mounted.join("token"), token.trim()).expect("writable");
    std::fs::copy(&lab.ca_file, mounted.join("ca.crt")).expect("copied");
    std::fs::write(mounted.join("namespace"), "runbook-drill").expect("writable");
    let address = lab.url.trim_start_matches("https://").trim_end_matches('/');
    let (host, port) = address.rsplit_once(':').expect("host:port");
    (
        mounted,
        [
            ("KUBERNETES_SERVICE_HOST".into(), host.into()),
            ("KUBERNETES_SERVICE_PORT".into(), port.into()),
        ],
    )
}

pub(crate) fn kubectl_ok(kubectl: &Path, lab: &LabServer, args: &[&str]) -> String {
    let out = std::process::Command::new(kubectl)
        .arg("--kubeconfig")
        .arg(&lab.kubeconfig)
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("kubectl runs");
    assert_succeeded(&out, &format!("kubectl {args:?}"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_cronjob_drill_applies_runs_and_its_rbac_is_exactly_what_it_calls() {
    let Some(kubectl) = kubectl("1.35") else {
        return;
    };
    if !helm_available() {
        return;
    }
    let lab = LabServer::start("600");
    // The drill's prerequisite, the GPU Operator, as the lab's first GPU scale-up installs it.
    Runbook::new()
        .lab_env(&lab)
        .args([
            "run",
            "--yes",
            "runbooks/gpu-scale-up.rhai",
            "--progress",
            "never",
        ])
        .arg("--kubeconfig")
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint()])
        .run()
        .expect_code(0);

    let applied = kubectl_ok(&kubectl, &lab, &["apply", "-k", "deploy/kubernetes"]);
    assert!(
        applied.contains("cronjob.batch/gpu-lab-drill created"),
        "{applied}"
    );
    let again = kubectl_ok(
        &kubectl,
        &lab,
        &[
            "apply",
            "-k",
            "deploy/kubernetes",
            "--server-side",
            "--dry-run=server",
        ],
    );
    assert_eq!(
        again.matches("serverside-applied (server dry run)").count(),
        22,
        "{again}"
    );
    let cronjob: Value = serde_json::from_str(&kubectl_ok(
        &kubectl,
        &lab,
        &[
            "get",
            "cronjob",
            "gpu-lab-drill",
            "-n",
            "runbook-drill",
            "-o",
            "json",
        ],
    ))
    .expect("json");
    assert_eq!(cronjob["spec"]["concurrencyPolicy"], "Forbid");

    let dir = tempfile::tempdir().expect("temp dir");
    let (service_account, pod_env) =
        pod_service_account(&kubectl, &lab, dir.path(), "runbook-drill");
    let state = dir.path().join("state");
    std::fs::create_dir(&state).expect("a state folder");
    // The first drill takes the stale Lease over (an update), as a CronJob after a lost CI
    // runner does; the second finds none and makes it (a create). So every verb the lock is
    // granted is used, whatever the drills' length (a renewal, the other update, comes only
    // every 5 s).
    leave_a_stale_lease(&kubectl, &lab, dir.path());
    lab.reset_audits();
    let drill = || {
        let mut command = Runbook::new()
            .lab_env(&lab)
            .args(cronjob_args(&service_account, &state))
            .args(["--aws-endpoint", &lab.aws_endpoint()])
            .command();
        // As in the pod: the history goes where the state folder is.
        let out = command
            .envs(pod_env.clone())
            .env_remove("RUNBOOK_HISTORY")
            .output()
            .expect("runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (stdout, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (_, took_over) = drill();
    assert!(
        took_over.contains("took over the target's lock from run r1-gone@old-runner"),
        "{took_over}"
    );
    let (stdout, _) = drill();
    assert!(stdout.contains("bus bandwidth"), "{stdout}");
    assert!(
        state.join("history.sqlite3").exists(),
        "the history is on the volume"
    );
    assert!(
        state.join("nightly/addon-versions.yaml").exists(),
        "snapshots are on the volume"
    );
    let page = std::fs::read_to_string(state.join("last-run.html")).expect("the HTML page");
    assert!(
        page.contains("data-status=\"passed\""),
        "the last run's page"
    );

    let aws_audit: Value =
        serde_json::from_str(&lab.get(&format!("{}/twin/audit", lab.aws_endpoint())))
            .expect("json");
    let mut called: Vec<&str> = aws_audit
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|a| a["action"].as_str())
        .filter(|action| !NEEDS_NO_PERMISSION.contains(action))
        .collect();
    called.sort_unstable();
    let policy: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("deploy/aws/drill-policy.json"))
            .expect("the drill's IAM policy"),
    )
    .expect("json");
    let mut granted: Vec<&str> = policy["Statement"]
        .as_array()
        .expect("statements")
        .iter()
        .inspect(|s| assert_eq!(s["Effect"], "Allow"))
        .flat_map(|s| strings(&s["Action"]))
        .collect();
    granted.sort_unstable();
    assert_eq!(
        granted, called,
        "the IAM policy's actions are exactly those the drill called"
    );

    held_to_requests(&lab, drill_grants());
}

/// The Kubernetes requests `lab` audited (since its last reset) against `grants`: every request
/// allowed by a rule, every rule used by a request.
pub(crate) fn held_to_requests(lab: &LabServer, mut grants: Vec<Grant>) {
    let audit: Value =
        serde_json::from_str(&lab.get(&format!("{}/twin/audit", lab.url))).expect("json");
    let mut refused = Vec::new();
    for request in audit.as_array().expect("an array") {
        if let Some(url) = request["nonResourceURL"].as_str() {
            assert!(
                DEFAULT_NON_RESOURCE_URLS.contains(&url) && request["verb"] == "get",
                "{request}: not a default non-resource URL"
            );
            continue;
        }
        match grants.iter_mut().find(|g| allows(g, request)) {
            Some(grant) => grant.used = true,
            None => refused.push(request.to_string()),
        }
        // A rule is used if any request matches it, not only the first rule found.
        for grant in grants.iter_mut().filter(|g| allows(g, request)) {
            grant.used = true;
        }
    }
    assert!(
        refused.is_empty(),
        "requests the roles do not allow:\n{}",
        refused.join("\n")
    );
    let unused: Vec<String> = grants
        .iter()
        .filter(|g| !g.used)
        .map(|g| format!("{:?} {}", g.namespace, g.rule))
        .collect();
    assert!(
        unused.is_empty(),
        "rules no request used:\n{}",
        unused.join("\n")
    );
}

/// A Lease of the cluster's lock left by a runner long gone, applied to `lab`.
pub(crate) fn leave_a_stale_lease(kubectl: &Path, lab: &LabServer, dir: &Path) {
    let stale = dir.join("stale-lease.yaml");
    std::fs::write(
        &stale,
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: target-lock, namespace: runbook}\nspec: {holderIdentity: r1-gone@old-runner, leaseDurationSeconds: 15, acquireTime: \"2020-01-01T00:00:00.000000Z\", renewTime: \"2020-01-01T00:00:00.000000Z\"}\n",
    )
    .expect("write");
    kubectl_ok(kubectl, lab, &["apply", "-f", &stale.display().to_string()]);
}

/// `object` read into k8s-openapi's type for its kind and written back, or None when that
/// loses or changes something (a misspelt field, a value of the wrong type).
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(object: &Value) -> Option<Value> {
    let typed: T = serde_json::from_value(object.clone()).ok()?;
    let back = serde_json::to_value(typed).ok()?;
    (back == *object).then_some(back)
}

#[test]
fn every_manifest_is_a_kubernetes_1_35_object_with_no_unknown_field() {
    use k8s_openapi::api::{batch, core, rbac};
    let dir = repo_root().join("deploy/kubernetes");
    let mut kinds = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the folder") {
        let path = entry.expect("an entry").path();
        if path.file_name().is_some_and(|n| n == "kustomization.yaml") {
            continue;
        }
        for object in yaml_documents(&path) {
            let kind = object["kind"].as_str().unwrap_or_default().to_string();
            let same = match kind.as_str() {
                "Namespace" => round_trip::<core::v1::Namespace>(&object),
                "ServiceAccount" => round_trip::<core::v1::ServiceAccount>(&object),
                "ConfigMap" => round_trip::<core::v1::ConfigMap>(&object),
                "PersistentVolumeClaim" => round_trip::<core::v1::PersistentVolumeClaim>(&object),
                "CronJob" => round_trip::<batch::v1::CronJob>(&object),
                "Role" => round_trip::<rbac::v1::Role>(&object),
                "RoleBinding" => round_trip::<rbac::v1::RoleBinding>(&object),
                "ClusterRole" => round_trip::<rbac::v1::ClusterRole>(&object),
                "ClusterRoleBinding" => round_trip::<rbac::v1::ClusterRoleBinding>(&object),
                other => panic!("{}: no check for kind {other}", path.display()),
            };
            assert!(
                same.is_some(),
                "{}: {kind} does not read back as written",
                path.display()
            );
            kinds.push(kind);
        }
    }
    kinds.sort();
    assert_eq!(kinds.len(), 22, "{kinds:?}");
    // A typo is caught, not read past.
    let mut typo = deploy("cronjob.yaml")[0].clone();
    typo["spec"]["concurrencyPolicyy"] = Value::String("Forbid".into());
    assert!(round_trip::<batch::v1::CronJob>(&typo).is_none());
}
