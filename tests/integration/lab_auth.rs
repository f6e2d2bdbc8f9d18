//! Nobody but the lab's holder drives `lab serve`: AWS calls are SigV4-verified with its keys,
//! Kubernetes calls need a token (its admin token, or an EKS token from `aws eks get-token` or
//! runbook's own, mapped through access entries), `/twin/*` needs the admin token, and the
//! files it writes are 0600. Clients no one here wrote (kubectl 1.35, the aws CLI, curl) say so.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{LabServer, Runbook, aws_cli_available, kubectl};

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `(body, HTTP code)` of a curl run by `LabServer::curl`.
fn answer(out: &Output) -> (String, String) {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (body.to_string(), code.to_string())
}

fn lab() -> Option<LabServer> {
    aws_cli_available().then(|| LabServer::start("600"))
}

/// The aws CLI against `lab` with its env file, but these keys.
fn aws_as(lab: &LabServer, key: &str, secret: &str, args: &[&str]) -> Output {
    let mut command = std::process::Command::new("aws");
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::temp_dir());
    for (k, v) in &lab.aws_env {
        command.env(k, v);
    }
    command
        .env("AWS_ACCESS_KEY_ID", key)
        .env("AWS_SECRET_ACCESS_KEY", secret)
        .output()
        .expect("the aws CLI runs")
}

/// The lab's kubeconfig with its user swapped for `aws eks get-token --cluster-name CLUSTER`.
fn exec_kubeconfig(lab: &LabServer, cluster: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(&lab.kubeconfig).expect("the kubeconfig");
    let mut config: Value = serde_saphyr::from_str(&text).expect("a kubeconfig");
    config["users"][0]["user"] = serde_json::json!({"exec": {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": "aws",
        "args": ["eks", "get-token", "--cluster-name", cluster],
        "interactiveMode": "Never",
    }});
    let path = dir.join(format!("kubeconfig-{cluster}"));
    std::fs::write(&path, serde_json::to_string(&config).expect("json")).expect("writable");
    path
}

/// The lab user's access entry made again (after it was deleted) with only the access policy
/// `policy` (`AmazonEKSViewPolicy`), cluster-wide.
pub fn give_the_lab_user(lab: &LabServer, policy: &str) {
    let me = "arn:aws:iam::123456789012:user/lab";
    let policy_arn = format!("arn:aws:eks::aws:cluster-access-policy/{policy}");
    for args in [
        vec![
            "eks",
            "create-access-entry",
            "--cluster-name",
            "myeks5w",
            "--principal-arn",
            me,
        ],
        vec![
            "eks",
            "associate-access-policy",
            "--cluster-name",
            "myeks5w",
            "--principal-arn",
            me,
            "--policy-arn",
            &policy_arn,
            "--access-scope",
            "type=cluster",
        ],
    ] {
        let out = lab.aws(&args);
        assert!(out.status.success(), "{}", text(&out));
    }
}

fn kubectl_with(kubectl: &Path, kubeconfig: &Path, lab: &LabServer, args: &[&str]) -> Output {
    let mut command = std::process::Command::new(kubectl);
    command.arg("--kubeconfig").arg(kubeconfig).args(args);
    for (k, v) in &lab.aws_env {
        command.env(k, v);
    }
    command
        .env("HOME", std::env::temp_dir())
        .output()
        .expect("kubectl runs")
}

#[test]
fn unsigned_badly_signed_and_unknown_key_aws_calls_are_refused_as_aws_answers() {
    let Some(lab) = lab() else { return };
    let endpoint = lab.aws_endpoint();
    // Before: any local user could revoke a rule with `Signature=00`.
    let (body, code) = answer(&lab.curl(
        "POST",
        &format!("{endpoint}/?Action=RevokeSecurityGroupIngress&Version=2016-11-15&GroupId=sg-1&Signature=00"),
        None,
    ));
    // EC2 answers a call without credentials 401, as its AuthFailure.
    assert_eq!(code, "401", "{body}");
    assert!(
        body.contains("<Code>MissingAuthenticationToken</Code>"),
        "{body}"
    );

    let key = lab.env_value("AWS_ACCESS_KEY_ID");
    let wrong = aws_as(
        &lab,
        &key,
        "not-the-lab-secret",
        &["ec2", "describe-security-groups"],
    );
    assert!(!wrong.status.success());
    assert!(
        text(&wrong).contains("SignatureDoesNotMatch"),
        "{}",
        text(&wrong)
    );
    let unknown = aws_as(
        &lab,
        "AKIDSOMEONEELSE",
        "x",
        &["sts", "get-caller-identity"],
    );
    assert!(
        text(&unknown).contains("InvalidClientTokenId"),
        "{}",
        text(&unknown)
    );
    let eks = aws_as(&lab, "AKIDSOMEONEELSE", "x", &["eks", "list-clusters"]);
    assert!(
        text(&eks).contains("UnrecognizedClientException"),
        "{}",
        text(&eks)
    );

    let me = lab.aws(&["sts", "get-caller-identity"]);
    assert!(me.status.success(), "{}", text(&me));
    let me: Value = serde_json::from_slice(&me.stdout).expect("json");
    assert_eq!(me["Arn"], "arn:aws:iam::123456789012:user/lab");
    assert_eq!(me["Account"], "123456789012");
}

