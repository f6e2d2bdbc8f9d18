//! Round two of the outside probe's holes, each reproduced as the probe ran it: builtins that
//! allocated past the memory guard after a scale-up, a stop signal during a call that hears no
//! signal, a large or deep parameter file read after the GPUs were up, `--read-only` runs that
//! exec'd and switched twin faults, and markup that reached the Markdown summary.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{LabServer, Runbook, read_report, send_signal, spawn_with_lines};
use crate::trust::against;

/// A runbook that scales the GPU node group to 2 (a cleanup puts it back), then runs `then`.
fn scale_then(dir: &Path, then: &str) -> PathBuf {
    let file = dir.join("scale-then.rhai");
    std::fs::write(
        &file,
        format!(
            r#"import "gpu" as gpu;
let lab = #{{ cluster: "myeks5w", gpu_nodegroup: "gpu", gpu_nodes: 2 }};
gpu::back_to_zero_later(lab);
step("scale up", || eks::scale_nodegroup(lab.cluster, lab.gpu_nodegroup, 2));
step("then", || {{ {then} }});
"#
        ),
    )
    .expect("write the runbook");
    file
}

/// The builtin allocations the probe used, after a scale-up, in a process that may not map more
/// than 3 GB: each is refused by name before it allocates, the cleanup puts the GPUs back and
/// the report is written.
#[test]
fn a_builtin_asked_for_billions_after_a_scale_up_is_refused_and_the_gpus_go_back() {
    let lab = LabServer::start("600");
    for (call, said) in [
        (
            "[].pad(4000000000, 0)",
            "pad asked for an array of 4000000000 items",
        ),
        (
            r#"let s = ""; s.pad(100000000000, "x"); s"#,
            "pad asked for a string of 100000000000 characters",
        ),
        ("blob(9000000000)", "blob asked for 9000000000 bytes"),
    ] {
        let state = tempfile::tempdir().expect("temp dir");
        let dir = tempfile::tempdir().expect("temp dir");
        let runbook = scale_then(dir.path(), call);
        let report = dir.path().join("report.json");
        let command = against(&lab, state.path(), &["run", "--yes", "--progress", "never"])
            .arg(&runbook)
            .arg("--report")
            .arg(&report)
            .command();
        // As under a small memory cgroup: an allocation past the guard would end the process.
        let mut limited = Command::new("bash");
        limited
            .arg("-c")
            .arg("ulimit -v 3000000 && exec \"$@\"")
            .arg("limited")
            .arg(command.get_program())
            .args(command.get_args())
            .envs(command.get_envs().filter_map(|(k, v)| Some((k, v?))));
        let out = limited.output().expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{call}: {err}");
        assert!(err.contains(said), "{call}: {err}");
        assert!(err.contains("512 MiB memory limit"), "{call}: {err}");
        assert!(err.contains("nothing was allocated"), "{call}: {err}");
        let report = read_report(&report);
        assert_eq!(
            report["defers"][0]["status"], "passed",
            "{call}: {report:#}"
        );
        assert_eq!(
            lab.gpu_desired(),
            0,
            "{call}: the cleanup put the node group back"
        );
    }
}

