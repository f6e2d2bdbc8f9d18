//! The RBAC objects every cluster starts with, as the API server's bootstrap policy writes
//! them: `cluster-admin`, the aggregated `admin`/`edit`/`view` and the `system:aggregate-to-*`
//! roles that feed them, and the roles every user holds (`system:basic-user`,
//! `system:discovery`, `system:public-info-viewer`) with their bindings. The same rules give
//! the EKS access policies their meaning.

use serde_json::{Value, json};

use super::rule::Rule;
use crate::sim::kube::storage::api;
use crate::sim::kube::storage::state::KubeState;

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];
const READ_WRITE: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

pub(crate) const AGGREGATE_TO_ADMIN: &str = "rbac.authorization.k8s.io/aggregate-to-admin";
pub(crate) const AGGREGATE_TO_EDIT: &str = "rbac.authorization.k8s.io/aggregate-to-edit";
pub(crate) const AGGREGATE_TO_VIEW: &str = "rbac.authorization.k8s.io/aggregate-to-view";

/// The URLs `system:public-info-viewer` grants to everyone, signed in or not.
const PUBLIC_INFO: &[&str] = &["/healthz", "/livez", "/readyz", "/version", "/version/"];

/// The URLs `system:discovery` grants to every signed-in user.
const DISCOVERY: &[&str] = &[
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
];

/// What `view` reads: workloads and their status, never Secrets.
pub(crate) fn aggregate_to_view() -> Vec<Rule> {
    vec![
        Rule::on(
            READ,
            &[""],
            &[
                "configmaps",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "pods",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/status",
            ],
        ),
        Rule::on(
            READ,
            &[""],
            &[
                "bindings",
                "events",
                "limitranges",
                "namespaces/status",
                "pods/log",
                "pods/status",
                "replicationcontrollers/status",
                "resourcequotas",
                "resourcequotas/status",
            ],
        ),
        Rule::on(READ, &[""], &["namespaces"]),
        Rule::on(READ, &["discovery.k8s.io"], &["endpointslices"]),
        Rule::on(
            READ,
            &["apps"],
            &[
                "controllerrevisions",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
            ],
        ),
        Rule::on(
            READ,
            &["autoscaling"],
            &[
                "horizontalpodautoscalers",
                "horizontalpodautoscalers/status",
            ],
        ),
        Rule::on(
            READ,
            &["batch"],
            &["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
        ),
        Rule::on(
            READ,
            &["extensions"],
            &[
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "ingresses",
                "ingresses/status",
                "networkpolicies",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "replicationcontrollers/scale",
            ],
        ),
        Rule::on(
            READ,
            &["policy"],
            &["poddisruptionbudgets", "poddisruptionbudgets/status"],
        ),
        Rule::on(
            READ,
            &["networking.k8s.io"],
            &["ingresses", "ingresses/status", "networkpolicies"],
        ),
    ]
}

/// What `edit` adds to `view`: writes to workloads, Secrets, exec into pods.
pub(crate) fn aggregate_to_edit() -> Vec<Rule> {
    vec![
        Rule::on(
            READ,
            &[""],
            &[
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
                "secrets",
                "services/proxy",
            ],
        ),
        Rule::on(&["impersonate"], &[""], &["serviceaccounts"]),
        Rule::on(
            WRITE,
            &[""],
            &[
                "pods",
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
            ],
        ),
        Rule::on(&["create"], &[""], &["pods/eviction"]),
        Rule::on(
            WRITE,
            &[""],
            &[
                "configmaps",
                "events",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "secrets",
                "serviceaccounts",
                "services",
                "services/proxy",
            ],
        ),
        Rule::on(&["create"], &[""], &["serviceaccounts/token"]),
        Rule::on(
            WRITE,
            &["apps"],
            &[
                "daemonsets",
                "deployments",
                "deployments/rollback",
                "deployments/scale",
                "replicasets",
                "replicasets/scale",
                "statefulsets",
                "statefulsets/scale",
            ],
        ),
        Rule::on(WRITE, &["autoscaling"], &["horizontalpodautoscalers"]),
        Rule::on(WRITE, &["batch"], &["cronjobs", "jobs"]),
        Rule::on(
            WRITE,
            &["extensions"],
            &[
                "daemonsets",
                "deployments",
                "deployments/rollback",
                "deployments/scale",
                "ingresses",
                "networkpolicies",
                "replicasets",
                "replicasets/scale",
                "replicationcontrollers/scale",
            ],
        ),
        Rule::on(WRITE, &["policy"], &["poddisruptionbudgets"]),
        Rule::on(
            WRITE,
            &["networking.k8s.io"],
            &["ingresses", "networkpolicies"],
        ),
        Rule::on(READ_WRITE, &["coordination.k8s.io"], &["leases"]),
    ]
}

/// What `admin` adds to `edit`: Roles and RoleBindings in its namespaces.
pub(crate) fn aggregate_to_admin() -> Vec<Rule> {
    vec![
        Rule::on(
            &["create"],
            &["authorization.k8s.io"],
            &["localsubjectaccessreviews"],
        ),
        Rule::on(
            READ_WRITE,
            &["rbac.authorization.k8s.io"],
            &["rolebindings", "roles"],
        ),
    ]
}

/// `cluster-admin`: everything.
pub(crate) fn cluster_admin() -> Vec<Rule> {
    vec![
        Rule::on(&["*"], &["*"], &["*"]),
        Rule::on_urls(&["*"], &["*"]),
    ]
}

/// The rules of `view`, `edit` and `admin` once aggregated, as a fresh cluster has them.
pub(crate) fn view() -> Vec<Rule> {
    aggregate_to_view()
}

pub(crate) fn edit() -> Vec<Rule> {
    [aggregate_to_edit(), view()].concat()
}

pub(crate) fn admin() -> Vec<Rule> {
    [aggregate_to_admin(), edit()].concat()
}

fn metadata(name: &str, labels: &[(&str, &str)]) -> Value {
    let mut all = json!({"kubernetes.io/bootstrapping": "rbac-defaults"});
    for (key, value) in labels {
        all[*key] = json!(value);
    }
    json!({
        "name": name,
        "labels": all,
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
}

fn role(name: &str, labels: &[(&str, &str)], rules: &[Rule]) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata(name, labels),
        "rules": rules.iter().map(Rule::to_json).collect::<Vec<_>>(),
    })
}

