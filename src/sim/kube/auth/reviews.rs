//! The API server's questions about access: `SelfSubjectAccessReview` (may I do this?, as
//! `kubectl auth can-i` asks it), `SelfSubjectRulesReview` (what may I do here?, `can-i
//! --list`), `SubjectAccessReview` and `LocalSubjectAccessReview` (may this user?, for those
//! allowed to ask) and `SelfSubjectReview` (who am I?, `kubectl auth whoami`), answered with
//! the same authentication and authorization that guard every request.

use serde_json::{Value, json};

use super::authentication::{self, User};
use super::authorization::{self, allowed};
use super::rbac::authorizer;
use super::rbac::rule::Rule;
use super::request_info::RequestAttributes;
use crate::sim::kube::storage::state::KubeState;
use crate::sim::kube::storage::status::ApiError;
use crate::sim::twin::Twin;

/// Which review a `POST` to `group/version/plural` is, if it is one.
pub(crate) fn is_review(group: &str, version: &str, plural: &str) -> bool {
    matches!(
        (group, version, plural),
        (
            "authorization.k8s.io",
            "v1",
            "selfsubjectaccessreviews"
                | "selfsubjectrulesreviews"
                | "subjectaccessreviews"
                | "localsubjectaccessreviews"
        ) | ("authentication.k8s.io", "v1", "selfsubjectreviews")
    )
}

fn text(value: &Value) -> Option<String> {
    value.as_str().filter(|s| !s.is_empty()).map(str::to_string)
}

/// The request an access review asks about; a LocalSubjectAccessReview's namespace is its
/// own, whatever its attributes say.
fn asked(kind: &str, spec: &Value, namespace: Option<&str>) -> Result<RequestAttributes, ApiError> {
    if let Some(resource) = spec.get("resourceAttributes") {
        return Ok(RequestAttributes::Resource {
            verb: text(&resource["verb"]).unwrap_or_default(),
            api_group: text(&resource["group"]).unwrap_or_default(),
            resource: text(&resource["resource"]).unwrap_or_default(),
            subresource: text(&resource["subresource"]),
            namespace: namespace
                .map(str::to_string)
                .or_else(|| text(&resource["namespace"])),
            name: text(&resource["name"]),
        });
    }
    if let Some(path) = spec.get("nonResourceAttributes")
        && namespace.is_none()
    {
        return Ok(RequestAttributes::NonResource {
            verb: text(&path["verb"]).unwrap_or_default(),
            url: text(&path["path"]).unwrap_or_default(),
        });
    }
    let why = if namespace.is_some() {
        "Required value: resourceAttributes is required for a LocalSubjectAccessReview"
    } else {
        "exactly one of resourceAttributes or nonResourceAttributes must be specified"
    };
    Err(ApiError::invalid(
        kind,
        "",
        &[("spec.resourceAttributes", why.to_string())],
    ))
}

