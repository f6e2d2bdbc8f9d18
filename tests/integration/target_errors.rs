//! Errors on the way to a target, as a user meets them: each case is a real failure (a dead
//! port, the wrong port of `lab serve`, a server that answers HTML, TLS to plain HTTP, a name
//! that does not resolve, a socket that never answers, no credentials, an expired token, a
//! denied action, broken kubeconfigs), and its message is one line that says what failed,
//! where, why and what to do. All of them in one snapshot, ports and folders masked.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{LabServer, Runbook, free_port};
use crate::with_snapshots;

/// The one line a failed run ends with (`failed: ...` or `error: ...`).
fn message(command: std::process::Command) -> String {
    let mut command = command;
    let out = command.output().expect("runbook runs");
    assert_ne!(out.status.code(), Some(0), "the case must fail");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("failed: ") || l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line in:\n{text}"))
        .to_string();
    for dump in [
        "ServiceError(",
        "DispatchFailure(",
        "Os {",
        "ConnectorError",
        "hyper",
    ] {
        assert!(!line.contains(dump), "a Debug dump in: {line}");
    }
    line
}

fn eval_with(script: &str, args: &[&str]) -> std::process::Command {
    Runbook::new()
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .args(["eval", script])
        .args(args)
        .command()
}

/// A server on loopback that answers every request with an HTML 404, as a web server would.
fn html_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("bound").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buffer = [0u8; 8192];
            let _ = stream.read(&mut buffer);
            let body = "<!DOCTYPE html>\n<html><body><h1>404 Not Found</h1></body></html>\n";
            let _ = write!(
                stream,
                "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// A server on loopback that starts every answer (status, headers, the first bytes of a
/// body) and then sends nothing more, as a stuck proxy would.
fn stalling_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("bound").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut buffer = [0u8; 8192];
                let _ = stream.read(&mut buffer);
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"kind\":",
                );
                std::thread::sleep(Duration::from_secs(60));
            });
        }
    });
    port
}

