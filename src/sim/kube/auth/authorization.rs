//! What a user may do, decided on the RBAC attributes of each request as EKS decides it:
//! `system:masters` everything; then the EKS access policies of the user's access entry
//! (AmazonEKSClusterAdminPolicy as `cluster-admin`, AmazonEKSAdminPolicy/EditPolicy/ViewPolicy
//! as `admin`/`edit`/`view`, AmazonEKSAdminViewPolicy every read); then the cluster's own RBAC.
//! Refusals are 403 with the API server's own message.

use std::sync::LazyLock;

use serde_json::json;

use super::authentication::User;
use super::rbac::authorizer;
use super::rbac::bootstrap;
use super::rbac::rule::Rule;
use super::request_info::RequestAttributes;
use crate::sim::aws::access_entries::{ADMIN, ADMIN_VIEW, CLUSTER_ADMIN, EDIT, VIEW};
use crate::sim::kube::storage::state::KubeState;
use crate::sim::kube::storage::status::ApiError;

/// The rules of each EKS access policy, fixed as EKS's own authorizer holds them: the
/// Kubernetes roles they are documented to match, as a fresh cluster aggregates them.
static POLICY_RULES: LazyLock<Vec<(&'static str, Vec<Rule>)>> = LazyLock::new(|| {
    vec![
        (CLUSTER_ADMIN, bootstrap::cluster_admin()),
        (ADMIN, bootstrap::admin()),
        (EDIT, bootstrap::edit()),
        (VIEW, bootstrap::view()),
        (
            ADMIN_VIEW,
            vec![Rule::on(&["get", "list", "watch"], &["*"], &["*"])],
        ),
    ]
});

fn policy_rules(policy: &str) -> &'static [Rule] {
    POLICY_RULES
        .iter()
        .find(|(arn, _)| *arn == policy)
        .map_or(&[], |(_, rules)| rules.as_slice())
}

/// Whether the user's EKS access policies grant the request: a cluster-scoped policy
/// anywhere, a namespace-scoped one only for requests in its namespaces.
fn policies_allow(user: &User, attributes: &RequestAttributes) -> bool {
    let namespace = match attributes {
        RequestAttributes::Resource { namespace, .. } => namespace.as_deref(),
        RequestAttributes::NonResource { .. } => None,
    };
    user.policies.iter().any(|(policy, namespaces)| {
        let in_scope =
            namespaces.is_empty() || namespace.is_some_and(|n| namespaces.iter().any(|s| s == n));
        in_scope && policy_rules(policy).iter().any(|r| r.allows(attributes))
    })
}

/// The rules of the user's access policies that apply in `namespace`.
pub(crate) fn policy_rules_for(user: &User, namespace: Option<&str>) -> Vec<Rule> {
    user.policies
        .iter()
        .filter(|(_, namespaces)| {
            namespaces.is_empty() || namespace.is_some_and(|n| namespaces.iter().any(|s| s == n))
        })
        .flat_map(|(policy, _)| policy_rules(policy).iter().cloned())
        .collect()
}

/// `pods`, or `pods/exec` for a subresource: how RBAC rules and the 403 text name it.
fn full_resource(resource: &str, subresource: Option<&str>) -> String {
    match subresource {
        Some(sub) => format!("{resource}/{sub}"),
        None => resource.to_string(),
    }
}

/// Whether `user` may make a request with these attributes: `system:masters` always, else
/// its EKS access policies or RBAC (EKS chains its authorizer with RBAC's; either may allow).
pub(crate) fn allowed(state: &KubeState, user: &User, attributes: &RequestAttributes) -> bool {
    user.groups.iter().any(|g| g == "system:masters")
        || policies_allow(user, attributes)
        || authorizer::allows(state, user, attributes)
}

/// The 403 the API server answers: `pods "x" is forbidden: User "u" cannot get resource "pods"
/// in API group "" in the namespace "default"`.
pub(crate) fn forbidden(user: &User, attributes: &RequestAttributes) -> ApiError {
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
    use crate::sim::kube::auth::request_info::resource;

    /// The decision on a fresh cluster (its default roles and bindings only).
    fn may(user: &User, attributes: &RequestAttributes) -> bool {
        let mut state = KubeState::default();
        bootstrap::seed(&mut state);
        allowed(&state, user, attributes)
    }

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
        assert!(may(
            &viewer,
            &resource("list", "", "pods", None, Some("default"))
        ));
        assert!(may(
            &viewer,
            &resource("get", "", "pods", Some("log"), Some("default"))
        ));
        assert!(!may(&viewer, &resource("list", "", "nodes", None, None)));
        assert!(!may(
            &viewer,
            &resource("get", "", "secrets", None, Some("default"))
        ));
        assert!(!may(
            &viewer,
            &resource("create", "", "pods", Some("exec"), Some("default"))
        ));
        assert!(!may(
            &viewer,
            &resource("delete", "", "pods", None, Some("default"))
        ));
        let admin_view = user(&[(ADMIN_VIEW, &[])]);
        assert!(may(&admin_view, &resource("list", "", "nodes", None, None)));
        assert!(!may(
            &admin_view,
            &resource("patch", "", "nodes", None, None)
        ));
    }

    #[test]
    fn edit_writes_workloads_and_execs_admin_also_grants_roles() {
        let editor = user(&[(EDIT, &["gpu"])]);
        assert!(may(
            &editor,
            &resource("create", "", "pods", Some("exec"), Some("gpu"))
        ));
        assert!(may(
            &editor,
            &resource("patch", "apps", "deployments", Some("scale"), Some("gpu"))
        ));
        assert!(!may(
            &editor,
            &resource(
                "create",
                "rbac.authorization.k8s.io",
                "roles",
                None,
                Some("gpu")
            )
        ));
        assert!(!may(
            &editor,
            &resource("create", "", "pods", None, Some("default"))
        ));
        let admin = user(&[(ADMIN, &["gpu"])]);
        assert!(may(
            &admin,
            &resource(
                "create",
                "rbac.authorization.k8s.io",
                "roles",
                None,
                Some("gpu")
            )
        ));
        assert!(!may(&admin, &resource("list", "", "nodes", None, None)));
    }

    #[test]
    fn a_namespace_scope_holds_inside_its_namespaces() {
        let scoped = user(&[(CLUSTER_ADMIN, &["gpu"])]);
        assert!(may(
            &scoped,
            &resource("delete", "", "pods", None, Some("gpu"))
        ));
        assert!(!may(
            &scoped,
            &resource("delete", "", "pods", None, Some("default"))
        ));
        assert!(!may(&scoped, &resource("list", "", "nodes", None, None)));
    }

    #[test]
    fn health_is_public_discovery_needs_a_user() {
        let get = |url: &str| RequestAttributes::NonResource {
            verb: "get".into(),
            url: url.into(),
        };
        assert!(may(&User::anonymous(), &get("/readyz")));
        assert!(may(&User::anonymous(), &get("/version")));
        assert!(!may(&User::anonymous(), &get("/api")));
        assert!(may(&user(&[]), &get("/apis/apps/v1")));
        assert!(!may(&user(&[]), &get("/metrics")));
        let review = resource(
            "create",
            "authorization.k8s.io",
            "selfsubjectaccessreviews",
            None,
            None,
        );
        assert!(may(&user(&[]), &review), "anyone may ask");
        assert!(!may(&User::anonymous(), &review));
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
