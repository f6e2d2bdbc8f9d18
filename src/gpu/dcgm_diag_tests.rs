//! The `dcgmi diag -j` reader on real DCGM 3.x and 4.x output (tests/fixtures/real).

use super::*;
use crate::gpu::test_fixtures::fixture;

fn report(name: &str) -> DiagReport {
    parse_diag_json(&fixture(name)).unwrap()
}

#[test]
fn dcgm3_level_1_is_deployment_checks_without_gpus() {
    let diag = report("dcgmi_diag_r1_json_dcgm3x_gpu_ids_virtualclient.json");
    assert_eq!(diag.format, "dcgm3");
    assert_eq!(diag.tests.len(), 9);
    assert!(diag.tests.iter().all(|t| t.category == "Deployment"));
    assert_eq!(diag.tests[6].name, "Page Retirement/Row Remap");
    assert_eq!(diag.tests[0].results[0].gpu, None);
    assert_eq!(diag.status(), DiagStatus::Pass);
    assert_eq!(diag.problems().count(), 0);
}

#[test]
fn dcgm3_level_3_reads_gpu_ids_and_skips() {
    let diag = report("dcgmi_diag_r3_json_dcgm3x_gpu_ids_virtualclient.json");
    let categories: Vec<&str> = diag.tests.iter().map(|t| t.category.as_str()).collect();
    assert!(categories.contains(&"Stress"));
    let eud = diag.tests.iter().find(|t| t.name == "EUD Test").unwrap();
    assert_eq!(eud.status, DiagStatus::Skip);
    let memory = diag.tests.iter().find(|t| t.name == "GPU Memory").unwrap();
    assert_eq!(memory.results[0].gpu, Some(0));
    assert_eq!(diag.status(), DiagStatus::Pass, "a skip is no failure");
}

#[test]
fn dcgm4_failure_carries_its_reason_and_dcgms_severity() {
    let diag = report("dcgmi_diag_r1_json_dcgm4.2.3_gb10_native_glimmer.json");
    assert_eq!(diag.format, "dcgm4");
    assert_eq!(diag.version.as_deref(), Some("4.2.3"));
    assert_eq!(diag.driver.as_deref(), Some("580.82.09"));
    assert_eq!(diag.status(), DiagStatus::Fail);
    let (test, result) = diag.problems().next().unwrap();
    assert_eq!((test.name.as_str(), result.gpu), ("software", Some(0)));
    let warning = &result.warnings[0];
    assert_eq!(warning.error_id, Some(29));
    assert_eq!(warning.reason, Some("DCGM_FR_PERSISTENCE_MODE"));
    assert_eq!(warning.dcgm_action, Some("isolate"));
    assert!(warning.message.starts_with("Persistence Mode"));
}

#[test]
fn dcgm4_both_layouts_of_one_run_read_the_same() {
    let native = report("dcgmi_diag_r1_json_dcgm4.2.3_gb10_native_glimmer.json");
    let reindented = report("dcgmi_diag_r1_json_dcgm4.2.3_gb10_reindented_glimmer.json");
    assert_eq!(native, reindented);
}

#[test]
fn dcgm4_level_2_with_skipped_and_passing_plugins() {
    let gated = report("dcgmi_diag_r2_json_dcgm4.5.2_gb10_native_plugins_gated_glimmer.json");
    let statuses: Vec<(&str, DiagStatus)> = gated
        .tests
        .iter()
        .map(|t| (t.name.as_str(), t.status))
        .collect();
    assert_eq!(
        statuses,
        [
            ("software", DiagStatus::Fail),
            ("memory", DiagStatus::Skip),
            ("pcie", DiagStatus::Skip)
        ]
    );
    let allowed = report("dcgmi_diag_r2_json_dcgm4.5.2_gb10_native_plugins_allowed_glimmer.json");
    assert_eq!(allowed.version.as_deref(), Some("4.5.2"));
    assert_eq!(allowed.tests[1].status, DiagStatus::Pass);
    assert_eq!(allowed.problems().count(), 1, "only the software test");
}

#[test]
fn text_output_is_refused_with_what_to_do() {
    let err = parse_diag_json(&fixture(
        "dcgmi_diag_r2_table_dcgm4.2.3_x4_26b9_pcie_fail_issue253.txt",
    ))
    .unwrap_err();
    assert!(err.to_string().contains("run it with -j"), "{err}");
    let err = parse_diag_json("{\"hello\": 1}").unwrap_err();
    assert!(err.to_string().contains("\"hello\""), "{err}");
}
