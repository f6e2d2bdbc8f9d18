//! A small builder around the `runbook` binary, and report helpers for snapshots.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub struct Runbook {
    command: Command,
}

/// Sends `signal` ("INT", "TERM", "HUP") to a child, as a user or a CI runner would.
pub fn send_signal(child: &std::process::Child, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{signal} failed");
}

/// One state folder (run journals, target locks) for this test process, apart from the user's.
pub fn test_state_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir"))
        .path()
}

/// A run history of its own for each command, so that no test's runs become another's
/// baseline; a test of the history passes `--history`, which wins over this.
fn fresh_history() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    test_state_dir().join(format!("history-{n}"))
}

impl Runbook {
    pub fn new() -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_runbook"));
        command
            .current_dir(repo_root())
            .env_remove("RUST_BACKTRACE")
            .env_remove("GITHUB_SHA")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env("XDG_STATE_HOME", test_state_dir())
            .env("RUNBOOK_HISTORY", fresh_history())
            .env("NO_COLOR", "1");
        Self { command }
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.command.args(args);
        self
    }

    pub fn arg(mut self, arg: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    /// The environment a user gets by sourcing `lab`'s env file: its AWS endpoint and keys,
    /// its Kubernetes API and admin token.
    pub fn lab_env(mut self, lab: &LabServer) -> Self {
        for (key, value) in &lab.aws_env {
            self.command.env(key, value);
        }
        self
    }

    pub fn run(mut self) -> Ran {
        let output = self.command.output().expect("the runbook binary starts");
        Ran { output }
    }

    pub fn command(self) -> Command {
        self.command
    }
}

pub struct Ran {
    pub output: Output,
}

impl Ran {
    pub fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Asserts the exit code, showing both streams when it differs.
    pub fn expect_code(self, code: i32) -> Self {
        assert_eq!(
            self.code(),
            code,
            "unexpected exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout(),
            self.stderr()
        );
        self
    }
}

/// The step at `path` (names from the top) in a JSON report's step tree.
pub fn step<'a>(report: &'a serde_json::Value, path: &[&str]) -> &'a serde_json::Value {
    let mut steps = &report["steps"];
    let mut found = &serde_json::Value::Null;
    for name in path {
        found = steps
            .as_array()
            .and_then(|s| s.iter().find(|s| s["name"] == *name))
            .unwrap_or_else(|| panic!("no step {path:?} in {report}"));
        steps = &found["steps"];
    }
    found
}

/// A JSON report with what varies between runs masked: wall-clock times, the run id, and
/// the connections opened (over HTTP/1.1, as many as requests overlapped; tested apart).
pub fn read_report(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("the run wrote its report");
    let mut value: serde_json::Value = serde_json::from_str(&text).expect("the report is JSON");
    redact_wall(&mut value);
    if let Some(report) = value.as_object_mut() {
        report.remove("connections");
    }
    value
}

fn redact_wall(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if key.ends_with("wall_ms") {
                    *child = serde_json::Value::String("[wall]".into());
                } else if key == "run_id" {
                    *child = serde_json::Value::String("[run id]".into());
                } else {
                    redact_wall(child);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_wall),
        _ => {}
    }
}

