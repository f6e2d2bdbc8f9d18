//! `dcgmi diag -r 1|2|3|4 -j`: DCGM's diagnostic as JSON, in both shapes DCGM has printed.
//! DCGM 2.x/3.x: `"DCGM GPU Diagnostic"`, results with `gpu_ids` / `gpu_id` and `info` as one
//! string. DCGM 4.x: `"DCGM Diagnostic"`, results per entity, `info` as an array, warnings
//! with `error_id`, a `test_summary` per test and a `metadata` block with the version.

use serde::Serialize;
use serde_json::Value;

use super::dcgm_errors::{DcgmSeverity, failure_reason};

/// A whole diagnostic run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagReport {
    /// `dcgm3` (`DCGM GPU Diagnostic`, also 2.x) or `dcgm4` (`DCGM Diagnostic`).
    pub format: &'static str,
    /// `metadata.version` (4.x only).
    pub version: Option<String>,
    pub driver: Option<String>,
    pub tests: Vec<DiagTest>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagTest {
    /// `Deployment`, `Integration`, `Hardware`, `Stress`, ...
    pub category: String,
    pub name: String,
    /// The test's summary status (4.x), or else the worst of its results.
    pub status: DiagStatus,
    pub results: Vec<DiagResult>,
}

/// One test's result for one GPU, or for the system (`gpu: None`: Deployment checks in 3.x).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagResult {
    pub gpu: Option<u32>,
    pub status: DiagStatus,
    pub info: Vec<String>,
    pub warnings: Vec<DiagWarning>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagWarning {
    pub message: String,
    pub error_id: Option<u32>,
    /// `DCGM_FR_*` for a known `error_id`.
    pub reason: Option<&'static str>,
    /// DCGM's own severity for that reason: `monitor` or `isolate`.
    pub dcgm_action: Option<&'static str>,
}

/// Ordered from best to worst, so the worst of several is their maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DiagStatus {
    Skip,
    Pass,
    Warn,
    Fail,
}

impl DiagStatus {
    fn parse(text: &str) -> Self {
        match text.trim().to_ascii_lowercase().as_str() {
            "pass" => Self::Pass,
            "warn" | "warning" => Self::Warn,
            "fail" | "failed" | "error" => Self::Fail,
            // `Skip`, `Not Run`, and anything unknown: nothing was proven.
            _ => Self::Skip,
        }
    }
}

impl DiagReport {
    /// The failing (or warning) results, with the test that gave them.
    pub fn problems(&self) -> impl Iterator<Item = (&DiagTest, &DiagResult)> {
        self.tests.iter().flat_map(|test| {
            test.results
                .iter()
                .filter(|r| r.status >= DiagStatus::Warn)
                .map(move |r| (test, r))
        })
    }

    /// The worst status of any test.
    pub fn status(&self) -> DiagStatus {
        self.tests
            .iter()
            .map(|t| t.status)
            .max()
            .unwrap_or(DiagStatus::Skip)
    }
}

/// Why a document is not a `dcgmi diag -j` report.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DiagError {
    #[error("dcgmi diag output is not JSON ({0}); run it with -j")]
    NotJson(String),
    #[error(
        "expected a `DCGM Diagnostic` or `DCGM GPU Diagnostic` object with test_categories (dcgmi diag -j), found keys {0:?}"
    )]
    Shape(Vec<String>),
}

/// Reads `dcgmi diag -j` output (either shape).
pub fn parse_diag_json(text: &str) -> Result<DiagReport, DiagError> {
    let root: Value =
        serde_json::from_str(text.trim()).map_err(|e| DiagError::NotJson(e.to_string()))?;
    let (format, body) = if let Some(body) = root.get("DCGM Diagnostic") {
        ("dcgm4", body)
    } else if let Some(body) = root.get("DCGM GPU Diagnostic") {
        ("dcgm3", body)
    } else {
        let keys = root
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        return Err(DiagError::Shape(keys));
    };
    let categories = body["test_categories"]
        .as_array()
        .ok_or_else(|| DiagError::Shape(vec!["test_categories".into()]))?;
    let mut tests = Vec::new();
    for category in categories {
        let category_name = text_of(&category["category"]);
        for test in category["tests"].as_array().into_iter().flatten() {
            tests.push(read_test(&category_name, test));
        }
    }
    let metadata = &root["metadata"];
    Ok(DiagReport {
        format,
        version: metadata["version"].as_str().map(str::to_string),
        driver: metadata["Driver Version Detected"]
            .as_str()
            .or_else(|| body["Driver Version Detected"].as_str())
            .map(str::to_string),
        tests,
    })
}

fn read_test(category: &str, test: &Value) -> DiagTest {
    let mut results = Vec::new();
    for result in test["results"].as_array().into_iter().flatten() {
        let status = DiagStatus::parse(&text_of(&result["status"]));
        let info = strings(&result["info"]);
        let warnings = warnings(&result["warnings"], &result["warning"]);
        // 3.x lists the GPUs a result is about as "0" or "0,1"; 4.x has one entity each.
        let gpus = gpu_ids(result);
        if gpus.is_empty() {
            results.push(DiagResult {
                gpu: None,
                status,
                info,
                warnings,
            });
        } else {
            for gpu in gpus {
                results.push(DiagResult {
                    gpu: Some(gpu),
                    status,
                    info: info.clone(),
                    warnings: warnings.clone(),
                });
            }
        }
    }
    let summary = test["test_summary"]["status"]
        .as_str()
        .map(DiagStatus::parse);
    let worst = results.iter().map(|r| r.status).max();
    DiagTest {
        category: category.to_string(),
        name: text_of(&test["name"]),
        status: summary.or(worst).unwrap_or(DiagStatus::Skip),
        results,
    }
}

fn gpu_ids(result: &Value) -> Vec<u32> {
    if let Some(group) = result["entity_group"].as_str()
        && group != "GPU"
    {
        return Vec::new();
    }
    if let Some(id) = result["entity_id"].as_u64() {
        return u32::try_from(id).into_iter().collect();
    }
    let ids = match (&result["gpu_ids"], &result["gpu_id"]) {
        (Value::Null, Value::Null) => return Vec::new(),
        (Value::Null, one) => one,
        (many, _) => many,
    };
    match ids {
        Value::Number(n) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .into_iter()
            .collect(),
        Value::String(s) => s
            .split(',')
            .filter_map(|id| id.trim().parse().ok())
            .collect(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i.as_u64().and_then(|n| u32::try_from(n).ok()))
            .collect(),
        _ => Vec::new(),
    }
}

fn warnings(many: &Value, one: &Value) -> Vec<DiagWarning> {
    let read = |w: &Value| -> DiagWarning {
        let (message, error_id) = match w {
            Value::String(s) => (s.clone(), None),
            other => (
                text_of(&other["warning"]),
                other["error_id"]
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok()),
            ),
        };
        let known = error_id.and_then(failure_reason);
        DiagWarning {
            message,
            error_id,
            reason: known.map(|(name, _)| name),
            dcgm_action: known.map(|(_, severity)| match severity {
                DcgmSeverity::Monitor => "monitor",
                DcgmSeverity::Isolate => "isolate",
            }),
        }
    };
    match (many, one) {
        (Value::Array(items), _) => items.iter().map(read).collect(),
        (Value::Null, Value::Null) => Vec::new(),
        (Value::Null, w) | (w, _) => vec![read(w)],
    }
}

fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items.iter().map(text_of).collect(),
        other => vec![text_of(other)],
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
#[path = "dcgm_diag_tests.rs"]
mod tests;