/// Starts the runbook that scales up and then sits in a call that hears no signal (what a long
/// builtin was), and waits until that call has begun.
fn stalled_after_a_scale_up(lab: &LabServer, state: &Path, dir: &Path) -> std::process::Child {
    let runbook = scale_then(dir, "test_stall(120)");
    let command = against(lab, state, &["run", "--yes", "--progress", "never"])
        .arg(&runbook)
        .command();
    let (child, rx) = spawn_with_lines(command);
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the runbook reaches its stalled step");
        if line.contains("[step] then") {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(lab.gpu_desired(), 2, "scaled up before the signal");
    child
}

fn ended_within(child: std::process::Child, limit: Duration) -> (Option<i32>, String) {
    let started = Instant::now();
    let out = child.wait_with_output().expect("exits");
    assert!(started.elapsed() < limit, "took {:?}", started.elapsed());
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sigint_then_sigterm_during_a_deaf_call_undoes_the_run_from_its_journal_and_exits_3() {
    let lab = LabServer::start("600");
    let state = tempfile::tempdir().expect("temp dir");
    let dir = tempfile::tempdir().expect("temp dir");
    let child = stalled_after_a_scale_up(&lab, state.path(), dir.path());
    send_signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(500));
    send_signal(&child, "TERM");
    let (code, err) = ended_within(child, Duration::from_secs(60));
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("aborted: a second signal came"), "{err}");
    assert!(
        err.contains("[pass] node group gpu of myeks5w back to 0"),
        "{err}"
    );
    assert!(
        err.contains("[result] undone from the journal: 1 steps"),
        "{err}"
    );
    assert_eq!(lab.gpu_desired(), 0, "put back from the journal");
    // Nothing is left for recover: the journal says the run was undone.
    let recover = against(&lab, state.path(), &["recover"])
        .run()
        .expect_code(0);
    assert!(
        recover.stdout().contains("nothing to recover"),
        "{}",
        recover.stdout()
    );
}

#[test]
fn a_sigterm_whose_cleanups_cannot_start_undoes_the_run_from_its_journal_within_seconds() {
    let lab = LabServer::start("600");
    let state = tempfile::tempdir().expect("temp dir");
    let dir = tempfile::tempdir().expect("temp dir");
    let child = stalled_after_a_scale_up(&lab, state.path(), dir.path());
    send_signal(&child, "TERM");
    let (code, err) = ended_within(child, Duration::from_secs(60));
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("terminated (SIGTERM)"), "{err}");
    assert!(err.contains("cleanups did not start within 3 s"), "{err}");
    assert!(
        err.contains("[result] undone from the journal: 1 steps"),
        "{err}"
    );
    assert_eq!(lab.gpu_desired(), 0, "put back from the journal");
    // The abort gave the target's Lease back before it exited.
    if let Some(kubectl) = crate::support::kubectl("1.32") {
        let (code, _, err) = crate::support::kubectl_run(
            &kubectl,
            &lab,
            &["get", "lease", "-n", "runbook", "target-lock"],
        );
        assert!(code != 0 && err.contains("NotFound"), "{err}");
    }
}

