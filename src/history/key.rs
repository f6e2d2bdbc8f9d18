//! A run's key in the history: its runbook file, target and parameters, canonical so that the
//! same drill always finds its own earlier runs.

use std::path::Path;

use serde_json::Value;

use super::store::RunKey;

/// The key of a run of `runbook` (as given; made absolute) against `target` with `parameters`.
pub fn run_key(runbook: &Path, target: &str, parameters: &Value) -> RunKey {
    RunKey {
        runbook_path: absolute(runbook),
        target: target.to_string(),
        parameters: canonical(parameters).to_string(),
    }
}

/// The runbook's absolute path (symlinks resolved when it exists), as the history keys it.
pub fn absolute(runbook: &Path) -> String {
    std::fs::canonicalize(runbook)
        .or_else(|_| std::path::absolute(runbook))
        .unwrap_or_else(|_| runbook.to_path_buf())
        .display()
        .to_string()
}

/// The runbook as every machine names it, for a history many machines share: its path inside
/// the git work tree that holds it (`runbooks/gpu-lab.rhai`, wherever the checkout is), else
/// its file name.
pub fn portable(runbook: &Path) -> String {
    let full = std::fs::canonicalize(runbook)
        .or_else(|_| std::path::absolute(runbook))
        .unwrap_or_else(|_| runbook.to_path_buf());
    full.ancestors()
        .skip(1)
        .find(|dir| dir.join(".git").exists())
        .and_then(|root| full.strip_prefix(root).ok())
        .or_else(|| full.file_name().map(Path::new))
        .unwrap_or(runbook)
        .display()
        .to_string()
}

/// The same value with every object's keys in sorted order.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), canonical(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_in_any_order_are_one_key() {
        let a = run_key(
            Path::new("runbooks/gpu-lab.rhai"),
            "twin",
            &serde_json::json!({"b": 1, "a": {"y": 2, "x": 1}}),
        );
        let b = run_key(
            Path::new("runbooks/gpu-lab.rhai"),
            "twin",
            &serde_json::json!({"a": {"x": 1, "y": 2}, "b": 1}),
        );
        assert_eq!(a, b);
        assert!(Path::new(&a.runbook_path).is_absolute());
    }
}
