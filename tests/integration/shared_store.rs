//! The shared store (`--state postgres://`) on a real PostgreSQL server: runners with state
//! folders of their own meet at its lock, a killed runner's journal is recovered from another
//! machine, a store lost mid-run sends no call unjournaled, a newer schema is refused, and TLS
//! and passwords work as libpq's do without the password ever being printed.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::postgres_server::{PASSWORD, PgServer};
use crate::support::{LabServer, Runbook, send_signal, spawn_with_lines};

/// A machine of its own: its own state folder, the fleet's store.
struct Runner {
    state: tempfile::TempDir,
    store: String,
}

impl Runner {
    fn new(store: &str) -> Self {
        Self {
            state: tempfile::tempdir().expect("temp dir"),
            store: store.to_string(),
        }
    }

    fn runbook(&self) -> Runbook {
        Runbook::new()
            .env("XDG_STATE_HOME", self.state.path())
            .env("RUNBOOK_STATE", &self.store)
    }

    fn against(&self, lab: &LabServer, args: &[&str]) -> Runbook {
        self.runbook()
            .lab_env(lab)
            .args(args)
            .args(["--aws-endpoint", &lab.aws_endpoint(), "--kubeconfig"])
            .arg(&lab.kubeconfig)
    }
}

fn run_id(stdout: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("[run] "))
        .and_then(|l| l.split("run ").last())
        .and_then(|rest| rest.strip_suffix(')'))
        .expect("a run id")
        .to_string()
}

/// Reads a running run's lines until one says `marker`; answers the run's id.
fn run_until(lines: &std::sync::mpsc::Receiver<String>, marker: &str) -> String {
    let mut id = None;
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("the run did not say {marker:?} within a minute"));
        if line.starts_with("[run] ") {
            id = Some(run_id(&line));
        }
        if line.contains(marker) {
            return id.expect("the run said its id first");
        }
    }
}

fn assert_no_password(texts: &[&str]) {
    for text in texts {
        assert!(!text.contains(PASSWORD), "the password was printed: {text}");
    }
}

#[test]
fn a_killed_runners_journal_is_recovered_from_another_machine() {
    let Some(pg) = PgServer::start(false) else {
        return;
    };
    let lab = LabServer::start("600");
    let a = Runner::new(&pg.url());
    let ran = a
        .against(
            &lab,
            &[
                "run",
                "--yes",
                "runbooks/gpu-scale-up.rhai",
                "--progress",
                "never",
            ],
        )
        .command()
        .env("RUNBOOK_CRASH_AFTER_MUTATION", "1")
        .output()
        .expect("runs");
    let (out, err) = (
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr),
    );
    assert_eq!(ran.status.code(), Some(137), "{out}{err}");
    let killed = run_id(&out);
    assert!(lab.gpu_desired() > 0, "the killed run scaled the GPUs up");
    // The runner is gone, and its folder with it.
    let folder = a.state.path().to_path_buf();
    drop(a);
    assert!(!folder.exists());
    let b = Runner::new(&pg.url());
    // The next run on another "machine" takes the killed run's Lease over (at once: the two
    // share a pid namespace here, so its process is known gone) and names
    // the run the store holds unfinished, and how to put it back from anywhere.
    let next = b
        .against(
            &lab,
            &[
                "run",
                "--yes",
                "runbooks/core/params.rhai",
                "--progress",
                "never",
            ],
        )
        .run();
    let err = next.stderr();
    assert!(
        err.contains(&format!(
            "runbook recover {killed}` with the same --state, from any machine, puts it back"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("note: run {killed} of runbooks/gpu-scale-up.rhai")),
        "{err}"
    );
    let listed = b.runbook().args(["recover", "--list"]).run().expect_code(0);
    let line = listed
        .stdout()
        .lines()
        .find(|l| l.starts_with(&killed))
        .unwrap_or_else(|| panic!("{}", listed.stdout()))
        .to_string();
    assert!(line.contains("runbooks/gpu-scale-up.rhai"), "{line}");
    assert!(line.contains(" on "), "the machine it ran on: {line}");
    assert!(line.contains("killed, 1 mutations"), "{line}");
    assert!(
        listed.stdout().contains("would undo: "),
        "{}",
        listed.stdout()
    );
    let recovered = b.against(&lab, &["recover"]).run().expect_code(0);
    assert!(
        recovered
            .stdout()
            .contains(&format!("[recover] run {killed}")),
        "{}",
        recovered.stdout()
    );
    assert!(recovered.stdout().contains("[result] recovered"));
    assert_eq!(lab.gpu_desired(), 0);
    // Marked in the store: nothing is left for any machine to recover.
    let again = Runner::new(&pg.url())
        .runbook()
        .args(["recover", "--list"])
        .run()
        .expect_code(0);
    assert!(
        again
            .stdout()
            .contains("no unfinished runs in the shared store"),
        "{}",
        again.stdout()
    );
    assert_no_password(&[&out, &err, &listed.stdout(), &recovered.stderr()]);
}

