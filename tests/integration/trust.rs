//! The trust contracts an outside probe found holes in, each reproduced as the probe ran it:
//! admin endpoints behind `//`, a lock file that hung every later run, read-only runs that
//! took the lock, a panic that skipped the cleanups, unbounded reads, a damaged history found
//! at the end, secrets in the journal, a chart that read outside the sandbox, a kubeconfig
//! another user owned, and what a first-time user trips on.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{LabServer, Runbook, helm_available, read_report, repo_root};

/// A run against `lab` with its own state folder (journals, locks).
pub fn against(lab: &LabServer, state: &Path, args: &[&str]) -> Runbook {
    Runbook::new()
        .lab_env(lab)
        .env("XDG_STATE_HOME", state)
        .args(args)
        .args(["--aws-endpoint", &lab.aws_endpoint(), "--kubeconfig"])
        .arg(&lab.kubeconfig)
}

/// Runs `command` to its end, or kills it after `limit` and fails the test: what hung before
/// the fix fails here instead of hanging the suite.
fn within(mut command: Command, limit: Duration, what: &str) -> std::process::Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("waits").is_some() {
            return child.wait_with_output().expect("output");
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let output = child.wait_with_output().expect("output");
            panic!(
                "{what}: still running after {limit:?}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// curl with the path exactly as written (`//twin/...` is not tidied up on the way).
fn curl_as_is(lab: &LabServer, method: &str, url: &str, token: Option<&str>) -> (String, String) {
    let mut command = Command::new("curl");
    command.args([
        "-s",
        "--path-as-is",
        "--max-time",
        "10",
        "-X",
        method,
        "--cacert",
    ]);
    command.arg(&lab.ca_file);
    if let Some(token) = token {
        command.args(["-H", &format!("Authorization: Bearer {token}")]);
    }
    let out = command
        .args(["-w", "\n%{http_code}", url])
        .output()
        .expect("curl runs");
    let all = text(&out.stdout);
    let (body, code) = all.rsplit_once('\n').unwrap_or((&all, ""));
    (code.to_string(), body.to_string())
}

#[test]
fn admin_endpoints_behind_a_doubled_slash_still_need_the_admin_token() {
    let lab = LabServer::start("600");
    let kube = lab.url.trim_end_matches('/').to_string();
    let aws = lab.aws_endpoint().trim_end_matches('/').to_string();
    for url in [
        format!("{kube}//twin/faults?set=aws-throttle=1"),
        format!("{kube}//twin/advance?by=5m"),
        format!("{kube}//twin//audit?reset"),
        format!("{kube}/twin//clock"),
        format!("{aws}//twin/audit?reset"),
        format!("{aws}//twin/usage"),
    ] {
        let (code, body) = curl_as_is(&lab, "POST", &url, None);
        assert_eq!(code, "401", "{url} without a token: {body}");
    }
    // The same paths with the token reach the endpoints they name.
    let token = lab.env_value("RUNBOOK_LAB_TOKEN");
    let (code, body) = curl_as_is(&lab, "GET", &format!("{aws}//twin/usage"), Some(&token));
    assert_eq!(code, "200", "{body}");
    assert!(body.contains("records"), "{body}");
    // No fault was set by the refused calls: the AWS API answers without throttling.
    let out = lab.aws(&["eks", "describe-cluster", "--name", "myeks5w"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// A mutating run that holds the lab's lock while it waits (interrupt.rhai's NCCL hang), for a
/// test to stop with Ctrl-C.
fn hold_the_target(lab: &LabServer, state: &Path) -> std::process::Child {
    let holder = against(
        lab,
        state,
        &[
            "run",
            "--yes",
            "runbooks/core/interrupt.rhai",
            "--progress",
            "never",
        ],
    )
    .command();
    let (child, lines) = crate::support::spawn_with_lines(holder);
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(60)) {
        if line.contains("waiting for NCCL to hang") {
            break;
        }
    }
    child
}

/// The lock files of `state` (XDG_STATE_HOME).
fn lock_files(state: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(state.join("runbook/locks"))
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_lock_file_left_empty_or_damaged_is_taken_over_with_a_note() {
    let lab = LabServer::start("600");
    let state = tempfile::tempdir().expect("temp dir");
    let verify = [
        "run",
        "--yes",
        "runbooks/verify.rhai",
        "--progress",
        "never",
    ];
    // Learn the lock's name from a run that holds it: a slow run, stopped by Ctrl-C.
    let child = hold_the_target(&lab, state.path());
    let held = lock_files(state.path());
    assert_eq!(held.len(), 1, "one lock while a run holds the target");
    crate::support::send_signal(&child, "INT");
    let _ = child.wait_with_output();
    let lock = &held[0];
    // Left by a run that died writing it: older than a moment.
    let leave = |damage: &[u8]| {
        std::fs::write(lock, damage).expect("write the lock");
        let old = std::time::SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(lock)
            .and_then(|f| f.set_modified(old))
            .expect("age the lock");
    };
    for (damage, word) in [(&b""[..], "empty"), (&b"\0\0garbage{"[..], "damaged")] {
        leave(damage);
        for extra in [&["--wait-lock", "1s"][..], &[][..]] {
            let mut args = verify.to_vec();
            args.extend(extra);
            let out = within(
                against(&lab, state.path(), &args).command(),
                Duration::from_secs(60),
                &format!("a run after an {word} lock file"),
            );
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{word} {extra:?}: {err}");
            if extra.is_empty() {
                continue;
            }
            assert!(
                err.contains(&format!("was {word}")) && err.contains("taken over"),
                "{word}: {err}"
            );
            leave(damage);
        }
    }
    // Read-only runs take no lock at all, so a damaged one never concerned them.
    std::fs::write(lock, b"").expect("write the lock");
    let mut read_only = verify.to_vec();
    read_only.push("--read-only");
    let out = within(
        against(&lab, state.path(), &read_only).command(),
        Duration::from_secs(60),
        "a read-only run beside an empty lock file",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn eight_read_only_runs_at_once_and_one_beside_a_drill_all_pass() {
    let lab = LabServer::start("600");
    let state = tempfile::tempdir().expect("temp dir");
    let read_only = [
        "run",
        "runbooks/verify.rhai",
        "--read-only",
        "--progress",
        "never",
    ];
    let children: Vec<_> = (0..8)
        .map(|_| {
            against(&lab, state.path(), &read_only)
                .command()
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("starts")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("ends");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    // A mutating run holds the target; a monitoring verify still runs beside it.
    let child = hold_the_target(&lab, state.path());
    against(&lab, state.path(), &read_only).run().expect_code(0);
    // A second mutating run is still refused.
    let refused = against(
        &lab,
        state.path(),
        &[
            "run",
            "--yes",
            "runbooks/verify.rhai",
            "--progress",
            "never",
        ],
    )
    .run()
    .expect_code(2);
    assert!(
        refused.stderr().contains("is in use by run r"),
        "{}",
        refused.stderr()
    );
    crate::support::send_signal(&child, "INT");
    let _ = child.wait_with_output();
}

/// A runbook that scales the GPU node group up (a cleanup puts it back), then looks up a
/// cluster by the name given with `--set name=...`.
fn scale_then_look_up(dir: &Path) -> PathBuf {
    let file = dir.join("scale-then-name.rhai");
    std::fs::write(
        &file,
        r#"let p = params(#{ name: "myeks5w" });
import "gpu" as gpu;
let lab = #{ cluster: "myeks5w", gpu_nodegroup: "gpu", gpu_nodes: 2 };
gpu::back_to_zero_later(lab);
step("scale up", || eks::scale_nodegroup(lab.cluster, lab.gpu_nodegroup, 2));
step("look up", || eks::cluster(p.name));
"#,
    )
    .expect("write the runbook");
    file
}

#[test]
fn a_seventy_thousand_character_name_after_a_scale_up_fails_the_step_and_the_cleanup_runs() {
    let lab = LabServer::start("600");
    let state = tempfile::tempdir().expect("temp dir");
    let dir = tempfile::tempdir().expect("temp dir");
    let runbook = scale_then_look_up(dir.path());
    let name_file = dir.path().join("name.txt");
    std::fs::write(&name_file, "x".repeat(70_000)).expect("write the name");
    let report = dir.path().join("report.json");
    let out = against(&lab, state.path(), &["run", "--yes", "--progress", "never"])
        .arg(&runbook)
        .arg("--set")
        .arg(format!("name=@{}", name_file.display()))
        .arg("--report")
        .arg(&report)
        .run()
        .expect_code(1);
    let err = out.stderr();
    assert!(!err.contains("internal error"), "{err}");
    assert!(
        err.contains("cluster name `xxxxxxxxxxxxxxxxxxxxxxxx...` is 70000 characters long"),
        "{err}"
    );
    assert!(
        err.lines().all(|l| l.len() < 3000),
        "a line quotes the whole name"
    );
    let report = read_report(&report);
    assert_eq!(report["defers"][0]["status"], "passed", "{report:#}");
    assert_eq!(lab.gpu_desired(), 0, "the cleanup put the node group back");
}

#[test]
fn a_panic_mid_run_still_runs_the_cleanups_writes_the_report_and_exits_3() {
    let lab = LabServer::start("600");
    let state = tempfile::tempdir().expect("temp dir");
    let dir = tempfile::tempdir().expect("temp dir");
    let runbook = scale_then_look_up(dir.path());
    let report = dir.path().join("report.json");
    let out = against(&lab, state.path(), &["run", "--yes", "--progress", "never"])
        .arg(&runbook)
        .arg("--report")
        .arg(&report)
        .env("RUNBOOK_PANIC_AFTER_MUTATION", "1")
        .run()
        .expect_code(3);
    let err = out.stderr();
    assert!(err.contains("internal error in runbook"), "{err}");
    assert_eq!(err.matches("please report").count(), 1, "said once: {err}");
    let stdout = out.stdout();
    assert!(
        stdout.contains("[defer pass] GPU node group back to 0"),
        "{stdout}"
    );
    let report = read_report(&report);
    assert_eq!(report["status"], "error", "{report:#}");
    assert_eq!(report["defers"][0]["status"], "passed", "{report:#}");
    assert_eq!(lab.gpu_desired(), 0, "the cleanup put the node group back");
}

#[test]
fn dev_zero_as_runbook_kubeconfig_or_scenario_is_refused_at_once() {
    for (args, what) in [
        (&["run", "/dev/zero"][..], "the runbook"),
        (&["plan", "/dev/zero"][..], "the runbook"),
        (
            &[
                "run",
                "runbooks/verify.rhai",
                "--read-only",
                "--kubeconfig",
                "/dev/zero",
            ][..],
            "the kubeconfig",
        ),
        (&["eval", "1", "--scenario", "@/dev/zero"][..], "lab-state"),
    ] {
        let out = within(
            Runbook::new().args(args).command(),
            Duration::from_secs(30),
            &format!("{args:?}"),
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("character device"), "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
    }
}

#[test]
fn an_error_quoting_a_five_megabyte_value_is_shown_by_its_ends() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runbook = dir.path().join("quote.rhai");
    std::fs::write(
        &runbook,
        "let p = params(#{ cluster: \"\" });\nthrow `no cluster ${p.cluster} here`;\n",
    )
    .expect("write");
    let value = dir.path().join("big.txt");
    std::fs::write(&value, "y".repeat(5_000_000)).expect("write");
    let out = Runbook::new()
        .arg("run")
        .arg(&runbook)
        .arg("--set")
        .arg(format!("cluster=@{}", value.display()))
        .args(["--progress", "never"])
        .run()
        .expect_code(1);
    let all = out.stdout() + out.stderr().as_str();
    let longest = all.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 3000, "a line of {longest} characters");
    assert!(all.contains("characters left out"), "{}", out.stderr());
    assert!(
        out.stderr().contains(" here"),
        "the end is kept: {}",
        out.stderr()
    );
}

#[test]
fn a_history_with_garbled_pages_is_found_before_the_first_step() {
    let history = tempfile::tempdir().expect("temp dir");
    let dir = history.path().to_str().expect("utf-8").to_string();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "runbooks/core/defer-order.rhai",
            "--progress",
            "never",
            "--history",
            &dir,
        ];
        args.extend(extra);
        Runbook::new().args(args).run()
    };
    run(&[]).expect_code(0);
    let db = std::fs::read_dir(history.path())
        .expect("the history folder")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "sqlite3"))
        .expect("a database file");
    // Garbage over every page after the first (the schema's page stays readable).
    let size = std::fs::metadata(&db).expect("metadata").len() as usize;
    assert!(size > 4096, "the history has more than one page: {size}");
    let mut bytes = std::fs::read(&db).expect("read");
    for (i, byte) in bytes.iter_mut().enumerate().skip(4096) {
        *byte = (i * 7 % 251) as u8;
    }
    std::fs::write(&db, bytes).expect("write");
    let refused = run(&[]).expect_code(2);
    let err = refused.stderr();
    assert!(err.contains("is damaged"), "{err}");
    assert!(err.contains("--if-history-damaged without"), "{err}");
    assert!(
        !refused.stdout().contains("[step]"),
        "nothing ran: {}",
        refused.stdout()
    );
    let without = run(&["--if-history-damaged", "without"]).expect_code(0);
    let err = without.stderr();
    assert_eq!(
        err.lines().filter(|l| l.contains("damaged")).count(),
        1,
        "said in one line: {err}"
    );
    assert!(err.contains("goes on without a history"), "{err}");
}

#[test]
fn a_secret_never_reaches_the_journal_and_state_files_are_the_users_alone() {
    let state = tempfile::tempdir().expect("temp dir");
    let dir = tempfile::tempdir().expect("temp dir");
    let runbook = dir.path().join("secret.rhai");
    std::fs::write(
        &runbook,
        r#"let p = params(#{ pw: "" }, #{ secret: ["pw"] });
defer("cleanup " + p.pw, || eks::scale_nodegroup("myeks5w", "gpu", 0));
step("scale " + p.pw, || eks::scale_nodegroup("myeks5w", "gpu", 1));
"#,
    )
    .expect("write");
    let report = dir.path().join("report.json");
    Runbook::new()
        .env("XDG_STATE_HOME", state.path())
        .arg("run")
        .arg(&runbook)
        .args([
            "--set",
            "pw=hunter2-secret",
            "--progress",
            "never",
            "--report",
        ])
        .arg(&report)
        .run()
        .expect_code(0);
    let runs = state.path().join("runbook/runs");
    let journals: Vec<PathBuf> = std::fs::read_dir(&runs)
        .expect("the runs folder")
        .flatten()
        .map(|e| e.path().join("journal.jsonl"))
        .collect();
    assert_eq!(journals.len(), 1);
    let journal = std::fs::read_to_string(&journals[0]).expect("read");
    assert!(journal.contains("cleanup"), "{journal}");
    assert!(!journal.contains("hunter2"), "{journal}");
    let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    assert_eq!(mode(&journals[0]), 0o600);
    for folder in [
        state.path().join("runbook"),
        runs.clone(),
        journals[0].parent().unwrap().to_path_buf(),
    ] {
        assert_eq!(mode(&folder), 0o700, "{}", folder.display());
    }
    assert_eq!(mode(&report), 0o600);
    let history = tempfile::tempdir().expect("temp dir");
    Runbook::new()
        .args([
            "run",
            "runbooks/core/defer-order.rhai",
            "--progress",
            "never",
            "--history",
        ])
        .arg(history.path())
        .run()
        .expect_code(0);
    for entry in std::fs::read_dir(history.path())
        .expect("history")
        .flatten()
    {
        assert_eq!(mode(&entry.path()) & 0o077, 0, "{}", entry.path().display());
    }
}

/// A chart whose one template shows what `.Files.Get "files/leak"` read.
fn chart_with_link(dir: &Path, target: &str) -> PathBuf {
    let chart = dir.join("leaky");
    std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
    std::fs::create_dir_all(chart.join("files")).expect("mkdir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: leaky\nversion: 0.1.0\n",
    )
    .expect("write");
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leak\ndata:\n  leak: {{ .Files.Get \"files/leak\" | quote }}\n",
    )
    .expect("write");
    std::os::unix::fs::symlink(target, chart.join("files/leak")).expect("symlink");
    chart
}

#[test]
fn a_chart_with_a_symlink_out_of_the_sandbox_is_refused_and_helm_sees_no_credentials() {
    if !helm_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    for target in ["/etc/hostname", "/proc/self/environ"] {
        let chart = chart_with_link(dir.path(), target);
        let out = Runbook::new()
            .args(["eval", "--allow-read"])
            .arg(dir.path())
            .arg(format!(r#"helm::template("{}")"#, chart.display()))
            .env("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI-probe")
            .run()
            .expect_code(1);
        let err = out.stderr();
        assert!(err.contains("is a symlink to"), "{target}: {err}");
        assert!(!out.stdout().contains("wJalrXUtnFEMI"), "{}", out.stdout());
        std::fs::remove_dir_all(&chart).expect("clean");
    }
    // A link inside the sandbox is read as before.
    std::fs::write(dir.path().join("inside.txt"), "inside").expect("write");
    let chart = chart_with_link(dir.path(), dir.path().join("inside.txt").to_str().unwrap());
    let out = Runbook::new()
        .args(["eval", "--json", "--allow-read"])
        .arg(dir.path())
        .arg(format!(
            r#"helm::template("{}")[0].object.data.leak"#,
            chart.display()
        ))
        .run()
        .expect_code(0);
    assert_eq!(out.stdout().trim(), "\"inside\"");
    // helm itself runs without the run's credentials: a stand-in prints its environment.
    let fake = dir.path().join("helm");
    std::fs::write(
        &fake,
        "#!/bin/sh\nprintf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: env\\ndata:\\n  secret: \"%s\"\\n  home: \"%s\"\\n' \"${AWS_SECRET_ACCESS_KEY:-none}\" \"${HOME:+set}\"\n",
    )
    .expect("write");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = Runbook::new()
        .args(["eval", "--json", "--helm"])
        .arg(&fake)
        .arg(r#"helm::template("bitnami/nothing")[0].object.data"#)
        .env("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI-probe")
        .run()
        .expect_code(0);
    let data: serde_json::Value = serde_json::from_str(&out.stdout()).expect("JSON");
    assert_eq!(data["secret"], "none", "{data}");
    assert_eq!(data["home"], "set", "helm keeps what it needs: {data}");
}

#[test]
fn a_kubeconfig_another_user_owns_or_others_may_write_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A file anyone may write, as a pre-created /tmp file of mode 666 is.
    let open = dir.path().join("open.kubeconfig");
    std::fs::write(&open, "").expect("write");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let mut files = vec![(open, "may be written by others")];
    // A file of another user: only root can make one (CI runs as root).
    let foreign = dir.path().join("foreign.kubeconfig");
    std::fs::write(&foreign, "").expect("write");
    let chowned = Command::new("chown")
        .args(["65534"])
        .arg(&foreign)
        .output()
        .is_ok_and(|o| o.status.success());
    if chowned {
        std::fs::set_permissions(&foreign, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        files.push((foreign, "belongs to another user"));
    } else {
        eprintln!("skipped the other-user case: chown needs root");
    }
    for (file, why) in files {
        let out = within(
            Runbook::new()
                .args(["lab", "serve", "--port", "0", "--write-kubeconfig"])
                .arg(&file)
                .command(),
            Duration::from_secs(30),
            "lab serve with a foreign kubeconfig",
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(why), "{err}");
        assert!(err.contains("admin token"), "{err}");
        let content = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(!content.contains("token"), "nothing was written: {content}");
    }
}

#[test]
fn the_drill_run_from_inside_the_runbooks_folder_compares_with_the_projects_snapshots() {
    if !helm_available() {
        return;
    }
    let report = tempfile::NamedTempFile::new().expect("temp file");
    let before: Vec<_> = std::fs::read_dir(repo_root().join("runbooks"))
        .expect("runbooks")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let out = Runbook::new()
        .args(["run", "gpu-lab.rhai", "--progress", "never", "--report"])
        .arg(report.path())
        .command()
        .current_dir(repo_root().join("runbooks"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = read_report(report.path());
    let snapshots = report["snapshots"].as_array().expect("snapshots");
    assert!(!snapshots.is_empty());
    for snapshot in snapshots {
        assert_eq!(snapshot["outcome"], "matched", "{snapshot}");
    }
    let after: Vec<_> = std::fs::read_dir(repo_root().join("runbooks"))
        .expect("runbooks")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(before, after, "nothing new in runbooks/");
}

#[test]
fn eval_json_into_head_ends_quietly() {
    let mut child = Runbook::new()
        .args([
            "eval",
            "--json",
            "let a = []; for i in 0..50000 { a.push(#{ i: i, word: \"runbook\" }); } a",
        ])
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut stdout = child.stdout.take().expect("piped");
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).expect("some output");
    drop(stdout);
    let out = child.wait_with_output().expect("ends");
    let err = text(&out.stderr);
    assert!(!err.contains("internal error"), "{err}");
    assert!(!err.contains("Broken pipe"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

#[test]
fn recover_list_dates_its_runs_and_leaves_out_the_embedded_twins() {
    let lab = LabServer::start("600");
    let state = tempfile::tempdir().expect("temp dir");
    // A killed embedded-twin run: nothing to recover, so not listed.
    let _ = Runbook::new()
        .env("XDG_STATE_HOME", state.path())
        .args(["run", "runbooks/gpu-scale-up.rhai", "--progress", "never"])
        .env("RUNBOOK_CRASH_AFTER_MUTATION", "1")
        .run();
    let listed = against(&lab, state.path(), &["recover", "--list"])
        .run()
        .expect_code(0);
    assert!(
        listed.stdout().contains("no unfinished runs"),
        "{}",
        listed.stdout()
    );
    // A killed run against the lab: listed with an RFC 3339 start and as killed.
    let killed = against(
        &lab,
        state.path(),
        &[
            "run",
            "--yes",
            "runbooks/gpu-scale-up.rhai",
            "--progress",
            "never",
        ],
    )
    .env("RUNBOOK_CRASH_AFTER_MUTATION", "1")
    .run();
    assert_eq!(killed.code(), 137);
    let listed = against(&lab, state.path(), &["recover", "--list"])
        .run()
        .expect_code(0)
        .stdout();
    let line = listed.lines().next().expect("one run");
    let started = line.split("started ").nth(1).expect("a start");
    assert!(
        started.starts_with("20") && started.contains('T') && started.contains("Z  killed"),
        "{line}"
    );
    against(&lab, state.path(), &["recover"])
        .run()
        .expect_code(0);
}

#[test]
fn a_lab_state_file_with_no_version_or_impossible_sizes_is_refused_by_name() {
    let lab = LabServer::start("600");
    let dir = tempfile::tempdir().expect("temp dir");
    let captured = dir.path().join("lab-state.json");
    crate::capture::capture(&lab, &captured);
    drop(lab);
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&captured).expect("read")).expect("JSON");
    let gpu = state["aws"]["nodegroups"]
        .as_array()
        .expect("node groups")
        .iter()
        .position(|g| g["name"] == "gpu")
        .expect("the gpu node group");
    type Change = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: [(&str, Change, &str); 3] = [
        (
            "version 0",
            Box::new(|s| s["version"] = 0.into()),
            "`version` is missing or 0",
        ),
        (
            "desired -5",
            Box::new(move |s| s["aws"]["nodegroups"][gpu]["desired"] = (-5).into()),
            "node group gpu has min 0, desired -5",
        ),
        (
            "desired above max",
            Box::new(move |s| {
                let max = s["aws"]["nodegroups"][gpu]["max"].as_i64().expect("max");
                s["aws"]["nodegroups"][gpu]["desired"] = (max + 1).into();
            }),
            "EKS keeps min <= desired <= max",
        ),
    ];
    for (what, change, expected) in cases {
        let mut bad = state.clone();
        change(&mut bad);
        let file = dir.path().join("bad.json");
        std::fs::write(&file, bad.to_string()).expect("write");
        let refused = Runbook::new()
            .args(["eval", "1", "--scenario"])
            .arg(format!("@{}", file.display()))
            .run()
            .expect_code(2);
        let err = refused.stderr();
        assert!(
            err.contains("bad.json") && err.contains(expected),
            "{what}: {err}"
        );
    }
}
