//! `helm template`: the command line made from [`TemplateOptions`], run as a child process,
//! and its output read into objects.

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::process::Command;

use super::{HelmError, RenderedObject, parse_rendered};

/// What `helm template` is asked to render. `Default` renders like a bare
/// `helm template CHART -n default`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TemplateOptions {
    /// Empty means helm's own default name, `release-name`.
    pub release: String,
    /// Empty means `default`. Always passed, so the kubeconfig's context never leaks in.
    pub namespace: String,
    /// `--version`: a chart version or range, for charts from a repository.
    pub version: Option<String>,
    /// `--repo`: the chart repository URL, when `chart` is a name in it.
    pub repo: Option<String>,
    /// `--set key=value`, helm typing the value (`true`, `2` ...). Each value is one scalar:
    /// commas, backslashes and a leading `{` are escaped so helm does not split it.
    pub set: Vec<(String, String)>,
    /// `--set-string key=value`: the value stays a string. Escaped like `set`.
    pub set_string: Vec<(String, String)>,
    /// Values files, in order (later ones win), each written to a temporary file for `-f`.
    pub values: Vec<serde_json::Value>,
    /// `--include-crds`: also print the CRDs of the charts' `crds/` folders.
    pub include_crds: bool,
    /// `--kube-version`, e.g. `1.35.0`, for charts that check `.Capabilities.KubeVersion`.
    pub kube_version: Option<String>,
    /// `--api-versions`, e.g. `monitoring.coreos.com/v1`, for `.Capabilities.APIVersions`.
    pub api_versions: Vec<String>,
}

impl TemplateOptions {
    pub fn new(release: impl Into<String>, namespace: impl Into<String>) -> Self {
        Self {
            release: release.into(),
            namespace: namespace.into(),
            ..Self::default()
        }
    }
}

/// Runs `helm template` on `chart` (a path, a `repo/name`, or a name with `repo`) and returns
/// what it rendered. helm's exit status decides failure; its stderr is the message.
pub async fn template(
    helm: &Path,
    chart: &str,
    opts: &TemplateOptions,
) -> Result<Vec<RenderedObject>, HelmError> {
    let files = ValuesFiles::write(&opts.values)?;
    let output = super::environment::scrubbed(&mut Command::new(helm))
        .args(arguments(chart, opts, &files.paths))
        .stdin(Stdio::null())
        // A dropped future (a cancelled step) must not leave helm running.
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|source| HelmError::Spawn {
            path: helm.to_path_buf(),
            source,
        })?;
    drop(files);
    if !output.status.success() {
        let stderr = helm_message(&String::from_utf8_lossy(&output.stderr));
        return Err(HelmError::Failed {
            chart: chart.to_string(),
            stderr: if stderr.is_empty() {
                format!("helm exited with {} and printed nothing", output.status)
            } else {
                stderr
            },
        });
    }
    parse_rendered(&String::from_utf8_lossy(&output.stdout))
}

/// The arguments after `helm`. Flags come first and the names after `--`, so a chart or
/// release that starts with `-` cannot be read as a flag.
fn arguments(chart: &str, opts: &TemplateOptions, value_files: &[PathBuf]) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["template".into()];
    let mut flag = |name: &str, value: &str| {
        args.push(name.into());
        args.push(value.into());
    };
    let namespace = if opts.namespace.is_empty() {
        "default"
    } else {
        &opts.namespace
    };
    flag("--namespace", namespace);
    if let Some(version) = &opts.version {
        flag("--version", version);
    }
    if let Some(repo) = &opts.repo {
        flag("--repo", repo);
    }
    for (key, value) in &opts.set {
        flag("--set", &format!("{key}={}", escape_set_value(value)));
    }
    for (key, value) in &opts.set_string {
        flag(
            "--set-string",
            &format!("{key}={}", escape_set_value(value)),
        );
    }
    if let Some(kube_version) = &opts.kube_version {
        flag("--kube-version", kube_version);
    }
    for api_version in &opts.api_versions {
        flag("--api-versions", api_version);
    }
    if opts.include_crds {
        args.push("--include-crds".into());
    }
    for file in value_files {
        args.push("--values".into());
        args.push(file.into());
    }
    args.push("--".into());
    if !opts.release.is_empty() {
        args.push(opts.release.as_str().into());
    }
    args.push(chart.into());
    args
}

