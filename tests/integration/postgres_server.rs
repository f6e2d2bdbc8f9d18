//! A real PostgreSQL server for the shared store's tests (Debian's `postgresql` package; `.ci/run`
//! installs it): made with initdb in a temporary folder, started with pg_ctl on a free loopback
//! port as an unprivileged user (initdb refuses root), with a password and, when asked, TLS with
//! a CA of the test's own; stopped (immediately) when dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{free_port, gate};

pub const PASSWORD: &str = "store-secret-7f3a";

pub struct PgServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
    /// The CA the server's certificate is signed by, when it speaks TLS.
    pub ca: Option<PathBuf>,
    /// What pg_ctl starts the server with.
    options: String,
}

/// Debian's PostgreSQL programs: initdb on PATH, else the newest /usr/lib/postgresql/N/bin.
fn postgres_bin() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("initdb"))
            .find(|p| p.is_file())
    });
    let on_path = on_path
        .and_then(|p| std::fs::canonicalize(p).ok())
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .filter(|dir| dir.join("pg_ctl").is_file());
    on_path.or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .flatten()
            .map(|e| e.path().join("bin"))
            .filter(|bin| bin.join("initdb").is_file())
            .collect();
        versions.sort();
        versions.pop()
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

impl PgServer {
    /// A running server, or None (skipped) where PostgreSQL is not installed.
    pub fn start(tls: bool) -> Option<Self> {
        let bin = gate(postgres_bin(), || {
            "PostgreSQL's initdb and pg_ctl not found (apt-get install postgresql)".into()
        })?;
        let dir = tempfile::tempdir().expect("temp dir");
        let mut server = Self {
            dir,
            bin,
            port: free_port(),
            ca: None,
            options: String::new(),
        };
        server.make(tls);
        Some(server)
    }

    fn make(&mut self, tls: bool) {
        let root = self.dir.path();
        std::fs::write(root.join("pw"), PASSWORD).expect("write");
        let mut options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100",
            self.port,
            root.display()
        );
        if tls {
            self.ca = Some(write_certificates(root));
            options.push_str(&format!(
                " -c ssl=on -c ssl_cert_file={0}/server.pem -c ssl_key_file={0}/server.key",
                root.display()
            ));
        }
        if is_root() {
            let chown = Command::new("chown")
                .args(["-R", "nobody:nogroup"])
                .arg(root)
                .status()
                .expect("chown");
            assert!(chown.success());
            std::fs::set_permissions(root, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .expect("chmod");
        }
        let data = root.join("data");
        let made = self
            .as_server_user("initdb")
            .args(["-D"])
            .arg(&data)
            .args(["-U", "runbook", "-A", "scram-sha-256", "--no-sync"])
            .arg(format!("--pwfile={}", root.join("pw").display()))
            .output()
            .expect("initdb runs");
        crate::support::assert_succeeded(&made, "initdb");
        self.options = options;
        self.start_again();
    }

    /// Starts the server (again, after [`PgServer::stop`]) on the same port and data.
    pub fn start_again(&self) {
        let options = self.options.as_str();
        let root = self.dir.path();
        let started = self
            .as_server_user("pg_ctl")
            .args(["-D"])
            .arg(root.join("data"))
            .args(["-l"])
            .arg(root.join("log"))
            .args(["-w", "-t", "60", "-o", options, "start"])
            .output()
            .expect("pg_ctl runs");
        if !started.status.success() {
            let log = std::fs::read_to_string(root.join("log")).unwrap_or_default();
            panic!(
                "pg_ctl start: {}{}\n{log}",
                String::from_utf8_lossy(&started.stdout),
                String::from_utf8_lossy(&started.stderr)
            );
        }
    }

    fn as_server_user(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if is_root() {
            let mut command = Command::new("setpriv");
            command
                .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
                .arg(path);
            command
        } else {
            Command::new(path)
        }
    }

    /// The store's URL, with its password in it and TLS off unless `sslmode` says otherwise.
    pub fn url(&self) -> String {
        format!(
            "postgres://runbook:{PASSWORD}@127.0.0.1:{}/postgres?sslmode=disable",
            self.port
        )
    }

    /// The URL without a password (given by PGPASSWORD or a password file instead) and with
    /// `query` as its options.
    pub fn url_without_password(&self, host: &str, query: &str) -> String {
        format!("postgres://runbook@{host}:{}/postgres?{query}", self.port)
    }

    /// What psql prints for `sql` (unaligned, tuples only).
    pub fn psql(&self, sql: &str) -> String {
        let out: Output = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args([
                "-U", "runbook", "-d", "postgres", "-A", "-t", "-X", "-c", sql,
            ])
            .env("PGPASSWORD", PASSWORD)
            .env("PGSSLMODE", "prefer")
            .output()
            .expect("psql runs");
        crate::support::assert_succeeded(&out, sql);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Stops the server at once (no shutdown checkpoint), as a crashed or lost database goes.
    pub fn stop(&self) {
        let _ = self
            .as_server_user("pg_ctl")
            .args(["-D"])
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A CA and a certificate for `localhost` and 127.0.0.1 signed by it, written as PEM beside the
/// server (its key readable by the server's user alone); answers the CA's path.
fn write_certificates(root: &Path) -> PathBuf {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
    let ca_key = KeyPair::generate().expect("a key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("the CA");
    let issuer = Issuer::new(ca_params, ca_key);
    let server_key = KeyPair::generate().expect("a key");
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).expect("params");
    params
        .subject_alt_names
        .push(SanType::IpAddress(std::net::IpAddr::V4(
            std::net::Ipv4Addr::LOCALHOST,
        )));
    let server = params.signed_by(&server_key, &issuer).expect("signed");
    std::fs::write(root.join("ca.pem"), ca.pem()).expect("write");
    std::fs::write(root.join("server.pem"), server.pem()).expect("write");
    let key = root.join("server.key");
    std::fs::write(&key, server_key.serialize_pem()).expect("write");
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .expect("chmod");
    root.join("ca.pem")
}
