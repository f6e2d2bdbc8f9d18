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
    let mut id = None;
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the first run reaches its wait");
        if line.starts_with("[run] ") {
            id = Some(run_id(&line));
        }
        if line.contains("waiting for NCCL to hang") {
            break;
        }
    }
    let first_id = id.expect("its id");
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
    send_signal(&child, "INT");
    assert_eq!(
        child.wait_with_output().expect("exits").status.code(),
        Some(130)
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
    let mut id = None;
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the run scales up");
        if line.starts_with("[run] ") {
            id = Some(run_id(&line));
        }
        if line.contains("scaled up") {
            break;
        }
    }
    let id = id.expect("its id");
    pg.stop();
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
        pg.psql("SELECT string_agg(version::text, ',') FROM runbook.schema_versions"),
        "1"
    );
    pg.psql(
        "INSERT INTO runbook.schema_versions (version, applied_by) VALUES (2, 'runbook 9.9.9')",
    );
    let refused = Runner::new(&pg.url())
        .runbook()
        .args(["recover", "--list"])
        .run()
        .expect_code(2);
    let err = refused.stderr();
    assert!(
        err.contains("was made by a newer runbook (schema version 2; this runbook knows up to 1)"),
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
