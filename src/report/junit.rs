//! JUnit XML for CI dashboards: one test case per step, failures with their messages.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report as JunitReport, TestCase, TestCaseStatus, TestSuite};

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
        suite.add_test_case(case);
    }
    suite.set_time(Duration::from_millis(report.wall_ms));
    let mut junit = JunitReport::new("runbook");
    junit.add_test_suite(suite);
    junit
        .to_string()
        .unwrap_or_else(|e| format!("<!-- junit serialization failed: {e} -->"))
}
