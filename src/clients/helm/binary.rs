//! Where the helm binary is: an explicit path, `RUNBOOK_HELM`, `helm` on `PATH`, or the copy
//! `scripts/install-tools.sh` puts in the project's `.tools/bin`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::HelmError;

/// The environment variable naming the helm binary to use.
pub const HELM_ENV: &str = "RUNBOOK_HELM";

/// The script whose folder marks the project root, and which installs `.tools/bin/helm`.
const INSTALL_SCRIPT: &str = "scripts/install-tools.sh";

/// Finds helm from this process's environment (`RUNBOOK_HELM`, `PATH`) and current directory.
pub fn find_helm(explicit: Option<&Path>) -> Result<PathBuf, HelmError> {
    let env_value = std::env::var_os(HELM_ENV);
    let path_var = std::env::var_os("PATH");
    // Without a current directory there is no project to walk up from; `.` then finds nothing.
    let start_dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    locate(
        explicit,
        env_value.as_deref(),
        path_var.as_deref(),
        &start_dir,
    )
}

/// The search itself, with its inputs as parameters so tests need not touch the process
/// environment. An explicit path or `RUNBOOK_HELM` that names no executable file is an error
/// rather than a reason to fall back: the caller asked for that helm and no other.
pub fn locate(
    explicit: Option<&Path>,
    env_value: Option<&OsStr>,
    path_var: Option<&OsStr>,
    start_dir: &Path,
) -> Result<PathBuf, HelmError> {
    if let Some(path) = explicit {
        return named(path, "the given path");
    }
    if let Some(value) = env_value.filter(|value| !value.is_empty()) {
        return named(Path::new(value), HELM_ENV);
    }
    if let Some(found) = path_var.and_then(on_path) {
        return Ok(found);
    }
    let mut looked = String::from("not on PATH");
    if let Some(root) = project_root(start_dir) {
        let tools = root.join(".tools/bin/helm");
        if is_executable(&tools) {
            return Ok(tools);
        }
        looked = format!("not on PATH nor at {}", tools.display());
    }
    Err(HelmError::NotInstalled { looked })
}

fn named(path: &Path, what: &str) -> Result<PathBuf, HelmError> {
    if is_executable(path) {
        Ok(path.to_path_buf())
    } else {
        Err(HelmError::NotInstalled {
            looked: format!("{what} {} is not an executable file", path.display()),
        })
    }
}

fn on_path(path_var: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path_var)
        // An empty entry means the current directory to a shell; helm from there would be a
        // surprise, so it is skipped.
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join("helm"))
        .find(|candidate| is_executable(candidate))
}

/// The nearest folder at or above `start` that holds `scripts/install-tools.sh`.
fn project_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(INSTALL_SCRIPT).is_file())
        .map(Path::to_path_buf)
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn executable(path: &Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    /// A project with `.tools/bin/helm`, a `bin` folder for PATH, and a nested working folder.
    fn project() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        fs::create_dir_all(root.join("scripts")).unwrap();
        fs::write(root.join(INSTALL_SCRIPT), "").unwrap();
        executable(&root.join(".tools/bin/helm"));
        fs::create_dir_all(root.join("runbooks/gpu")).unwrap();
        (dir, root)
    }

    #[test]
    fn explicit_path_wins() {
        let (_dir, root) = project();
        let mine = root.join("mine/helm");
        executable(&mine);
        let env = root.join(".tools/bin/helm");
        let found = locate(Some(&mine), Some(env.as_os_str()), None, &root).unwrap();
        assert_eq!(found, mine);
    }

    #[test]
    fn env_value_comes_before_path() {
        let (_dir, root) = project();
        let from_env = root.join("env/helm");
        executable(&from_env);
        executable(&root.join("bin/helm"));
        let path_var = std::env::join_paths([root.join("bin")]).unwrap();
        let found = locate(None, Some(from_env.as_os_str()), Some(&path_var), &root).unwrap();
        assert_eq!(found, from_env);
    }

    #[test]
    fn empty_env_value_is_unset() {
        let (_dir, root) = project();
        let found = locate(None, Some(OsStr::new("")), None, &root).unwrap();
        assert_eq!(found, root.join(".tools/bin/helm"));
    }

    #[test]
    fn path_comes_before_project_tools() {
        let (_dir, root) = project();
        executable(&root.join("bin/helm"));
        let path_var = std::env::join_paths([root.join("nothing"), root.join("bin")]).unwrap();
        let found = locate(None, None, Some(&path_var), &root.join("runbooks/gpu")).unwrap();
        assert_eq!(found, root.join("bin/helm"));
    }

    #[test]
    fn project_tools_found_from_a_nested_folder() {
        let (_dir, root) = project();
        let found = locate(None, None, Some(OsStr::new("")), &root.join("runbooks/gpu")).unwrap();
        assert_eq!(found, root.join(".tools/bin/helm"));
    }

    #[test]
    fn a_file_without_execute_permission_is_not_helm() {
        let (_dir, root) = project();
        fs::create_dir_all(root.join("bin")).unwrap();
        fs::write(root.join("bin/helm"), "").unwrap();
        let path_var = std::env::join_paths([root.join("bin")]).unwrap();
        let found = locate(None, None, Some(&path_var), &root).unwrap();
        assert_eq!(found, root.join(".tools/bin/helm"));
    }

    #[test]
    fn missing_explicit_path_does_not_fall_back() {
        let (_dir, root) = project();
        let missing = root.join("nope/helm");
        let error = locate(Some(&missing), None, None, &root).unwrap_err();
        assert!(matches!(error, HelmError::NotInstalled { .. }), "{error:?}");
        assert!(error.to_string().contains("nope/helm"), "{error}");
    }

    #[test]
    fn missing_env_path_names_the_variable() {
        let (_dir, root) = project();
        let error = locate(None, Some(OsStr::new("/nonexistent/helm")), None, &root).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("helm not found (RUNBOOK_HELM /nonexistent/helm is not"),
            "{error}"
        );
    }

    #[test]
    fn nothing_found_says_how_to_install() {
        let dir = tempfile::tempdir().unwrap();
        let error = locate(None, None, None, dir.path()).unwrap_err();
        assert!(matches!(error, HelmError::NotInstalled { .. }), "{error:?}");
        let message = error.to_string();
        assert!(
            message.ends_with(
                "run scripts/install-tools.sh (puts helm 4 in .tools/bin), install helm from \
                 https://helm.sh/docs/intro/install/, or set RUNBOOK_HELM=/path/to/helm"
            ),
            "{message}"
        );
    }

    #[test]
    fn project_without_tools_says_where_it_looked() {
        let (_dir, root) = project();
        fs::remove_file(root.join(".tools/bin/helm")).unwrap();
        let error = locate(None, None, None, &root).unwrap_err();
        assert!(error.to_string().contains(".tools/bin/helm"), "{error}");
    }
}
