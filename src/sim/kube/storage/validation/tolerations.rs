//! A pod's tolerations, as `ValidateTolerations` checks them.

use serde_json::Value;

use super::errors::Errors;
use super::names::{label_value, qualified_name};

/// The effects a taint or toleration may name, in upstream's order.
pub(crate) const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

pub(crate) fn tolerations(list: &Value, path: &str, errors: &mut Errors) {
    for (i, toleration) in list.as_array().into_iter().flatten().enumerate() {
        let at = format!("{path}[{i}]");
        let key = toleration["key"].as_str().unwrap_or_default();
        let operator = toleration["operator"].as_str().unwrap_or_default();
        let effect = toleration["effect"].as_str().unwrap_or_default();
        let value = toleration["value"].as_str().unwrap_or_default();
        for message in qualified_name(key).into_iter().filter(|_| !key.is_empty()) {
            errors.invalid(format!("{at}.key"), &toleration["key"], &message);
        }
        let shown_operator = Value::String(operator.to_string());
        if key.is_empty() && operator != "Exists" {
            errors.invalid(
                format!("{at}.operator"),
                &shown_operator,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            );
        }
        if !toleration["tolerationSeconds"].is_null() && effect != "NoExecute" {
            errors.invalid(
                format!("{at}.effect"),
                &Value::String(effect.to_string()),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            );
        }
        let shown_value = Value::String(value.to_string());
        match operator {
            "Equal" | "" => {
                let messages = label_value(value);
                if !messages.is_empty() {
                    errors.invalid(format!("{at}.operator"), &shown_value, &messages.join(";"));
                }
            }
            "Exists" if !value.is_empty() => errors.invalid(
                format!("{at}.operator"),
                &shown_value,
                "value must be empty when `operator` is 'Exists'",
            ),
            "Exists" => {}
            other => errors.not_supported(format!("{at}.operator"), other, &["Equal", "Exists"]),
        }
        if !effect.is_empty() {
            errors.one_of(
                format!("{at}.effect"),
                &toleration["effect"],
                &TAINT_EFFECTS,
            );
        }
    }
}
