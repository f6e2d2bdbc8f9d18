//! The v1 defaults of the kinds beyond workloads and Services, applied before validation as
//! the server's decoder applies them: NetworkPolicies (`networking/v1` `SetDefaults_*`),
//! PriorityClasses (`scheduling/v1`), RBAC bindings (`rbac/v1`), StorageClasses
//! (`storage/v1`) and claims (`core/v1` `SetDefaults_PersistentVolumeClaim*`).

use serde_json::{Value, json};

use super::resources::ResourceType;

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// A pointer field's default: only where nothing was sent (an empty string is kept, as Go
/// keeps a pointer to one).
fn if_absent(object: &mut Value, field: &str, value: Value) {
    if let Some(map) = object.as_object_mut()
        && map.get(field).is_none_or(Value::is_null)
    {
        map.insert(field.to_string(), value);
    }
}

/// A string field's default: where it is missing or empty.
fn if_empty(object: &mut Value, field: &str, value: Value) {
    if let Some(map) = object.as_object_mut()
        && map
            .get(field)
            .is_none_or(|v| v.is_null() || v.as_str() == Some(""))
    {
        map.insert(field.to_string(), value);
    }
}

fn each(list: &mut Value) -> impl Iterator<Item = &mut Value> {
    list.as_array_mut().into_iter().flatten()
}

/// `SetDefaults_NetworkPolicy` and `SetDefaults_NetworkPolicyPort`: every port is TCP unless
/// said; a policy without types is an Ingress policy, and an Egress one too when it has
/// egress rules.
fn network_policy(object: &mut Value) {
    let spec = &mut object["spec"];
    for direction in ["ingress", "egress"] {
        for rule in each(&mut spec[direction]) {
            for port in each(&mut rule["ports"]) {
                if_absent(port, "protocol", json!("TCP"));
            }
        }
    }
    if spec["policyTypes"].as_array().is_none_or(Vec::is_empty) {
        let egress = spec["egress"].as_array().is_some_and(|e| !e.is_empty());
        spec["policyTypes"] = if egress {
            json!(["Ingress", "Egress"])
        } else {
            json!(["Ingress"])
        };
    }
}

/// `SetDefaults_RoleBinding`, `SetDefaults_ClusterRoleBinding` and `SetDefaults_Subject`: the
/// role reference and User and Group subjects are in the RBAC group (a ServiceAccount in none).
fn role_binding(object: &mut Value) {
    if object["roleRef"].is_object() {
        if_empty(&mut object["roleRef"], "apiGroup", json!(RBAC_GROUP));
    }
    for subject in each(&mut object["subjects"]) {
        if matches!(subject["kind"].as_str(), Some("User" | "Group")) {
            if_empty(subject, "apiGroup", json!(RBAC_GROUP));
        }
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec` and `SetDefaults_PersistentVolumeClaim`.
fn claim(object: &mut Value) {
    if object["spec"].is_object() {
        if_absent(&mut object["spec"], "volumeMode", json!("Filesystem"));
    }
    if !object["status"].is_object() {
        object["status"] = json!({});
    }
    if_empty(&mut object["status"], "phase", json!("Pending"));
}

/// The defaults of the kinds named here; others are left as they are.
pub(crate) fn apply(resource: &ResourceType, object: &mut Value) {
    match (resource.group.as_str(), resource.kind.as_str()) {
        ("networking.k8s.io", "NetworkPolicy") => network_policy(object),
        ("scheduling.k8s.io", "PriorityClass") => {
            if_absent(object, "preemptionPolicy", json!("PreemptLowerPriority"));
        }
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
            role_binding(object);
        }
        ("storage.k8s.io", "StorageClass") => {
            if_absent(object, "reclaimPolicy", json!("Delete"));
            if_absent(object, "volumeBindingMode", json!("Immediate"));
        }
        ("", "PersistentVolumeClaim") => claim(object),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaulted(api_version: &str, kind: &str, mut object: Value) -> Value {
        let state = crate::sim::kube::storage::state::KubeState::default();
        let resource = state.resource(api_version, kind).expect("a served kind");
        apply(&resource, &mut object);
        object
    }

    #[test]
    fn each_kind_gets_its_v1_defaults() {
        let policy = defaulted(
            "networking.k8s.io/v1",
            "NetworkPolicy",
            json!({"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}}),
        );
        assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        assert_eq!(policy["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
        let class = defaulted(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            json!({"value": -5}),
        );
        assert_eq!(class["preemptionPolicy"], "PreemptLowerPriority");
        assert!(class.get("globalDefault").is_none());
        let binding = defaulted(
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            json!({"roleRef": {"kind": "Role", "name": "r"},
                   "subjects": [{"kind": "User", "name": "a"}, {"kind": "ServiceAccount", "name": "d"}]}),
        );
        assert_eq!(binding["roleRef"]["apiGroup"], RBAC_GROUP);
        assert_eq!(binding["subjects"][0]["apiGroup"], RBAC_GROUP);
        assert!(binding["subjects"][1].get("apiGroup").is_none());
        let class = defaulted(
            "storage.k8s.io/v1",
            "StorageClass",
            json!({"provisioner": "x"}),
        );
        assert_eq!(
            (&class["reclaimPolicy"], &class["volumeBindingMode"]),
            (&json!("Delete"), &json!("Immediate"))
        );
        let claim = defaulted("v1", "PersistentVolumeClaim", json!({"spec": {}}));
        assert_eq!(
            (&claim["spec"]["volumeMode"], &claim["status"]["phase"]),
            (&json!("Filesystem"), &json!("Pending"))
        );
    }
}
