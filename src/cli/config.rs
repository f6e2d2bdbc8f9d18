//! Plain configuration derived from the arguments; the app layer consumes only these.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::args::{ClockKind, Progress, RunArgs, TargetArgs};
use crate::error::Error;

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub file: PathBuf,
    pub sets: BTreeMap<String, String>,
    pub report: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub update_snapshots: bool,
    pub snapshot_dir: PathBuf,
    pub progress: Progress,
    pub clock: Option<ClockKind>,
    pub target: TargetArgs,
}

impl RunConfig {
    pub fn from_args(args: RunArgs) -> Result<Self, Error> {
        let sets = parse_sets(&args.sets)?;
        let snapshot_dir = match args.snapshot_dir {
            Some(dir) => dir.join(runbook_key(&args.file)),
            None => snapshot_dir_for(&args.file),
        };
        Ok(Self {
            file: args.file,
            sets,
            report: args.report,
            junit: args.junit,
            update_snapshots: args.update_snapshots,
            snapshot_dir,
            progress: args.progress,
            clock: args.clock,
            target: args.target,
        })
    }
}

/// `KEY=VALUE` pairs; `KEY=@path` reads the value from a file.
pub fn parse_sets(raw: &[String]) -> Result<BTreeMap<String, String>, Error> {
    let mut sets = BTreeMap::new();
    for item in raw {
        let Some((key, value)) = item.split_once('=') else {
            return Err(Error::Usage(format!(
                "--set expects KEY=VALUE, got `{item}`"
            )));
        };
        let key = key.trim();
        let valid = key
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !valid {
            return Err(Error::Usage(format!(
                "--set {item}: `{key}` is not a parameter name (letters, digits, _)"
            )));
        }
        let value = match value.strip_prefix('@') {
            Some(path) => std::fs::read_to_string(path).map_err(|source| Error::Read {
                path: PathBuf::from(path),
                what: format!("the value of --set {key}"),
                source,
            })?,
            None => value.to_string(),
        };
        if sets.insert(key.to_string(), value).is_some() {
            return Err(Error::Usage(format!("--set {key} is given twice")));
        }
    }
    Ok(sets)
}

/// A runbook's name for snapshots: its path under `runbooks/` without the extension
/// (`runbooks/core/defer.rhai` -> `core/defer`), else its file stem.
fn runbook_key(file: &Path) -> PathBuf {
    let stem = file.with_extension("");
    let parts: Vec<Component<'_>> = stem.components().collect();
    match parts.iter().rposition(|c| c.as_os_str() == "runbooks") {
        Some(index) => parts[index + 1..].iter().collect(),
        None => PathBuf::from(file.file_stem().unwrap_or_default()),
    }
}

/// `snapshots/<runbook>/` in the nearest folder above the runbook that has a `snapshots/`
/// folder, else beside the runbook.
pub fn snapshot_dir_for(file: &Path) -> PathBuf {
    let key = runbook_key(file);
    let dir = file.parent().unwrap_or(Path::new(""));
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let cwd = std::env::current_dir().unwrap_or_default();
    let found = absolute.ancestors().find(|a| a.join("snapshots").is_dir());
    match found {
        // Shown relative to the working folder when it is inside it, as reports quote it.
        Some(root) => root
            .strip_prefix(&cwd)
            .unwrap_or(root)
            .join("snapshots")
            .join(key),
        None => dir.join("snapshots").join(key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_parse_and_reject_nonsense() {
        let sets = parse_sets(&["a=1".into(), "name=x=y".into()]).unwrap();
        assert_eq!(sets["a"], "1");
        assert_eq!(sets["name"], "x=y");
        assert!(parse_sets(&["novalue".into()]).is_err());
        assert!(parse_sets(&["1x=2".into()]).is_err());
        assert!(parse_sets(&["a=1".into(), "a=2".into()]).is_err());
        assert!(parse_sets(&["a=@/no/such/file".into()]).is_err());
    }

    #[test]
    fn runbook_keys_keep_subfolders_under_runbooks() {
        assert_eq!(
            runbook_key(Path::new("runbooks/gpu-lab.rhai")),
            PathBuf::from("gpu-lab")
        );
        assert_eq!(
            runbook_key(Path::new("runbooks/core/defer.rhai")),
            PathBuf::from("core/defer")
        );
        assert_eq!(
            runbook_key(Path::new("/tmp/x/drill.rhai")),
            PathBuf::from("drill")
        );
    }
}
