//! PersistentVolumeClaims (v1), as 1.35's `ValidatePersistentVolumeClaimSpec` checks them
//! (`pkg/apis/core/validation/validation.go`): access modes (at least one, each known,
//! ReadWriteOncePod alone), a positive storage request, the selector, class name and volume
//! mode. A storage request that does not parse is the decoder's 400, before any of this.

use serde_json::Value;

use super::errors::Errors;
use super::label_selector::label_selector;
use super::names::dns_subdomain;
use super::pod::BadQuantity;
use crate::sim::kube::storage::quantity;

/// `sets.List(supportedAccessModes)` and `sets.List(supportedVolumeModes)`, sorted.
const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];
const STORAGE: &str = "spec.resources[storage]";

/// Every request is a quantity, or the whole body fails to decode.
fn requests_parse(requests: &Value) -> Result<(), BadQuantity> {
    let bad = requests
        .as_object()
        .into_iter()
        .flatten()
        .any(|(_, q)| !q.as_str().is_some_and(quantity::is_valid));
    if bad { Err(BadQuantity) } else { Ok(()) }
}

fn access_modes(modes: &Value, errors: &mut Errors) {
    let modes: Vec<&str> = modes
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m.as_str().unwrap_or_default())
        .collect();
    if modes.is_empty() {
        errors.required_because("spec.accessModes", "at least 1 access mode is required");
    }
    let (mut exclusive, mut other) = (false, false);
    for mode in &modes {
        if !ACCESS_MODES.contains(mode) {
            errors.not_supported("spec.accessModes", mode, &ACCESS_MODES);
        } else if *mode == "ReadWriteOncePod" {
            exclusive = true;
        } else {
            other = true;
        }
    }
    if exclusive && other {
        errors.forbidden(
            "spec.accessModes",
            "may not use ReadWriteOncePod with other access modes",
        );
    }
}

/// `ValidatePersistentVolumeClaimSpec` (data sources are not checked by the twin).
pub(crate) fn claim(object: &Value, errors: &mut Errors) -> Result<(), BadQuantity> {
    let spec = &object["spec"];
    let requests = &spec["resources"]["requests"];
    requests_parse(requests)?;
    access_modes(&spec["accessModes"], errors);
    // Upstream checks the selector between the count of modes and the modes themselves; the
    // twin keeps the modes together, so two such causes may come in the other order.
    if !spec["selector"].is_null() {
        label_selector(&spec["selector"], "spec.selector", errors);
    }
    match requests["storage"].as_str() {
        None => errors.required(STORAGE),
        Some(amount) if quantity::milli(amount) <= 0 => {
            errors.invalid(STORAGE, &requests["storage"], "must be greater than zero");
        }
        Some(_) => {}
    }
    if let Some(class) = spec["storageClassName"].as_str().filter(|c| !c.is_empty()) {
        for message in dns_subdomain(class) {
            errors.invalid("spec.storageClassName", &spec["storageClassName"], &message);
        }
    }
    if let Some(mode) = spec["volumeMode"].as_str()
        && !VOLUME_MODES.contains(&mode)
    {
        errors.not_supported("spec.volumeMode", mode, &VOLUME_MODES);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn causes(spec: Value) -> Vec<String> {
        let mut errors = Errors::default();
        assert!(claim(&json!({ "spec": spec }), &mut errors).is_ok());
        errors
            .0
            .into_iter()
            .map(|(f, m)| format!("{f}: {m}"))
            .collect()
    }

    #[test]
    fn modes_and_size() {
        assert_eq!(
            causes(json!({"storageClassName": "gp3", "volumeMode": "Filesystem"})),
            [
                "spec.accessModes: Required value: at least 1 access mode is required",
                "spec.resources[storage]: Required value"
            ]
        );
        let sized = json!({"requests": {"storage": "1Gi"}});
        assert_eq!(
            causes(
                json!({"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"], "resources": sized})
            ),
            ["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"]
        );
        assert_eq!(
            causes(
                json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0"}}})
            ),
            [r#"spec.resources[storage]: Invalid value: "0": must be greater than zero"#]
        );
        assert!(
            causes(json!({"accessModes": ["ReadWriteOncePod"], "resources": sized})).is_empty()
        );
        let mut errors = Errors::default();
        let bad = json!({"spec": {"resources": {"requests": {"storage": "lots"}}}});
        assert!(claim(&bad, &mut errors).is_err());
    }
}