/// gpu-health.rhai with a policy file the probe used: each is refused at `params`, before any
/// step, naming the file; the lab is untouched.
#[test]
fn a_large_or_deep_policy_file_is_refused_before_the_first_step_naming_the_file() {
    let lab = LabServer::start("600");
    let dir = tempfile::tempdir().expect("temp dir");
    let large = dir.path().join("large.json");
    let rules: Vec<String> = (0..4_500_000).map(|i| format!("{{\"n\":{i}}}")).collect();
    std::fs::write(&large, format!("{{\"rules\":[{}]}}", rules.join(","))).expect("write");
    assert!(
        std::fs::metadata(&large).expect("written").len() > 50 << 20,
        "as large as the probe's (60 MB)"
    );
    let deep = dir.path().join("deep.json");
    std::fs::write(
        &deep,
        format!("{}{}", "{\"a\":".repeat(100_000), "1}".repeat(100_000)),
    )
    .expect("write");
    let wrong = dir.path().join("wrong.json");
    std::fs::write(&wrong, r#"{"rules":[{"xid":[79],"action":"EXPLODE"}]}"#).expect("write");
    // A file that is no JSON object is a usage error (2); a policy that reads but is wrong is
    // the policy check's failure (1): both before the first step.
    for (file, said, code) in [
        (&large, "a JSON object of at most 1024 KiB", 2),
        (&deep, "recursion limit", 2),
        (
            &wrong,
            "rules[0].action is HEALTHY, MONITOR, RESET, REBOOT or ISOLATE, got \"EXPLODE\"",
            1,
        ),
    ] {
        let state = tempfile::tempdir().expect("temp dir");
        let report = dir.path().join("report.json");
        let started = Instant::now();
        let out = against(&lab, state.path(), &["run", "--yes", "--progress", "never"])
            .args(["runbooks/gpu-health.rhai", "--allow-read"])
            .arg(dir.path())
            .arg("--set")
            .arg(format!("policy=@{}", file.display()))
            .arg("--report")
            .arg(&report)
            .run()
            .expect_code(code);
        let err = out.stderr();
        assert!(err.contains(said), "{}: {err}", file.display());
        if file != &wrong {
            assert!(
                err.contains(&format!("--set policy=@{}", file.display())),
                "{err}"
            );
        }
        assert!(
            err.lines().all(|l| l.len() < 2000),
            "a line quotes the file: {err}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "took {:?}",
            started.elapsed()
        );
        let report = read_report(&report);
        assert_eq!(
            report["steps"].as_array().map(Vec::len),
            Some(0),
            "{report:#}"
        );
        assert_eq!(
            report["changes"].as_array().map_or(0, Vec::len),
            0,
            "{report:#}"
        );
        assert_eq!(lab.gpu_desired(), 0);
    }
}

/// `runbook` run `--read-only` on the embedded twin, deployed.
fn read_only_on_the_twin(runbook: &Path) -> Runbook {
    Runbook::new()
        .args([
            "run",
            "--read-only",
            "--progress",
            "never",
            "--scenario",
            "deployed",
        ])
        .arg(runbook)
}

#[test]
fn read_only_refuses_twin_faults_and_execs_but_lets_the_gpu_queries_through() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (call, said) in [
        (
            r#"twin::fault("link-down=onprem")"#,
            "twin::fault link-down=onprem was not sent: the run is --read-only",
        ),
        (
            r#"k8s::exec("coredns", ["sh", "-c", "rm -rf /data"], #{ namespace: "kube-system" })"#,
            "k8s::exec was not sent: the run is --read-only and a command in a pod can change anything",
        ),
        (
            r#"k8s::exec("coredns", ["nvidia-smi", "-r"], #{ namespace: "kube-system" })"#,
            "only the GPU probes' queries run (nvidia-smi --query-gpu=FIELDS",
        ),
    ] {
        let runbook = dir.path().join("call.rhai");
        std::fs::write(&runbook, format!("step(\"call\", || {call});\n")).expect("write");
        let report = dir.path().join("report.json");
        let out = read_only_on_the_twin(&runbook)
            .arg("--report")
            .arg(&report)
            .run()
            .expect_code(1);
        assert!(out.stderr().contains(said), "{call}: {}", out.stderr());
        let report = read_report(&report);
        assert_eq!(
            report["changes"][0]["outcome"], "refused",
            "{call}: {report:#}"
        );
    }
    // A query the GPU probes make passes the guard (the pod has no nvidia-smi: the twin's
    // answer, not a refusal).
    let runbook = dir.path().join("query.rhai");
    std::fs::write(
        &runbook,
        "let pod = k8s::pods(#{ namespace: \"kube-system\" })[0].name;\n\
         let out = k8s::exec(pod, [\"nvidia-smi\", \"nvlink\", \"-s\"], #{ namespace: \"kube-system\" });\n\
         print(`exit ${out.exit_code}`);\n",
    )
    .expect("write");
    let out = read_only_on_the_twin(&runbook).run();
    assert!(!out.stderr().contains("--read-only"), "{}", out.stderr());
    assert!(out.stdout().contains("exit "), "{}", out.stdout());
}

