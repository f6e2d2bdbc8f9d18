//! Switching the lab twin's faults during a run (a drill cuts the on-premises link, then
//! restores it): `POST /twin/faults?set=NAME=VALUE` on the twin's API server, for the
//! `twin::fault` binding alone. A real API server has no such endpoint, and says so with a 404.

use http::Request;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};

use super::client::KubeClient;
use super::error::KubeError;

impl KubeClient {
    /// Switches one twin fault on (or off, with `NAME=off`); answers the faults now on.
    pub async fn twin_fault(&self, spec: &str) -> Result<String, KubeError> {
        let request = Request::post(format!(
            "/twin/faults?set={}",
            utf8_percent_encode(spec, NON_ALPHANUMERIC)
        ))
        .body(Vec::new())
        .map_err(|e| KubeError::Invalid(e.to_string()))?;
        let body = self.fetch(request).await.map_err(|error| match error {
            KubeError::Api { code: 404, .. } => KubeError::Invalid(
                "the target is not the lab twin: faults can be switched only on the twin (runbook run without target flags, or runbook lab serve)".into(),
            ),
            other => other,
        })?;
        let answer: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|e| KubeError::Invalid(format!("the twin's answer to a fault: {e}")))?;
        Ok(answer["faults"].as_str().unwrap_or_default().to_string())
    }
}
