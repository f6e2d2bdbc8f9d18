//! Checks made before a run's first step, so that a mutating drill never runs only to fail at
//! the end: the report, JUnit, summary and HTML folders exist and take files, and `--snapshot-dir` names a
//! folder that is there. Nothing is created that the user did not name.

use std::path::Path;

use crate::error::Error;

/// Errors name the flag, the path and what to do; nothing has run when they come. `outputs`:
/// each output flag with the file it names, if any.
pub(crate) fn check_outputs(
    outputs: &[(&str, Option<&Path>)],
    snapshot_root: Option<&Path>,
) -> Result<(), Error> {
    for (flag, path) in outputs {
        if let Some(path) = *path {
            writable_parent(flag, path)?;
        }
    }
    if let Some(root) = snapshot_root
        && !root.is_dir()
    {
        return Err(Error::Usage(format!(
            "--snapshot-dir {}: no such folder; create it first (nothing has run)",
            root.display()
        )));
    }
    Ok(())
}

fn writable_parent(flag: &str, path: &Path) -> Result<(), Error> {
    if path.is_dir() {
        return Err(Error::Usage(format!(
            "{flag} {}: is a folder; name a file in it (nothing has run)",
            path.display()
        )));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(Error::Usage(format!(
            "{flag} {}: the folder {} does not exist; create it first (nothing has run)",
            path.display(),
            parent.display()
        )));
    }
    // Permission bits do not tell (root ignores them, ACLs and read-only mounts add rules):
    // make and remove a file there.
    let probe = parent.join(format!(".runbook-write-check-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(Error::Usage(format!(
            "{flag} {}: cannot write in {}: {e} (nothing has run)",
            path.display(),
            parent.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_folder_is_refused_before_the_run() {
        let error = check_outputs(
            &[("--report", Some(Path::new("/no/such/dir/r.json")))],
            None,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            error,
            "--report /no/such/dir/r.json: the folder /no/such/dir does not exist; create it first (nothing has run)"
        );
        let error = check_outputs(&[("--report", None)], Some(Path::new("/no/such/sn")))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("--snapshot-dir /no/such/sn: no such folder"),
            "{error}"
        );
    }

    #[test]
    fn a_writable_folder_passes_and_keeps_no_probe() {
        let dir = tempfile::tempdir().unwrap();
        check_outputs(
            &[
                ("--report", Some(&dir.path().join("r.json"))),
                ("--junit", Some(&dir.path().join("j.xml"))),
                ("--metrics-file", Some(&dir.path().join("m.prom"))),
                ("--summary", Some(&dir.path().join("s.md"))),
                ("--html", Some(&dir.path().join("r.html"))),
            ],
            Some(dir.path()),
        )
        .unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let error = check_outputs(&[("--junit", Some(dir.path()))], None)
            .unwrap_err()
            .to_string();
        assert!(error.contains("is a folder"), "{error}");
    }
}
