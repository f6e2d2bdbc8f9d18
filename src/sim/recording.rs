//! The requests the twin answered, kept only while asked (`POST /twin/record?on`), so a
//! benchmark can replay a run's requests with another client (scripts/bench-wire.py's
//! raw-HTTP floor). Kubernetes requests are kept without their bodies.

use std::sync::Mutex;

use serde::Serialize;

/// One request as it arrived.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Recorded {
    /// `kubernetes` or the AWS service that signed it (`eks`, `ec2`, `iam`, `kms`, `sts`).
    pub(crate) service: String,
    pub(crate) method: String,
    /// The path with its query.
    pub(crate) path: String,
    pub(crate) content_type: Option<String>,
    /// KMS's `X-Amz-Target`.
    pub(crate) target: Option<String>,
    pub(crate) body: String,
}

#[derive(Default)]
pub(crate) struct Recording {
    /// `None` while not recording.
    requests: Mutex<Option<Vec<Recorded>>>,
}

impl Recording {
    /// Starts keeping requests, forgetting any kept before.
    pub(crate) fn start(&self) {
        *self.lock() = Some(Vec::new());
    }

    /// Stops keeping requests; returns what was kept.
    pub(crate) fn stop(&self) -> Vec<Recorded> {
        self.lock().take().unwrap_or_default()
    }

    /// What was kept so far (empty while not recording).
    pub(crate) fn kept(&self) -> Vec<Recorded> {
        self.lock().clone().unwrap_or_default()
    }

    pub(crate) fn is_on(&self) -> bool {
        self.lock().is_some()
    }

    pub(crate) fn keep(&self, request: Recorded) {
        if let Some(kept) = self.lock().as_mut() {
            kept.push(request);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Vec<Recorded>>> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(path: &str) -> Recorded {
        Recorded {
            service: "kubernetes".into(),
            method: "GET".into(),
            path: path.into(),
            content_type: None,
            target: None,
            body: String::new(),
        }
    }

    #[test]
    fn only_what_arrives_while_recording_is_kept() {
        let recording = Recording::default();
        recording.keep(request("/api/v1/nodes"));
        assert!(recording.kept().is_empty());
        recording.start();
        recording.keep(request("/readyz"));
        assert_eq!(recording.kept(), vec![request("/readyz")]);
        assert_eq!(recording.stop(), vec![request("/readyz")]);
        recording.keep(request("/livez"));
        assert!(!recording.is_on() && recording.kept().is_empty());
    }
}
