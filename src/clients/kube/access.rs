//! What the client's identity is and may do, asked of the API server itself
//! (`SelfSubjectReview`, `SelfSubjectAccessReview`), as `kubectl auth whoami` and
//! `kubectl auth can-i` ask it.

use http::Request;
use serde_json::{Value, json};

use super::client::KubeClient;
use super::error::KubeError;

/// One question for `can_i`: a verb on a resource (`pods`, `pods/exec`, `deployments.apps`).
#[derive(Debug, Clone, Default)]
pub struct AccessQuestion {
    pub verb: String,
    pub resource: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    /// Ask for this user instead (`system:serviceaccount:NS:NAME` for a ServiceAccount), by
    /// impersonation as `kubectl auth can-i --as` does: the client's identity must be allowed
    /// to `impersonate` it.
    pub as_user: Option<String>,
}

impl KubeClient {
    async fn post_review(
        &self,
        path: &str,
        body: &Value,
        as_user: Option<&str>,
    ) -> Result<Value, KubeError> {
        let mut request = Request::post(path).header("content-type", "application/json");
        if let Some(user) = as_user {
            request = request.header("impersonate-user", user);
        }
        let request = request
            .body(serde_json::to_vec(body).map_err(|e| KubeError::Invalid(e.to_string()))?)
            .map_err(|e| KubeError::Invalid(e.to_string()))?;
        let bytes = self.fetch(request).await?;
        serde_json::from_slice(&bytes).map_err(|e| KubeError::Invalid(format!("{path}: {e}")))
    }

    /// `#{ username, groups, extra }` of this client's credential.
    pub async fn whoami(&self) -> Result<Value, KubeError> {
        let review = self
            .post_review(
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
                None,
            )
            .await?;
        Ok(review["status"]["userInfo"].clone())
    }

    /// Whether this client may do `question`; `resource` may name its API group after a dot
    /// (`deployments.apps`) and a subresource after a slash (`pods/exec`).
    pub async fn can_i(&self, question: &AccessQuestion) -> Result<bool, KubeError> {
        let (resource, subresource) = match question.resource.split_once('/') {
            Some((r, s)) => (r, Some(s)),
            None => (question.resource.as_str(), None),
        };
        let (resource, group) = resource.split_once('.').unwrap_or((resource, ""));
        let review = self
            .post_review(
                "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                &json!({
                    "apiVersion": "authorization.k8s.io/v1",
                    "kind": "SelfSubjectAccessReview",
                    "spec": {"resourceAttributes": {
                        "verb": question.verb,
                        "group": group,
                        "resource": resource,
                        "subresource": subresource.unwrap_or_default(),
                        "namespace": question.namespace.clone().unwrap_or_default(),
                        "name": question.name.clone().unwrap_or_default(),
                    }},
                }),
                question.as_user.as_deref(),
            )
            .await?;
        Ok(review["status"]["allowed"].as_bool().unwrap_or(false))
    }
}
