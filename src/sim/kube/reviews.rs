//! The API server's questions about the asker: `SelfSubjectAccessReview` (may I do this?, as
//! `kubectl auth can-i` asks it) and `SelfSubjectReview` (who am I?, `kubectl auth whoami`),
//! answered with the same authentication and authorization that guard every request.

use serde_json::{Value, json};

use super::authentication::User;
use super::authorization::allowed;
use super::request_info::RequestAttributes;
use super::status::ApiError;

/// Which review a `POST` to `group/version/plural` is, if it is one.
pub fn is_review(group: &str, version: &str, plural: &str) -> bool {
    matches!(
        (group, version, plural),
        ("authorization.k8s.io", "v1", "selfsubjectaccessreviews")
            | ("authentication.k8s.io", "v1", "selfsubjectreviews")
    )
}

/// The review answered: the object sent back with its status, as the API server returns it.
pub fn answer(user: &User, plural: &str, body: &Value, now: &str) -> Result<Value, ApiError> {
    match plural {
        "selfsubjectreviews" => {
            let mut extra = json!({});
            if let Some(arn) = &user.arn {
                extra = json!({"arn": [arn], "canonicalArn": [arn]});
            }
            Ok(json!({
                "kind": "SelfSubjectReview",
                "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"creationTimestamp": now},
                "status": {"userInfo": {"username": user.name, "groups": user.groups, "extra": extra}},
            }))
        }
        _ => {
            let spec = &body["spec"];
            let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
            let attributes = if let Some(resource) = spec.get("resourceAttributes") {
                RequestAttributes::Resource {
                    verb: text(&resource["verb"]).unwrap_or_default(),
                    api_group: text(&resource["group"]).unwrap_or_default(),
                    resource: text(&resource["resource"]).unwrap_or_default(),
                    subresource: text(&resource["subresource"]),
                    namespace: text(&resource["namespace"]),
                    name: text(&resource["name"]),
                }
            } else if let Some(path) = spec.get("nonResourceAttributes") {
                RequestAttributes::NonResource {
                    verb: text(&path["verb"]).unwrap_or_default(),
                    url: text(&path["path"]).unwrap_or_default(),
                }
            } else {
                return Err(ApiError::invalid(
                    "SelfSubjectAccessReview",
                    "",
                    &[("spec.resourceAttributes", "exactly one of resourceAttributes or nonResourceAttributes must be specified".to_string())],
                ));
            };
            let verdict = allowed(user, &attributes);
            let mut review = body.clone();
            review["metadata"]["creationTimestamp"] = json!(now);
            review["status"] = if verdict {
                json!({"allowed": true})
            } else {
                json!({"allowed": false})
            };
            Ok(review)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::aws::access_entries::VIEW;

    fn viewer() -> User {
        User {
            name: "arn:aws:iam::123456789012:user/viewer".into(),
            groups: vec!["system:authenticated".into()],
            policies: vec![(VIEW.to_string(), Vec::new())],
            arn: Some("arn:aws:iam::123456789012:user/viewer".into()),
        }
    }

    fn may(user: &User, verb: &str, resource: &str, namespace: &str) -> bool {
        let body = json!({"spec": {"resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace}}});
        let review = answer(
            user,
            "selfsubjectaccessreviews",
            &body,
            "2026-01-01T00:00:00Z",
        )
        .expect("answered");
        review["status"]["allowed"].as_bool().expect("a verdict")
    }

    #[test]
    fn access_reviews_answer_with_the_same_rules_as_requests() {
        let user = viewer();
        assert!(may(&user, "list", "pods", "kube-system"));
        assert!(!may(&user, "list", "nodes", ""));
        assert!(!may(&user, "delete", "pods", "kube-system"));
        let empty = answer(&user, "selfsubjectaccessreviews", &json!({"spec": {}}), "t");
        assert_eq!(empty.expect_err("no attributes").code, 422);
    }

    #[test]
    fn self_subject_review_names_the_user_its_groups_and_its_arn() {
        let review = answer(&viewer(), "selfsubjectreviews", &json!({}), "t").expect("answered");
        let info = &review["status"]["userInfo"];
        assert_eq!(info["username"], "arn:aws:iam::123456789012:user/viewer");
        assert_eq!(info["groups"], json!(["system:authenticated"]));
        assert_eq!(
            info["extra"]["arn"],
            json!(["arn:aws:iam::123456789012:user/viewer"])
        );
    }
}