fn mask(line: &str, dir: &Path) -> String {
    let text = line.replace(&dir.display().to_string(), "DIR");
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("127.0.0.1:") {
        let (head, tail) = rest.split_at(at + "127.0.0.1:".len());
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            out.push_str("PORT");
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

fn kubeconfig_with_server(lab: &LabServer, server: &str, dir: &Path, name: &str) -> String {
    let text = std::fs::read_to_string(&lab.kubeconfig).expect("the lab's kubeconfig");
    let path = dir.join(name);
    std::fs::write(&path, text.replace(&lab.url, server)).expect("writable");
    path.display().to_string()
}

#[test]
fn every_way_to_miss_a_target_says_what_where_why_and_what_to_do_in_one_line() {
    let lab = LabServer::start("60");
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let kc = lab.kubeconfig.display().to_string();
    let aws_port = lab
        .aws_endpoint()
        .rsplit(':')
        .next()
        .expect("a port")
        .to_string();
    let dead = format!("http://127.0.0.1:{}", free_port());
    let html = format!("http://127.0.0.1:{}", html_server());
    // Accepts connections (the kernel completes them) and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").expect("a port");
    let silent_url = format!(
        "http://127.0.0.1:{}",
        silent.local_addr().expect("bound").port()
    );
    let aws = |endpoint: &str| {
        eval_with(
            "eks::clusters()",
            &[
                "--kubeconfig",
                &kc,
                "--aws-endpoint",
                endpoint,
                "--request-timeout",
                "2s",
            ],
        )
    };
    let mut cases: Vec<(&str, String)> = vec![
        ("aws: a dead port", message(aws(&dead))),
        (
            "aws: the Kubernetes port of lab serve (TLS with the lab's own CA)",
            message(aws(&lab.url)),
        ),
        ("aws: a server that answers HTML", message(aws(&html))),
        (
            "aws: https to a plain HTTP port",
            message(aws(&html.replacen("http://", "https://", 1))),
        ),
        (
            "aws: http to lab serve's AWS port, which is HTTPS",
            message(aws(&format!("http://127.0.0.1:{aws_port}"))),
        ),
        (
            "aws: a host name that does not resolve",
            message(aws("http://lab.invalid:4566")),
        ),
    ];
    let started = Instant::now();
    cases.push((
        "aws: a socket that never answers",
        message(aws(&silent_url)),
    ));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the 2 s request timeout bounds it: {:?}",
        started.elapsed()
    );
    let mut no_credentials = eval_with(
        "eks::clusters()",
        &["--kubeconfig", &kc, "--region", "ap-northeast-2"],
    );
    for key in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    ] {
        no_credentials.env_remove(key);
    }
    no_credentials
        .env("HOME", d)
        .env("AWS_CONFIG_FILE", d.join("no-config"))
        .env("AWS_SHARED_CREDENTIALS_FILE", d.join("no-credentials"))
        .env("AWS_EC2_METADATA_DISABLED", "true");
    cases.push(("aws: no credentials at all", message(no_credentials)));
    cases.push((
        "aws: an expired session token",
        message(eval_with(
            "eks::clusters()",
            &["--fault", "aws-expired-token=on"],
        )),
    ));
    cases.push((
        "aws: one action denied",
        message(eval_with(
            "eks::nodegroup(\"myeks5w\", \"gpu\")",
            &["--fault", "aws-deny=eks:DescribeNodegroup"],
        )),
    ));

    let kube = |kubeconfig: &str, extra: &[&str]| {
        let mut args = vec!["--kubeconfig", kubeconfig, "--request-timeout", "2s"];
        args.extend_from_slice(extra);
        eval_with("k8s::nodes().len()", &args)
    };
    let missing = d.join("missing").display().to_string();
    let empty = d.join("empty");
    std::fs::write(&empty, "").expect("writable");
    let lab_text = std::fs::read_to_string(&lab.kubeconfig).expect("readable");
    let no_current = d.join("no-current-context");
    std::fs::write(
        &no_current,
        lab_text
            .lines()
            .filter(|l| !l.starts_with("current-context"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .expect("writable");
    let exec = d.join("exec-plugin");
    std::fs::write(
        &exec,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:6443\"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws-iam-authenticator-missing\n      args: [token, -i, myeks5w]\n",
    )
    .expect("writable");
    cases.extend([
        (
            "kubernetes: the kubeconfig does not exist",
            message(kube(&missing, &[])),
        ),
        (
            "kubernetes: an empty kubeconfig",
            message(kube(&empty.display().to_string(), &[])),
        ),
        (
            "kubernetes: no current-context",
            message(kube(&no_current.display().to_string(), &[])),
        ),
        (
            "kubernetes: an unknown --context",
            message(kube(
                &kubeconfig_with_server(&lab, &lab.url, d, "lab"),
                &["--context", "prod"],
            )),
        ),
        (
            "kubernetes: the credential plugin is not installed",
            message(kube(&exec.display().to_string(), &[])),
        ),
        (
            "kubernetes: a dead port",
            message(kube(&kubeconfig_with_server(&lab, &dead, d, "dead"), &[])),
        ),
        (
            "kubernetes: the AWS port of lab serve",
            message(kube(
                &kubeconfig_with_server(&lab, &lab.aws_endpoint(), d, "aws-port"),
                &[],
            )),
        ),
    ]);
    let failing_plugin = d.join("failing-plugin");
    std::fs::write(
        &failing_plugin,
        std::fs::read_to_string(&exec).expect("readable").replace(
            "command: aws-iam-authenticator-missing\n      args: [token, -i, myeks5w]",
            "command: sh\n      args: [-c, \"exit 255\", s3cr3t-argument]",
        ),
    )
    .expect("writable");
    let wrong_token = d.join("wrong-token");
    std::fs::write(
        &wrong_token,
        lab_text
            .lines()
            .map(|l| {
                if l.trim_start().starts_with("token:") {
                    "    token: not-the-lab-token"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .expect("writable");
    let plugin_failed = message(kube(&failing_plugin.display().to_string(), &[]));
    assert!(!plugin_failed.contains("s3cr3t"), "{plugin_failed}");
    cases.extend([
        ("kubernetes: the credential plugin fails", plugin_failed),
        (
            "kubernetes: a token the API server does not accept",
            message(kube(&wrong_token.display().to_string(), &[])),
        ),
    ]);
    let started = Instant::now();
    cases.push((
        "kubernetes: an answer that starts and then stalls",
        message(kube(
            &kubeconfig_with_server(
                &lab,
                &format!("http://127.0.0.1:{}", stalling_server()),
                d,
                "stalling",
            ),
            &[],
        )),
    ));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the 2 s request timeout bounds a stalled body too: {:?}",
        started.elapsed()
    );
    let started = Instant::now();
    cases.push((
        "kubernetes: a socket that never answers",
        message(kube(
            &kubeconfig_with_server(&lab, &silent_url, d, "silent"),
            &[],
        )),
    ));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the 2 s request timeout bounds it: {:?}",
        started.elapsed()
    );
    drop(silent);

    let mut outside_a_pod = eval_with("k8s::nodes().len()", &["--in-cluster"]);
    outside_a_pod.env_remove("KUBERNETES_SERVICE_HOST");
    cases.push(("in-cluster: not in a pod", message(outside_a_pod)));
    let mut no_token = eval_with(
        "k8s::nodes().len()",
        &[
            "--in-cluster",
            "--service-account-dir",
            &d.display().to_string(),
        ],
    );
    no_token.env("KUBERNETES_SERVICE_HOST", "127.0.0.1");
    cases.push((
        "in-cluster: no ServiceAccount token mounted",
        message(no_token),
    ));

    let text: String = cases
        .iter()
        .map(|(case, line)| format!("{case}\n  {}\n", mask(line, d)))
        .collect();
    with_snapshots!({ insta::assert_snapshot!("target-errors", text) });
}

#[test]
fn doctor_passes_on_the_twin_and_names_what_fails_elsewhere() {
    let ran = Runbook::new().args(["doctor"]).run().expect_code(0);
    let out = ran.stdout();
    for probe in [
        "ok    Kubernetes API",
        "ok    readyz",
        "ok    Kubernetes identity           kubernetes-admin (groups system:masters, system:authenticated)",
        "ok    may read what verify reads    6 permissions",
        "ok    may make the drill's changes  5 permissions",
        "ok    AWS identity                  arn:aws:iam::123456789012:user/lab in ap-northeast-2",
        "ok    EKS cluster myeks5w",
        "ok    helm",
    ] {
        assert!(out.contains(probe), "{probe} in:\n{out}");
    }
    let ran = Runbook::new()
        .args([
            "doctor",
            "--json",
            "--fault",
            "check=etcd",
            "--scenario",
            "empty",
        ])
        .run()
        .expect_code(1);
    let report: serde_json::Value = serde_json::from_str(&ran.stdout()).expect("json");
    let probes = report["probes"].as_array().expect("probes");
    let failed: Vec<&str> = probes
        .iter()
        .filter(|p| p["ok"] == false)
        .filter_map(|p| p["probe"].as_str())
        .collect();
    assert_eq!(failed, ["readyz", "EKS cluster myeks5w"], "{report}");
    assert!(
        probes[1]["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("etcd")
    );

    let lab = LabServer::start("60");
    let dead = format!("http://127.0.0.1:{}", free_port());
    let ran = Runbook::new()
        .lab_env(&lab)
        .args(["doctor", "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .args(["--aws-endpoint", &dead])
        .run()
        .expect_code(1);
    let out = ran.stdout();
    assert!(out.contains("ok    Kubernetes API"), "{out}");
    for row in [
        "FAIL  AWS identity                  ConnectionError: GetCallerIdentity: cannot reach http://127.0.0.1:",
        "FAIL  EKS cluster myeks5w           ConnectionError: DescribeCluster: cannot reach http://127.0.0.1:",
    ] {
        assert!(out.contains(row), "{row}\nin:\n{out}");
    }
    assert!(out.contains("the connection was refused"), "{out}");
}

#[test]
fn verbose_shows_each_layer_under_the_one_line_and_the_report_keeps_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let dead = format!("http://127.0.0.1:{}", free_port());
    let runbook = dir.path().join("clusters.rhai");
    std::fs::write(&runbook, "step(\"clusters\", || eks::clusters());\n").expect("writable");
    let report = dir.path().join("report.json");
    let ran = Runbook::new()
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .args([
            "run",
            "--yes",
            "--progress",
            "never",
            "--aws-endpoint",
            &dead,
            "--report",
        ])
        .arg(&report)
        .arg(&runbook)
        .run()
        .expect_code(1);
    let quiet = ran.stderr();
    assert!(quiet.contains("the connection was refused"), "{quiet}");
    assert!(!quiet.contains("caused by"), "one line by default: {quiet}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("a report")).expect("json");
    let detail: Vec<&str> = report["error_detail"]
        .as_array()
        .expect("error_detail")
        .iter()
        .filter_map(|c| c.as_str())
        .collect();
    assert_eq!(detail.first(), Some(&"dispatch failure"), "{report}");
    assert!(
        detail
            .last()
            .is_some_and(|c| c.starts_with("Connection refused")),
        "{report}"
    );

    let verbose = Runbook::new()
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .args([
            "eval",
            "eks::clusters()",
            "--verbose",
            "--aws-endpoint",
            &dead,
        ])
        .run()
        .expect_code(1);
    let text = verbose.stderr();
    let causes: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("  = caused by: "))
        .collect();
    assert_eq!(causes.len(), detail.len(), "{text}");
    assert!(causes.contains(&"tcp connect error"), "{text}");
    for dump in ["DispatchFailure(", "Os {", "ConnectorError"] {
        assert!(!text.contains(dump), "a Debug dump in: {text}");
    }
    // Scripts read the same chain.
    let caught = Runbook::new()
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .args([
            "eval",
            "let causes = []; try { eks::clusters(); } catch (e) { causes = e.causes; } causes",
            "--aws-endpoint",
            &dead,
        ])
        .run()
        .expect_code(0);
    assert!(
        caught.stdout().contains("tcp connect error"),
        "{}",
        caught.stdout()
    );
}

#[test]
fn a_ca_bundle_that_cannot_be_used_stops_the_run_before_its_first_step_naming_the_file() {
    let lab = LabServer::start("60");
    let dir = tempfile::tempdir().expect("temp dir");
    let not_pem = dir.path().join("not-a-ca.pem");
    std::fs::write(&not_pem, "# no certificate here\n").expect("writable");
    for (bundle, why) in [
        (
            dir.path().join("missing-ca.pem"),
            "cannot read the CA bundle",
        ),
        (not_pem, "holds no PEM certificate"),
    ] {
        let ran = Runbook::new()
            .lab_env(&lab)
            .env("AWS_CA_BUNDLE", &bundle)
            .args(["run", "runbooks/verify.rhai", "--cluster", "myeks5w"])
            .args(["--read-only", "--progress", "never"])
            .run()
            .expect_code(2);
        let said = ran.stderr();
        assert!(
            said.contains(&format!("AWS_CA_BUNDLE={}", bundle.display())) && said.contains(why),
            "{said}"
        );
        assert!(!said.contains("[pass]"), "no step ran: {said}");
    }
}
