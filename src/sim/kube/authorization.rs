//! What a user may do, decided on the RBAC attributes of each request: `system:masters` and
//! AmazonEKSClusterAdminPolicy everything, AmazonEKSAdminViewPolicy every read, and
//! AmazonEKSViewPolicy the reads of Kubernetes' `view` ClusterRole; the health and version
//! paths anyone, discovery any authenticated user (`system:public-info-viewer`,
//! `system:discovery`). Refusals are 403 with the API server's own message.

use serde_json::json;

use super::authentication::User;
use super::request_info::RequestAttributes;
use super::status::ApiError;
use crate::sim::aws::access_entries::{ADMIN_VIEW, CLUSTER_ADMIN, VIEW};

const READ: [&str; 3] = ["get", "list", "watch"];

/// `(API group, resource)` that the `view` ClusterRole reads.
const VIEWABLE: &[(&str, &str)] = &[
    ("", "configmaps"),
    ("", "endpoints"),
    ("", "persistentvolumeclaims"),
    ("", "persistentvolumeclaims/status"),
    ("", "pods"),
    ("", "replicationcontrollers"),
    ("", "replicationcontrollers/scale"),
    ("", "serviceaccounts"),
    ("", "services"),
    ("", "services/status"),
    ("", "bindings"),
    ("", "events"),
    ("", "limitranges"),
    ("", "namespaces/status"),
    ("", "pods/log"),
    ("", "pods/status"),
    ("", "replicationcontrollers/status"),
    ("", "resourcequotas"),
    ("", "resourcequotas/status"),
    ("", "namespaces"),
    ("apps", "controllerrevisions"),
    ("apps", "daemonsets"),
    ("apps", "daemonsets/status"),
    ("apps", "deployments"),
    ("apps", "deployments/scale"),
    ("apps", "deployments/status"),
    ("apps", "replicasets"),
    ("apps", "replicasets/scale"),
    ("apps", "replicasets/status"),
    ("apps", "statefulsets"),
    ("apps", "statefulsets/scale"),
    ("apps", "statefulsets/status"),
    ("autoscaling", "horizontalpodautoscalers"),
    ("autoscaling", "horizontalpodautoscalers/status"),
    ("batch", "cronjobs"),
    ("batch", "cronjobs/status"),
    ("batch", "jobs"),
    ("batch", "jobs/status"),
    ("discovery.k8s.io", "endpointslices"),
    ("policy", "poddisruptionbudgets"),
    ("policy", "poddisruptionbudgets/status"),
    ("networking.k8s.io", "ingresses"),
    ("networking.k8s.io", "ingresses/status"),
    ("networking.k8s.io", "networkpolicies"),
];

fn public_path(url: &str) -> bool {
    ["/healthz", "/livez", "/readyz", "/version"]
        .iter()
        .any(|p| url == *p || url.starts_with(&format!("{p}/")))
}

fn discovery_path(url: &str) -> bool {
    ["/api", "/apis", "/openapi"]
        .iter()
        .any(|p| url == *p || url.starts_with(&format!("{p}/")))
}

/// `pods`, or `pods/exec` for a subresource: how RBAC rules and the 403 text name it.
fn full_resource(resource: &str, subresource: Option<&str>) -> String {
    match subresource {
        Some(sub) => format!("{resource}/{sub}"),
        None => resource.to_string(),
    }
}

/// Whether `user` may make a request with these attributes.
pub fn allowed(user: &User, attributes: &RequestAttributes) -> bool {
    if user.groups.iter().any(|g| g == "system:masters") {
        return true;
    }
    match attributes {
        RequestAttributes::NonResource { verb, url } => {
            verb == "get" && (public_path(url) || (!user.is_anonymous() && discovery_path(url)))
                || user
                    .policies
                    .iter()
                    .any(|(p, ns)| p == CLUSTER_ADMIN && ns.is_empty())
        }
        // system:basic-user: anyone may ask what they may do and who they are.
        RequestAttributes::Resource {
            verb,
            api_group,
            resource,
            ..
        } if verb == "create"
            && !user.is_anonymous()
            && matches!(
                (api_group.as_str(), resource.as_str()),
                (
                    "authorization.k8s.io",
                    "selfsubjectaccessreviews" | "selfsubjectrulesreviews"
                ) | ("authentication.k8s.io", "selfsubjectreviews")
            ) =>
        {
            true
        }
        RequestAttributes::Resource {
            verb,
            api_group,
            resource,
            subresource,
            namespace,
            ..
        } => {
            let full = full_resource(resource, subresource.as_deref());
            let reads = READ.contains(&verb.as_str());
            user.policies.iter().any(|(policy, namespaces)| {
                let in_scope = namespaces.is_empty()
                    || namespace.as_ref().is_some_and(|n| namespaces.contains(n));
                in_scope
                    && match policy.as_str() {
                        CLUSTER_ADMIN => true,
                        ADMIN_VIEW => reads,
                        VIEW => reads && VIEWABLE.contains(&(api_group.as_str(), full.as_str())),
                        _ => false,
                    }
            })
        }
    }
}