#[test]
fn kubernetes_and_admin_calls_need_the_labs_token_and_its_files_are_private() {
    let Some(lab) = lab() else { return };
    let token = lab.env_value("RUNBOOK_LAB_TOKEN");
    for url in [
        format!("{}/api/v1/nodes", lab.url),
        format!("{}/twin/advance?by=1m", lab.url),
        format!("{}/twin/audit", lab.aws_endpoint()),
    ] {
        let (body, code) = answer(&lab.curl("GET", &url, None));
        assert_eq!(code, "401", "{url} without a token: {body}");
        let (_, code) = answer(&lab.curl("GET", &url, Some("lab-admin-guessed")));
        assert_eq!(code, "401", "{url} with a wrong token");
    }
    let (body, code) = answer(&lab.curl("GET", &format!("{}/api/v1/nodes", lab.url), None));
    assert_eq!(
        (code.as_str(), body.contains("\"reason\":\"Unauthorized\"")),
        ("401", true),
        "{body}"
    );
    // The health endpoints stay public, as on EKS.
    let (body, code) = answer(&lab.curl("GET", &format!("{}/readyz", lab.url), None));
    assert_eq!((code.as_str(), body.as_str()), ("200", "ok"));
    let (_, code) = answer(&lab.curl("GET", &format!("{}/api/v1/nodes", lab.url), Some(&token)));
    assert_eq!(code, "200");
    // Plain http to the Kubernetes port is not served.
    let plain = lab.url.replace("https://", "http://");
    let (_, code) = answer(&lab.curl("GET", &format!("{plain}/api/v1/nodes"), Some(&token)));
    assert_ne!(code, "200");

    let env_file = lab
        .kubeconfig
        .parent()
        .expect("the lab's folder")
        .join("aws.env");
    for file in [&lab.kubeconfig, &env_file] {
        let mode = std::fs::metadata(file)
            .expect("written")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "{} is {mode:o}", file.display());
    }
}

