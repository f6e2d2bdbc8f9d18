//! The read sandbox: `read_text` and `--set key=@path` read regular files under the runbook's
//! folder, the snapshot folder and `--allow-read` folders, after resolving symlinks; never
//! `/proc`, `/sys` or `/dev` (a process's environment holds its credentials); never more
//! than a size cap, checked before reading and enforced while reading.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The default cap on one file.
pub const DEFAULT_MAX_READ_BYTES: u64 = 64 * 1024 * 1024;

/// Kernel and device trees: files there are not data a runbook reads (`/proc/self/environ`
/// holds AWS keys, `/dev/zero` never ends).
const NEVER: [&str; 3] = ["/proc", "/sys", "/dev"];

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The OS's reason is part of the message (not a "caused by" line): it says what is wrong.
    #[error("cannot read {path}: {reason}")]
    Missing {
        path: String,
        reason: std::io::Error,
    },
    #[error(
        "{path} is outside the folders this run may read ({roots}); allow its folder with --allow-read DIR"
    )]
    Outside { path: String, roots: String },
    #[error("{path} is under {tree}, which runbooks never read")]
    System { path: String, tree: &'static str },
    #[error("{path} is not a regular file")]
    NotAFile { path: String },
    #[error(
        "{path} is {size} bytes, over the {limit}-byte read limit; raise it with --max-read-bytes"
    )]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("{path} is not UTF-8 text")]
    NotText { path: String },
    #[error(
        "{link} is a symlink to {target}, outside the folders this run may read ({roots}), and helm would follow it; allow its folder with --allow-read DIR"
    )]
    LinkOutside {
        link: String,
        target: String,
        roots: String,
    },
}

/// The folders a run may read, resolved once.
#[derive(Debug, Clone)]
pub struct ReadSandbox {
    roots: Vec<PathBuf>,
    max_bytes: u64,
}

impl ReadSandbox {
    /// Folders that do not exist (yet) are kept as given: nothing under them can be read
    /// until they do.
    pub fn new(roots: impl IntoIterator<Item = PathBuf>, max_bytes: u64) -> Self {
        let mut resolved: Vec<PathBuf> = roots
            .into_iter()
            .map(|root| {
                let absolute = std::path::absolute(&root).unwrap_or(root);
                std::fs::canonicalize(&absolute).unwrap_or(absolute)
            })
            .collect();
        resolved.sort();
        resolved.dedup();
        Self {
            roots: resolved,
            max_bytes,
        }
    }

    /// The same sandbox with `folders` added.
    pub fn widened(&self, folders: impl IntoIterator<Item = PathBuf>) -> Self {
        Self::new(self.roots.iter().cloned().chain(folders), self.max_bytes)
    }

    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Where `path` really is, if this run may read it.
    pub fn check(&self, path: &Path) -> Result<PathBuf, SandboxError> {
        let shown = path.display().to_string();
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some(tree) = NEVER.iter().find(|tree| absolute.starts_with(tree)) {
            return Err(SandboxError::System { path: shown, tree });
        }
        let real = std::fs::canonicalize(path).map_err(|reason| SandboxError::Missing {
            path: shown.clone(),
            reason,
        })?;
        let described = if real == path {
            shown
        } else {
            format!("{shown} (which is {})", relative_to_cwd(&real))
        };
        if let Some(tree) = NEVER.iter().find(|tree| real.starts_with(tree)) {
            return Err(SandboxError::System {
                path: described,
                tree,
            });
        }
        if !self.roots.iter().any(|root| real.starts_with(root)) {
            return Err(SandboxError::Outside {
                path: described,
                roots: self.roots_text(),
            });
        }
        let metadata = std::fs::metadata(&real).map_err(|reason| SandboxError::Missing {
            path: described.clone(),
            reason,
        })?;
        if !metadata.is_file() {
            return Err(SandboxError::NotAFile { path: described });
        }
        if metadata.len() > self.max_bytes {
            return Err(SandboxError::TooLarge {
                path: described,
                size: metadata.len(),
                limit: self.max_bytes,
            });
        }
        Ok(real)
    }