#[test]
fn runners_meet_at_the_stores_lock() {
    let Some(pg) = PgServer::start(false) else {
        return;
    };
    let lab = LabServer::start("600");
    let first = Runner::new(&pg.url());
    let (child, lines) = spawn_with_lines(
        first
            .against(
                &lab,
                &[
                    "run",
                    "--yes",
                    "runbooks/core/interrupt.rhai",
                    "--progress",
                    "never",
                ],
            )
            .command(),
    );
    let first_id = run_until(&lines, "waiting for NCCL to hang");
    assert_eq!(
        pg.psql("SELECT run_id || ' ' || runbook FROM runbook.locks"),
        format!("{first_id} runbooks/core/interrupt.rhai")
    );
    let started = Instant::now();
    let refused = Runner::new(&pg.url())
        .against(
            &lab,
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
    let took = started.elapsed();
    let err = refused.stderr();
    assert!(err.contains(&format!("in use by run {first_id}")), "{err}");
    assert!(err.contains("runbooks/core/interrupt.rhai, on "), "{err}");
    assert!(
        err.contains("as the shared store postgres://runbook@127.0.0.1:"),
        "{err}"
    );
    assert!(took < Duration::from_secs(5), "refused after {took:?}");
    // One that waits for the store's lock starts once the first has let go.
    let waiting = Runner::new(&pg.url())
        .against(
            &lab,
            &[
                "run",
                "--yes",
                "runbooks/verify.rhai",
                "--progress",
                "never",
                "--wait-lock",
                "2m",
            ],
        )
        .command()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    std::thread::sleep(Duration::from_secs(2));
    send_signal(&child, "INT");
    assert_eq!(
        child.wait_with_output().expect("exits").status.code(),
        Some(130)
    );
    let waited = waiting.wait_with_output().expect("exits");
    let waited_err = String::from_utf8_lossy(&waited.stderr);
    assert_eq!(waited.status.code(), Some(0), "{waited_err}");
    assert!(
        waited_err.contains(&format!(
            "waiting for run {first_id} (runbooks/core/interrupt.rhai, on "
        )),
        "{waited_err}"
    );
    // Given back: the row is gone and the next run takes the lock.
    assert_eq!(pg.psql("SELECT count(*) FROM runbook.locks"), "0");
    Runner::new(&pg.url())
        .against(
            &lab,
            &[
                "run",
                "--yes",
                "runbooks/verify.rhai",
                "--progress",
                "never",
            ],
        )
        .run()
        .expect_code(0);
    assert_no_password(&[&err]);
}

#[test]
fn a_store_lost_mid_run_sends_only_the_cleanups_calls_journaled_locally() {
    let Some(pg) = PgServer::start(false) else {
        return;
    };
    let lab = LabServer::start("600");
    let runner = Runner::new(&pg.url());
    let mut command = runner
        .against(
            &lab,
            &[
                "run",
                "--yes",
                "tests/data/store-lost.rhai",
                "--progress",
                "never",
            ],
        )
        .command();
    command.stderr(std::process::Stdio::piped());
    let (child, lines) = spawn_with_lines(command);
    let id = run_until(&lines, "scaled up");
    // Stopped at once, as a crashed database goes, then back while the run still waits: the
    // run's session (and its lock) is gone for good, a new one at the end can mark it ended.
    pg.stop();
    pg.start_again();
    let out = child.wait_with_output().expect("exits");
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout: String = lines.iter().collect::<Vec<_>>().join("\n");
    // The step's change was not sent, the cleanup's was: the run failed, nothing left behind.
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{err}");
    assert!(
        err.contains("cannot reach") || err.contains("failed to write the journal"),
        "{err}"
    );
    let journal = runner
        .state
        .path()
        .join("runbook/runs")
        .join(&id)
        .join("journal.jsonl");
    assert!(
        err.contains(&journal.display().to_string()),
        "the warning says where the journal went on: {err}"
    );
    assert_eq!(lab.gpu_desired(), 0, "the cleanup scaled the GPUs back");
    let text = std::fs::read_to_string(&journal).expect("the local journal");
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a record"))
        .collect();
    assert_eq!(records[0]["type"], "start", "{text}");
    let sent_to_2 = records
        .iter()
        .filter(|r| {
            r["type"] == "mutation" && r["action"].as_str().is_some_and(|a| a.contains(" 2"))
        })
        .count();
    assert!(sent_to_2 <= 1, "{text}");
    assert!(text.contains("not sent"), "{text}");
    assert!(text.contains("\"type\":\"end\""), "{text}");
    assert!(
        err.contains(&format!("answers again: run {id} is marked ended there")),
        "{err}"
    );
    let listed = runner
        .runbook()
        .args(["recover", "--list"])
        .run()
        .expect_code(0);
    assert!(
        listed
            .stdout()
            .contains("no unfinished runs in the shared store"),
        "{}",
        listed.stdout()
    );
    assert_no_password(&[&err, &stdout]);
}

#[test]
fn a_store_made_by_a_newer_runbook_is_refused_by_name() {
    let Some(pg) = PgServer::start(false) else {
        return;
    };
    // Five runners making the schema at once: one makes it, the others find it made.
    let children: Vec<_> = (0..5)
        .map(|_| {
            Runner::new(&pg.url())
                .runbook()
                .args(["recover", "--list"])
                .command()
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("starts")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("exits");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        pg.psql(
            "SELECT string_agg(version::text, ',' ORDER BY version) FROM runbook.schema_versions"
        ),
        "1,2,3"
    );
    pg.psql(
        "INSERT INTO runbook.schema_versions (version, applied_by) VALUES (99, 'runbook 9.9.9')",
    );
    let refused = Runner::new(&pg.url())
        .runbook()
        .args(["recover", "--list"])
        .run()
        .expect_code(2);
    let err = refused.stderr();
    assert!(
        err.contains("was made by a newer runbook (schema version 99; this runbook knows up to 3)"),
        "{err}"
    );
    assert!(err.contains("postgres://runbook@127.0.0.1:"), "{err}");
    assert_no_password(&[&err]);
}

fn pgpass(dir: &Path, port: u16) -> std::path::PathBuf {
    let path = dir.join("pgpass");
    std::fs::write(
        &path,
        format!("localhost:{port}:postgres:runbook:{PASSWORD}\n"),
    )
    .expect("write");
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .expect("chmod");
    path
}

#[test]
fn tls_and_passwords_as_libpq_reads_them() {
    let Some(pg) = PgServer::start(true) else {
        return;
    };
    let ca = pg.ca.clone().expect("a CA");
    let dir = tempfile::tempdir().expect("temp dir");
    let passfile = pgpass(dir.path(), pg.port);
    let list = |url: String, password: Option<&str>| {
        let mut runbook = Runner::new(&url).runbook().args(["recover", "--list"]);
        if let Some(password) = password {
            runbook = runbook.env("PGPASSWORD", password);
        }
        runbook.run()
    };
    // The host's name and chain checked against the CA, the password from a password file.
    let verified = list(
        pg.url_without_password(
            "localhost",
            &format!(
                "sslmode=verify-full&sslrootcert={}&passfile={}",
                ca.display(),
                passfile.display()
            ),
        ),
        None,
    )
    .expect_code(0);
    assert!(
        verified.stdout().contains(&format!(
            "in the shared store postgres://runbook@localhost:{}/postgres",
            pg.port
        )),
        "{}",
        verified.stdout()
    );
    let in_tls = pg
        .psql("SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE s.ssl");
    assert!(in_tls.parse::<u32>().is_ok());
    // Another CA: refused, saying why.
    let other_ca = dir.path().join("other-ca.pem");
    std::fs::write(
        &other_ca,
        rcgen::generate_simple_self_signed(vec!["elsewhere".to_string()])
            .expect("a cert")
            .cert
            .pem(),
    )
    .expect("write");
    let refused = list(
        pg.url_without_password(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={}", other_ca.display()),
        ),
        Some(PASSWORD),
    )
    .expect_code(2);
    assert!(
        refused.stderr().contains("cannot reach the shared store"),
        "{}",
        refused.stderr()
    );
    assert!(
        refused.stderr().to_lowercase().contains("certificate"),
        "{}",
        refused.stderr()
    );
    // verify-full without a CA is refused before connecting.
    let no_ca = list(
        pg.url_without_password("localhost", "sslmode=verify-full"),
        Some(PASSWORD),
    )
    .expect_code(2);
    assert!(
        no_ca.stderr().contains("sslrootcert=FILE"),
        "{}",
        no_ca.stderr()
    );
    // A wrong password: the server's words, never the password.
    let wrong = list(
        pg.url_without_password("127.0.0.1", "sslmode=require"),
        Some("not-the-password"),
    )
    .expect_code(2);
    assert!(
        wrong.stderr().contains("password authentication failed"),
        "{}",
        wrong.stderr()
    );
    // The password in the URL works and is not shown.
    let in_url = list(
        format!(
            "postgres://runbook:{PASSWORD}@127.0.0.1:{}/postgres?sslmode=require",
            pg.port
        ),
        None,
    )
    .expect_code(0);
    assert_no_password(&[
        &verified.stdout(),
        &verified.stderr(),
        &refused.stderr(),
        &no_ca.stderr(),
        &wrong.stderr(),
        &in_url.stdout(),
        &in_url.stderr(),
    ]);
}

#[test]
fn runs_from_two_machines_make_one_baseline_and_one_history() {
    let Some(pg) = PgServer::start(false) else {
        return;
    };
    let lab = LabServer::start("600");
    let (a, b) = (Runner::new(&pg.url()), Runner::new(&pg.url()));
    let dir = tempfile::tempdir().expect("temp dir");
    let measured = dir.path().join("measured.json");
    let probe = |runner: &Runner, latency: &str, code: i32| {
        std::fs::write(&measured, format!("{{\"latency\": {latency}}}")).expect("write");
        runner
            .against(
                &lab,
                &[
                    "run",
                    "--read-only",
                    "tests/data/shared-baseline.rhai",
                    "--progress",
                    "never",
                ],
            )
            .arg("--allow-read")
            .arg(dir.path())
            .args(["--set", &format!("measured={}", measured.display())])
            .run()
            .expect_code(code)
    };
    probe(&a, "10.0", 0);
    probe(&b, "11.0", 0);
    probe(&a, "10.0", 0);
    // The fourth, on B, is judged against all three: the median of A's and B's runs.
    let worse = probe(&b, "20.0", 1);
    let said = format!("{}{}", worse.stdout(), worse.stderr());
    assert!(
        said.contains("metric `probe_latency_ms` = 20 ms is worse than its baseline: the median of runs 1-3 is 10 ms"),
        "{said}"
    );
    // Either machine reads the same history, the runbook named as its checkout names it.
    let listed = a
        .runbook()
        .args(["history", "--json"])
        .run()
        .expect_code(0)
        .stdout();
    let runs: Vec<serde_json::Value> = serde_json::from_str(&listed).expect("JSON");
    assert_eq!(runs.len(), 4, "{listed}");
    assert!(
        runs.iter()
            .all(|r| r["runbook_path"] == "tests/data/shared-baseline.rhai"),
        "{listed}"
    );
    let trend = b
        .runbook()
        .args([
            "history",
            "trend",
            "probe_latency_ms",
            "tests/data/shared-baseline.rhai",
        ])
        .run()
        .expect_code(0)
        .stdout();
    assert!(trend.contains("20"), "{trend}");
    assert_eq!(pg.psql("SELECT count(*) FROM runbook.history_runs"), "4");
    // Nothing of it in the runners' own folders.
    assert!(
        !a.state
            .path()
            .join("runbook")
            .join("history.sqlite3")
            .exists()
    );
}

#[test]
fn the_gpu_record_escalates_a_third_reboot_judged_by_two_runners() {
    if !crate::support::helm_available() {
        return;
    }
    let Some(pg) = PgServer::start(false) else {
        return;
    };
    let lab = LabServer::start_with("600", &["--fault", "gpu-xid=gpu1:79"]);
    let endpoint = lab.aws_endpoint();
    // The GPU nodes up before the drills run, so that they neither scale them nor put them back.
    Runbook::new()
        .lab_env(&lab)
        .args(["eval", "--aws-endpoint", &endpoint, "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .arg(r#"eks::scale_nodegroup("myeks5w", "gpu", 2); k8s::wait_nodes(#{ labels: #{ tier: "gpu" }, count: 2, timeout: "15m" }).len()"#)
        .run()
        .expect_code(0);
    let (a, b) = (Runner::new(&pg.url()), Runner::new(&pg.url()));
    let drill = |runner: &Runner| {
        let ran = runner
            .against(
                &lab,
                &[
                    "run",
                    "--yes",
                    "runbooks/gpu-health.rhai",
                    "--progress",
                    "never",
                ],
            )
            .args(["--set", "gpu_nodes=2"])
            .run();
        format!("{}{}", ran.stdout(), ran.stderr())
    };
    let first = drill(&a);
    let second = drill(&b);
    let third = drill(&a);
    let sick = first
        .lines()
        .find_map(|l| l.strip_prefix("[log] ")?.strip_suffix(": REBOOT"))
        .unwrap_or_else(|| panic!("a REBOOT node: {first}"))
        .to_string();
    assert!(
        second.contains(&format!("[log] {sick}: REBOOT")),
        "{second}"
    );
    // The third time, on the first machine: the record holds the second machine's REBOOT too.
    assert!(
        third.contains("ISOLATE (GPU 0000:00:1e): recurring: xid called for REBOOT again: 2 earlier REBOOTs within 168h did not clear it"),
        "{third}"
    );
    assert!(
        third.contains(&format!("[log] {sick}: isolated as ISOLATE until ")),
        "{third}"
    );
    let record = b
        .runbook()
        .args(["history", "gpu", &sick, "--json"])
        .run()
        .expect_code(0)
        .stdout();
    let rows: serde_json::Value = serde_json::from_str(&record).expect("JSON");
    let verdicts: Vec<&str> = rows
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["verdict"].as_str())
        .collect();
    assert_eq!(verdicts, ["ISOLATE", "REBOOT", "REBOOT"], "{record}");
}

/// Killed at each mutation of the block experiment in turn until one finds the node SG's rules
/// revoked and the GPUs up: each time, another machine's recover from the store puts the lab
/// back exactly (the rules as the aws CLI lists them, the GPU group at 0, runbook's pods gone).
#[test]
fn a_runner_killed_mid_block_experiment_is_put_back_exactly_from_another_machine() {
    if !crate::support::helm_available() {
        return;
    }
    let Some(pg) = PgServer::start(false) else {
        return;
    };
    let lab = LabServer::start("600");
    let before = crate::crash_safe::state(&lab);
    for n in 1..=20 {
        let killed = Runner::new(&pg.url());
        let ran = killed
            .against(
                &lab,
                &[
                    "run",
                    "--yes",
                    "runbooks/sg-block-experiment.rhai",
                    "--progress",
                    "never",
                    "--set",
                    "blocked_timeout=3s",
                ],
            )
            .command()
            .env("RUNBOOK_CRASH_AFTER_MUTATION", n.to_string())
            .output()
            .expect("runs");
        assert_eq!(
            ran.status.code(),
            Some(137),
            "the experiment ended before its rules were revoked with the GPUs up: {}",
            String::from_utf8_lossy(&ran.stderr)
        );
        let during = crate::crash_safe::state(&lab);
        drop(killed);
        let recovered = Runner::new(&pg.url())
            .against(&lab, &["recover"])
            .run()
            .expect_code(0);
        assert!(
            recovered.stdout().contains("[result] recovered"),
            "killed at {n}: {}",
            recovered.stdout()
        );
        assert_eq!(crate::crash_safe::state(&lab), before, "killed at {n}");
        if during.node_sg != before.node_sg && during.gpu_desired > 0 {
            return;
        }
    }
    panic!("no kill found the node SG's rules revoked with the GPUs up");
}