/// Masks `wall 12ms` and the run id (`run r1764623112-4821`) in human output.
pub fn redact_wall_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(", run r") {
        out.push_str(&rest[..at + 6]);
        rest = &rest[at + 6..];
        let end = rest.find(')').unwrap_or(rest.len());
        out.push_str("[run id]");
        rest = &rest[end..];
    }
    out.push_str(rest);
    let text = std::mem::take(&mut out);
    let mut rest = text.as_str();
    while let Some(at) = rest.find("wall ") {
        out.push_str(&rest[..at + 5]);
        rest = &rest[at + 5..];
        let end = rest.find([',', ')']).unwrap_or(rest.len());
        out.push_str("[wall]");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Runs insta assertions with snapshots kept in the repository's `snapshots/` folder.
#[macro_export]
macro_rules! with_snapshots {
    ($body:block) => {
        insta::with_settings!({
            snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"),
            prepend_module_to_snapshot => false,
        }, $body)
    };
}

/// `runbook lab serve` in the background, with its kubeconfig; stopped when dropped.
pub struct LabServer {
    child: std::process::Child,
    pub url: String,
    pub kubeconfig: PathBuf,
    /// `KEY=VALUE` lines of its env file (AWS endpoint, region and keys; Kubernetes API and
    /// admin token).
    pub aws_env: Vec<(String, String)>,
    /// The CA its Kubernetes API's certificate is signed by (from the kubeconfig).
    pub ca_file: PathBuf,
    _dir: tempfile::TempDir,
}

impl LabServer {
    /// The aws CLI pointed at this lab (its endpoint, region and keys only).
    pub fn aws(&self, args: &[&str]) -> Output {
        let mut command = Command::new("aws");
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::temp_dir());
        for (key, value) in &self.aws_env {
            command.env(key, value);
        }
        command.output().expect("the aws CLI runs (pip awscli)")
    }

    pub fn start(speed: &str) -> Self {
        Self::start_with(speed, &[])
    }

    /// The same with more `lab serve` arguments (`--scenario empty`, `--fault ...`).
    pub fn start_with(speed: &str, extra: &[&str]) -> Self {
        use std::io::BufRead;
        let dir = tempfile::tempdir().expect("temp dir");
        let kubeconfig = dir.path().join("kubeconfig");
        let env_file = dir.path().join("aws.env");
        let mut child = Runbook::new()
            .args([
                "lab",
                "serve",
                "--port",
                "0",
                "--speed",
                speed,
                "--write-kubeconfig",
            ])
            .arg(&kubeconfig)
            .arg("--write-env")
            .arg(&env_file)
            .args(extra)
            .command()
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("lab serve starts");
        let stdout = child.stdout.take().expect("piped");
        let mut reader = std::io::BufReader::new(stdout);
        let mut first = String::new();
        reader
            .read_line(&mut first)
            .expect("lab serve prints where it listens");
        // Keep draining what it prints later, so it never writes into a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("https://"))
            .expect("a URL in the first line")
            .to_string();
        let aws_env = std::fs::read_to_string(&env_file)
            .expect("lab serve wrote its env file")
            .lines()
            .filter_map(|l| {
                l.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
            })
            .collect();
        let ca_file = dir.path().join("ca.pem");
        std::fs::write(&ca_file, ca_of(&kubeconfig)).expect("the CA is written");
        Self {
            child,
            url,
            ca_file,
            kubeconfig,
            aws_env,
            _dir: dir,
        }
    }

    /// The AWS endpoint (`AWS_ENDPOINT_URL` of its env file), for `--aws-endpoint`.
    pub fn aws_endpoint(&self) -> String {
        self.aws_env
            .iter()
            .find(|(k, _)| k == "AWS_ENDPOINT_URL")
            .map(|(_, v)| v.clone())
            .expect("lab serve wrote AWS_ENDPOINT_URL")
    }

    /// A value of the env file `lab serve` wrote (`RUNBOOK_LAB_TOKEN`, `AWS_SECRET_ACCESS_KEY`).
    pub fn env_value(&self, key: &str) -> String {
        self.aws_env
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("lab serve wrote no {key}"))
    }

    /// curl against the lab's Kubernetes API (`url` starting with its https URL, trusting its
    /// CA) or its AWS endpoint, with `token` as the bearer (None: no credential at all).
    pub fn curl(&self, method: &str, url: &str, token: Option<&str>) -> Output {
        let mut command = Command::new("curl");
        command.args(["-s", "--max-time", "10", "-X", method, "--cacert"]);
        command.arg(&self.ca_file);
        if let Some(token) = token {
            command.args(["-H", &format!("Authorization: Bearer {token}")]);
        }
        command
            .args(["-w", "\n%{http_code}", url])
            .output()
            .expect("curl runs")
    }

    /// The body of a GET with the admin token (`/twin/audit`, `/api/v1/nodes`), asserting 200.
    pub fn get(&self, url: &str) -> String {
        let out = self.curl("GET", url, Some(&self.env_value("RUNBOOK_LAB_TOKEN")));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, code) = text.rsplit_once('\n').unwrap_or((&text, ""));
        assert_eq!(code, "200", "GET {url}: {body}");
        body.to_string()
    }

    /// Empties both audits (`/twin/audit` of the Kubernetes API and of the AWS endpoint), so
    /// that they list only what comes after.
    pub fn reset_audits(&self) {
        self.admin("audit?reset");
        let token = self.env_value("RUNBOOK_LAB_TOKEN");
        let url = format!("{}/twin/audit?reset", self.aws_endpoint());
        let reset = self.curl("POST", &url, Some(&token));
        assert!(String::from_utf8_lossy(&reset.stdout).ends_with("200"));
    }

    /// The lab's GPU node group's desired size, as the aws CLI reads it.
    pub fn gpu_desired(&self) -> i64 {
        let out = self.aws(&[
            "eks",
            "describe-nodegroup",
            "--cluster-name",
            "myeks5w",
            "--nodegroup-name",
            "gpu",
        ]);
        assert_succeeded(&out, "describe-nodegroup");
        let value: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        value["nodegroup"]["scalingConfig"]["desiredSize"]
            .as_i64()
            .expect("a desired size")
    }

    /// The resident memory of the `lab serve` process now, in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("lab serve runs");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("a VmRSS line")
    }

    /// POST to the twin's admin endpoint (`advance?by=5m`, `faults?fail=etcd`).
    pub fn admin(&self, path_and_query: &str) {
        let url = format!("{}/twin/{path_and_query}", self.url);
        let out = self.curl("POST", &url, Some(&self.env_value("RUNBOOK_LAB_TOKEN")));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.ends_with("200"),
            "POST /twin/{path_and_query} failed: {text}"
        );
    }
}

