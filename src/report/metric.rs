//! A number a run measured (`metric()` in a script): its bounds, how it compares with the
//! runs before it, and whether it passed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Which way a metric gets better: bus bandwidth `higher`, a duration `lower`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "higher" => Some(Self::Higher),
            "lower" => Some(Self::Lower),
            _ => None,
        }
    }
}

/// `baseline: #{ runs: 20, drop: 0.2 }`: compare with the median of the last `runs` runs
/// (of the same runbook, target and parameters) where this metric passed; worse by more than
/// `drop` (a share of the median) fails.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BaselineSpec {
    pub runs: usize,
    pub drop: f64,
}

/// What the history said about a metric with a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineResult {
    /// The history's numbers of the runs compared with, oldest first.
    pub compared: Vec<u64>,
    /// Their median, when there were enough of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median: Option<f64>,
    /// The worst value that still passes (median less, or plus, `drop` of it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
    pub verdict: BaselineVerdict,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineVerdict {
    Within,
    Worse,
    /// Fewer earlier runs than [`MIN_BASELINE_RUNS`]: nothing to compare with yet.
    TooFewRuns,
    /// The run keeps no history (`--history off`, or it could not be opened).
    NoHistory,
}

/// The fewest earlier values a median is taken over: with one or two, one odd run is the
/// baseline.
pub const MIN_BASELINE_RUNS: usize = 3;

/// One measured number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRecord {
    pub name: String,
    pub value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub better: Option<Better>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// The step that measured it, outermost first; empty for the run itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineResult>,
    pub ok: bool,
}

impl MetricRecord {
    /// `0.51 GB/s`, `12`: the value as people read it.
    pub fn shown(&self) -> String {
        let value = shown_number(self.value);
        match &self.unit {
            Some(unit) if !unit.is_empty() => format!("{value} {unit}"),
            _ => value,
        }
    }

    /// The labels as one stable key (`gpu=0,node=a`): a metric's identity with its name.
    pub fn label_key(&self) -> String {
        label_key(&self.labels)
    }
}

/// `a=1,b=2`, sorted by name.
pub fn label_key(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Up to three decimals, trailing zeros dropped: `0.514`, `12`, `1500`.
pub fn shown_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        return format!("{value:.0}");
    }
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `runs 3-7` or `runs 1, 4, 9`: the history numbers of the runs compared, for a message.
pub fn runs_named(runs: &[u64]) -> String {
    let contiguous = runs.windows(2).all(|w| w[1] == w[0] + 1);
    match runs {
        [] => "no runs".to_string(),
        [one] => format!("run {one}"),
        [first, .., last] if contiguous => format!("runs {first}-{last}"),
        _ => format!(
            "runs {}",
            runs.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(shown_number(0.5143), "0.514");
        assert_eq!(shown_number(12.0), "12");
        assert_eq!(shown_number(0.25), "0.25");
        assert_eq!(shown_number(-3.1), "-3.1");
    }

    #[test]
    fn runs_are_named_compactly() {
        assert_eq!(runs_named(&[3, 4, 5, 6, 7]), "runs 3-7");
        assert_eq!(runs_named(&[1, 4, 9]), "runs 1, 4, 9");
        assert_eq!(runs_named(&[2]), "run 2");
    }

    #[test]
    fn label_key_is_sorted() {
        let labels = BTreeMap::from([("node".into(), "b".into()), ("gpu".into(), "0".into())]);
        assert_eq!(label_key(&labels), "gpu=0,node=b");
    }
}
