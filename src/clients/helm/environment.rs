//! The environment helm runs in: what it needs to find its own files, caches and proxies, and
//! nothing else. A rendered chart never sees the run's credentials (AWS keys, tokens), even
//! through a template that finds a way to read its process's environment.

use tokio::process::Command;

/// Variables helm is given as they are; every other one is left out.
const KEPT: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// helm's own settings (where its caches, repositories and plugins live), without the ones
/// that carry a credential.
fn is_helm_setting(name: &str) -> bool {
    name.starts_with("HELM_")
        && !["TOKEN", "PASSWORD", "SECRET", "KUBE"]
            .iter()
            .any(|word| name.contains(word))
}

/// `command` with the environment cleared down to [`KEPT`] and helm's own settings.
pub(super) fn scrubbed(command: &mut Command) -> &mut Command {
    command.env_clear();
    for (name, value) in std::env::vars_os() {
        let Some(text) = name.to_str() else {
            continue;
        };
        if KEPT.contains(&text) || is_helm_setting(text) {
            command.env(&name, value);
        }
    }
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_left_out_and_helms_own_folders_kept() {
        for kept in ["HELM_CACHE_HOME", "HELM_REPOSITORY_CONFIG", "HELM_PLUGINS"] {
            assert!(is_helm_setting(kept), "{kept}");
        }
        for dropped in [
            "HELM_KUBETOKEN",
            "HELM_REGISTRY_PASSWORD",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert!(
                !is_helm_setting(dropped) && !KEPT.contains(&dropped),
                "{dropped}"
            );
        }
    }
}
