//! Kubernetes RBAC in `lab serve`, held to what kubectl (1.32 and 1.35) says about it: Roles,
//! ClusterRoles and bindings enforced for ServiceAccount tokens from `kubectl create token`,
//! ClusterRole aggregation, impersonation, `kubectl auth can-i` (and `--list`), and a runbook
//! run whose identity may only read: its checks pass, its first write is refused by name, and
//! its GPUs still go back to zero.

use std::path::Path;
use std::process::Output;

use crate::lab_auth::give_the_lab_user;
use crate::support::{LabServer, Runbook, aws_cli_available, kubectl};

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn run_kubectl(kubectl: &Path, lab: &LabServer, args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = std::process::Command::new(kubectl)
        .arg("--kubeconfig")
        .arg(&lab.kubeconfig)
        .args(args)
        .env("HOME", std::env::temp_dir())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .expect("written");
    drop(input);
    child.wait_with_output().expect("kubectl ends")
}

fn ok(kubectl: &Path, lab: &LabServer, args: &[&str]) -> String {
    let out = run_kubectl(kubectl, lab, args, None);
    assert!(out.status.success(), "kubectl {args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const TEAM: &str = "
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: reader, namespace: team}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: team}
rules:
  - apiGroups: ['']
    resources: [pods]
    verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects:
  - {kind: ServiceAccount, name: reader, namespace: team}
";

const WIDGET_VIEWER: &str = "
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: widget-viewer
  labels: {rbac.authorization.k8s.io/aggregate-to-view: 'true'}
rules:
  - apiGroups: [example.com]
    resources: [widgets]
    verbs: [get, list, watch]
";

#[test]
fn service_account_tokens_roles_bindings_aggregation_and_can_i_hold_as_kubectl_sees_them() {
    let Some(kubectl) = kubectl("1.35") else {
        return;
    };
    let lab = LabServer::start("600");
    let applied = run_kubectl(&kubectl, &lab, &["apply", "-f", "-"], Some(TEAM));
    assert!(applied.status.success(), "{}", text(&applied));

    let token = ok(&kubectl, &lab, &["create", "token", "reader", "-n", "team"]);
    let token = token.trim();
    assert!(token.starts_with("eyJ"), "a JWT: {token}");
    let with_token = |args: &[&str]| {
        let mut all = vec!["--token", token];
        all.extend_from_slice(args);
        run_kubectl(&kubectl, &lab, &all, None)
    };
    let listed = with_token(&["get", "pods", "-n", "team"]);
    assert!(listed.status.success(), "{}", text(&listed));
    let elsewhere = with_token(&["get", "pods", "-n", "kube-system"]);
    assert!(
        text(&elsewhere).contains("pods is forbidden: User \"system:serviceaccount:team:reader\" cannot list resource \"pods\" in API group \"\" in the namespace \"kube-system\""),
        "{}",
        text(&elsewhere)
    );
    let impersonating = with_token(&["get", "pods", "-n", "team", "--as", "kubernetes-admin"]);
    assert!(
        text(&impersonating).contains("users \"kubernetes-admin\" is forbidden: User \"system:serviceaccount:team:reader\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"),
        "{}",
        text(&impersonating)
    );
    let short = run_kubectl(
        &kubectl,
        &lab,
        &[
            "create",
            "token",
            "reader",
            "-n",
            "team",
            "--duration",
            "1m",
        ],
        None,
    );
    assert!(
        text(&short).contains("may not specify a duration less than 10 minutes"),
        "{}",
        text(&short)
    );

    // kubectl auth can-i --as, both versions, agrees with what the token was just allowed.
    let reader = "system:serviceaccount:team:reader";
    for version in ["1.32", "1.35"] {
        let Some(kubectl) = crate::support::kubectl(version) else {
            continue;
        };
        for (args, expected) in [
            (vec!["list", "pods", "-n", "team"], "yes"),
            (vec!["get", "pods", "-n", "team"], "yes"),
            (vec!["list", "pods", "-n", "kube-system"], "no"),
            (vec!["delete", "pods", "-n", "team"], "no"),
            (vec!["create", "pods/exec", "-n", "team"], "no"),
            (vec!["list", "nodes"], "no"),
            (vec!["list", "configmaps", "-n", "team"], "no"),
        ] {
            let mut all = vec!["auth", "can-i", "--as", reader];
            all.extend_from_slice(&args);
            let out = run_kubectl(&kubectl, &lab, &all, None);
            assert_eq!(
                String::from_utf8_lossy(&out.stdout).trim(),
                expected,
                "kubectl {version} auth can-i {args:?}: {}",
                text(&out)
            );
        }
        let list = run_kubectl(
            &kubectl,
            &lab,
            &["auth", "can-i", "--list", "-n", "team", "--as", reader],
            None,
        );
        let table = String::from_utf8_lossy(&list.stdout);
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("pods ") && l.contains("[get list]")),
            "kubectl {version}: {}",
            text(&list)
        );
    }

    // A ClusterRole labelled aggregate-to-view adds its rules to view, edit and admin.
    let applied = run_kubectl(&kubectl, &lab, &["apply", "-f", "-"], Some(WIDGET_VIEWER));
    assert!(applied.status.success(), "{}", text(&applied));
    for role in ["view", "edit", "admin"] {
        let rules = ok(
            &kubectl,
            &lab,
            &["get", "clusterrole", role, "-o", "jsonpath={.rules}"],
        );
        assert!(rules.contains("widgets"), "{role}: {rules}");
    }
    ok(&kubectl, &lab, &["delete", "clusterrole", "widget-viewer"]);
    let rules = ok(
        &kubectl,
        &lab,
        &["get", "clusterrole", "view", "-o", "jsonpath={.rules}"],
    );
    assert!(!rules.contains("widgets"), "{rules}");

    // A token outlives nothing: with its ServiceAccount gone it no longer signs in.
    ok(
        &kubectl,
        &lab,
        &["delete", "serviceaccount", "reader", "-n", "team"],
    );
    let gone = with_token(&["get", "pods", "-n", "team"]);
    assert!(
        text(&gone).contains("You must be logged in to the server"),
        "{}",
        text(&gone)
    );
}

