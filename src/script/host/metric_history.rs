//! Metrics a run records, each in the step open when it was measured, and the history that a
//! metric's baseline is judged against (kept by the app layer; the host only asks it).

use super::Host;
use crate::report::{BaselineResult, BaselineSpec, Better, MetricRecord};

/// Earlier runs of this runbook and target, as a baseline sees them.
pub trait MetricHistory: Send + Sync {
    /// Judges `record`'s value (its name, labels and step say which metric) against earlier
    /// runs with the same `parameters`.
    fn compare(
        &self,
        parameters: &serde_json::Value,
        record: &MetricRecord,
        better: Better,
        spec: BaselineSpec,
    ) -> Result<BaselineResult, String>;
}

impl Host {
    /// The path of the step open here, for a metric measured now.
    pub(crate) fn metric_step(&self) -> Vec<String> {
        self.open_path()
    }

    /// Keeps `record`; refused when the same step already recorded that metric with those
    /// labels (one series, one value: give the second a label that tells them apart).
    pub(crate) fn record_metric(&self, record: MetricRecord) -> Result<(), String> {
        let mut state = self.state();
        let twice = state
            .metrics
            .iter()
            .any(|m| m.name == record.name && m.step == record.step && m.labels == record.labels);
        if twice {
            let step = if record.step.is_empty() {
                "the run".to_string()
            } else {
                format!("step `{}`", record.step.join(" > "))
            };
            return Err(format!(
                "metric `{}` was already recorded in {step} with these labels; a label (e.g. #{{ labels: #{{ phase: \"after\" }} }}) tells the two apart",
                record.name
            ));
        }
        state.metrics.push(record);
        Ok(())
    }

    /// The history's judgement of a value; `None` when the run keeps no history.
    pub(crate) fn compare_with_history(
        &self,
        record: &MetricRecord,
        better: Better,
        spec: BaselineSpec,
    ) -> Option<Result<BaselineResult, String>> {
        let history = self.metric_history.as_ref()?;
        let parameters = self
            .state()
            .parameters
            .clone()
            .unwrap_or_else(|| serde_json::json!({}));
        Some(history.compare(&parameters, record, better, spec))
    }
}