    /// Where the folder (or file) `path` really is, if this run may read it and everything in
    /// it: every symlink under it, followed as a reader (helm) would follow it, must stay
    /// inside the sandbox. A chart is read this way before helm is given it.
    pub fn check_tree(&self, path: &Path) -> Result<PathBuf, SandboxError> {
        let shown = path.display().to_string();
        let real = std::fs::canonicalize(path).map_err(|reason| SandboxError::Missing {
            path: shown.clone(),
            reason,
        })?;
        if real.is_file() {
            return self.check(path);
        }
        if let Some(tree) = NEVER.iter().find(|tree| real.starts_with(tree)) {
            return Err(SandboxError::System { path: shown, tree });
        }
        if !self.roots.iter().any(|root| real.starts_with(root)) {
            return Err(SandboxError::Outside {
                path: shown,
                roots: self.roots_text(),
            });
        }
        let mut folders = vec![real.clone()];
        let mut seen = std::collections::HashSet::new();
        while let Some(folder) = folders.pop() {
            if !seen.insert(folder.clone()) {
                continue;
            }
            let entries = std::fs::read_dir(&folder).map_err(|reason| SandboxError::Missing {
                path: folder.display().to_string(),
                reason,
            })?;
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let entry_path = entry.path();
                if kind.is_dir() {
                    folders.push(entry_path);
                } else if kind.is_symlink() {
                    // A dangling link reads nothing; helm reports it itself.
                    let Ok(target) = std::fs::canonicalize(&entry_path) else {
                        continue;
                    };
                    let outside = NEVER.iter().any(|tree| target.starts_with(tree))
                        || !self.roots.iter().any(|root| target.starts_with(root));
                    if outside {
                        return Err(SandboxError::LinkOutside {
                            link: relative_to_cwd(&entry_path),
                            target: target.display().to_string(),
                            roots: self.roots_text(),
                        });
                    }
                    if target.is_dir() {
                        folders.push(target);
                    }
                }
            }
        }
        Ok(real)
    }

    /// The text of `path`, if this run may read it.
    pub fn read_text(&self, path: &Path) -> Result<String, SandboxError> {
        let real = self.check(path)?;
        let shown = path.display().to_string();
        let file = std::fs::File::open(&real).map_err(|reason| SandboxError::Missing {
            path: shown.clone(),
            reason,
        })?;
        // A file may grow between the look and the read: never take more than the cap.
        let mut bytes = Vec::new();
        file.take(self.max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|reason| SandboxError::Missing {
                path: shown.clone(),
                reason,
            })?;
        if bytes.len() as u64 > self.max_bytes {
            return Err(SandboxError::TooLarge {
                path: shown,
                size: bytes.len() as u64,
                limit: self.max_bytes,
            });
        }
        String::from_utf8(bytes).map_err(|_| SandboxError::NotText { path: shown })
    }

    fn roots_text(&self) -> String {
        self.roots
            .iter()
            .map(|r| relative_to_cwd(r))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A runbook's project: the nearest folder at or above `folder` that has a `snapshots/` folder
/// (this repository's root for `runbooks/`).
pub fn project_of(folder: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
    absolute
        .ancestors()
        .find(|a| a.join("snapshots").is_dir())
        .map(Path::to_path_buf)
}

/// A resolved path relative to the working folder when inside it, as messages quote paths.
fn relative_to_cwd(path: &Path) -> String {
    let cwd = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .unwrap_or_default();
    match path.strip_prefix(&cwd) {
        Ok(inside) if inside.as_os_str().is_empty() => ".".to_string(),
        Ok(inside) => inside.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(dir: &Path) -> ReadSandbox {
        ReadSandbox::new([dir.to_path_buf()], 1024)
    }

    #[test]
    fn files_in_the_folder_are_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/a.txt"), "hello").unwrap();
        let text = sandbox(dir.path())
            .read_text(&dir.path().join("sub/../sub/a.txt"))
            .unwrap();
        assert_eq!(text, "hello");
    }

    #[test]
    fn paths_that_climb_out_are_refused_and_name_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("runbooks");
        std::fs::create_dir(&inner).unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s3cret").unwrap();
        let error = sandbox(&inner)
            .read_text(&inner.join("../secret.txt"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("secret.txt"), "{error}");
        assert!(
            error.contains("outside the folders this run may read"),
            "{error}"
        );
        assert!(error.contains("--allow-read DIR"), "{error}");
    }

    #[test]
    fn a_chart_with_a_link_out_is_refused_and_one_with_links_inside_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let chart = dir.path().join("chart");
        std::fs::create_dir_all(chart.join("files")).unwrap();
        std::fs::write(chart.join("Chart.yaml"), "name: c\n").unwrap();
        std::os::unix::fs::symlink(chart.join("Chart.yaml"), chart.join("files/again")).unwrap();
        let sandbox = sandbox(dir.path());
        assert!(sandbox.check_tree(&chart).is_ok());
        // A folder inside that links out again is followed too.
        let other = dir.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", other.join("host")).unwrap();
        std::os::unix::fs::symlink(&other, chart.join("files/other")).unwrap();
        let error = sandbox.check_tree(&chart).unwrap_err().to_string();
        assert!(
            error.contains("host is a symlink to /etc/hostname"),
            "{error}"
        );
        std::fs::remove_file(other.join("host")).unwrap();
        std::os::unix::fs::symlink("/proc/self/environ", chart.join("env")).unwrap();
        let error = sandbox.check_tree(&chart).unwrap_err().to_string();
        assert!(error.contains("env is a symlink to /proc/"), "{error}");
    }

    #[test]
    fn a_symlink_out_of_the_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("runbooks");
        std::fs::create_dir(&inner).unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s3cret").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), inner.join("link.txt")).unwrap();
        let error = sandbox(&inner)
            .read_text(&inner.join("link.txt"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("link.txt (which is "), "{error}");
        assert!(error.contains("outside"), "{error}");
    }

    #[test]
    fn proc_sys_and_dev_are_refused_even_when_allowed() {
        let everything = ReadSandbox::new([PathBuf::from("/")], 1024);
        for path in [
            "/proc/self/environ",
            "/dev/zero",
            "/sys/kernel/mm/transparent_hugepage/enabled",
        ] {
            let error = everything.read_text(Path::new(path)).unwrap_err();
            assert!(
                matches!(
                    error,
                    SandboxError::System { .. } | SandboxError::Missing { .. }
                ),
                "{path}: {error}"
            );
        }
        let error = everything
            .read_text(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("under /dev, which runbooks never read"),
            "{error}"
        );
    }

    #[test]
    fn files_over_the_cap_are_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big"), vec![b'x'; 2048]).unwrap();
        let error = sandbox(dir.path())
            .read_text(&dir.path().join("big"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("2048 bytes, over the 1024-byte read limit"),
            "{error}"
        );
        assert!(error.contains("--max-read-bytes"), "{error}");
    }

    #[test]
    fn folders_and_missing_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let error = sandbox(dir.path())
            .read_text(dir.path())
            .unwrap_err()
            .to_string();
        assert!(error.contains("is not a regular file"), "{error}");
        let error = sandbox(dir.path())
            .read_text(&dir.path().join("nope"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("nope") && error.contains("No such file"),
            "{error}"
        );
    }
}
