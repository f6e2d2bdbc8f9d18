//! Errors of the helm client, keeping helm's own message.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HelmError {
    /// No usable helm binary; `looked` says where the search stopped.
    #[error(
        "helm not found ({looked}): run scripts/install-tools.sh (puts helm 4 in .tools/bin), \
         install helm from https://helm.sh/docs/intro/install/, or set RUNBOOK_HELM=/path/to/helm"
    )]
    NotInstalled { looked: String },
    #[error("cannot run helm at {path}")]
    Spawn {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// helm ran and exited non-zero; `stderr` is its message, trimmed, without its `Error: `
    /// prefix and `--debug` hint.
    #[error("helm template {chart} failed: {stderr}")]
    Failed { chart: String, stderr: String },
    /// helm's output had a document that is not a YAML mapping.
    #[error("cannot read the output of {source_template}: {message}")]
    Parse {
        source_template: String,
        message: String,
    },
    /// Installing a rendered object failed.
    #[error("installing {object}")]
    Kube {
        object: String,
        #[source]
        source: crate::clients::kube::KubeError,
    },
    #[error("cannot write a values file for helm")]
    Io(#[from] std::io::Error),
}
