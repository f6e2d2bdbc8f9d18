//! Which kinds of request the twin's Kubernetes API has served (`GET /twin/audit`): each
//! request's RBAC attributes with how often they came, so a test can hold a Role to exactly
//! what a runbook asked for.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::{Value, json};

use super::request_info::RequestAttributes;

#[derive(Default)]
pub struct RequestAudit {
    seen: Mutex<BTreeMap<RequestAttributes, u64>>,
}

impl RequestAudit {
    pub fn record(&self, attributes: RequestAttributes) {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *seen.entry(attributes).or_default() += 1;
    }

    /// Every kind of request so far, in a stable order, with its count.
    pub fn to_json(&self) -> Value {
        let seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Value::Array(
            seen.iter()
                .map(|(attributes, count)| {
                    let mut entry = serde_json::to_value(attributes).unwrap_or(Value::Null);
                    entry["count"] = json!(count);
                    entry
                })
                .collect(),
        )
    }

    /// Forgets what was served so far (`POST /twin/audit?reset`): a test audits one run.
    pub fn clear(&self) {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}
