//! Reading the clients' JSON records into the file's plain fields: a missing or non-string
//! field reads as empty, as the file keeps it.

use serde_json::Value;

pub(super) fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

pub(super) fn texts(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// A count (a missing or negative one reads as 0).
pub(super) fn count(value: &Value) -> u32 {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0)
}
