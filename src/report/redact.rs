//! What no report, output line or snapshot shows: the values of secret parameters (masked
//! wherever they appear, error messages included), and strings too long to be of use in a
//! report (cut, with a marker saying how long they were).

use std::borrow::Cow;

use super::{DeferRecord, Event, Report, Sink, SnapshotRecord, StepRecord};

/// What a masked value reads as.
pub const MASK: &str = "[secret]";

/// Values shorter than this are not searched for in text (a one-letter secret would mask every
/// such letter); they are still masked where they stand as a parameter's value.
const MIN_MASKED_LEN: usize = 4;

/// The longest string a report keeps whole: a step name, an error, a parameter's value.
pub const MAX_REPORT_STRING: usize = 4096;

/// The secret values of one run.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    /// Longest first, so a secret that contains another is masked whole.
    values: Vec<String>,
}

impl Secrets {
    pub fn add(&mut self, value: &str) {
        let value = value.trim();
        if value.len() < MIN_MASKED_LEN || self.values.iter().any(|v| v == value) {
            return;
        }
        self.values.push(value.to_string());
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every secret value replaced by [`MASK`].
    pub fn mask<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for value in &self.values {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), MASK));
            }
        }
        out
    }

    /// Masks every string inside a JSON value.
    pub fn mask_json(&self, value: &mut serde_json::Value) {
        if self.is_empty() {
            return;
        }
        map_json_strings(value, &|s| self.mask(s).into_owned());
    }
}

fn map_json_strings(value: &mut serde_json::Value, f: &dyn Fn(&str) -> String) {
    match value {
        serde_json::Value::String(s) => *s = f(s),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| map_json_strings(v, f)),
        serde_json::Value::Object(map) => map.values_mut().for_each(|v| map_json_strings(v, f)),
        _ => {}
    }
}

/// `text` cut to [`MAX_REPORT_STRING`] bytes (on a character boundary) with a marker.
pub fn bounded(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_REPORT_STRING {
        return Cow::Borrowed(text);
    }
    let mut end = MAX_REPORT_STRING;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!(
        "{}… [cut: {} bytes in all]",
        &text[..end],
        text.len()
    ))
}

impl Report {
    /// The report as it may leave the process: secrets masked and long strings cut, in every
    /// field that holds text.
    pub fn for_output(mut self, secrets: &Secrets) -> Report {
        let clean = |text: &str| bounded(&secrets.mask(text)).into_owned();
        fn steps(list: &mut [StepRecord], clean: &dyn Fn(&str) -> String) {
            for step in list {
                step.name = clean(&step.name);
                step.error = step.error.as_deref().map(clean);
                steps(&mut step.steps, clean);
            }
        }
        steps(&mut self.steps, &clean);
        for DeferRecord {
            name, error, undo, ..
        } in &mut self.defers
        {
            *name = clean(name);
            *error = error.as_deref().map(clean);
            *undo = undo.as_deref().map(clean);
        }
        for SnapshotRecord { name, path, .. } in &mut self.snapshots {
            *name = clean(name);
            *path = clean(path);
        }
        for metric in &mut self.metrics {
            for text in metric
                .labels
                .values_mut()
                .chain(metric.step.iter_mut())
                .chain(metric.unit.iter_mut())
            {
                *text = clean(text);
            }
        }
        for record in &mut self.changes {
            record.change.action = clean(&record.change.action);
            record.change.resource = record.change.resource.as_deref().map(clean);
            record.error = record.error.as_deref().map(clean);
            for name in &mut record.step {
                *name = clean(name);
            }
        }
        for evidence in &mut self.evidence {
            for name in &mut evidence.step {
                *name = clean(name);
            }
            map_json_strings(&mut evidence.data, &clean);
        }
        self.error = self.error.as_deref().map(clean);
        for cause in &mut self.error_detail {
            *cause = clean(cause);
        }
        self.runbook = clean(&self.runbook);
        map_json_strings(&mut self.parameters, &clean);
        self
    }
}