/// A step name, an error and a metric label with markup: the Markdown summary shows them as
/// text; the summary and JUnit files are the user's alone, as the reports are.
#[test]
fn markup_in_a_runbook_reaches_the_summary_as_text_and_its_files_are_private() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runbook = dir.path().join("markup.rhai");
    std::fs::write(
        &runbook,
        "step(\"measured\", || metric(\"m\", 1, #{ labels: #{ who: \"<b>x</b>\" } }));\n\
         step(\"<img src=x onerror=alert(1)>\", || throw \"<script>alert(2)</script> & more\");\n",
    )
    .expect("write");
    let summary = dir.path().join("summary.md");
    let junit = dir.path().join("junit.xml");
    Runbook::new()
        .args(["run", "--progress", "never"])
        .arg(&runbook)
        .arg("--summary")
        .arg(&summary)
        .arg("--junit")
        .arg(&junit)
        .run()
        .expect_code(1);
    let text = std::fs::read_to_string(&summary).expect("the summary");
    assert!(!text.contains("<img"), "{text}");
    assert!(!text.contains("<script"), "{text}");
    assert!(text.contains("&lt;img src=x onerror=alert(1)>"), "{text}");
    assert!(
        text.contains("&lt;script>alert(2)&lt;/script> &amp; more"),
        "{text}"
    );
    for file in [&summary, &junit] {
        let mode = std::fs::metadata(file)
            .expect("written")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }
}