/// A ClusterRole whose rules the aggregation controller gathers from those labelled `label`.
fn aggregated(name: &str, labels: &[(&str, &str)], label: &str) -> Value {
    let mut object = role(name, labels, &[]);
    object["aggregationRule"] = json!({"clusterRoleSelectors": [{"matchLabels": {label: "true"}}]});
    object
}

/// The default ClusterRoles.
pub(crate) fn cluster_roles() -> Vec<Value> {
    vec![
        role("cluster-admin", &[], &cluster_admin()),
        aggregated("admin", &[], AGGREGATE_TO_ADMIN),
        aggregated("edit", &[(AGGREGATE_TO_ADMIN, "true")], AGGREGATE_TO_EDIT),
        aggregated("view", &[(AGGREGATE_TO_EDIT, "true")], AGGREGATE_TO_VIEW),
        role(
            "system:aggregate-to-admin",
            &[(AGGREGATE_TO_ADMIN, "true")],
            &aggregate_to_admin(),
        ),
        role(
            "system:aggregate-to-edit",
            &[(AGGREGATE_TO_EDIT, "true")],
            &aggregate_to_edit(),
        ),
        role(
            "system:aggregate-to-view",
            &[(AGGREGATE_TO_VIEW, "true")],
            &aggregate_to_view(),
        ),
        role(
            "system:basic-user",
            &[],
            &[
                Rule::on(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                Rule::on(
                    &["create"],
                    &["authentication.k8s.io"],
                    &["selfsubjectreviews"],
                ),
            ],
        ),
        role(
            "system:discovery",
            &[],
            &[Rule::on_urls(&["get"], DISCOVERY)],
        ),
        role(
            "system:public-info-viewer",
            &[],
            &[Rule::on_urls(&["get"], PUBLIC_INFO)],
        ),
    ]
}

fn binding(role: &str, groups: &[&str]) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata(role, &[]),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": groups
            .iter()
            .map(|g| json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}))
            .collect::<Vec<_>>(),
    })
}

/// The default ClusterRoleBindings.
pub(crate) fn cluster_role_bindings() -> Vec<Value> {
    vec![
        binding("cluster-admin", &["system:masters"]),
        binding("system:basic-user", &["system:authenticated"]),
        binding("system:discovery", &["system:authenticated"]),
        binding(
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ]
}

/// Puts the default ClusterRoles and ClusterRoleBindings into a new cluster.
pub(crate) fn seed(state: &mut KubeState) {
    let objects = cluster_roles()
        .into_iter()
        .map(|o| ("ClusterRole", o))
        .chain(
            cluster_role_bindings()
                .into_iter()
                .map(|o| ("ClusterRoleBinding", o)),
        );
    for (kind, object) in objects {
        let resource = state
            .resource("rbac.authorization.k8s.io/v1", kind)
            .unwrap_or_else(|| panic!("{kind} is a built-in kind"));
        if let Err(error) = api::create(state, &resource, "", object, false) {
            // The objects above are fixed: an error here is a bug in this file.
            panic!("bootstrap RBAC object rejected: {}", error.message);
        }
    }
}