impl Secrets {
    /// Hands `event` to `sink` with every text in it masked.
    pub fn emit_masked(&self, sink: &dyn Sink, event: &Event<'_>) {
        let m = |text: &str| self.mask(text).into_owned();
        match event {
            Event::RunStarted {
                runbook,
                clock,
                run_id,
            } => sink.event(&Event::RunStarted {
                runbook: &m(runbook),
                clock,
                run_id: *run_id,
            }),
            Event::StepStarted { path } => {
                let path: Vec<String> = path.iter().map(|p| m(p)).collect();
                sink.event(&Event::StepStarted { path: &path });
            }
            Event::StepFinished {
                path,
                outcome,
                error,
                virtual_time,
                wall_time,
            } => {
                let path: Vec<String> = path.iter().map(|p| m(p)).collect();
                let error = error.map(m);
                sink.event(&Event::StepFinished {
                    path: &path,
                    outcome: *outcome,
                    error: error.as_deref(),
                    virtual_time: *virtual_time,
                    wall_time: *wall_time,
                });
            }
            Event::Log { line } => sink.event(&Event::Log { line: &m(line) }),
            Event::DeferStarted { name } => sink.event(&Event::DeferStarted { name: &m(name) }),
            Event::DeferFinished {
                name,
                status,
                error,
                virtual_time,
                wall_time,
            } => {
                let error = error.map(m);
                sink.event(&Event::DeferFinished {
                    name: &m(name),
                    status: *status,
                    error: error.as_deref(),
                    virtual_time: *virtual_time,
                    wall_time: *wall_time,
                });
            }
            Event::Snapshot {
                name,
                outcome,
                path,
            } => sink.event(&Event::Snapshot {
                name: &m(name),
                outcome: *outcome,
                path: &m(path),
            }),
            Event::RunFinished { summary } => sink.event(&Event::RunFinished {
                summary: &m(summary),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{DeferStatus, Outcome, RunStatus};

    #[test]
    fn secrets_are_masked_wherever_they_appear_longest_first() {
        let mut secrets = Secrets::default();
        secrets.add("hunter2-token");
        secrets.add("hunter2-token-extended");
        secrets.add("ab");
        assert_eq!(
            secrets.mask("auth hunter2-token-extended failed; retry with hunter2-token"),
            "auth [secret] failed; retry with [secret]"
        );
        assert_eq!(secrets.mask("ab cab"), "ab cab", "too short to search for");
    }

    #[test]
    fn long_strings_are_cut_on_a_character_boundary_with_their_length() {
        let long = "é".repeat(3000);
        let cut = bounded(&long);
        assert!(cut.len() < MAX_REPORT_STRING + 40);
        assert!(
            cut.ends_with("… [cut: 6000 bytes in all]"),
            "{}",
            &cut[cut.len() - 40..]
        );
        assert_eq!(bounded("short"), "short");
    }

    #[test]
    fn a_report_for_output_holds_no_secret_and_no_huge_string() {
        let mut secrets = Secrets::default();
        secrets.add("s3cr3t-value");
        let report = Report {
            runbook: "r.rhai".into(),
            run_id: None,
            status: RunStatus::Failed,
            clock: "virtual",
            parameters: serde_json::json!({"token": "s3cr3t-value", "n": 2}),
            steps: vec![StepRecord {
                name: "x".repeat(5_000_000),
                status: Outcome::Failed,
                error: Some("401 for s3cr3t-value".into()),
                start_ms: 0,
                start_wall_ms: 0,
                virtual_ms: 0,
                wall_ms: 0,
                steps: vec![],
            }],
            defers: vec![DeferRecord {
                name: "revoke s3cr3t-value".into(),
                status: DeferStatus::Passed,
                error: None,
                undo: None,
                start_ms: 0,
                start_wall_ms: 0,
                virtual_ms: 0,
                wall_ms: 0,
            }],
            snapshots: vec![],
            metrics: vec![crate::report::MetricRecord {
                name: "logins".into(),
                value: 1.0,
                unit: None,
                better: None,
                labels: [("user".to_string(), "s3cr3t-value".to_string())].into(),
                step: vec!["login as s3cr3t-value".into()],
                min: None,
                max: None,
                baseline: None,
                ok: true,
            }],
            guards: crate::guard::Guards::default(),
            spent_usd: None,
            changes: vec![crate::report::ChangeRecord {
                change: crate::guard::Change::new("k8s::apply Secret default/s3cr3t-value")
                    .on("secret/default/s3cr3t-value"),
                outcome: crate::report::ChangeOutcome::Done,
                step: vec!["store s3cr3t-value".into()],
                cleanup: false,
                error: None,
            }],
            evidence: vec![],
            error: Some("token s3cr3t-value refused".into()),
            error_detail: vec!["HTTP 401 for s3cr3t-value".into()],
            error_at: None,
            spend: Vec::new(),
            connections: Default::default(),
            virtual_ms: 0,
            wall_ms: 0,
        }
        .for_output(&secrets);
        let json = report.to_json();
        assert!(!json.contains("s3cr3t-value"), "{json}");
        assert!(json.len() < 10_000, "{} bytes", json.len());
        assert_eq!(report.parameters["n"], 2);
    }
}
