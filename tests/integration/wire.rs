//! On the wire: how many connections a run opens to each API, counted by runbook (its JSON
//! report, `-v`) and by the server that accepted them (`lab serve`), which must agree.

use crate::support::{LabServer, Runbook, assert_succeeded};

/// Connections `lab serve` has accepted so far, by API. The admin GET that asks counts its
/// own connection to the Kubernetes API.
fn accepted(lab: &LabServer) -> (u64, u64) {
    let counts: serde_json::Value =
        serde_json::from_str(&lab.get(&format!("{}/twin/requests", lab.url))).expect("JSON");
    let of = |api: &str| {
        counts["connections"][api]
            .as_u64()
            .unwrap_or_else(|| panic!("no {api} connection count in {counts}"))
    };
    (of("kubernetes"), of("aws"))
}

#[test]
fn verify_carries_its_kubernetes_requests_on_one_connection_and_says_how_many_it_opened() {
    let lab = LabServer::start("60");
    let dir = tempfile::tempdir().expect("temp dir");
    let report_file = dir.path().join("verify.json");
    let (kube_before, aws_before) = accepted(&lab);
    let ran = Runbook::new()
        .lab_env(&lab)
        .args([
            "run",
            "runbooks/verify.rhai",
            "--cluster",
            "myeks5w",
            "--read-only",
            "--progress",
            "never",
            "-v",
            "--report",
        ])
        .arg(&report_file)
        .run()
        .expect_code(0);
    let (kube_after, aws_after) = accepted(&lab);

    let text = std::fs::read_to_string(&report_file).expect("the report");
    let report: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let counted = |api: &str| report["connections"][api].as_u64().unwrap_or(0);
    // 20 Kubernetes reads, several at once: HTTP/2 (ALPN) carries them all on the first
    // connection. Exec is the only thing that would need one more, and verify runs none.
    assert_eq!(counted("kubernetes"), 1, "{}", report["connections"]);
    assert_eq!(counted("kubernetes_exec"), 0, "{}", report["connections"]);
    // What runbook says it opened is what the server accepted (less the admin GET's own).
    assert_eq!(counted("kubernetes"), kube_after - kube_before - 1);
    assert_eq!(counted("aws"), aws_after - aws_before);
    // 19 AWS calls, 7 DescribeAddon at once among them: the SDK clients share one pool, and
    // HTTP/2 carries them on one connection; the twin's cost meter is read on one more.
    assert!(
        (1..=2).contains(&counted("aws")),
        "{}",
        report["connections"]
    );
    let line = format!("connections opened: Kubernetes 1, AWS {}", counted("aws"));
    assert!(ran.stderr().contains(&line), "{line} in {}", ran.stderr());
}

#[test]
fn the_twins_apis_speak_http2_to_whoever_offers_it_and_http1_to_the_rest() {
    let lab = LabServer::start("60");
    let token = lab.env_value("RUNBOOK_LAB_TOKEN");
    let version = |flag: &str, url: String| {
        let out = std::process::Command::new("curl")
            .args([
                "-sS",
                "-o",
                "/dev/null",
                "-w",
                "%{http_version}",
                flag,
                "--cacert",
            ])
            .arg(&lab.ca_file)
            .args(["-H", &format!("Authorization: Bearer {token}")])
            .arg(url)
            .output()
            .expect("curl runs");
        assert_succeeded(&out, "curl /version");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let kube = || format!("{}/version", lab.url);
    assert_eq!(version("--http2", kube()), "2");
    assert_eq!(version("--http1.1", kube()), "1.1");
    // The AWS endpoint is HTTPS with the same CA, as the env file's AWS_CA_BUNDLE says.
    let aws = || format!("{}/twin/audit", lab.aws_endpoint());
    assert_eq!(version("--http2", aws()), "2");
    assert_eq!(version("--http1.1", aws()), "1.1");
    assert_eq!(
        std::fs::read_to_string(lab.env_value("AWS_CA_BUNDLE")).expect("the CA file"),
        std::fs::read_to_string(&lab.ca_file).expect("the kubeconfig's CA")
    );
}
