//! A container's environment: variable names as 1.35 checks them (relaxed names, GA), where a
//! value comes from (`validateEnvVarValueFrom`), and `envFrom` sources.

use serde_json::Value;

use super::errors::Errors;
use super::names::{config_key, dns_subdomain, qualified_name};

/// The pod fields a variable may take its value from (`validEnvDownwardAPIFieldPathExpressions`).
const FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// The field labels v1 converts (`ConvertDownwardAPIFieldLabel`); others fail to convert.
const CONVERTIBLE: [&str; 14] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.serviceAccountName",
    "spec.schedulerName",
    "status.phase",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// `IsRelaxedEnvVarName` (RelaxedEnvironmentVariableValidation, locked on since 1.34).
fn relaxed_name(name: &str, at: String, value: &Value, errors: &mut Errors) {
    if name.chars().any(|c| !(' '..='~').contains(&c) || c == '=') {
        errors.invalid(
            at,
            value,
            "a valid environment variable name must consist only of printable ASCII characters other than '='",
        );
    }
}

/// `metadata.labels['key']` as its path and key.
fn subscripted(path: &str) -> Option<(&str, &str)> {
    let (field, rest) = path.split_once("['")?;
    Some((field, rest.strip_suffix("']")?))
}

fn field_ref(selector: &Value, at: &str, errors: &mut Errors) {
    if selector["apiVersion"].as_str().is_none_or(str::is_empty) {
        return errors.required(format!("{at}.apiVersion"));
    }
    let Some(path) = selector["fieldPath"].as_str().filter(|p| !p.is_empty()) else {
        return errors.required(format!("{at}.fieldPath"));
    };
    let field = subscripted(path).map_or(path, |(field, _)| field);
    let field = if field == "spec.host" {
        "spec.nodeName"
    } else {
        field
    };
    if !CONVERTIBLE.contains(&field) {
        return errors.invalid(
            format!("{at}.fieldPath"),
            &selector["fieldPath"],
            &format!("error converting fieldPath: field label not supported: {field}"),
        );
    }
    match subscripted(path) {
        Some(("metadata.annotations", key)) => {
            for message in qualified_name(&key.to_lowercase()) {
                errors.invalid(at, &Value::String(key.to_lowercase()), &message);
            }
        }
        Some(("metadata.labels", key)) => {
            for message in qualified_name(key) {
                errors.invalid(at, &Value::String(key.to_string()), &message);
            }
        }
        Some((field, _)) => errors.invalid(
            at,
            &Value::String(field.to_string()),
            "does not support subscript",
        ),
        None if !FIELD_PATHS.contains(&field) => {
            let mut supported = FIELD_PATHS;
            supported.sort_unstable();
            errors.not_supported(format!("{at}.fieldPath"), field, &supported);
        }
        None => {}
    }
}

/// `validateConfigMapKeySelector` / `validateSecretKeySelector`.
fn key_selector(selector: &Value, at: &str, errors: &mut Errors) {
    let name = selector["name"].as_str().unwrap_or_default();
    for message in dns_subdomain(name) {
        errors.invalid(format!("{at}.name"), &Value::String(name.into()), &message);
    }
    match selector["key"].as_str().filter(|k| !k.is_empty()) {
        None => errors.required(format!("{at}.key")),
        Some(key) => {
            for message in config_key(key) {
                errors.invalid(format!("{at}.key"), &selector["key"], &message);
            }
        }
    }
}

fn value_from(var: &Value, at: &str, errors: &mut Errors) {
    let from = &var["valueFrom"];
    if from.is_null() {
        return;
    }
    let mut sources = 0;
    for source in [
        "fieldRef",
        "resourceFieldRef",
        "configMapKeyRef",
        "secretKeyRef",
    ] {
        let selector = &from[source];
        if selector.is_null() {
            continue;
        }
        sources += 1;
        let path = format!("{at}.{source}");
        match source {
            "fieldRef" => field_ref(selector, &path, errors),
            "configMapKeyRef" | "secretKeyRef" => key_selector(selector, &path, errors),
            _ => {}
        }
    }
    let empty = Value::String(String::new());
    if sources == 0 {
        errors.invalid(
            at,
            &empty,
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        );
    } else if var["value"].as_str().is_some_and(|v| !v.is_empty()) {
        errors.invalid(at, &empty, "may not be specified when `value` is not empty");
    } else if sources > 1 {
        errors.invalid(
            at,
            &empty,
            "may not have more than one field specified at a time",
        );
    }
}

pub(crate) fn env(container: &Value, path: &str, errors: &mut Errors) {
    for (i, var) in container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{path}.env[{i}]");
        match var["name"].as_str().filter(|n| !n.is_empty()) {
            None => errors.required(format!("{at}.name")),
            Some(name) => relaxed_name(name, format!("{at}.name"), &var["name"], errors),
        }
        value_from(var, &format!("{at}.valueFrom"), errors);
    }
    let list = format!("{path}.envFrom");
    for (i, source) in container["envFrom"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{list}[{i}]");
        if let Some(prefix) = source["prefix"].as_str().filter(|p| !p.is_empty()) {
            relaxed_name(prefix, format!("{at}.prefix"), &source["prefix"], errors);
        }
        let mut sources = 0;
        for kind in ["configMapRef", "secretRef"] {
            if source[kind].is_null() {
                continue;
            }
            sources += 1;
            let name_at = format!("{at}.{kind}.name");
            match source[kind]["name"].as_str().filter(|n| !n.is_empty()) {
                None => errors.required(name_at),
                Some(name) => {
                    // A prefix name: a trailing '-' is allowed (`NameIsDNSSubdomain(name, true)`).
                    let checked = name
                        .strip_suffix('-')
                        .map_or(name.to_string(), |n| format!("{n}a"));
                    for message in dns_subdomain(&checked) {
                        errors.invalid(name_at.clone(), &source[kind]["name"], &message);
                    }
                }
            }
        }
        let empty = Value::String(String::new());
        if sources == 0 {
            errors.invalid(
                &list,
                &empty,
                "must specify one of: `configMapRef` or `secretRef`",
            );
        } else if sources > 1 {
            errors.invalid(
                &list,
                &empty,
                "may not have more than one field specified at a time",
            );
        }
    }
}
