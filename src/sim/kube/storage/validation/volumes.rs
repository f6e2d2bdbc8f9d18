//! A pod's volumes and its containers' mounts, as 1.35's `ValidateVolumes` and
//! `ValidateVolumeMounts` check them: names, file modes, sub-paths, mount points and
//! propagation.

use std::collections::HashSet;

use serde_json::Value;

use super::errors::Errors;

/// `fileModeErrorMsg`.
const FILE_MODE: &str = "must be a number between 0 and 0777 (octal), both inclusive";
/// `sets.List` of the supported propagation modes: sorted.
const PROPAGATIONS: [&str; 3] = ["Bidirectional", "HostToContainer", "None"];

fn items(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// `validateVolumeSource`'s sources, in the order it looks at them (v1's field names).
const SOURCES: [&str; 30] = [
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
];

/// `validateVolumeSource`'s count: every source after the first is refused where it is.
fn one_source(volume: &Value, at: &str, errors: &mut Errors) {
    let given = SOURCES.iter().filter(|s| !volume[**s].is_null());
    for source in given.skip(1) {
        errors.forbidden(
            format!("{at}.{source}"),
            "may not specify more than 1 volume type",
        );
    }
}

/// `ValidateVolumes`: each volume's source (one only, its file modes), then its name
/// (required, none twice), in upstream's order.
pub(crate) fn volumes<'a>(spec: &'a Value, path: &str, errors: &mut Errors) -> HashSet<&'a str> {
    let mut names: HashSet<&str> = HashSet::new();
    for (i, volume) in items(&spec["volumes"]).iter().enumerate() {
        let at = format!("{path}.volumes[{i}]");
        one_source(volume, &at, errors);
        file_modes(volume, &at, errors);
        let name = volume["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            errors.required(format!("{at}.name"));
        } else if !names.insert(name) {
            errors.duplicate(format!("{at}.name"), &volume["name"]);
        }
    }
    names
}

/// A mode, when set, from 0 to 0777.
fn mode(value: &Value, path: String, errors: &mut Errors) {
    if let Some(n) = value.as_i64()
        && !(0..=0o777).contains(&n)
    {
        errors.invalid(path, value, FILE_MODE);
    }
}

/// `validateSecretVolumeSource`, `validateConfigMapVolumeSource`,
/// `validateDownwardAPIVolumeSource`, `validateProjectedVolumeSource`: the default mode and
/// each item's mode (`validateKeyToPath`, `validateDownwardAPIVolumeFile`).
fn file_modes(volume: &Value, at: &str, errors: &mut Errors) {
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        let source_value = &volume[source];
        if !source_value.is_object() {
            continue;
        }
        let source_at = format!("{at}.{source}");
        mode(
            &source_value["defaultMode"],
            format!("{source_at}.defaultMode"),
            errors,
        );
        for (j, item) in items(&source_value["items"]).iter().enumerate() {
            mode(
                &item["mode"],
                format!("{source_at}.items[{j}].mode"),
                errors,
            );
        }
    }
}

/// `validateLocalDescendingPath`: relative, and no `..` part (`validatePathNoBacksteps`).
fn descending_path(target: &str, path: &str, errors: &mut Errors) {
    let shown = Value::String(target.to_string());
    if target.starts_with('/') {
        errors.invalid(path, &shown, "must be a relative path");
    }
    if target.split('/').any(|part| part == "..") {
        errors.invalid(path, &shown, "must not contain '..'");
    }
}

/// `ValidateVolumeMounts` for one container: each mount names a volume and a unique mount
/// path; its sub-path descends (upstream names the sub-path and propagation fields on the
/// list, without the mount's index); Bidirectional propagation only when privileged
/// (`validateMountPropagation`).
pub(crate) fn mounts(container: &Value, path: &str, volumes: &HashSet<&str>, errors: &mut Errors) {
    let list = format!("{path}.volumeMounts");
    let mut mount_points: HashSet<&str> = HashSet::new();
    let privileged = container["securityContext"]["privileged"] == true;
    for (i, mount) in items(&container["volumeMounts"]).iter().enumerate() {
        let at = format!("{list}[{i}]");
        let name = mount["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            errors.required(format!("{at}.name"));
        } else if !volumes.contains(name) {
            errors.not_found(format!("{at}.name"), &mount["name"]);
        }
        let mount_path = mount["mountPath"].as_str().unwrap_or_default();
        if mount_path.is_empty() {
            errors.required(format!("{at}.mountPath"));
        }
        if !mount_points.insert(mount_path) {
            errors.invalid(
                format!("{at}.mountPath"),
                &mount["mountPath"],
                "must be unique",
            );
        }
        let sub_path = mount["subPath"].as_str().unwrap_or_default();
        if !sub_path.is_empty() {
            descending_path(sub_path, &format!("{list}.subPath"), errors);
        }
        if let Some(expression) = mount["subPathExpr"].as_str().filter(|e| !e.is_empty()) {
            if !sub_path.is_empty() {
                errors.invalid(
                    format!("{at}.subPathExpr"),
                    &mount["subPathExpr"],
                    "subPathExpr and subPath are mutually exclusive",
                );
            }
            descending_path(expression, &format!("{list}.subPathExpr"), errors);
        }
        if let Some(propagation) = mount["mountPropagation"].as_str() {
            let propagation_at = format!("{list}.mountPropagation");
            if !PROPAGATIONS.contains(&propagation) {
                errors.not_supported(propagation_at.clone(), propagation, &PROPAGATIONS);
            }
            if propagation == "Bidirectional" && !privileged {
                errors.forbidden(
                    propagation_at,
                    "Bidirectional mount propagation is available only to privileged containers",
                );
            }
        }
    }
}
