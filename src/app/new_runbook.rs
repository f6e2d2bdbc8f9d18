//! `runbook new`: a runbook started from a template in the house style, never over a file.

use std::path::{Component, Path, PathBuf};

use super::AppResult;
use crate::cli::{NewArgs, Template};
use crate::error::{Error, Exit};

const VERIFY: &str = include_str!("../../templates/verify.rhai");
const DRILL: &str = include_str!("../../templates/drill.rhai");
const GPU: &str = include_str!("../../templates/gpu.rhai");

/// Where the GPU Operator chart of this repository lies, from the current folder.
const LOCAL_CHART: &str = "charts/gpu-operator";
/// The chart elsewhere: NVIDIA's, after `helm repo add nvidia https://helm.ngc.nvidia.com/nvidia`.
const REMOTE_CHART: &str = "nvidia/gpu-operator";

pub(crate) fn execute(args: &NewArgs) -> AppResult {
    let path = if args.name.extension().is_some() {
        args.name.clone()
    } else {
        args.name.with_extension("rhai")
    };
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let text = match args.template {
        Template::Verify => VERIFY,
        Template::Drill => DRILL,
        Template::Gpu => GPU,
    }
    .replace("{{name}}", &name)
    .replace("{{chart}}", &chart_from(&folder));
    let error = |source| Error::Write {
        path: path.clone(),
        what: "the new runbook",
        source,
    };
    std::fs::create_dir_all(&folder).map_err(error)?;
    // create_new: an existing runbook is never replaced, not even by a race.
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .and_then(|mut file| std::io::Write::write_all(&mut file, text.as_bytes()));
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(Error::Usage(format!(
                "{} exists: runbook new never overwrites a runbook; choose another name",
                path.display()
            )));
        }
        Err(e) => return Err(error(e)),
    }
    eprintln!(
        "wrote {} (the {} template); next: runbook check {0} && runbook run {0}",
        path.display(),
        format!("{:?}", args.template).to_lowercase()
    );
    Ok(Exit::Passed)
}

/// The chart path a runbook in `folder` names: this repository's chart relative to it when
/// the current folder has one, else NVIDIA's.
fn chart_from(folder: &Path) -> String {
    let Ok(cwd) = std::env::current_dir() else {
        return REMOTE_CHART.into();
    };
    let chart = cwd.join(LOCAL_CHART);
    if !chart.is_dir() {
        return REMOTE_CHART.into();
    }
    let folder = cwd.join(folder);
    relative(&folder, &chart)
        .map_or_else(|| chart.display().to_string(), |p| p.display().to_string())
}

/// `to` as seen from `from` (both absolute, `.` and `..` free).
fn relative(from: &Path, to: &Path) -> Option<PathBuf> {
    let plain = |p: &Path| {
        p.components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
    };
    if !plain(from) || !plain(to) {
        return None;
    }
    let (from, to): (Vec<_>, Vec<_>) = (from.components().collect(), to.components().collect());
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut path: PathBuf =
        std::iter::repeat_n(Component::ParentDir, from.len() - common).collect();
    path.extend(&to[common..]);
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_to_the_common_folder() {
        let rel = |a: &str, b: &str| {
            relative(Path::new(a), Path::new(b)).map(|p| p.display().to_string())
        };
        assert_eq!(
            rel("/r/runbooks", "/r/charts/gpu-operator").as_deref(),
            Some("../charts/gpu-operator")
        );
        assert_eq!(
            rel("/r", "/r/charts/gpu-operator").as_deref(),
            Some("charts/gpu-operator")
        );
        assert_eq!(rel("/r/a/../b", "/r/c"), None);
    }
}
