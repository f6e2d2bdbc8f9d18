//! The password from a libpq password file (`passfile`, `PGPASSFILE`, else `~/.pgpass`):
//! lines of `host:port:database:user:password`, `*` matching anything, `\` escaping `:` and
//! `\`. As libpq does, a file that others can read is not used.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

pub(super) fn lookup(given: Option<PathBuf>, config: &tokio_postgres::Config) -> Option<String> {
    let path = given.or_else(|| {
        std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(|home| PathBuf::from(home).join(".pgpass"))
    })?;
    let meta = std::fs::metadata(&path).ok()?;
    if meta.permissions().mode() & 0o077 != 0 {
        eprintln!(
            "warning: password file {} has group or world access; not used (chmod 0600 it)",
            path.display()
        );
        return None;
    }
    let text = crate::sandbox::read_text_file(&path, 1 << 20).ok()?;
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(name)) => name.clone(),
        // libpq matches a socket directory as `localhost`.
        _ => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let wanted = [
        host.as_str(),
        port.as_str(),
        config.get_dbname().unwrap_or_default(),
        config.get_user().unwrap_or_default(),
    ];
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .map(fields)
        .find(|fields| {
            fields.len() == 5
                && wanted
                    .iter()
                    .zip(fields)
                    .all(|(want, field)| field == "*" || field == want)
        })
        .and_then(|mut fields| fields.pop())
}

/// One line's fields, with `\:` and `\\` read as the characters they escape.
fn fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(field)) = (chars.next(), fields.last_mut()) {
                    field.push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => {
                if let Some(field) = fields.last_mut() {
                    field.push(c);
                }
            }
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(url: &str) -> tokio_postgres::Config {
        url.parse().expect("a URL")
    }

    #[test]
    fn the_first_matching_line_gives_the_password() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("pgpass");
        std::fs::write(
            &path,
            "# fleet\nother:5432:*:*:no\ndb.example:*:runbook:ci:pa\\:ss\\\\word\n*:*:*:*:fallback\n",
        )
        .expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let found = lookup(
            Some(path.clone()),
            &config("postgres://ci@db.example:6543/runbook"),
        );
        assert_eq!(found.as_deref(), Some("pa:ss\\word"));
        let fallback = lookup(Some(path.clone()), &config("postgres://me@elsewhere/x"));
        assert_eq!(fallback.as_deref(), Some("fallback"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        assert_eq!(
            lookup(Some(path), &config("postgres://me@elsewhere/x")),
            None
        );
    }
}
