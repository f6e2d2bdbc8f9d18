//! The cluster's own objects and configuration: nodes' taints, ConfigMaps' and Secrets'
//! keys and sizes.

use serde_json::Value;

use super::errors::Errors;
use super::names::{config_key, qualified_name};
use super::pod::TAINT_EFFECTS;

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

/// ConfigMaps (`data`, `binaryData`) and Secrets (`data`, `stringData`): each key a config
/// key, the whole under 1 MiB.
pub(crate) fn config_data(object: &Value, parts: &[&str], errors: &mut Errors) {
    let mut total = 0;
    for part in parts {
        for (key, value) in object[*part].as_object().into_iter().flatten() {
            for message in config_key(key) {
                errors.invalid(
                    format!("{part}[{key}]"),
                    &Value::String(key.clone()),
                    &message,
                );
            }
            total += key.len() + value.as_str().map_or(0, str::len);
        }
    }
    if total > DATA_LIMIT {
        errors.push(
            parts[0],
            format!("Too long: may not be more than {DATA_LIMIT} bytes"),
        );
    }
}
