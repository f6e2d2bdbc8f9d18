//! Plain configuration derived from the arguments; the app layer consumes only these.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::args::{ClockKind, Progress, RunArgs};
use super::flags::TargetArgs;
use crate::error::Error;
use crate::sandbox::ReadSandbox;

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub file: PathBuf,
    pub sets: BTreeMap<String, String>,
    pub report: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub update_snapshots: bool,
    pub snapshot_dir: PathBuf,
    /// `--snapshot-dir` as given, if it was.
    pub snapshot_root: Option<PathBuf>,
    pub progress: Progress,
    pub clock: Option<ClockKind>,
    pub target: TargetArgs,
    /// `--yes`: changes to a target outside this process need no confirmation.
    pub yes: bool,
    pub guards: crate::guard::Guards,
    pub journal: super::args::JournalArgs,
    /// `--history` as given (`off`, a folder, or the state directory when absent).
    pub history: super::args::HistoryArgs,
    pub metrics_file: Option<PathBuf>,
    pub summary: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub pushgateway: Option<String>,
    pub pushgateway_job: String,
    /// What `read_text` may read: the runbook's folder, the snapshot folder, `--allow-read`.
    pub read: ReadSandbox,
    /// `--set` keys whose value came from a file, with the `@path` given: reports show that,
    /// never the file's content.
    pub set_files: BTreeMap<String, String>,
}

impl RunConfig {
    pub fn from_args(args: RunArgs) -> Result<Self, Error> {
        let snapshot_root = args.snapshot_dir.clone();
        let snapshot_dir = match args.snapshot_dir {
            Some(dir) => dir.join(runbook_key(&args.file)),
            None => snapshot_dir_for(&args.file),
        };
        let folder = runbook_folder(&args.file);
        let read = args.read.sandbox([folder, snapshot_dir.clone()]);
        let (sets, set_files) = parse_sets(&args.sets, &read)?;
        Ok(Self {
            read,
            set_files,
            file: args.file,
            sets,
            report: args.report,
            junit: args.junit,
            update_snapshots: args.update_snapshots,
            snapshot_dir,
            snapshot_root,
            progress: args.progress,
            clock: args.clock,
            target: args.target,
            yes: args.yes,
            guards: args.guards.guards(),
            journal: args.journal,
            history: args.history,
            metrics_file: args.metrics_file,
            summary: args.summary,
            html: args.html,
            pushgateway: args.pushgateway,
            pushgateway_job: args.pushgateway_job,
        })
    }
}

/// `--set` keys and values.
pub type Sets = BTreeMap<String, String>;

/// `KEY=VALUE` pairs; `KEY=@path` reads the value from a file inside the read sandbox.
/// Answers the values, and the `@path` of those read from files.
pub fn parse_sets(raw: &[String], read: &ReadSandbox) -> Result<(Sets, Sets), Error> {
    let mut sets = BTreeMap::new();
    let mut files = BTreeMap::new();
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
            Some(path) => {
                files.insert(key.to_string(), format!("@{path}"));
                read.read_text(Path::new(path))
                    .map_err(|source| Error::ReadRefused {
                        what: format!("the value of --set {key}"),
                        source,
                    })?
            }
            None => value.to_string(),
        };
        if sets.insert(key.to_string(), value).is_some() {
            return Err(Error::Usage(format!("--set {key} is given twice")));
        }
    }
    Ok((sets, files))
}

/// A runbook's name for snapshots: its path under `runbooks/` without the extension
/// (`runbooks/core/defer.rhai` -> `core/defer`), else its file stem. Read from the absolute
/// path, so `cd runbooks && runbook run core/defer.rhai` names it as it is named from above.
fn runbook_key(file: &Path) -> PathBuf {
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let stem = absolute.with_extension("");
    let parts: Vec<Component<'_>> = stem.components().collect();
    match parts.iter().rposition(|c| c.as_os_str() == "runbooks") {
        Some(index) => parts[index + 1..].iter().collect(),
        None => PathBuf::from(file.file_stem().unwrap_or_default()),
    }
}

/// The folder a runbook's imports and reads resolve against (`.` for a bare file name).
pub fn runbook_folder(file: &Path) -> PathBuf {
    file.parent()
        .map(Path::to_path_buf)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The runbook's project: the nearest folder at or above the runbook's that has a
/// `snapshots/` folder (this repository's root for `runbooks/gpu-lab.rhai`).
pub fn project_folder(file: &Path) -> Option<PathBuf> {
    crate::sandbox::project_of(&runbook_folder(file))
}

/// `snapshots/<runbook>/` in the runbook's project, else beside the runbook.
pub fn snapshot_dir_for(file: &Path) -> PathBuf {
    let key = runbook_key(file);
    match project_folder(file) {
        // Shown relative to the working folder when it is inside it, as reports quote it.
        Some(root) => {
            let cwd = std::env::current_dir().unwrap_or_default();
            root.strip_prefix(&cwd)
                .unwrap_or(&root)
                .join("snapshots")
                .join(key)
        }
        None => runbook_folder(file).join("snapshots").join(key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_parse_and_reject_nonsense() {
        let read = ReadSandbox::new([PathBuf::from(".")], 1024);
        let (sets, files) = parse_sets(&["a=1".into(), "name=x=y".into()], &read).unwrap();
        assert_eq!(sets["a"], "1");
        assert_eq!(sets["name"], "x=y");
        assert!(files.is_empty());
        assert!(parse_sets(&["novalue".into()], &read).is_err());
        assert!(parse_sets(&["1x=2".into()], &read).is_err());
        assert!(parse_sets(&["a=1".into(), "a=2".into()], &read).is_err());
        assert!(parse_sets(&["a=@/no/such/file".into()], &read).is_err());
        let outside = parse_sets(&["a=@/etc/hostname".into()], &read).unwrap_err();
        assert!(
            outside.render().contains("--allow-read"),
            "{}",
            outside.render()
        );
    }

    #[test]
    fn a_value_from_a_file_is_remembered_by_its_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token.txt"), "s3cret").unwrap();
        let read = ReadSandbox::new([dir.path().to_path_buf()], 1024);
        let arg = format!("token=@{}", dir.path().join("token.txt").display());
        let (sets, files) = parse_sets(&[arg], &read).unwrap();
        assert_eq!(sets["token"], "s3cret");
        assert!(files["token"].starts_with('@') && files["token"].ends_with("token.txt"));
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
