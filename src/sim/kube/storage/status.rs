//! Errors as the apiserver sends them: `Status` objects with the real reason and code.

use serde_json::{Value, json};

use super::resources::ResourceType;

#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    pub(crate) code: u16,
    pub(crate) reason: &'static str,
    pub(crate) message: String,
    pub(crate) details: Value,
}

/// A cause's `reason` by its body's first words (apimachinery's `field.ErrorType` values).
fn cause_reason(message: &str) -> &'static str {
    [
        ("Required value", "FieldValueRequired"),
        ("Unsupported value", "FieldValueNotSupported"),
        ("Forbidden", "FieldValueForbidden"),
        ("Too long", "FieldValueTooLong"),
        ("Too many", "FieldValueTooMany"),
        ("Duplicate value", "FieldValueDuplicate"),
        ("Not found", "FieldValueNotFound"),
    ]
    .iter()
    .find(|(prefix, _)| message.starts_with(prefix))
    .map_or("FieldValueInvalid", |(_, reason)| reason)
}

impl ApiError {
    pub(crate) fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: Value::Null,
        }
    }

    pub(crate) fn not_found(resource: &ResourceType, name: &str) -> Self {
        let mut error = Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", resource.qualified_plural()),
        );
        error.details = json!({"name": name, "group": resource.group, "kind": resource.plural});
        error
    }

    pub(crate) fn already_exists(resource: &ResourceType, name: &str) -> Self {
        let mut error = Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", resource.qualified_plural()),
        );
        error.details = json!({"name": name, "group": resource.group, "kind": resource.plural});
        error
    }

    pub(crate) fn conflict(resource: &ResourceType, name: &str) -> Self {
        Self::conflict_because(
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 Conflict with the reason the server gives (`errors.NewConflict`).
    pub(crate) fn conflict_because(resource: &ResourceType, name: &str, why: &str) -> Self {
        let mut error = Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                resource.qualified_plural()
            ),
        );
        error.details = json!({"name": name, "group": resource.group, "kind": resource.plural});
        error
    }

    /// 422 Invalid, as `errors.NewInvalid` words it: one cause inline, several in brackets,
    /// each cause's reason from its body (`Required value`, `Unsupported value`, ...).
    pub(crate) fn invalid(kind: &str, name: &str, causes: &[(&str, String)]) -> Self {
        let detail: Vec<String> = causes
            .iter()
            .map(|(field, msg)| format!("{field}: {msg}"))
            .collect();
        let detail = match detail.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let mut error = Self::new(
            422,
            "Invalid",
            format!("{kind} \"{name}\" is invalid: {detail}"),
        );
        let base_kind = kind.split('.').next().unwrap_or(kind);
        error.details = json!({
            "name": name,
            "group": kind.split_once('.').map(|(_, g)| g).unwrap_or_default(),
            "kind": base_kind,
            "causes": causes.iter().map(|(field, msg)| json!({"reason": cause_reason(msg), "message": msg, "field": field})).collect::<Vec<_>>(),
        });
        error
    }

    /// 500 as the API server wraps an error it did not expect to meet.
    pub(crate) fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub(crate) fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub(crate) fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if !self.details.is_null() {
            status["details"] = self.details.clone();
        }
        // `reason` is omitempty: an error the server did not classify has none.
        if self.reason.is_empty()
            && let Some(map) = status.as_object_mut()
        {
            map.remove("reason");
        }
        status
    }
}