#[test]
fn a_read_only_identity_passes_the_checks_is_refused_its_first_write_and_leaves_no_gpus() {
    if !aws_cli_available() {
        return;
    }
    let lab = LabServer::start("600");
    let me = "arn:aws:iam::123456789012:user/lab";
    let deleted = lab.aws(&[
        "eks",
        "delete-access-entry",
        "--cluster-name",
        "myeks5w",
        "--principal-arn",
        me,
    ]);
    assert!(deleted.status.success(), "{}", text(&deleted));
    give_the_lab_user(&lab, "AmazonEKSAdminViewPolicy");
    // doctor says who the keys are on both sides, that verify's reads are allowed, and warns
    // (without failing) that the drill's changes are not.
    let doctor = Runbook::new()
        .lab_env(&lab)
        .args(["doctor", "--cluster", "myeks5w"])
        .run()
        .expect_code(0);
    let out = doctor.stdout();
    for row in [
        format!("ok    Kubernetes identity           {me} (groups system:authenticated)"),
        "ok    may read what verify reads    6 permissions".to_string(),
        "warn  may make the drill's changes  cannot create pods -n default, delete pods -n default, create pods/exec -n default, patch nodes: verify-only runbooks will pass, the GPU drill will not".to_string(),
        format!("ok    AWS identity                  {me} in ap-northeast-2"),
    ] {
        assert!(out.contains(&row), "{row}\nin:\n{out}");
    }
    // A run that may change the cluster must take its lock, which a view-only identity may
    // not: refused before any step, saying what to grant or that --read-only takes none.
    let unlocked = Runbook::new()
        .lab_env(&lab)
        .args([
            "run",
            "--yes",
            "runbooks/verify.rhai",
            "--cluster",
            "myeks5w",
        ])
        .run()
        .expect_code(2);
    let err = unlocked.stderr();
    assert!(
        err.contains("this identity may not take the target's lock, the Lease runbook/target-lock"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "User \"{me}\" cannot create resource \"namespaces\""
        )),
        "{err}"
    );
    assert!(
        err.contains("or pass --read-only if the run only reads"),
        "{err}"
    );
    assert!(
        !unlocked.stdout().contains("[step]"),
        "{}",
        unlocked.stdout()
    );
    Runbook::new()
        .lab_env(&lab)
        .args([
            "run",
            "--read-only",
            "runbooks/verify.rhai",
            "--cluster",
            "myeks5w",
        ])
        .run()
        .expect_code(0);
    let asked = Runbook::new()
        .lab_env(&lab)
        .args([
            "eval",
            "--cluster",
            "myeks5w",
            "[k8s::can_i(\"list\", \"nodes\"), k8s::can_i(\"create\", \"namespaces\"), k8s::can_i(\"list\", \"pods\", #{ namespace: \"kube-system\", as_user: \"system:serviceaccount:kube-system:coredns\" })]",
        ])
        .run();
    // Impersonating needs `impersonate`, which a read-only identity lacks: a clear 403.
    assert_ne!(asked.code(), 0, "{}", asked.stdout());
    assert!(
        asked
            .stderr()
            .contains("cannot impersonate resource \"serviceaccounts\""),
        "{}",
        asked.stderr()
    );
    let scaled = Runbook::new()
        .lab_env(&lab)
        .args([
            "run",
            "--yes",
            "runbooks/gpu-scale-up.rhai",
            "--cluster",
            "myeks5w",
            "--progress",
            "never",
        ])
        .run();
    assert_ne!(scaled.code(), 0, "{}", scaled.stdout());
    let all = format!("{}{}", scaled.stdout(), scaled.stderr());
    // Refused at the lock, before its first write.
    assert!(
        all.contains("this identity may not take the target's lock"),
        "{all}"
    );
    let group = lab.aws(&[
        "eks",
        "describe-nodegroup",
        "--cluster-name",
        "myeks5w",
        "--nodegroup-name",
        "gpu",
        "--query",
        "nodegroup.scalingConfig.desiredSize",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&group.stdout).trim(),
        "0",
        "the GPUs went back to zero: {all}"
    );
}
