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

/// A TCP proxy to `target` on loopback that counts the connections it accepts and holds each
/// chunk `delay` in each direction, as a far endpoint does: a TLS handshake through it takes
/// several of those. It serves until the test process ends.
fn delaying_proxy(
    target: String,
    delay: std::time::Duration,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address").to_string();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = accepted.clone();
    std::thread::spawn(move || {
        for client in listener.incoming().map_while(Result::ok) {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let Ok(server) = std::net::TcpStream::connect(&target) else {
                continue;
            };
            for (mut from, mut to) in [
                (
                    client.try_clone().expect("clone"),
                    server.try_clone().expect("clone"),
                ),
                (server, client),
            ] {
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 16 * 1024];
                    while let Ok(n) = from.read(&mut buffer) {
                        if n == 0 {
                            break;
                        }
                        std::thread::sleep(delay);
                        if to.write_all(&buffer[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = to.shutdown(std::net::Shutdown::Write);
                });
            }
        }
    });
    (address, accepted)
}

/// verify's AWS connections with the endpoint near and 25 ms away each way (through a counting
/// proxy), three runs each: the report counts what the proxy and the server saw, at most 2 (the
/// SDK's calls on one HTTP/2 connection, the twin's cost meter on another). Before the first
/// request went alone, a second connection was opened while the first handshake was in flight
/// (3 when far), and the report said 2.
#[test]
fn verify_opens_at_most_two_aws_connections_near_and_far_and_its_report_says_what_happened() {
    let lab = LabServer::start("60");
    let target = lab
        .aws_endpoint()
        .trim_start_matches("https://")
        .to_string();
    for delay_ms in [0, 25] {
        let (proxy, through_proxy) =
            delaying_proxy(target.clone(), std::time::Duration::from_millis(delay_ms));
        for run in 1..=3 {
            let dir = tempfile::tempdir().expect("temp dir");
            let report_file = dir.path().join("verify.json");
            let (_, aws_before) = accepted(&lab);
            let proxied_before = through_proxy.load(std::sync::atomic::Ordering::SeqCst);
            Runbook::new()
                .lab_env(&lab)
                .args([
                    "run",
                    "runbooks/verify.rhai",
                    "--read-only",
                    "--progress",
                    "never",
                    "--aws-endpoint",
                    &format!("https://{proxy}"),
                    "--report",
                ])
                .arg(&report_file)
                // The lab's own kubeconfig: an EKS token presigned for the proxy's address is
                // not one the twin's STS takes.
                .arg("--kubeconfig")
                .arg(&lab.kubeconfig)
                .run()
                .expect_code(0);
            let (_, aws_after) = accepted(&lab);
            let proxied = through_proxy.load(std::sync::atomic::Ordering::SeqCst) - proxied_before;
            let report: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&report_file).expect("the report"))
                    .expect("JSON");
            let counted = report["connections"]["aws"].as_u64().unwrap_or(0);
            let seen = aws_after - aws_before;
            let what = format!(
                "{delay_ms} ms each way, run {run}: report {counted}, proxy {proxied}, server {seen}"
            );
            assert_eq!((counted, proxied), (seen, seen), "{what}");
            assert!(seen <= 2, "{what}");
        }
    }
}
