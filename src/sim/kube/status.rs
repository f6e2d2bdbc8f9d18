//! Errors as the apiserver sends them: `Status` objects with the real reason and code.

use serde_json::{Value, json};

use super::resources::ResourceType;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Value,
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: Value::Null,
        }
    }

    pub fn not_found(resource: &ResourceType, name: &str) -> Self {
        let mut error = Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", resource.qualified_plural()),
        );
        error.details = json!({"name": name, "group": resource.group, "kind": resource.plural});
        error
    }

    pub fn already_exists(resource: &ResourceType, name: &str) -> Self {
        let mut error = Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", resource.qualified_plural()),
        );
        error.details = json!({"name": name, "group": resource.group, "kind": resource.plural});
        error
    }

    pub fn conflict(resource: &ResourceType, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                resource.qualified_plural()
            ),
        )
    }

    pub fn invalid(kind: &str, name: &str, causes: &[(&str, String)]) -> Self {
        let detail: Vec<String> = causes
            .iter()
            .map(|(field, msg)| format!("{field}: {msg}"))
            .collect();
        let mut error = Self::new(
            422,
            "Invalid",
            format!("{kind} \"{name}\" is invalid: {}", detail.join(", ")),
        );
        error.details = json!({
            "name": name,
            "kind": kind,
            "causes": causes.iter().map(|(field, msg)| json!({"reason": "FieldValueInvalid", "message": msg, "field": field})).collect::<Vec<_>>(),
        });
        error
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub fn to_status(&self) -> Value {
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
        status
    }
}
