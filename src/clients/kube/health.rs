//! `/readyz?verbose` and `/livez?verbose` bodies parsed into ok, checks and failures.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Health {
    pub ok: bool,
    /// Every check by name, in the order the server lists them, and whether it passed.
    pub checks: Vec<(String, bool)>,
    /// Names of the failing checks.
    pub failed: Vec<String>,
}

/// Parses a verbose health body (`[+]etcd ok`, `[-]etcd failed: reason withheld`,
/// `readyz check passed`). `status_ok` is whether the HTTP status was 200.
pub fn parse_health(body: &str, status_ok: bool) -> Health {
    let mut checks = Vec::new();
    let mut failed = Vec::new();
    for line in body.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("[+]") {
            let name = rest.strip_suffix(" ok").unwrap_or(rest).trim();
            checks.push((name.to_string(), true));
        } else if let Some(rest) = line.strip_prefix("[-]") {
            let name = rest
                .split(" failed")
                .next()
                .unwrap_or(rest)
                .trim()
                .to_string();
            failed.push(name.clone());
            checks.push((name, false));
        }
    }
    let summary_failed = body.lines().any(|l| l.trim().ends_with("check failed"));
    Health {
        ok: status_ok && failed.is_empty() && !summary_failed,
        checks,
        failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_passing_and_failing_bodies() {
        let passing = parse_health("[+]ping ok\n[+]etcd ok\nreadyz check passed\n", true);
        assert!(passing.ok);
        assert_eq!(passing.checks.len(), 2);
        let failing = parse_health(
            "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n",
            false,
        );
        assert!(!failing.ok);
        assert_eq!(failing.failed, ["etcd"]);
    }

    #[test]
    fn parses_the_real_fixtures() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real");
        for (file, count) in [
            ("k8s_readyz_verbose_passing_k3s.txt", 37),
            ("k8s_livez_verbose_passing_k3s.txt", 33),
        ] {
            let text = std::fs::read_to_string(dir.join(file))
                .unwrap_or_else(|e| panic!("tests/fixtures/real/{file}: {e}"));
            let health = parse_health(&text, true);
            assert!(health.ok, "{file}");
            assert_eq!(health.checks.len(), count, "{file}");
            assert!(health.checks.iter().any(|(name, ok)| name == "etcd" && *ok));
        }
    }
}
