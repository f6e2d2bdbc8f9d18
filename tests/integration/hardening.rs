//! Trust: cleanups that finish what they start, AWS retries that ride through throttling, the
//! read sandbox, and the exit code that never hides a cleanup that did not finish.

use std::process::Command;
use std::time::Duration;

use crate::support::{
    LabServer, Runbook, helm_available, report_with, send_signal, spawn_with_lines,
};

/// The drill from nothing under a fault mix; answers its report.
fn drill_under(faults: &[&str]) -> serde_json::Value {
    let mut extra = vec!["--scenario", "empty"];
    for fault in faults {
        extra.extend(["--fault", fault]);
    }
    report_with("runbooks/gpu-lab.rhai", &extra, 0)
}

#[test]
fn the_drill_rides_through_throttling_and_server_errors() {
    if !helm_available() {
        return;
    }
    for mix in [
        &["aws-throttle=0.3"][..],
        &["aws-5xx=0.2"][..],
        &["aws-throttle=0.3", "aws-5xx=0.2", "aws-latency=2ms"][..],
    ] {
        let report = drill_under(mix);
        assert_eq!(report["status"], "passed", "{mix:?}: {report:#}");
        assert!(
            report["defers"]
                .as_array()
                .is_some_and(|d| d.iter().all(|d| d["status"] == "passed")),
            "{mix:?}: {report:#}"
        );
    }
}

#[test]
fn a_drill_under_faults_repeats_exactly() {
    if !helm_available() {
        return;
    }
    let mix = ["aws-throttle=0.3", "aws-5xx=0.2"];
    assert_eq!(drill_under(&mix), drill_under(&mix));
}

#[test]
fn the_attempt_budget_is_the_users_and_backoffs_take_no_wall_time() {
    // Every call throttled: 40 attempts back off up to 20 s each, about 13 virtual minutes,
    // on the twin's clock; the error comes back within the test's patience.
    let started = std::time::Instant::now();
    let ran = Runbook::new()
        .args([
            "eval",
            r#"let c = ""; try { ec2::vpcs(); } catch (e) { c = e.code; } c"#,
            "--fault",
            "aws-throttle=1.0",
            "--aws-max-attempts",
            "40",
        ])
        .run()
        .expect_code(0);
    assert_eq!(ran.stdout().trim(), "RequestLimitExceeded");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "13 minutes of backoff were slept on the wall clock"
    );
}

#[test]
fn a_cleanup_keeps_retrying_a_throttled_api_until_its_deadline() {
    // Three throttled calls in four, and one attempt per SDK call: the cleanup's own retries
    // get it through.
    let ran = Runbook::new()
        .args([
            "eval",
            r#"defer("read the rules", || { let r = ec2::rules("sg-0abc3456"); print(`${r.len()} rules`); }); 1"#,
            "--fault",
            "aws-throttle=0.75",
            "--aws-max-attempts",
            "1",
        ])
        .run()
        .expect_code(0);
    let err = ran.stderr();
    assert!(err.contains("11 rules"), "{err}");
    assert!(err.contains("the cleanup tries again in"), "{err}");
}

#[test]
fn a_cleanup_that_runs_out_of_time_fails_with_exit_3_and_says_what_is_left() {
    let ran = Runbook::new()
        .args([
            "eval",
            r#"defer("read the rules", #{ deadline: "1m", undo: "aws ec2 describe-security-group-rules" }, || ec2::rules("sg-0abc3456")); 1"#,
            "--fault",
            "aws-throttle=1.0",
            "--aws-max-attempts",
            "1",
        ])
        .run()
        .expect_code(3);
    let err = ran.stderr();
    assert!(
        err.contains("cleanup did not finish: something may be left behind (exit 3)"),
        "{err}"
    );
    assert!(
        err.contains("  - read the rules: failed: ") && err.contains("RequestLimitExceeded"),
        "{err}"
    );
    assert!(
        err.contains("    undo by hand: aws ec2 describe-security-group-rules"),
        "{err}"
    );
}