impl Drop for LabServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A kubectl binary: the machine's 1.32, or 1.35 from scripts/install-tools.sh. None (with a
/// message) when it is not installed, unless RUNBOOK_REQUIRE_TOOLS is set (CI), which fails.
pub fn kubectl(version: &str) -> Option<PathBuf> {
    let path = match version {
        "1.35" => repo_root().join(".tools/bin/kubectl"),
        _ => PathBuf::from("/usr/bin/kubectl"),
    };
    let found = path.exists().then(|| path.clone());
    gate(found, || {
        format!(
            "kubectl {version} not found at {} (run scripts/install-tools.sh)",
            path.display()
        )
    })
}

/// Runs `binary` (a kubectl) against `lab` with `stdin` on its standard input (`apply -f -`).
pub fn kubectl_stdin(
    binary: &std::path::Path,
    lab: &LabServer,
    args: &[&str],
    stdin: &str,
) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(binary)
        .arg("--kubeconfig")
        .arg(&lab.kubeconfig)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(stdin.as_bytes())
        .expect("kubectl reads stdin");
    child.wait_with_output().expect("kubectl finishes")
}

/// Runs `binary` (a kubectl) against `lab`: its exit code, stdout and stderr.
pub fn kubectl_run(
    binary: &std::path::Path,
    lab: &LabServer,
    args: &[&str],
) -> (i32, String, String) {
    let output = Command::new(binary)
        .arg("--kubeconfig")
        .arg(&lab.kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Runs a runbook with `--report`, expects an exit code, and returns the report with wall times
/// masked.
pub fn report_of(runbook: &str, code: i32) -> serde_json::Value {
    report_with(runbook, &[], code)
}

/// The same with more arguments (`--scenario empty`, `--set key=value`, `--fault ...`).
pub fn report_with(runbook: &str, extra: &[&str], code: i32) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    Runbook::new()
        .args(["run", runbook, "--progress", "never", "--report"])
        .arg(&report)
        .args(extra)
        .run()
        .expect_code(code);
    read_report(&report)
}

/// A metric of a report by name; a missing one fails the test.
pub fn metric(report: &serde_json::Value, name: &str) -> f64 {
    report["metrics"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["name"] == name))
        .and_then(|m| m["value"].as_f64())
        .unwrap_or_else(|| panic!("no metric {name} in {}", report["metrics"]))
}

