//! Roles, ClusterRoles and their bindings (rbac.authorization.k8s.io/v1), as 1.35's
//! `pkg/apis/rbac/validation/validation.go` checks them: each rule's verbs, API groups and
//! resources or non-resource URLs (only in a ClusterRole, and never both); a binding's role
//! reference (this group, a kind its scope allows, fixed once made) and its subjects.

use serde_json::Value;

use super::errors::{Errors, quoted};
use super::names::{dns_subdomain, path_segment};

const GROUP: &str = "rbac.authorization.k8s.io";
const SUBJECT_KINDS: [&str; 3] = ["ServiceAccount", "User", "Group"];

fn count(value: &Value) -> usize {
    value.as_array().map_or(0, Vec::len)
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// `validatePolicyRule`: a rule names verbs, and either resources in API groups or (cluster
/// wide only) non-resource URLs.
fn rule(rule: &Value, namespaced: bool, at: &str, errors: &mut Errors) {
    if count(&rule["verbs"]) == 0 {
        errors.required_because(
            format!("{at}.verbs"),
            "verbs must contain at least one value",
        );
    }
    let urls = &rule["nonResourceURLs"];
    if count(urls) > 0 {
        if namespaced {
            errors.invalid(
                format!("{at}.nonResourceURLs"),
                urls,
                "namespaced rules cannot apply to non-resource URLs",
            );
        }
        if ["apiGroups", "resources", "resourceNames"]
            .iter()
            .any(|f| count(&rule[*f]) > 0)
        {
            errors.invalid(
                format!("{at}.nonResourceURLs"),
                urls,
                "rules cannot apply to both regular resources and non-resource URLs",
            );
        }
        return;
    }
    if count(&rule["apiGroups"]) == 0 {
        errors.required_because(
            format!("{at}.apiGroups"),
            "resource rules must supply at least one api group",
        );
    }
    if count(&rule["resources"]) == 0 {
        errors.required_because(
            format!("{at}.resources"),
            "resource rules must supply at least one resource",
        );
    }
    if count(&rule["resourceNames"]) > 0 && count(&rule["resources"]) > 1 {
        errors.required_because(
            format!("{at}.resourceNames"),
            "resource names cannot apply to multiple resources",
        );
    }
}

/// `ValidateRole` and `ValidateClusterRole`.
pub(crate) fn role(object: &Value, namespaced: bool, errors: &mut Errors) {
    for (i, each) in object["rules"].as_array().into_iter().flatten().enumerate() {
        rule(each, namespaced, &format!("rules[{i}]"), errors);
    }
}

/// `validateRoleBindingSubject`.
fn subject(subject: &Value, namespaced: bool, at: &str, errors: &mut Errors) {
    let (name, group) = (&subject["name"], &subject["apiGroup"]);
    if text(name).is_empty() {
        errors.required(format!("{at}.name"));
    }
    match text(&subject["kind"]) {
        "ServiceAccount" => {
            if !text(name).is_empty() {
                for message in dns_subdomain(text(name)) {
                    errors.invalid(format!("{at}.name"), name, &message);
                }
            }
            if !text(group).is_empty() {
                errors.not_supported(format!("{at}.apiGroup"), text(group), &[""]);
            }
            if !namespaced && text(&subject["namespace"]).is_empty() {
                errors.required(format!("{at}.namespace"));
            }
        }
        kind @ ("User" | "Group") => {
            if text(name).is_empty() {
                let detail = format!("{} name cannot be empty", kind.to_lowercase());
                errors.invalid(format!("{at}.name"), name, &detail);
            }
            if text(group) != GROUP {
                errors.not_supported(format!("{at}.apiGroup"), text(group), &[GROUP]);
            }
        }
        other => errors.not_supported(format!("{at}.kind"), other, &SUBJECT_KINDS),
    }
}

/// `ValidateRoleBinding` and `ValidateClusterRoleBinding`: a ClusterRoleBinding refers to a
/// ClusterRole only, and its ServiceAccount subjects name their namespace.
pub(crate) fn role_binding(object: &Value, namespaced: bool, errors: &mut Errors) {
    let reference = &object["roleRef"];
    let group = text(&reference["apiGroup"]);
    if group != GROUP {
        errors.not_supported("roleRef.apiGroup", group, &[GROUP]);
    }
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    let kind = text(&reference["kind"]);
    if !kinds.contains(&kind) {
        errors.not_supported("roleRef.kind", kind, kinds);
    }
    let name = &reference["name"];
    if text(name).is_empty() {
        errors.required("roleRef.name");
    }
    for message in path_segment(text(name)) {
        errors.invalid("roleRef.name", name, &message);
    }
    for (i, each) in object["subjects"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        subject(each, namespaced, &format!("subjects[{i}]"), errors);
    }
}

/// A role reference as `encoding/json` writes `rbac.RoleRef`.
fn role_ref_json(reference: &Value) -> String {
    let fields: Vec<String> = ["apiGroup", "kind", "name"]
        .iter()
        .map(|f| format!("{}:{}", quoted(f), quoted(text(&reference[*f]))))
        .collect();
    format!("{{{}}}", fields.join(","))
}

/// `ValidateRoleBindingUpdate`: the role a binding grants is fixed once made.
pub(crate) fn role_binding_update(old: &Value, new: &Value, errors: &mut Errors) {
    let same = ["apiGroup", "kind", "name"]
        .iter()
        .all(|f| text(&old["roleRef"][*f]) == text(&new["roleRef"][*f]));
    if !same {
        errors.push(
            "roleRef",
            format!(
                "Invalid value: {}: cannot change roleRef",
                role_ref_json(&new["roleRef"])
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn role_causes(rules: Value, namespaced: bool) -> Vec<String> {
        let mut errors = Errors::default();
        role(&json!({ "rules": rules }), namespaced, &mut errors);
        errors
            .0
            .into_iter()
            .map(|(f, m)| format!("{f}: {m}"))
            .collect()
    }

    fn binding_causes(binding: Value, namespaced: bool) -> Vec<String> {
        let mut errors = Errors::default();
        role_binding(&binding, namespaced, &mut errors);
        errors
            .0
            .into_iter()
            .map(|(f, m)| format!("{f}: {m}"))
            .collect()
    }

    #[test]
    fn rules() {
        let cases = [
            (
                json!([{"apiGroups": [""], "resources": ["pods"], "verbs": []}]),
                true,
                "rules[0].verbs: Required value: verbs must contain at least one value",
            ),
            (
                json!([{"resources": ["pods"], "verbs": ["get"]}]),
                true,
                "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
            ),
            (
                json!([{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]),
                true,
                r#"rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs"#,
            ),
            (
                json!([{"nonResourceURLs": ["/metrics"], "resources": ["pods"], "verbs": ["get"]}]),
                false,
                r#"rules[0].nonResourceURLs: Invalid value: ["/metrics"]: rules cannot apply to both regular resources and non-resource URLs"#,
            ),
        ];
        for (rules, namespaced, expected) in cases {
            assert_eq!(role_causes(rules, namespaced), [expected]);
        }
        assert!(
            role_causes(
                json!([{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]),
                false
            )
            .is_empty()
        );
    }

    #[test]
    fn bindings() {
        let with = |kind: &str, subject: Value| json!({"roleRef": {"apiGroup": GROUP, "kind": kind, "name": "r"}, "subjects": [subject]});
        let user = json!({"kind": "User", "name": "alice", "apiGroup": GROUP});
        let cases = [
            (
                with("Foo", user.clone()),
                true,
                r#"roleRef.kind: Unsupported value: "Foo": supported values: "Role", "ClusterRole""#,
            ),
            (
                with("Role", user.clone()),
                false,
                r#"roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole""#,
            ),
            (
                with("Role", json!({"kind": "Robot", "name": "r2d2"})),
                true,
                r#"subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group""#,
            ),
            (
                with(
                    "Role",
                    json!({"kind": "ServiceAccount", "name": "default", "apiGroup": GROUP}),
                ),
                true,
                r#"subjects[0].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: """#,
            ),
            (
                with(
                    "ClusterRole",
                    json!({"kind": "ServiceAccount", "name": "default"}),
                ),
                false,
                "subjects[0].namespace: Required value",
            ),
        ];
        for (binding, namespaced, expected) in cases {
            assert_eq!(binding_causes(binding, namespaced), [expected]);
        }
        assert!(binding_causes(with("ClusterRole", user), false).is_empty());
    }

    #[test]
    fn the_role_reference_is_fixed() {
        let binding =
            |name: &str| json!({"roleRef": {"apiGroup": GROUP, "kind": "Role", "name": name}});
        let mut errors = Errors::default();
        role_binding_update(&binding("one"), &binding("two"), &mut errors);
        assert_eq!(
            errors.0,
            [(
                "roleRef".to_string(),
                r#"Invalid value: {"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"two"}: cannot change roleRef"#.to_string()
            )]
        );
    }
}
