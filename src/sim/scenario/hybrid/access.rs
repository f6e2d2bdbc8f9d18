//! Who may do what on the hybrid lab: the workloads' ServiceAccounts (Pod Identity), and the
//! RBAC a review must find (seed 004: `nodes/proxy` is not read-only; `pods/log`, `pods/exec`,
//! `pods/attach`, `pods/portforward` are reviewed with workload-creation rights).

use serde_json::json;

use super::account::ASSOCIATIONS;
use super::objects::{namespace, put, service_account};
use crate::sim::kube::storage::state::KubeState;

pub(super) fn service_accounts(state: &mut KubeState) {
    namespace(state, "ml-pipeline");
    for (namespace, account, _) in ASSOCIATIONS {
        service_account(state, namespace, account);
    }
    service_account(state, "monitoring", "log-shipper");
}

pub(super) fn rbac(state: &mut KubeState) {
    let objects = [
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "hybrid-node-debugger"},
            "rules": [
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]},
                {"apiGroups": [""], "resources": ["nodes/proxy"], "verbs": ["get"]},
            ],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "hybrid-node-debugger"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "hybrid-node-debugger"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "hybrid-ops"}],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "log-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list", "watch"]}],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "log-shipper"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "log-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "log-shipper", "namespace": "monitoring"}],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "pipeline-operator", "namespace": "ml-pipeline"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]},
                {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list", "create", "update", "patch"]},
            ],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "pipeline-operator", "namespace": "ml-pipeline"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pipeline-operator"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "ml-lead@example.com"}],
        }),
    ];
    for object in objects {
        put(state, object);
    }
}
