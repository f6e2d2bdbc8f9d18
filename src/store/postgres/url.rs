//! A shared store's address: a libpq URL (`postgres://USER@HOST:PORT/DB?sslmode=...`), read
//! as libpq reads one (its TLS modes, `sslrootcert`, `passfile`, and `PGPASSWORD`,
//! `PGPASSFILE`, `PGSSLMODE`, `PGSSLROOTCERT` from the environment), and shown with its
//! password left out, wherever it is shown.

use std::path::PathBuf;

use super::passfile;
use crate::store::StoreError;

/// `--state` (or `RUNBOOK_STATE`): a PostgreSQL URL names a shared store; nothing names none.
pub fn shared_store_url(given: Option<&str>) -> Result<Option<StoreUrl>, StoreError> {
    match given.map(str::trim).filter(|text| !text.is_empty()) {
        None => Ok(None),
        Some(text) => StoreUrl::parse(text).map(Some),
    }
}

/// libpq's `sslmode`s. `prefer` (libpq's default) and `require` encrypt without checking who
/// answers unless a CA is given (then `require` checks the chain, as libpq does);
/// `verify-ca` checks the chain, `verify-full` the chain and the host name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(text: &str, shown: &str) -> Result<Self, StoreError> {
        Ok(match text {
            "disable" => Self::Disable,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            // libpq's `allow` tries without TLS first: a password could go out in the clear.
            other => {
                return Err(StoreError::Url {
                    shown: shown.to_string(),
                    why: format!(
                        "sslmode={other} is not one runbook takes: disable, prefer, require, verify-ca or verify-full"
                    ),
                });
            }
        })
    }

    /// What tokio-postgres is told: whether TLS is tried, and whether it is a must.
    fn wire(self) -> tokio_postgres::config::SslMode {
        match self {
            Self::Disable => tokio_postgres::config::SslMode::Disable,
            Self::Prefer => tokio_postgres::config::SslMode::Prefer,
            Self::Require | Self::VerifyCa | Self::VerifyFull => {
                tokio_postgres::config::SslMode::Require
            }
        }
    }
}

#[derive(Clone)]
pub struct StoreUrl {
    pub(super) config: tokio_postgres::Config,
    pub(super) ssl_mode: SslMode,
    pub(super) root_cert: Option<PathBuf>,
    shown: String,
}

impl std::fmt::Debug for StoreUrl {
    /// The address without its password: this is what any log of it holds.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl std::fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// The options runbook reads itself; every other is tokio-postgres' (libpq's names).
struct Options {
    ssl_mode: Option<String>,
    root_cert: Option<String>,
    passfile: Option<String>,
    passed_on: Vec<String>,
}

fn split_options(query: &str) -> Options {
    let mut options = Options {
        ssl_mode: None,
        root_cert: None,
        passfile: None,
        passed_on: Vec::new(),
    };
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_encoding::percent_decode_str(value)
            .decode_utf8_lossy()
            .into_owned();
        match key {
            "sslmode" => options.ssl_mode = Some(value),
            "sslrootcert" => options.root_cert = Some(value),
            "passfile" => options.passfile = Some(value),
            _ => options.passed_on.push(pair.to_string()),
        }
    }
    options
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// The URL with the password between `://` and `@` left out: for errors about a URL that
/// could not be read.
fn without_password(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return "(not a URL)".into();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => format!("{}@{host}", user.split(':').next().unwrap_or_default()),
        None => authority.to_string(),
    };
    let path = path.split('?').next().unwrap_or_default();
    format!("{scheme}://{authority}{path}")
}

