//! The state folder is the user's alone: journals name resources, the history holds every
//! run's figures, locks name runs. Folders are 0700 and files 0600, whatever the umask.

use std::fs::{DirBuilder, Permissions};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;

/// Creates `dir` (and what is missing above it) as 0700, and narrows `dir` itself to 0700 when
/// an earlier version left it open to others.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    narrow(dir, 0o700)
}

/// Narrows an existing file to 0600 (a file another tool created, such as SQLite's).
pub fn private_file(path: &Path) -> std::io::Result<()> {
    narrow(path, 0o600)
}

/// Writes `bytes` to `path` as a file of the user's alone (0600), narrowing a file that
/// exists with a wider mode before anything is written into it.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(Permissions::from_mode(0o600))?;
    file.write_all(bytes)
}

fn narrow(path: &Path, mode: u32) -> std::io::Result<()> {
    let current = std::fs::metadata(path)?.permissions().mode() & 0o777;
    if current & !mode != 0 {
        std::fs::set_permissions(path, Permissions::from_mode(current & mode))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_0700_and_files_0600_whatever_was_there() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("state/runs/r1");
        private_dir(&dir).unwrap();
        for folder in [root.path().join("state"), dir.clone()] {
            let mode = std::fs::metadata(&folder).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", folder.display());
        }
        std::fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
        private_dir(&dir).unwrap();
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        let file = dir.join("db");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, Permissions::from_mode(0o644)).unwrap();
        private_file(&file).unwrap();
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}