/// helm's `--set` parser splits on `,`, reads `\` as an escape, and reads a value starting with
/// `{` as a list; escaping all three keeps the value one scalar.
fn escape_set_value(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for (index, c) in value.chars().enumerate() {
        if c == '\\' || c == ',' || (index == 0 && c == '{') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// helm's stderr without the parts that would read wrong inside our message: its `Error: `
/// prefix, and the hint to pass `--debug`, which callers of [`template`] cannot.
fn helm_message(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|line| line.trim() != "Use --debug flag to render out invalid YAML")
        .map(|line| line.strip_prefix("Error: ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// Values written for `-f`, removed when this is dropped, whether helm succeeded, failed or
/// was cancelled.
struct ValuesFiles {
    paths: Vec<PathBuf>,
}

impl ValuesFiles {
    fn write(values: &[serde_json::Value]) -> Result<Self, HelmError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut files = ValuesFiles { paths: Vec::new() };
        for value in values {
            let path = std::env::temp_dir().join(format!(
                "runbook-helm-values-{}-{}.json",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            // JSON is YAML, and serde_json writes any Value; create_new never follows or
            // reuses a file someone else put there.
            let mut options = fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                // Values may hold credentials: readable by this user only.
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            let mut file = options.open(&path)?;
            files.paths.push(path);
            file.write_all(&serde_json::to_vec(value).map_err(std::io::Error::other)?)?;
        }
        Ok(files)
    }
}

impl Drop for ValuesFiles {
    fn drop(&mut self) {
        for path in &self.paths {
            // Nothing to do about a file that cannot be removed from the temp folder.
            let _ = fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strings(args: &[OsString]) -> Vec<&str> {
        args.iter().map(|a| a.to_str().unwrap()).collect()
    }

    #[test]
    fn default_options_give_a_bare_command() {
        let args = arguments("charts/gpu-operator", &TemplateOptions::default(), &[]);
        assert_eq!(
            strings(&args),
            [
                "template",
                "--namespace",
                "default",
                "--",
                "charts/gpu-operator"
            ]
        );
    }

    #[test]
    fn every_option_becomes_its_flag() {
        let opts = TemplateOptions {
            version: Some("v26.3.1".into()),
            repo: Some("https://helm.ngc.nvidia.com/nvidia".into()),
            set: vec![("driver.enabled".into(), "false".into())],
            set_string: vec![("operator.version".into(), "v26.3.1".into())],
            include_crds: true,
            kube_version: Some("1.35.0".into()),
            api_versions: vec!["monitoring.coreos.com/v1".into()],
            ..TemplateOptions::new("gpu-operator", "gpu-operator")
        };
        let files = [PathBuf::from("/tmp/a.json"), PathBuf::from("/tmp/b.json")];
        let args = arguments("gpu-operator", &opts, &files);
        assert_eq!(
            strings(&args),
            [
                "template",
                "--namespace",
                "gpu-operator",
                "--version",
                "v26.3.1",
                "--repo",
                "https://helm.ngc.nvidia.com/nvidia",
                "--set",
                "driver.enabled=false",
                "--set-string",
                "operator.version=v26.3.1",
                "--kube-version",
                "1.35.0",
                "--api-versions",
                "monitoring.coreos.com/v1",
                "--include-crds",
                "--values",
                "/tmp/a.json",
                "--values",
                "/tmp/b.json",
                "--",
                "gpu-operator",
                "gpu-operator",
            ]
        );
    }

    #[test]
    fn set_values_stay_one_scalar() {
        assert_eq!(escape_set_value("a,b"), r"a\,b");
        assert_eq!(escape_set_value(r"C:\x"), r"C:\\x");
        assert_eq!(escape_set_value("{a,b}"), r"\{a\,b}");
        assert_eq!(escape_set_value("x{y}"), "x{y}");
        assert_eq!(escape_set_value(""), "");
    }

    #[test]
    fn helm_message_drops_the_prefix_and_the_debug_hint() {
        let stderr = "Error: parse error at (broken/templates/cm.yaml:4): unclosed action\n\n\
                      Use --debug flag to render out invalid YAML\n";
        assert_eq!(
            helm_message(stderr),
            "parse error at (broken/templates/cm.yaml:4): unclosed action"
        );
        let stderr =
            "walk.go:75: found symbolic link in path: /c/link\nError: path \"/c\" not found\n";
        assert_eq!(
            helm_message(stderr),
            "walk.go:75: found symbolic link in path: /c/link\npath \"/c\" not found"
        );
        assert_eq!(helm_message(""), "");
    }

    #[test]
    fn values_files_hold_the_json_and_go_away() {
        let values = [
            json!({"driver": {"enabled": false}}),
            json!({"nfd": {"enabled": true}}),
        ];
        let files = ValuesFiles::write(&values).unwrap();
        let paths = files.paths.clone();
        assert_eq!(paths.len(), 2);
        assert_ne!(paths[0], paths[1]);
        let first: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&paths[0]).unwrap()).unwrap();
        assert_eq!(first, values[0]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&paths[0]).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        drop(files);
        assert!(paths.iter().all(|path| !path.exists()));
    }
}