/// The 403 the API server answers: `pods "x" is forbidden: User "u" cannot get resource "pods"
/// in API group "" in the namespace "default"`.
pub fn forbidden(user: &User, attributes: &RequestAttributes) -> ApiError {
    match attributes {
        RequestAttributes::NonResource { verb, url } => ApiError::new(
            403,
            "Forbidden",
            format!(
                "forbidden: User \"{}\" cannot {verb} path \"{url}\"",
                user.name
            ),
        ),
        RequestAttributes::Resource {
            verb,
            api_group,
            resource,
            subresource,
            namespace,
            name,
        } => {
            let full = full_resource(resource, subresource.as_deref());
            let subject = match name {
                Some(n) => format!("{full} \"{n}\""),
                None => full.clone(),
            };
            let place = match namespace {
                Some(ns) => format!("in the namespace \"{ns}\""),
                None => "at the cluster scope".to_string(),
            };
            let mut error = ApiError::new(
                403,
                "Forbidden",
                format!(
                    "{subject} is forbidden: User \"{}\" cannot {verb} resource \"{full}\" in API group \"{api_group}\" {place}",
                    user.name
                ),
            );
            let mut details = json!({"kind": resource});
            if let Some(n) = name {
                details["name"] = json!(n);
            }
            if !api_group.is_empty() {
                details["group"] = json!(api_group);
            }
            error.details = details;
            error
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::kube::request_info::resource;

    fn user(policies: &[(&str, &[&str])]) -> User {
        User {
            name: "arn:aws:iam::123456789012:user/viewer".into(),
            groups: vec!["system:authenticated".into()],
            policies: policies
                .iter()
                .map(|(p, ns)| {
                    (
                        (*p).to_string(),
                        ns.iter().map(|n| (*n).to_string()).collect(),
                    )
                })
                .collect(),
            arn: None,
        }
    }

    #[test]
    fn view_reads_workloads_but_not_nodes_secrets_or_exec() {
        let viewer = user(&[(VIEW, &[])]);
        assert!(allowed(
            &viewer,
            &resource("list", "", "pods", None, Some("default"))
        ));
        assert!(allowed(
            &viewer,
            &resource("get", "", "pods", Some("log"), Some("default"))
        ));
        assert!(!allowed(
            &viewer,
            &resource("list", "", "nodes", None, None)
        ));
        assert!(!allowed(
            &viewer,
            &resource("get", "", "secrets", None, Some("default"))
        ));
        assert!(!allowed(
            &viewer,
            &resource("create", "", "pods", Some("exec"), Some("default"))
        ));
        assert!(!allowed(
            &viewer,
            &resource("delete", "", "pods", None, Some("default"))
        ));
        let admin_view = user(&[(ADMIN_VIEW, &[])]);
        assert!(allowed(
            &admin_view,
            &resource("list", "", "nodes", None, None)
        ));
        assert!(!allowed(
            &admin_view,
            &resource("patch", "", "nodes", None, None)
        ));
    }

    #[test]
    fn a_namespace_scope_holds_inside_its_namespaces() {
        let scoped = user(&[(CLUSTER_ADMIN, &["gpu"])]);
        assert!(allowed(
            &scoped,
            &resource("delete", "", "pods", None, Some("gpu"))
        ));
        assert!(!allowed(
            &scoped,
            &resource("delete", "", "pods", None, Some("default"))
        ));
        assert!(!allowed(
            &scoped,
            &resource("list", "", "nodes", None, None)
        ));
    }

    #[test]
    fn health_is_public_discovery_needs_a_user() {
        let get = |url: &str| RequestAttributes::NonResource {
            verb: "get".into(),
            url: url.into(),
        };
        assert!(allowed(&User::anonymous(), &get("/readyz")));
        assert!(allowed(&User::anonymous(), &get("/version")));
        assert!(!allowed(&User::anonymous(), &get("/api")));
        assert!(allowed(&user(&[]), &get("/apis/apps/v1")));
        assert!(!allowed(&user(&[]), &get("/metrics")));
        let review = resource(
            "create",
            "authorization.k8s.io",
            "selfsubjectaccessreviews",
            None,
            None,
        );
        assert!(allowed(&user(&[]), &review), "anyone may ask");
        assert!(!allowed(&User::anonymous(), &review));
    }

    #[test]
    fn forbidden_reads_as_the_api_server_writes_it() {
        let viewer = user(&[]);
        let error = forbidden(&viewer, &resource("list", "", "nodes", None, None));
        assert_eq!(
            error.message,
            "nodes is forbidden: User \"arn:aws:iam::123456789012:user/viewer\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
        );
        let error = forbidden(
            &viewer,
            &resource("create", "", "pods", Some("exec"), Some("gpu")),
        );
        assert!(
            error.message.starts_with("pods/exec is forbidden"),
            "{}",
            error.message
        );
        assert!(
            error.message.ends_with("in the namespace \"gpu\""),
            "{}",
            error.message
        );
    }
}
