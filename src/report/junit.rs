//! JUnit XML for CI dashboards: one test case per step, failures with their messages, the
//! metrics a step measured as its properties.

use std::time::Duration;

use quick_junit::{
    NonSuccessKind, Property, Report as JunitReport, TestCase, TestCaseStatus, TestSuite,
};

use super::{Outcome, Report};

pub fn to_junit_xml(report: &Report) -> String {
    let mut suite = TestSuite::new(report.runbook.as_str());
    for (path, step) in report.flat_steps() {
        let status = match step.status {
            Outcome::Passed => TestCaseStatus::success(),
            Outcome::Failed | Outcome::Interrupted => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                if let Some(error) = &step.error {
                    let first_line = error.lines().next().unwrap_or_default();
                    status.set_message(first_line);
                    status.set_description(error.as_str());
                }
                if step.status == Outcome::Interrupted {
                    status.set_type("interrupted");
                }
                status
            }
        };
        let mut case = TestCase::new(path.join(" > "), status);
        case.set_classname(report.runbook.as_str());
        case.set_time(Duration::from_millis(step.wall_ms));
        // The metrics the step itself measured, as `name{labels}` = `value unit` properties.
        for metric in report.metrics.iter().filter(|m| m.step == path) {
            let labels = metric.label_key();
            let name = if labels.is_empty() {
                metric.name.clone()
            } else {
                format!("{}{{{labels}}}", metric.name)
            };
            case.add_property(Property::new(name, metric.shown()));
        }
        suite.add_test_case(case);
    }
    suite.set_time(Duration::from_millis(report.wall_ms));
    let mut junit = JunitReport::new("runbook");
    junit.add_test_suite(suite);
    junit
        .to_string()
        .unwrap_or_else(|e| format!("<!-- junit serialization failed: {e} -->"))
}