/// readyz read with a token the API server refuses: the refusal, said as such (it used to read
/// "readyz failing: []", an empty list of failing checks).
#[test]
fn readyz_with_a_refused_token_says_the_api_refused_it() {
    let lab = LabServer::start("600");
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    let text = std::fs::read_to_string(&lab.kubeconfig).expect("the lab's kubeconfig");
    let token = lab.env_value("RUNBOOK_LAB_TOKEN");
    assert!(
        text.contains(&token),
        "the kubeconfig holds the lab's token"
    );
    std::fs::write(&kubeconfig, text.replace(&token, "lab-admin-guessed")).expect("write");
    std::fs::set_permissions(&kubeconfig, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let out = Runbook::new()
        .lab_env(&lab)
        .args(["eval", "--kubeconfig"])
        .arg(&kubeconfig)
        .args(["--aws-endpoint", &lab.aws_endpoint(), "k8s::readyz()"])
        .run();
    let err = out.stderr();
    assert_ne!(out.code(), 0, "{err}");
    assert!(err.contains("Unauthorized"), "{err}");
    assert!(!out.stdout().contains("failed: []"), "{}", out.stdout());
}

/// A TLS connection to `url`'s port that trusts the lab's CA, its handshake done, HTTP/1.1.
fn tls_to(
    url: &str,
    ca_file: &Path,
) -> rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream> {
    use rustls::pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(ca_file).expect("the CA file") {
        roots.add(cert.expect("a certificate")).expect("a CA");
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let authority = url.trim_start_matches("https://");
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").expect("a name");
    let connection = rustls::ClientConnection::new(std::sync::Arc::new(config), name).expect("TLS");
    let tcp = std::net::TcpStream::connect(authority).expect("connects");
    tcp.set_read_timeout(Some(Duration::from_millis(50)))
        .expect("timeout");
    let mut stream = rustls::StreamOwned::new(connection, tcp);
    while stream.conn.is_handshaking() {
        stream
            .conn
            .complete_io(&mut stream.sock)
            .expect("the handshake");
    }
    stream
}

/// Whether the server has let `stream` go: a read sees the end (or a reset), not a timeout.
fn let_go(stream: &mut impl std::io::Read) -> bool {
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

/// 2,000 connections that never start a handshake and 50 that trickle a request's headers, as
/// one local client can open them: lab serve keeps at most 256 of the silent ones (the oldest
/// go first), answers readyz within 1 s meanwhile, lets the rest go after its handshake and
/// header timeouts, and comes back to its resting memory.
#[test]
fn lab_serve_lets_go_of_silent_and_slowloris_connections_and_keeps_answering() {
    use std::io::Write as _;
    let lab = LabServer::start("600");
    let authority = lab.url.trim_start_matches("https://").to_string();
    let readyz = |what: &str| {
        let started = Instant::now();
        let out = lab.curl("GET", &format!("{}/readyz", lab.url), None);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.ends_with("200"), "{what}: {text}");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{what}: {:?}",
            started.elapsed()
        );
    };
    readyz("at rest");
    let resting = lab.rss_kib();

    let mut silent: Vec<std::net::TcpStream> = (0..2_000)
        .map(|_| {
            let stream = std::net::TcpStream::connect(&authority).expect("connects");
            stream
                .set_read_timeout(Some(Duration::from_millis(20)))
                .expect("timeout");
            stream
        })
        .collect();
    let mut slow: Vec<_> = (0..50)
        .map(|_| {
            let mut stream = tls_to(&lab.url, &lab.ca_file);
            stream
                .write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                .expect("the first line");
            stream
        })
        .collect();
    readyz("during the flood");
    std::thread::sleep(Duration::from_millis(500));
    let held = silent
        .iter_mut()
        .filter_map(|s| (!let_go(s)).then_some(()))
        .count();
    assert!(held <= 256, "{held} silent connections still held");

    // Past the handshake timeout (10 s) every silent one is gone; past the header timeout
    // (32 s) every slowloris, which sends a header line every 2 s until then.
    let started = Instant::now();
    let mut open_slow = slow.len();
    while started.elapsed() < Duration::from_secs(45) && open_slow > 0 {
        std::thread::sleep(Duration::from_secs(2));
        open_slow = 0;
        for stream in &mut slow {
            let gone = stream
                .write_all(b"X-Slow: 1\r\n")
                .and_then(|()| stream.flush())
                .is_err()
                || let_go(stream);
            if !gone {
                open_slow += 1;
            }
        }
    }
    assert_eq!(
        open_slow,
        0,
        "slowloris connections held after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() > Duration::from_secs(25),
        "let go before the header timeout"
    );
    assert_eq!(
        silent
            .iter_mut()
            .filter_map(|s| (!let_go(s)).then_some(()))
            .count(),
        0
    );
    drop((silent, slow));
    readyz("after the flood");
    std::thread::sleep(Duration::from_secs(2));
    let after = lab.rss_kib();
    eprintln!("lab serve: {resting} KiB at rest, {after} KiB after the flood");
    assert!(
        after < resting + 16 * 1024,
        "resting {resting} KiB, after the flood {after} KiB"
    );
}

/// `recover` after a run killed with the GPUs up, while AWS throttles every call: it rides out
/// the busy API as a runbook's cleanup does (it used to give up at the first throttled step,
/// exit 3, once the SDK's own attempts were spent) and puts the node group back once AWS
/// answers again.
#[test]
fn recover_rides_out_a_throttled_api_and_puts_the_gpus_back() {
    let lab = LabServer::start("600");
    let state = tempfile::tempdir().expect("temp dir");
    let dir = tempfile::tempdir().expect("temp dir");
    let runbook = scale_then(dir.path(), "()");
    against(&lab, state.path(), &["run", "--yes", "--progress", "never"])
        .arg(&runbook)
        .env("RUNBOOK_CRASH_AFTER_MUTATION", "1")
        .run()
        .expect_code(137);
    assert_eq!(lab.gpu_desired(), 2, "killed with the GPUs up");
    lab.admin("faults?set=aws-throttle=1.0");
    // One SDK attempt a call, so that what is measured is recover's own patience (the SDK's
    // adaptive retries alone ride out about four minutes of throttling).
    let (child, lines) = spawn_with_lines(
        against(&lab, state.path(), &["recover", "--aws-max-attempts", "1"]).command(),
    );
    let retried = lines
        .recv_timeout(Duration::from_secs(60))
        .into_iter()
        .chain(lines.iter())
        .find(|line| line.contains("trying again in"));
    assert!(retried.is_some(), "recover said no retry");
    lab.admin("faults?set=aws-throttle=0");
    let (code, err) = ended_within(child, Duration::from_secs(90));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(lab.gpu_desired(), 0, "put back once AWS answered");
}