#[test]
fn kubectl_with_aws_eks_get_token_gets_in_through_the_access_entry_and_only_so() {
    let Some(lab) = lab() else { return };
    let Some(kubectl) = kubectl("1.35") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let ours = exec_kubeconfig(&lab, "myeks5w", dir.path());
    let nodes = kubectl_with(&kubectl, &ours, &lab, &["get", "nodes", "-o", "name"]);
    assert!(nodes.status.success(), "{}", text(&nodes));
    assert_eq!(String::from_utf8_lossy(&nodes.stdout).lines().count(), 2);

    // A token for another cluster's name fails STS's check of the signed x-k8s-aws-id.
    let other = exec_kubeconfig(&lab, "other-cluster", dir.path());
    let refused = kubectl_with(&kubectl, &other, &lab, &["get", "nodes"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("You must be logged in to the server"),
        "{}",
        text(&refused)
    );

    // Without its access entry the lab user is nobody; with a view policy it reads pods only.
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
    let unmapped = kubectl_with(&kubectl, &ours, &lab, &["get", "nodes"]);
    assert!(
        text(&unmapped).contains("You must be logged in to the server"),
        "{}",
        text(&unmapped)
    );
    give_the_lab_user(&lab, "AmazonEKSViewPolicy");
    let listed = lab.aws(&[
        "eks",
        "list-associated-access-policies",
        "--cluster-name",
        "myeks5w",
        "--principal-arn",
        me,
    ]);
    assert!(
        text(&listed).contains("AmazonEKSViewPolicy"),
        "{}",
        text(&listed)
    );
    let pods = kubectl_with(
        &kubectl,
        &ours,
        &lab,
        &["get", "pods", "-n", "kube-system", "-o", "name"],
    );
    assert!(pods.status.success(), "{}", text(&pods));
    // kubectl auth can-i and whoami (1.32 and 1.35) get the answers the requests get.
    for version in ["1.32", "1.35"] {
        let Some(kubectl) = crate::support::kubectl(version) else {
            continue;
        };
        let can_i = |args: &[&str]| {
            let mut all = vec!["auth", "can-i"];
            all.extend_from_slice(args);
            String::from_utf8_lossy(&kubectl_with(&kubectl, &ours, &lab, &all).stdout)
                .trim()
                .to_string()
        };
        assert_eq!(
            can_i(&["list", "pods", "-n", "kube-system"]),
            "yes",
            "kubectl {version}"
        );
        assert_eq!(
            can_i(&["get", "pods/log", "-n", "kube-system"]),
            "yes",
            "kubectl {version}"
        );
        assert_eq!(can_i(&["list", "nodes"]), "no", "kubectl {version}");
        assert_eq!(
            can_i(&["delete", "pods", "-n", "kube-system"]),
            "no",
            "kubectl {version}"
        );
        assert_eq!(
            can_i(&["create", "pods/exec", "-n", "kube-system"]),
            "no",
            "kubectl {version}"
        );
        assert_eq!(
            can_i(&["get", "secrets", "-n", "kube-system"]),
            "no",
            "kubectl {version}"
        );
        let admin = kubectl_with(
            &kubectl,
            &lab.kubeconfig,
            &lab,
            &["auth", "can-i", "delete", "nodes"],
        );
        assert_eq!(
            String::from_utf8_lossy(&admin.stdout).trim(),
            "yes",
            "kubectl {version}"
        );
        let whoami = kubectl_with(&kubectl, &ours, &lab, &["auth", "whoami", "-o", "json"]);
        assert!(whoami.status.success(), "{}", text(&whoami));
        let whoami: Value = serde_json::from_slice(&whoami.stdout).expect("json");
        assert_eq!(
            whoami["status"]["userInfo"]["username"], me,
            "kubectl {version}"
        );
        assert_eq!(whoami["status"]["userInfo"]["extra"]["arn"][0], me);
    }

    let nodes = kubectl_with(&kubectl, &ours, &lab, &["get", "nodes"]);
    assert!(
        text(&nodes).contains(&format!("nodes is forbidden: User \"{me}\" cannot list resource \"nodes\" in API group \"\" at the cluster scope")),
        "{}",
        text(&nodes)
    );
}

#[test]
fn a_run_with_cluster_and_no_kubeconfig_passes_against_lab_serve() {
    let Some(lab) = lab() else { return };
    Runbook::new()
        .lab_env(&lab)
        .args([
            "run",
            "--yes",
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
            "let sa = \"system:serviceaccount:kube-system:coredns\"; [k8s::whoami().username, k8s::can_i(\"patch\", \"nodes\"), k8s::can_i(\"create\", \"pods/exec\", #{ namespace: \"gpu\" }), k8s::can_i(\"list\", \"pods\", #{ namespace: \"kube-system\", as_user: sa }), k8s::can_i(\"create\", \"selfsubjectaccessreviews.authorization.k8s.io\", #{ as_user: sa })]",
        ])
        .run()
        .expect_code(0);
    assert_eq!(
        asked.stdout().trim(),
        "- arn:aws:iam::123456789012:user/lab\n- true\n- true\n- false\n- true"
    );
    let doctor = Runbook::new()
        .lab_env(&lab)
        .args(["doctor", "--cluster", "myeks5w"])
        .run()
        .expect_code(0);
    assert!(
        doctor.stdout().contains("ok    EKS cluster myeks5w"),
        "{}",
        doctor.stdout()
    );
    // A cluster that is not there is named, before any Kubernetes call.
    let missing = Runbook::new()
        .lab_env(&lab)
        .args(["run", "--yes", "runbooks/verify.rhai", "--cluster", "nope"])
        .run();
    assert_eq!(missing.code(), 2, "{}", missing.stderr());
    assert!(
        missing.stderr().contains("--cluster nope: "),
        "{}",
        missing.stderr()
    );
    assert!(
        missing.stderr().contains("ResourceNotFound"),
        "{}",
        missing.stderr()
    );
}
