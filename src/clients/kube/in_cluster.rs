//! The client of a run inside a pod (`--in-cluster`): the API server from the
//! `KUBERNETES_SERVICE_HOST`/`_PORT` every pod is given, the pod's ServiceAccount token (read
//! again as the kubelet rotates it) and CA from where they are mounted, and its namespace.

use std::path::Path;

use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;

use super::client::KubeClient;
use super::error::KubeError;

/// Where the kubelet mounts a pod's ServiceAccount token, CA and namespace.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl KubeClient {
    /// The client of the pod this runs in, its ServiceAccount's files in `dir`.
    pub async fn in_cluster(
        dir: &Path,
        connect_timeout: std::time::Duration,
        request_timeout: std::time::Duration,
    ) -> Result<Self, KubeError> {
        let host = env("KUBERNETES_SERVICE_HOST").ok_or_else(|| {
            KubeError::Config(
                "--in-cluster: KUBERNETES_SERVICE_HOST is not set, so this is not running in a pod; use --kubeconfig or --cluster from outside the cluster".into(),
            )
        })?;
        let port = env("KUBERNETES_SERVICE_PORT").unwrap_or_else(|| "443".into());
        let server = if host.contains(':') {
            format!("https://[{host}]:{port}")
        } else {
            format!("https://{host}:{port}")
        };
        let token = dir.join("token");
        let ca = dir.join("ca.crt");
        for (file, what) in [(&token, "token"), (&ca, "CA certificate")] {
            if !file.is_file() {
                return Err(KubeError::Config(format!(
                    "--in-cluster: no ServiceAccount {what} at {}: the pod mounts none (automountServiceAccountToken: false?), or it is mounted elsewhere (--service-account-dir)",
                    file.display()
                )));
            }
        }
        let namespace = std::fs::read_to_string(dir.join("namespace"))
            .map(|n| n.trim().to_string())
            .unwrap_or_default();
        let mut context = json!({"cluster": "in-cluster", "user": "service-account"});
        if !namespace.is_empty() {
            context["namespace"] = json!(namespace);
        }
        let kubeconfig: Kubeconfig = serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "in-cluster", "cluster": {
                "server": server,
                "certificate-authority": ca.display().to_string(),
            }}],
            "users": [{"name": "service-account", "user": {"tokenFile": token.display().to_string()}}],
            "contexts": [{"name": "in-cluster", "context": context}],
            "current-context": "in-cluster",
        }))
        .map_err(|e| KubeError::Config(format!("--in-cluster: {e}")))?;
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| {
                    KubeError::Config(format!("--in-cluster with {}: {e}", dir.display()))
                })?;
        Self::from_config(config, connect_timeout, request_timeout)
    }
}