/// The GPU node group's desired size and the running GPU instances, as the aws CLI sees them.
fn gpu_nodegroup(lab: &LabServer) -> (i64, String) {
    let output = lab.aws(&[
        "eks",
        "describe-nodegroup",
        "--cluster-name",
        "myeks5w",
        "--nodegroup-name",
        "gpu",
        "--output",
        "json",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    (
        value["nodegroup"]["scalingConfig"]["desiredSize"]
            .as_i64()
            .unwrap_or(-1),
        value["nodegroup"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

fn gpu_instances(lab: &LabServer) -> usize {
    let output = lab.aws(&["ec2", "describe-instances", "--output", "json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    value["Reservations"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["Instances"].as_array().cloned().unwrap_or_default())
        .filter(|i| {
            let gpu = i["Tags"].as_array().is_some_and(|tags| {
                tags.iter()
                    .any(|t| t["Key"] == "eks:nodegroup-name" && t["Value"] == "gpu")
            });
            let live = ["pending", "running"].contains(&i["State"]["Name"].as_str().unwrap_or(""));
            gpu && live
        })
        .count()
}

#[test]
fn ctrl_c_during_the_gpu_scale_up_leaves_no_gpu_nodes() {
    if !helm_available() {
        return;
    }
    // At 60x the 2m36s scale-up takes about 2.6 s of wall time: Ctrl-C lands inside it.
    let lab = LabServer::start("60");
    let command = Runbook::new()
        .lab_env(&lab)
        .args([
            "run",
            "--yes",
            "runbooks/gpu-scale-up.rhai",
            "--progress",
            "never",
            "--aws-endpoint",
            &lab.aws_endpoint(),
            "--kubeconfig",
        ])
        .arg(&lab.kubeconfig)
        .command();
    let (child, rx) = spawn_with_lines(command);
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the runbook reaches the scale-up");
        if line.contains("[step] GPU scale-up") {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(
        gpu_nodegroup(&lab),
        (2, "UPDATING".to_string()),
        "the scale-up is in flight"
    );
    send_signal(&child, "INT");
    let output = child.wait_with_output().expect("exits");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout: Vec<String> = rx.try_iter().collect();
    assert_eq!(output.status.code(), Some(130), "{stderr}\n{stdout:#?}");
    assert!(
        stdout
            .iter()
            .any(|l| l.starts_with("[defer pass] GPU node group back to 0")),
        "{stdout:#?}"
    );
    assert_eq!(gpu_nodegroup(&lab), (0, "ACTIVE".to_string()));
    assert_eq!(gpu_instances(&lab), 0, "no GPU instance left running");
}

#[test]
fn reads_outside_the_sandbox_are_refused_with_the_flag_that_allows_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "outside").expect("write");
    let script = format!("read_text(\"{}\")", outside.display());
    let refused = Runbook::new().args(["eval", &script]).run().expect_code(1);
    let err = refused.stderr();
    assert!(
        err.contains("outside the folders this run may read"),
        "{err}"
    );
    assert!(err.contains("--allow-read DIR"), "{err}");
    let allowed = Runbook::new()
        .args(["eval", &script, "--allow-read"])
        .arg(dir.path())
        .run()
        .expect_code(0);
    assert_eq!(allowed.stdout().trim(), "outside");
    for path in [
        "/etc/shadow",
        "../../../etc/passwd",
        "/proc/self/environ",
        "/dev/zero",
    ] {
        let ran = Runbook::new()
            .args(["eval", &format!("read_text(\"{path}\")")])
            .run()
            .expect_code(1);
        let err = ran.stderr();
        assert!(
            err.contains("outside the folders this run may read")
                || err.contains("which runbooks never read"),
            "{path}: {err}"
        );
        assert!(!err.contains("AWS_SECRET"), "{path}: {err}");
    }
}

#[test]
fn a_set_value_from_a_file_outside_the_sandbox_is_refused_before_the_run() {
    let ran = Runbook::new()
        .args([
            "run",
            "--yes",
            "runbooks/core/params.rhai",
            "--set",
            "cluster=@/etc/passwd",
        ])
        .run()
        .expect_code(2);
    let err = ran.stderr();
    assert!(
        err.contains("cannot read the value of --set cluster"),
        "{err}"
    );
    assert!(err.contains("--allow-read"), "{err}");
    assert!(ran.stdout().is_empty(), "nothing ran: {}", ran.stdout());
}

#[test]
fn a_file_over_the_read_limit_is_refused() {
    let ran = Runbook::new()
        .args([
            "eval",
            "read_text(\"Cargo.toml\")",
            "--max-read-bytes",
            "10",
        ])
        .run()
        .expect_code(1);
    let err = ran.stderr();
    assert!(err.contains("over the 10-byte read limit"), "{err}");
}

#[test]
fn a_secret_parameter_never_reaches_output_reports_junit_or_snapshots() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runbook = dir.path().join("secret.rhai");
    std::fs::write(
        &runbook,
        r#"let p = params(#{ token: "", region: "ap-northeast-2" }, #{ secret: ["token"] });
step("call with the token", || {
    print(`calling with ${p.token}`);
    snapshot("request", #{ header: `Bearer ${p.token}`, region: p.region });
    throw `401 Unauthorized for token ${p.token}`;
});
"#,
    )
    .expect("write");
    let token_file = dir.path().join("token.txt");
    std::fs::write(&token_file, "tok-9f8e7d6c5b4a").expect("write");
    let snapshots = dir.path().join("snapshots");
    std::fs::create_dir(&snapshots).expect("mkdir");
    let (report, junit) = (dir.path().join("r.json"), dir.path().join("j.xml"));
    let ran = Runbook::new()
        .args(["run", "--yes"])
        .arg(&runbook)
        .args(["--progress", "never", "--set"])
        .arg(format!("token=@{}", token_file.display()))
        .arg("--report")
        .arg(&report)
        .arg("--junit")
        .arg(&junit)
        .arg("--snapshot-dir")
        .arg(&snapshots)
        .run()
        .expect_code(1);
    let snapshot =
        std::fs::read_to_string(snapshots.join("secret/request.yaml")).expect("snapshot");
    let report_text = std::fs::read_to_string(&report).expect("report");
    for (what, text) in [
        ("stdout", ran.stdout()),
        ("stderr", ran.stderr()),
        ("report", report_text.clone()),
        ("junit", std::fs::read_to_string(&junit).expect("junit")),
        ("snapshot", snapshot.clone()),
    ] {
        assert!(
            !text.contains("tok-9f8e7d6c5b4a"),
            "{what} shows the secret:\n{text}"
        );
    }
    assert!(
        ran.stdout().contains("calling with [secret]"),
        "{}",
        ran.stdout()
    );
    assert!(
        ran.stderr().contains("401 Unauthorized for token [secret]"),
        "{}",
        ran.stderr()
    );
    assert!(snapshot.contains("Bearer [secret]"), "{snapshot}");
    let report: serde_json::Value = serde_json::from_str(&report_text).expect("JSON");
    assert_eq!(
        report["parameters"]["token"],
        format!("@{}", token_file.display())
    );
    assert_eq!(report["parameters"]["region"], "ap-northeast-2");
}

#[test]
fn a_report_stays_small_when_a_runbook_logs_and_names_megabytes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runbook = dir.path().join("huge.rhai");
    std::fs::write(
        &runbook,
        r#"let big = "x"; for i in 0..22 { big += big; }   // 4 MiB
step(big, || { throw big; });
"#,
    )
    .expect("write");
    let report = dir.path().join("r.json");
    Runbook::new()
        .args(["run", "--yes"])
        .arg(&runbook)
        .args(["--progress", "never", "--report"])
        .arg(&report)
        .command()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("runs");
    let size = std::fs::metadata(&report).expect("report").len();
    assert!(size < 64 * 1024, "the report is {size} bytes");
    let text = std::fs::read_to_string(&report).expect("report");
    assert!(
        text.contains("… [cut: 4194304 bytes in all]"),
        "{}",
        &text[..400]
    );
}

#[test]
fn a_report_into_a_missing_folder_is_refused_before_anything_runs() {
    let ran = Runbook::new()
        .args([
            "run",
            "--yes",
            "runbooks/gpu-scale-up.rhai",
            "--report",
            "/no/such/dir/r.json",
        ])
        .run()
        .expect_code(2);
    assert!(
        ran.stderr()
            .contains("--report /no/such/dir/r.json: the folder /no/such/dir does not exist"),
        "{}",
        ran.stderr()
    );
    assert!(ran.stdout().is_empty(), "nothing ran: {}", ran.stdout());
    let ran = Runbook::new()
        .args([
            "run",
            "--yes",
            "runbooks/core/steps.rhai",
            "--snapshot-dir",
            "/no/such/sn",
        ])
        .run()
        .expect_code(2);
    assert!(
        ran.stderr()
            .contains("--snapshot-dir /no/such/sn: no such folder"),
        "{}",
        ran.stderr()
    );
    assert!(!std::path::Path::new("/no/such/sn").exists());
}

#[test]
fn lab_serve_merges_into_an_existing_kubeconfig_and_takes_it_back_out() {
    use std::io::BufRead;
    let Some(kubectl) = crate::support::kubectl("1.32") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("config");
    let original = "apiVersion: v1\nkind: Config\n# my clusters\nclusters:\n- cluster:\n    server: https://ABC.gr7.ap-northeast-2.eks.amazonaws.com\n  name: prod\ncontexts:\n- context:\n    cluster: prod\n    user: prod\n  name: prod\ncurrent-context: prod\nusers:\n- name: prod\n  user:\n    token: abc\n";
    std::fs::write(&config, original).expect("write");
    let env_file = dir.path().join(".env");
    std::fs::write(&env_file, "DATABASE_URL=postgres://db\n").expect("write");
    // An env file that is not ours is refused, and nothing is left changed.
    let refused = Runbook::new()
        .args(["lab", "serve", "--port", "0", "--write-kubeconfig"])
        .arg(&config)
        .arg("--write-env")
        .arg(&env_file)
        .run()
        .expect_code(2);
    assert!(
        refused.stderr().contains("did not write it"),
        "{}",
        refused.stderr()
    );
    assert_eq!(
        std::fs::read_to_string(&env_file).expect("env"),
        "DATABASE_URL=postgres://db\n"
    );
    assert_eq!(std::fs::read_to_string(&config).expect("config"), original);

    let mut child = Runbook::new()
        .args(["lab", "serve", "--port", "0", "--write-kubeconfig"])
        .arg(&config)
        .command()
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("lab serve starts");
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut first)
        .expect("lab serve prints where it listens");
    let nodes = Command::new(&kubectl)
        .arg("--kubeconfig")
        .arg(&config)
        .args(["get", "nodes", "-o", "name"])
        .output()
        .expect("kubectl runs");
    assert!(
        nodes.status.success(),
        "{}",
        String::from_utf8_lossy(&nodes.stderr)
    );
    let contexts = Command::new(&kubectl)
        .arg("--kubeconfig")
        .arg(&config)
        .args(["config", "get-contexts", "-o", "name"])
        .output()
        .expect("kubectl runs");
    assert_eq!(
        String::from_utf8_lossy(&contexts.stdout),
        "prod\nrunbook-lab\n"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&config)
        .expect("config")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    send_signal(&child, "TERM");
    assert!(child.wait().expect("exits").success());
    assert_eq!(
        std::fs::read_to_string(&config).expect("config"),
        original,
        "the user's kubeconfig is back byte for byte"
    );
}

#[test]
fn the_twin_answers_a_repeated_client_request_token_with_the_first_answer() {
    let lab = LabServer::start("1");
    let update = |token: Option<&str>| {
        let mut args = vec![
            "eks",
            "update-nodegroup-config",
            "--cluster-name",
            "myeks5w",
            "--nodegroup-name",
            "gpu",
            "--scaling-config",
            "desiredSize=1",
            "--output",
            "json",
        ];
        if let Some(token) = token {
            args.extend(["--client-request-token", token]);
        }
        lab.aws(&args)
    };
    let first = update(Some("drill-42"));
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    // The same call again, as a client that lost the answer retries it: the same update.
    let again = update(Some("drill-42"));
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let id = |out: &std::process::Output| {
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("JSON")["update"]["id"]
            .clone()
    };
    assert_eq!(id(&first), id(&again));
    // A new call while that update is in flight is refused, as EKS refuses it.
    let other = update(Some("drill-43"));
    assert!(!other.status.success());
    assert!(
        String::from_utf8_lossy(&other.stderr).contains("ResourceInUseException"),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );
}
