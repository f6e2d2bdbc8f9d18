//! Errors of the Kubernetes client, keeping the apiserver's reason and code.

#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    /// The apiserver answered with a Status error.
    #[error("{message}")]
    Api {
        reason: String,
        code: u16,
        message: String,
    },
    #[error("unknown kind `{kind}`: the server has no such resource ({hint})")]
    UnknownKind { kind: String, hint: String },
    #[error("{0}")]
    Invalid(String),
    #[error("timed out after {waited} waiting for {what}; last seen: {last}")]
    Timeout {
        what: String,
        waited: String,
        last: String,
    },
    #[error("cannot reach the Kubernetes API: {0}")]
    Connection(String),
    #[error("cannot load the kubeconfig: {0}")]
    Config(String),
}

impl KubeError {
    /// The reason scripts match on: `NotFound`, `AlreadyExists`, `Invalid`, `Timeout`, ...
    pub fn reason(&self) -> &str {
        match self {
            KubeError::Api { reason, .. } => reason,
            KubeError::UnknownKind { .. } => "UnknownKind",
            KubeError::Invalid(_) => "BadRequest",
            KubeError::Timeout { .. } => "Timeout",
            KubeError::Connection(_) => "ConnectionError",
            KubeError::Config(_) => "ConfigError",
        }
    }

    pub fn code(&self) -> u16 {
        match self {
            KubeError::Api { code, .. } => *code,
            KubeError::UnknownKind { .. } => 404,
            KubeError::Invalid(_) => 400,
            _ => 0,
        }
    }
}

impl From<kube::Error> for KubeError {
    fn from(error: kube::Error) -> Self {
        match error {
            kube::Error::Api(status) => KubeError::Api {
                reason: if status.reason.is_empty() {
                    "Unknown".into()
                } else {
                    status.reason.clone()
                },
                code: status.code,
                message: status.message.clone(),
            },
            other => KubeError::Connection(other.to_string()),
        }
    }
}