/// `runbook eval --json SCRIPT` on the twin, which must succeed: its value.
pub fn eval_json(script: &str) -> serde_json::Value {
    let out = Runbook::new()
        .args(["eval", "--json", script])
        .run()
        .expect_code(0);
    serde_json::from_str(&out.stdout()).expect("JSON")
}

/// Whether helm is there (the project's .tools/bin or PATH); with a message when it is not,
/// and a failure instead when RUNBOOK_REQUIRE_TOOLS is set (CI).
pub fn helm_available() -> bool {
    let local = repo_root().join(".tools/bin/helm");
    let on_path = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|p| p.join("helm").is_file()));
    gate((local.is_file() || on_path).then_some(()), || {
        "helm not found in .tools/bin or on PATH (run scripts/install-tools.sh)".into()
    })
    .is_some()
}

/// Whether the aws CLI is installed; with a message when it is not, and a failure instead when
/// RUNBOOK_REQUIRE_TOOLS is set (CI).
pub fn aws_cli_available() -> bool {
    let found = Command::new("aws").arg("--version").output().is_ok();
    gate(found.then_some(()), || {
        "the aws CLI is not installed (pip install awscli)".into()
    })
    .is_some()
}

/// Starts a command with its stdout read line by line on a thread, for tests that act when a
/// runbook reaches a point (Ctrl-C in the middle of a step).
pub fn spawn_with_lines(
    mut command: std::process::Command,
) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    use std::io::BufRead;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    (child, rx)
}

/// The one gate of every external tool the tests drive: what was `found`, or None with a
/// "skipped:" line saying how to install it; a failure instead when RUNBOOK_REQUIRE_TOOLS is set
/// (CI). Only a tool's absence skips: once it is there, whatever fails fails its test.
pub fn gate<T>(found: Option<T>, missing: impl FnOnce() -> String) -> Option<T> {
    if found.is_none() {
        let message = missing();
        assert!(
            std::env::var_os("RUNBOOK_REQUIRE_TOOLS").is_none(),
            "required (RUNBOOK_REQUIRE_TOOLS is set): {message}"
        );
        eprintln!("skipped: {message}");
    }
    found
}

/// A tool on PATH, or None with a message that says how to install it (see [`gate`]).
pub fn tool_on_path(name: &str, install: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    });
    gate(found, || format!("{name} not found on PATH ({install})"))
}

/// Prometheus' `promtool` (Debian's `prometheus` package; `.ci/run` installs it).
pub fn promtool() -> Option<PathBuf> {
    tool_on_path("promtool", "apt-get install prometheus")
}

/// Fails the test with the command's output unless it succeeded.
pub fn assert_succeeded(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Prometheus and the Pushgateway (Debian's `prometheus` and `prometheus-pushgateway`), or
/// None with a message; a failure instead when RUNBOOK_REQUIRE_TOOLS is set (CI).
pub fn prometheus_and_pushgateway() -> Option<(PathBuf, PathBuf)> {
    let find = |name: &str| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join(name))
                .find(|p| p.is_file())
        })
    };
    let found = find("prometheus").zip(find("prometheus-pushgateway"));
    gate(found, || {
        "prometheus or prometheus-pushgateway not found on PATH (apt-get install prometheus prometheus-pushgateway)".into()
    })
}

/// A free loopback port (bound and released: good enough for a test's own servers).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The CA PEM of a kubeconfig's first cluster (`certificate-authority-data`).
pub fn ca_of(kubeconfig: &Path) -> String {
    use base64::Engine;
    let text = std::fs::read_to_string(kubeconfig).expect("the kubeconfig reads");
    let config: serde_json::Value = serde_saphyr::from_str(&text).expect("a kubeconfig");
    let data = config["clusters"][0]["cluster"]["certificate-authority-data"]
        .as_str()
        .expect("certificate-authority-data");
    let pem = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("base64");
    String::from_utf8(pem).expect("PEM text")
}

/// The body of `GET http://127.0.0.1:PORT/PATH`, or None if nothing answers there yet.
pub fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.").then(|| body.to_string())
}
