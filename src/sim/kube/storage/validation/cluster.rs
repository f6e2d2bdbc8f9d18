//! The cluster's own objects and configuration: nodes' taints, ConfigMaps' and Secrets'
//! keys and sizes.

use serde_json::Value;

use super::errors::Errors;
use super::names::{config_key, qualified_name};
use super::tolerations::TAINT_EFFECTS;

/// What a ConfigMap or Secret may hold in all (etcd's object limit as the API server checks it).
const DATA_LIMIT: usize = 1024 * 1024;

pub(crate) fn node(object: &Value, errors: &mut Errors) {
    for (i, taint) in object["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("spec.taints[{i}]");
        match taint["key"].as_str().filter(|k| !k.is_empty()) {
            None => errors.required(format!("{at}.key")),
            Some(key) => {
                for message in qualified_name(key) {
                    errors.invalid(format!("{at}.key"), &taint["key"], &message);
                }
            }
        }
        if taint["effect"].as_str().is_none_or(str::is_empty) {
            errors.required(format!("{at}.effect"));
        } else {
            errors.one_of(format!("{at}.effect"), &taint["effect"], &TAINT_EFFECTS);
        }
    }
}

/// The bytes a base64 value decodes to (the API server counts decoded bytes).
fn decoded_len(text: &str) -> usize {
    let padding = text.bytes().rev().take_while(|b| *b == b'=').count();
    (text.len() / 4 * 3 + [0, 0, 1, 2][text.len() % 4]).saturating_sub(padding)
}

fn keys(object: &Value, part: &str, errors: &mut Errors) {
    for (key, _) in object[part].as_object().into_iter().flatten() {
        for message in config_key(key) {
            errors.invalid(
                format!("{part}[{key}]"),
                &Value::String(key.clone()),
                &message,
            );
        }
    }
}

fn values_len(object: &Value, part: &str, base64: bool) -> usize {
    object[part]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(_, v)| v.as_str())
        .map(|v| if base64 { decoded_len(v) } else { v.len() })
        .sum()
}

/// `ValidateConfigMap`: keys, a key in both bags, and the whole (values only) under 1 MiB,
/// refused on the object itself (`[]`).
pub(crate) fn config_map(object: &Value, errors: &mut Errors) {
    keys(object, "data", errors);
    for (key, _) in object["data"].as_object().into_iter().flatten() {
        if !object["binaryData"][key.as_str()].is_null() {
            errors.invalid(
                format!("data[{key}]"),
                &Value::String(key.clone()),
                "duplicate of key present in binaryData",
            );
        }
    }
    keys(object, "binaryData", errors);
    if values_len(object, "data", false) + values_len(object, "binaryData", true) > DATA_LIMIT {
        errors.push(
            "[]",
            format!("Too long: may not be more than {DATA_LIMIT} bytes"),
        );
    }
}

/// `ValidateSecret`: keys and the decoded data (`stringData` is merged into it first).
pub(crate) fn secret(object: &Value, errors: &mut Errors) {
    keys(object, "data", errors);
    keys(object, "stringData", errors);
    if values_len(object, "data", true) + values_len(object, "stringData", false) > DATA_LIMIT {
        errors.push(
            "data",
            format!("Too long: may not be more than {DATA_LIMIT} bytes"),
        );
    }
    let has = |key: &str| !object["data"][key].is_null() || !object["stringData"][key].is_null();
    match object["type"].as_str().unwrap_or_default() {
        "kubernetes.io/service-account-token"
            if object["metadata"]["annotations"]["kubernetes.io/service-account.name"]
                .is_null() =>
        {
            errors.required("metadata.annotations[kubernetes.io/service-account.name]");
        }
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            errors.required("data[username]");
            errors.required("data[password]");
        }
        "kubernetes.io/ssh-auth" if !has("ssh-privatekey") => {
            errors.required("data[ssh-privatekey]")
        }
        "kubernetes.io/tls" => {
            for key in ["tls.crt", "tls.key"] {
                if !has(key) {
                    errors.required(format!("data[{key}]"));
                }
            }
        }
        _ => {}
    }
}