/// The user a SubjectAccessReview names: its username and groups as given, with the access
/// policies of the access entry of that username.
fn subject(twin: &Twin, kind: &str, spec: &Value) -> Result<User, ApiError> {
    let name = text(&spec["user"]).unwrap_or_default();
    let groups: Vec<String> = spec["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(text)
        .collect();
    if name.is_empty() && groups.is_empty() {
        return Err(ApiError::invalid(
            kind,
            "",
            &[(
                "spec.user",
                "Invalid value: \"\": at least one of user or group must be specified".into(),
            )],
        ));
    }
    let policies = twin.read_aws(|state| authentication::policies_of_username(state, &name));
    Ok(User {
        name,
        groups,
        policies,
        arn: None,
    })
}

fn verdict(allowed: bool) -> Value {
    json!({ "allowed": allowed })
}

/// `status` of a SelfSubjectRulesReview: the rules that apply in `namespace`, split as the API
/// server splits them, and `incomplete` as on EKS, whose access-policy authorizer (a webhook)
/// cannot list its rules for the API server.
fn rules_status(state: &KubeState, user: &User, namespace: Option<&str>) -> Value {
    let mut rules: Vec<Rule> = authorization::policy_rules_for(user, namespace);
    rules.extend(authorizer::rules_for(state, user, namespace));
    let (urls, resources): (Vec<Rule>, Vec<Rule>) = rules
        .into_iter()
        .partition(|r| !r.non_resource_urls.is_empty());
    json!({
        "resourceRules": resources.iter().map(Rule::to_json).collect::<Vec<_>>(),
        "nonResourceRules": urls.iter().map(Rule::to_json).collect::<Vec<_>>(),
        "incomplete": true,
        "evaluationError": "webhook authorizer does not support user rule resolution",
    })
}

/// The review answered: the object sent back with its status, as the API server returns it.
/// `namespace` is the request path's (a LocalSubjectAccessReview's).
pub(crate) fn answer(
    twin: &Twin,
    user: &User,
    plural: &str,
    namespace: Option<&str>,
    body: &Value,
    now: &str,
) -> Result<Value, ApiError> {
    let spec = &body["spec"];
    let status = match plural {
        "selfsubjectreviews" => {
            let mut extra = json!({});
            if let Some(arn) = &user.arn {
                extra = json!({"arn": [arn], "canonicalArn": [arn]});
            }
            return Ok(json!({
                "kind": "SelfSubjectReview",
                "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"creationTimestamp": now},
                "status": {"userInfo": {"username": user.name, "groups": user.groups, "extra": extra}},
            }));
        }
        "selfsubjectrulesreviews" => {
            let namespace = text(&spec["namespace"]);
            twin.read_kube(|s| rules_status(s, user, namespace.as_deref()))
        }
        "subjectaccessreviews" | "localsubjectaccessreviews" => {
            let kind = if namespace.is_some() {
                "LocalSubjectAccessReview"
            } else {
                "SubjectAccessReview"
            };
            let attributes = asked(kind, spec, namespace)?;
            let subject = subject(twin, kind, spec)?;
            verdict(twin.read_kube(|s| allowed(s, &subject, &attributes)))
        }
        _ => {
            let attributes = asked("SelfSubjectAccessReview", spec, None)?;
            verdict(twin.read_kube(|s| allowed(s, user, &attributes)))
        }
    };
    let mut review = body.clone();
    review["metadata"]["creationTimestamp"] = json!(now);
    review["status"] = status;
    Ok(review)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::clock::VirtualClock;
    use crate::sim::aws::access_entries::VIEW;
    use crate::sim::scenario::{self, Scenario};

    fn lab() -> Arc<Twin> {
        let twin = Twin::new(Arc::new(VirtualClock::new()));
        scenario::load(&twin, &Scenario::Deployed);
        twin
    }

    fn viewer() -> User {
        User {
            name: "arn:aws:iam::123456789012:user/viewer".into(),
            groups: vec!["system:authenticated".into()],
            policies: vec![(VIEW.to_string(), Vec::new())],
            arn: Some("arn:aws:iam::123456789012:user/viewer".into()),
        }
    }

    fn may(twin: &Twin, user: &User, verb: &str, resource: &str, namespace: &str) -> bool {
        let body = json!({"spec": {"resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace}}});
        let review = answer(
            twin,
            user,
            "selfsubjectaccessreviews",
            None,
            &body,
            "2026-01-01T00:00:00Z",
        )
        .expect("answered");
        review["status"]["allowed"].as_bool().expect("a verdict")
    }

    #[test]
    fn access_reviews_answer_with_the_same_rules_as_requests() {
        let twin = lab();
        let user = viewer();
        assert!(may(&twin, &user, "list", "pods", "kube-system"));
        assert!(!may(&twin, &user, "list", "nodes", ""));
        assert!(!may(&twin, &user, "delete", "pods", "kube-system"));
        let empty = answer(
            &twin,
            &user,
            "selfsubjectaccessreviews",
            None,
            &json!({"spec": {}}),
            "t",
        );
        assert_eq!(empty.expect_err("no attributes").code, 422);
    }

    #[test]
    fn subject_access_reviews_ask_about_someone_else() {
        let twin = lab();
        let ask = |plural: &str, namespace: Option<&str>, spec: Value| {
            answer(
                &twin,
                &viewer(),
                plural,
                namespace,
                &json!({ "spec": spec }),
                "t",
            )
        };
        let masters = ask(
            "subjectaccessreviews",
            None,
            json!({"user": "ops", "groups": ["system:masters"], "resourceAttributes": {"verb": "delete", "resource": "nodes"}}),
        )
        .expect("answered");
        assert_eq!(masters["status"]["allowed"], true);
        let nobody = ask(
            "localsubjectaccessreviews",
            Some("default"),
            json!({"user": "nobody", "resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "kube-system"}}),
        )
        .expect("answered");
        assert_eq!(nobody["status"]["allowed"], false);
        let nameless = ask(
            "subjectaccessreviews",
            None,
            json!({"resourceAttributes": {"verb": "get", "resource": "pods"}}),
        );
        assert!(
            nameless
                .expect_err("no subject")
                .message
                .contains("at least one of user or group")
        );
    }

    #[test]
    fn rules_reviews_list_policies_and_bindings_and_say_they_may_be_incomplete() {
        let twin = lab();
        let review = answer(
            &twin,
            &viewer(),
            "selfsubjectrulesreviews",
            None,
            &json!({"spec": {"namespace": "default"}}),
            "t",
        )
        .expect("answered");
        let status = &review["status"];
        assert_eq!(status["incomplete"], true);
        let resources = status["resourceRules"].to_string();
        assert!(resources.contains("\"pods/log\""), "{resources}");
        assert!(
            resources.contains("selfsubjectaccessreviews"),
            "system:basic-user: {resources}"
        );
        assert!(
            status["nonResourceRules"].to_string().contains("/version"),
            "{status}"
        );
    }

    #[test]
    fn self_subject_review_names_the_user_its_groups_and_its_arn() {
        let twin = lab();
        let review = answer(
            &twin,
            &viewer(),
            "selfsubjectreviews",
            None,
            &json!({}),
            "t",
        )
        .expect("answered");
        let info = &review["status"]["userInfo"];
        assert_eq!(info["username"], "arn:aws:iam::123456789012:user/viewer");
        assert_eq!(info["groups"], json!(["system:authenticated"]));
        assert_eq!(
            info["extra"]["arn"],
            json!(["arn:aws:iam::123456789012:user/viewer"])
        );
    }
}