impl StoreUrl {
    pub fn parse(text: &str) -> Result<Self, StoreError> {
        let rough = without_password(text);
        let url_error = |why: String| StoreError::Url {
            shown: rough.clone(),
            why,
        };
        if !(text.starts_with("postgres://") || text.starts_with("postgresql://")) {
            return Err(url_error(
                "a shared store is a PostgreSQL URL (postgres://USER@HOST:PORT/DATABASE?sslmode=verify-full&sslrootcert=CA.pem); \
                 a local folder is --state-dir"
                    .into(),
            ));
        }
        let (base, query) = text.split_once('?').unwrap_or((text, ""));
        let options = split_options(query);
        let ssl_mode = match options.ssl_mode.or_else(|| env("PGSSLMODE")) {
            Some(mode) => SslMode::parse(&mode, &rough)?,
            None => SslMode::Prefer,
        };
        let root_cert = options
            .root_cert
            .or_else(|| env("PGSSLROOTCERT"))
            .map(PathBuf::from);
        let rebuilt = if options.passed_on.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", options.passed_on.join("&"))
        };
        let mut config: tokio_postgres::Config = rebuilt.parse().map_err(
            |error: tokio_postgres::Error| {
                url_error(format!(
                    "{} (runbook reads sslmode, sslrootcert and passfile itself; the other options are libpq's)",
                    super::session::error_text(&error)
                ))
            },
        )?;
        config.ssl_mode(ssl_mode.wire());
        fill_defaults(&mut config);
        let shown = shown(&config);
        if config.get_password().is_none() {
            let file = options
                .passfile
                .or_else(|| env("PGPASSFILE"))
                .map(PathBuf::from);
            if let Some(password) = env("PGPASSWORD") {
                config.password(password);
            } else if let Some(password) = passfile::lookup(file, &config) {
                config.password(password);
            }
        }
        Ok(Self {
            config,
            ssl_mode,
            root_cert,
            shown,
        })
    }
}

/// libpq's defaults where the URL gives none: the user from `PGUSER` or the login name, the
/// database named as the user, `localhost`, an application name the server's views show.
fn fill_defaults(config: &mut tokio_postgres::Config) {
    if config.get_user().is_none() {
        let user = env("PGUSER")
            .or_else(|| env("USER"))
            .unwrap_or_else(|| "postgres".into());
        config.user(user);
    }
    if config.get_dbname().is_none() {
        let user = config.get_user().unwrap_or_default().to_string();
        config.dbname(env("PGDATABASE").unwrap_or(user));
    }
    if config.get_hosts().is_empty() {
        config.host(env("PGHOST").as_deref().unwrap_or("localhost"));
    }
    if config.get_application_name().is_none() {
        config.application_name("runbook");
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(10));
    }
    config.keepalives_idle(std::time::Duration::from_secs(30));
}

fn shown(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(name)) if name.contains(':') => format!("[{name}]"),
        Some(tokio_postgres::config::Host::Tcp(name)) => name.clone(),
        Some(tokio_postgres::config::Host::Unix(path)) => percent_encoding::utf8_percent_encode(
            &path.display().to_string(),
            percent_encoding::NON_ALPHANUMERIC,
        )
        .to_string(),
        None => String::new(),
    };
    let port = config
        .get_ports()
        .first()
        .map(|port| format!(":{port}"))
        .unwrap_or_default();
    format!(
        "postgres://{}@{host}{port}/{}",
        config.get_user().unwrap_or_default(),
        config.get_dbname().unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_is_never_shown() {
        let url = StoreUrl::parse("postgres://ci:s3cret@db.example:6543/runbook?sslmode=require")
            .expect("parses");
        assert_eq!(url.to_string(), "postgres://ci@db.example:6543/runbook");
        assert_eq!(format!("{url:?}"), "postgres://ci@db.example:6543/runbook");
        assert_eq!(url.ssl_mode, SslMode::Require);
        let refused = StoreUrl::parse("postgres://ci:s3cret@db.example/runbook?sslmode=allow")
            .expect_err("allow is refused")
            .to_string();
        assert!(!refused.contains("s3cret"), "{refused}");
        assert!(refused.contains("sslmode=allow"), "{refused}");
    }

    #[test]
    fn runbook_reads_its_own_options_and_passes_on_the_rest() {
        let url = StoreUrl::parse(
            "postgresql://ci@db.example/runbook?sslmode=verify-full&sslrootcert=%2Fetc%2Frds.pem&connect_timeout=3",
        )
        .expect("parses");
        assert_eq!(url.ssl_mode, SslMode::VerifyFull);
        assert_eq!(url.root_cert, Some(PathBuf::from("/etc/rds.pem")));
        assert_eq!(
            url.config.get_connect_timeout(),
            Some(&std::time::Duration::from_secs(3))
        );
        let unknown = StoreUrl::parse("postgres://ci@db.example/runbook?sslcert=x.pem")
            .expect_err("an option no one reads is refused")
            .to_string();
        assert!(unknown.contains("sslcert"), "{unknown}");
    }

    #[test]
    fn a_folder_is_not_a_store() {
        let refused = StoreUrl::parse("/var/lib/runbook")
            .expect_err("a path")
            .to_string();
        assert!(refused.contains("--state-dir"), "{refused}");
    }
}
