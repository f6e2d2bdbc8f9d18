//! Security contexts and the pod's OS, as 1.35 checks them: `ValidateSecurityContext`'s
//! privilege rules, `validateOS`, and the fields a Linux (`validateLinux`) or Windows
//! (`validateWindows`) pod may not set.

use serde_json::Value;

use super::errors::Errors;

/// `sets.List(validOS)`: sorted.
const OS_NAMES: [&str; 2] = ["linux", "windows"];
const NOT_FOR_WINDOWS: &str = "cannot be set for a windows pod";

/// The pod security context's fields a Windows pod may not set, and where upstream reports
/// them (some on the spec, not under `securityContext`).
const WINDOWS_POD_FIELDS: [(&str, &str); 15] = [
    ("appArmorProfile", "securityContext.appArmorProfile"),
    ("seLinuxOptions", "securityContext.seLinuxOptions"),
    ("hostUsers", "hostUsers"),
    ("hostPID", "hostPID"),
    ("hostIPC", "hostIPC"),
    ("seccompProfile", "securityContext.seccompProfile"),
    ("fsGroup", "securityContext.fsGroup"),
    ("fsGroupChangePolicy", "securityContext.fsGroupChangePolicy"),
    ("sysctls", "securityContext.sysctls"),
    ("shareProcessNamespace", "shareProcessNamespace"),
    ("runAsUser", "securityContext.runAsUser"),
    ("runAsGroup", "securityContext.runAsGroup"),
    ("supplementalGroups", "securityContext.supplementalGroups"),
    (
        "supplementalGroupsPolicy",
        "securityContext.supplementalGroupsPolicy",
    ),
    ("seLinuxChangePolicy", "securityContext.seLinuxChangePolicy"),
];

/// The container security context's fields a Windows pod may not set.
const WINDOWS_CONTAINER_FIELDS: [&str; 10] = [
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "capabilities",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
    "procMount",
    "runAsUser",
    "runAsGroup",
];

/// `IsValidUserID` and `IsValidGroupID`: 0 to 2^31 - 1.
fn id_in_range(value: &Value, at: &str, errors: &mut Errors) {
    if value
        .as_i64()
        .is_some_and(|id| !(0..=i64::from(i32::MAX)).contains(&id))
    {
        errors.invalid(at, value, "must be between 0 and 2147483647, inclusive");
    }
}

/// `validatePodSpecSecurityContext`'s ids, in its order: fsGroup, runAsUser, runAsGroup, each
/// supplemental group.
pub(crate) fn pod_security_ids(spec: &Value, path: &str, errors: &mut Errors) {
    let context = &spec["securityContext"];
    let at = format!("{path}.securityContext");
    for field in ["fsGroup", "runAsUser", "runAsGroup"] {
        id_in_range(&context[field], &format!("{at}.{field}"), errors);
    }
    let groups = context["supplementalGroups"].as_array();
    for (i, group) in groups.into_iter().flatten().enumerate() {
        id_in_range(group, &format!("{at}.supplementalGroups[{i}]"), errors);
    }
}

/// `ValidateSecurityContext`: each id in range, then no privileged container that may not escalate, nor one adding
/// CAP_SYS_ADMIN. The server prints the whole `core.SecurityContext` (pointers as addresses)
/// as the bad value; the twin names the type.
pub(crate) fn container_security(container: &Value, path: &str, errors: &mut Errors) {
    let context = &container["securityContext"];
    let at = format!("{path}.securityContext");
    id_in_range(&context["runAsUser"], &format!("{at}.runAsUser"), errors);
    id_in_range(&context["runAsGroup"], &format!("{at}.runAsGroup"), errors);
    if context["allowPrivilegeEscalation"] != false {
        return;
    }
    let value = "Invalid value: core.SecurityContext{...}";
    if context["privileged"] == true {
        errors.push(
            at.clone(),
            format!(
                "{value}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true"
            ),
        );
    }
    let adds = context["capabilities"]["add"]
        .as_array()
        .into_iter()
        .flatten();
    for _ in adds.filter(|c| *c == "CAP_SYS_ADMIN") {
        errors.push(
            at.clone(),
            format!("{value}: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"),
        );
    }
}

fn is_set(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Array(list) => !list.is_empty(),
        _ => true,
    }
}

/// `validateOS`, then the OS's own rules when the name is good.
pub(crate) fn pod_os(spec: &Value, path: &str, errors: &mut Errors) {
    if !spec["os"].is_object() {
        return;
    }
    let name = spec["os"]["name"].as_str().unwrap_or_default();
    if name.is_empty() {
        errors.required_because(format!("{path}.os.name"), "cannot be empty");
        return;
    }
    if !OS_NAMES.contains(&name) {
        errors.not_supported(format!("{path}.os"), name, &OS_NAMES);
        return;
    }
    let containers = ["containers", "initContainers", "ephemeralContainers"]
        .into_iter()
        .flat_map(|list| {
            let items = spec[list].as_array().map(Vec::as_slice).unwrap_or_default();
            items.iter().enumerate().map(move |(i, c)| (list, i, c))
        });
    let context = &spec["securityContext"];
    if name == "linux" {
        if is_set(&context["windowsOptions"]) {
            errors.forbidden(
                format!("{path}.securityContext.windowsOptions"),
                "windows options cannot be set for a linux pod",
            );
        }
        for (list, i, container) in containers {
            if is_set(&container["securityContext"]["windowsOptions"]) {
                errors.forbidden(
                    format!("{path}.{list}[{i}].securityContext.windowsOptions"),
                    "windows options cannot be set for a linux pod",
                );
            }
        }
        return;
    }
    for (field, at) in WINDOWS_POD_FIELDS {
        // hostPID and hostIPC live on the spec in v1 (the internal type keeps them in the
        // security context); hostUsers and shareProcessNamespace too.
        let value = match field {
            "hostUsers" | "hostPID" | "hostIPC" | "shareProcessNamespace" => &spec[field],
            _ => &context[field],
        };
        let set = match field {
            "hostPID" | "hostIPC" => *value == true,
            "sysctls" => is_set(value),
            _ => !value.is_null(),
        };
        if set {
            errors.forbidden(format!("{path}.{at}"), NOT_FOR_WINDOWS);
        }
    }
    for (list, i, container) in containers {
        let context = &container["securityContext"];
        for field in WINDOWS_CONTAINER_FIELDS {
            if !context[field].is_null() {
                errors.forbidden(
                    format!("{path}.{list}[{i}].securityContext.{field}"),
                    NOT_FOR_WINDOWS,
                );
            }
        }
    }
}
