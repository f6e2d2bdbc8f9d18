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
    /// No answer from the API server: the whole line, from [`super::unreachable`], and every
    /// layer's own message under it (hyper's, rustls', the OS's) for `--verbose`.
    #[error("{message}")]
    Connection {
        message: String,
        causes: Vec<String>,
    },
    /// The kubeconfig or the client could not be made: the whole line says which and why.
    #[error("{0}")]
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
            KubeError::Connection { .. } => "ConnectionError",
            KubeError::Config(_) => "ConfigError",
        }
    }

    /// What lies under the one line: empty unless the request never got an answer.
    pub fn causes(&self) -> &[String] {
        match self {
            KubeError::Connection { causes, .. } => causes,
            _ => &[],
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
            // A real API server's errors are Status objects that say `Failure`; anything else
            // came from another kind of server.
            kube::Error::Api(status)
                if status.status.is_none() || status.reason == "Failed to parse error data" =>
            {
                let first = crate::clients::excerpt::first_line(&status.message);
                let answered = match status.code {
                    0 => "answered".to_string(),
                    code => format!("answered HTTP {code}"),
                };
                KubeError::Api {
                    reason: "NotAKubernetesApi".into(),
                    code: status.code,
                    message: format!(
                        "the server {answered} (`{first}`), which is not a Kubernetes API server: is the kubeconfig's server the Kubernetes port of `lab serve` (not its AWS port), or the cluster's API endpoint?"
                    ),
                }
            }
            kube::Error::Api(status) => KubeError::Api {
                reason: if status.reason.is_empty() {
                    "Unknown".into()
                } else {
                    status.reason.clone()
                },
                code: status.code,
                message: with_advice(status.code, &status.message),
            },
            other => super::unreachable::describe(&other),
        }
    }
}

/// The API server's words, and what to do where they leave it unsaid: a 401 says only
/// `Unauthorized`, a 403 names the user and the permission but not how to get it.
fn with_advice(code: u16, message: &str) -> String {
    match code {
        401 => {
            // The API server says only `Unauthorized`, which the reason already says.
            let said = match message.trim_end_matches('.') {
                "" | "Unauthorized" => String::new(),
                other => format!(" ({other})"),
            };
            format!(
                "the API server did not accept the credentials{said}: a token that has expired or was revoked, one made for another cluster, or an identity the cluster does not map (EKS: no access entry or aws-auth entry); `runbook doctor` with the same target flags says who they are"
            )
        }
        403 if message.contains("forbidden") => format!(
            "{}: grant it with a Role or ClusterRole bound to that identity (on EKS also an access policy such as AmazonEKSEditPolicy), or run as an identity that has it",
            message.trim_end_matches('.')
        ),
        _ => message.to_string(),
    }
}
