//! Exec into a pod: stdout, stderr and the exit code, as the apiserver reports them.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, AttachParams};
use serde::Serialize;
use tokio::io::AsyncReadExt;

use super::client::KubeClient;
use super::error::KubeError;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExecOutput {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i64,
}

async fn read_all(stream: Option<impl tokio::io::AsyncRead + Unpin>) -> String {
    let mut text = String::new();
    if let Some(mut stream) = stream {
        // A stream cut short still gave what it gave.
        let _ = stream.read_to_string(&mut text).await;
    }
    text
}

impl KubeClient {
    pub async fn exec(
        &self,
        pod: &str,
        namespace: Option<&str>,
        command: &[String],
        container: Option<&str>,
    ) -> Result<ExecOutput, KubeError> {
        if command.is_empty() {
            return Err(KubeError::Invalid(
                "exec needs a command, e.g. [\"nvidia-smi\", \"-L\"]".into(),
            ));
        }
        let api: Api<Pod> = Api::namespaced(
            self.for_upgrades().await?.clone(),
            namespace.unwrap_or("default"),
        );
        let mut params = AttachParams::default()
            .stdin(false)
            .stdout(true)
            .stderr(true);
        if let Some(container) = container {
            params = params.container(container);
        }
        let mut process = api.exec(pod, command.to_vec(), &params).await?;
        let status = process.take_status();
        let (stdout, stderr) = tokio::join!(read_all(process.stdout()), read_all(process.stderr()));
        let status = match status {
            Some(status) => status.await,
            None => None,
        };
        // The connection is done once the status arrived; a late close error changes nothing.
        let _ = process.join().await;
        let exit_code = match status {
            Some(s) if s.status.as_deref() == Some("Success") => 0,
            Some(s) => s
                .details
                .and_then(|d| d.causes)
                .and_then(|causes| {
                    causes
                        .into_iter()
                        .find(|c| c.reason.as_deref() == Some("ExitCode"))
                })
                .and_then(|c| c.message)
                .and_then(|m| m.parse().ok())
                .ok_or_else(|| KubeError::Api {
                    reason: s.reason.clone().unwrap_or_default(),
                    code: s.code.unwrap_or(500) as u16,
                    message: s.message.clone().unwrap_or_default(),
                })?,
            None => 0,
        };
        Ok(ExecOutput {
            stdout,
            stderr,
            exit_code,
        })
    }
}
