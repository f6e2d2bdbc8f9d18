//! The RBAC authorizer: the rules a user holds through the ClusterRoleBindings (everywhere)
//! and the RoleBindings of a request's namespace (there only), read from the store on each
//! decision so a binding applied a moment ago counts at once, as on a real cluster.

use serde_json::Value;

use super::rule::Rule;
use crate::sim::kube::auth::authentication::User;
use crate::sim::kube::auth::request_info::RequestAttributes;
use crate::sim::kube::storage::state::KubeState;

pub(crate) const CLUSTER_ROLES: &str = "rbac.authorization.k8s.io/clusterroles";
pub(crate) const CLUSTER_ROLE_BINDINGS: &str = "rbac.authorization.k8s.io/clusterrolebindings";
pub(crate) const ROLES: &str = "rbac.authorization.k8s.io/roles";
pub(crate) const ROLE_BINDINGS: &str = "rbac.authorization.k8s.io/rolebindings";

/// `system:serviceaccount:NAMESPACE:NAME`, the username of a ServiceAccount.
pub(crate) fn service_account_user(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

/// Whether a binding's subject is this user; a ServiceAccount subject without a namespace is
/// in its RoleBinding's.
fn subject_is(subject: &Value, user: &User, binding_namespace: &str) -> bool {
    let name = subject["name"].as_str().unwrap_or_default();
    match subject["kind"].as_str() {
        Some("User") => user.name == name,
        Some("Group") => user.groups.iter().any(|g| g == name),
        Some("ServiceAccount") => {
            let namespace = subject["namespace"]
                .as_str()
                .filter(|n| !n.is_empty())
                .unwrap_or(binding_namespace);
            user.name == service_account_user(namespace, name)
        }
        _ => false,
    }
}

fn binds(binding: &Value, user: &User) -> bool {
    let namespace = binding["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default();
    binding["subjects"]
        .as_array()
        .is_some_and(|subjects| subjects.iter().any(|s| subject_is(s, user, namespace)))
}

/// The rules of the role a binding refers to: a ClusterRole, or a Role of its namespace.
fn referred_rules(state: &KubeState, binding: &Value) -> Vec<Rule> {
    let role_ref = &binding["roleRef"];
    let name = role_ref["name"].as_str().unwrap_or_default();
    let role = match role_ref["kind"].as_str() {
        Some("ClusterRole") => state.store.get(CLUSTER_ROLES, "", name),
        Some("Role") => {
            let namespace = binding["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default();
            state.store.get(ROLES, namespace, name)
        }
        _ => None,
    };
    role.map(Rule::all_of).unwrap_or_default()
}

/// Calls `visit` with each rule the user holds for a request in `namespace` (None: the
/// cluster scope or a URL) until it answers true; whether one did.
pub(crate) fn visit_rules(
    state: &KubeState,
    user: &User,
    namespace: Option<&str>,
    mut visit: impl FnMut(&Rule) -> bool,
) -> bool {
    for binding in state.store.list(CLUSTER_ROLE_BINDINGS, None) {
        if binds(binding, user) && referred_rules(state, binding).iter().any(&mut visit) {
            return true;
        }
    }
    let Some(namespace) = namespace.filter(|n| !n.is_empty()) else {
        return false;
    };
    for binding in state.store.list(ROLE_BINDINGS, Some(namespace)) {
        if binds(binding, user) && referred_rules(state, binding).iter().any(&mut visit) {
            return true;
        }
    }
    false
}

/// Whether RBAC grants the request.
pub(crate) fn allows(state: &KubeState, user: &User, attributes: &RequestAttributes) -> bool {
    let namespace = match attributes {
        RequestAttributes::Resource { namespace, .. } => namespace.as_deref(),
        RequestAttributes::NonResource { .. } => None,
    };
    visit_rules(state, user, namespace, |rule| rule.allows(attributes))
}

/// Every rule the user holds in `namespace`, in the order the bindings give them.
pub(crate) fn rules_for(state: &KubeState, user: &User, namespace: Option<&str>) -> Vec<Rule> {
    let mut rules = Vec::new();
    visit_rules(state, user, namespace, |rule| {
        rules.push(rule.clone());
        false
    });
    rules
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::sim::kube::auth::request_info::resource;
    use crate::sim::kube::storage::api;
    use crate::sim::kube::storage::state::KubeState;

    fn create(state: &mut KubeState, api_version: &str, kind: &str, object: Value) {
        let resource = state.resource(api_version, kind).expect("a known kind");
        let namespace = object["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        api::create(state, &resource, &namespace, object, false).expect("created");
    }

    fn cluster() -> KubeState {
        let mut state = KubeState::default();
        for name in ["default", "gpu"] {
            create(
                &mut state,
                "v1",
                "Namespace",
                json!({"metadata": {"name": name}}),
            );
        }
        super::super::bootstrap::seed(&mut state);
        state
    }

    fn service_account(namespace: &str, name: &str) -> User {
        User {
            name: service_account_user(namespace, name),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".into(),
            ],
            policies: Vec::new(),
            arn: None,
        }
    }

    #[test]
    fn a_role_binding_grants_its_role_in_its_namespace_only() {
        let mut state = cluster();
        create(
            &mut state,
            "rbac.authorization.k8s.io/v1",
            "Role",
            json!({"metadata": {"name": "exec", "namespace": "gpu"}, "rules": [
                {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]}]}),
        );
        create(
            &mut state,
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            json!({"metadata": {"name": "drill", "namespace": "gpu"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "exec"},
                "subjects": [{"kind": "ServiceAccount", "name": "drill", "namespace": "gpu"}]}),
        );
        let drill = service_account("gpu", "drill");
        let exec = |ns| resource("create", "", "pods", Some("exec"), Some(ns));
        assert!(allows(&state, &drill, &exec("gpu")));
        assert!(!allows(&state, &drill, &exec("default")));
        assert!(!allows(
            &state,
            &service_account("gpu", "other"),
            &exec("gpu")
        ));
        assert!(
            allows(
                &state,
                &drill,
                &resource(
                    "create",
                    "authorization.k8s.io",
                    "selfsubjectaccessreviews",
                    None,
                    None
                )
            ),
            "system:basic-user through system:authenticated"
        );
    }

    #[test]
    fn a_cluster_role_bound_in_a_namespace_applies_there() {
        let mut state = cluster();
        create(
            &mut state,
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            json!({"metadata": {"name": "pod-reader"}, "rules": [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}),
        );
        create(
            &mut state,
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            json!({"metadata": {"name": "read", "namespace": "default"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "pod-reader"},
                "subjects": [{"kind": "Group", "name": "readers"}]}),
        );
        let reader = User {
            name: "alice".into(),
            groups: vec!["readers".into(), "system:authenticated".into()],
            policies: Vec::new(),
            arn: None,
        };
        assert!(allows(
            &state,
            &reader,
            &resource("list", "", "pods", None, Some("default"))
        ));
        assert!(!allows(
            &state,
            &reader,
            &resource("list", "", "pods", None, None)
        ));
        let rules = rules_for(&state, &reader, Some("default"));
        assert!(rules.contains(&Rule::on(&["get", "list"], &[""], &["pods"])));
        assert!(
            rules
                .iter()
                .any(|r| r.non_resource_urls.contains(&"/api".to_string()))
        );
    }
}
