//! Node verdicts from real tool output and from single faults.

use serde_json::json;

use super::*;
use crate::gpu::dcgm_diag::parse_diag_json;
use crate::gpu::test_fixtures::fixture;
use crate::gpu::xid::parse_kernel_log;
use crate::health::thresholds::for_instance_type;

fn a10g(index: u32) -> Map<String, Value> {
    json!({
        "index": index, "name": "NVIDIA A10G", "pci.bus_id": "00000000:00:1E.0",
        "driver_version": "580.95.05", "ecc.mode.current": "Enabled",
        "ecc.errors.uncorrected.volatile.total": 0, "retired_pages.pending": null,
        "remapped_rows.uncorrectable": 0, "remapped_rows.pending": "No", "remapped_rows.failure": "No",
        "clocks_event_reasons.hw_slowdown": "Not Active",
    })
    .as_object()
    .unwrap()
    .clone()
}

fn node(name: &str) -> NodeEvidence {
    NodeEvidence {
        node: name.into(),
        instance: None,
        gpus: Some(vec![a10g(0)]),
        cuda_version: Some("13.0".into()),
        kernel_log: Some(parse_kernel_log("")),
        diag: None,
        dcgm_hung: None,
        nvlink: None,
    }
}

fn judge(evidence: &NodeEvidence) -> NodeHealth {
    let g5 = for_instance_type("g5.xlarge").unwrap();
    let fleet = fleet_of(&[node("a"), node("b"), evidence.clone()]);
    check_node(evidence, Some(&g5), &fleet, &Policy::default())
}

#[test]
fn a_clean_node_is_healthy_with_every_check_shown() {
    let health = judge(&node("ip-1"));
    assert_eq!(health.verdict, Verdict::Healthy, "{:?}", health.reasons);
    let checks: Vec<&str> = health.findings.iter().map(|f| f.check).collect();
    for check in [
        "gpu_count",
        "driver_version",
        "cuda_version",
        "row_remap_pending",
        "ecc_uncorrectable",
        "clocks_throttle",
        "xid",
    ] {
        assert!(checks.contains(&check), "{check} missing from {checks:?}");
    }
    assert!(health.reasons.is_empty());
}

#[test]
fn xid_79_from_a_real_log_calls_for_a_reboot() {
    let mut evidence = node("ip-2");
    evidence.kernel_log = Some(parse_kernel_log(&fixture(
        "xid_79_with_sxid_dmesg_gpud_readme.log",
    )));
    let health = judge(&evidence);
    assert_eq!(health.verdict, Verdict::Reboot);
    assert!(
        health.reasons[0].starts_with("REBOOT (GPU 0000:91:00): xid: Xid 79"),
        "{:?}",
        health.reasons
    );
}

#[test]
fn xid_45_follows_the_error_that_caused_it() {
    let mut evidence = node("ip-3");
    evidence.kernel_log = Some(parse_kernel_log(&fixture(
        "xid_kernel_log_lines_mixed_sources.txt",
    )));
    let health = judge(&evidence);
    // 63 and 43 are MONITOR; 45 follows 149 and 145 (NVLink 5, MONITOR by default); the
    // no-Xid "fallen off the bus" block is a REBOOT.
    assert_eq!(health.verdict, Verdict::Reboot);
    let xids: Vec<&str> = health
        .findings
        .iter()
        .filter(|f| f.check == "xid")
        .map(|f| f.observed.as_str())
        .collect();
    assert!(xids.iter().any(|o| o.starts_with("Xid 149")), "{xids:?}");
    assert!(!xids.iter().any(|o| o.starts_with("Xid 45 ")), "{xids:?}");
}

#[test]
fn a_missing_gpu_and_a_pending_remap() {
    let mut missing = node("ip-4");
    missing.gpus = Some(Vec::new());
    let health = judge(&missing);
    assert_eq!(health.verdict, Verdict::Reboot);
    assert!(
        health.reasons[0].contains("0 of 1 GPUs visible"),
        "{:?}",
        health.reasons
    );

    let mut remap = node("ip-5");
    remap.gpus.as_mut().unwrap()[0].insert("remapped_rows.pending".into(), json!("Yes"));
    let health = judge(&remap);
    assert_eq!(health.verdict, Verdict::Reset);
    assert_eq!(
        health.reasons,
        ["RESET (GPU 0): row_remap_pending: Remapped Rows Pending: Yes"]
    );
}

#[test]
fn a_driver_unlike_the_fleets_is_monitored() {
    let mut odd = node("ip-6");
    odd.gpus.as_mut().unwrap()[0].insert("driver_version".into(), json!("535.129.03"));
    let health = judge(&odd);
    assert_eq!(health.verdict, Verdict::Monitor);
    assert!(
        health.reasons[0].contains("driver_version: 535.129.03"),
        "{:?}",
        health.reasons
    );
}

#[test]
fn a_failed_dcgm_test_takes_dcgms_severity() {
    let mut evidence = node("ip-7");
    evidence.diag = Some(
        parse_diag_json(&fixture(
            "dcgmi_diag_r1_json_dcgm4.2.3_gb10_native_glimmer.json",
        ))
        .unwrap(),
    );
    let health = judge(&evidence);
    assert_eq!(health.verdict, Verdict::Isolate);
    assert!(
        health.reasons[0].contains("software failed: DCGM_FR_PERSISTENCE_MODE"),
        "{:?}",
        health.reasons
    );
    evidence.diag = Some(
        parse_diag_json(&fixture(
            "dcgmi_diag_r3_json_dcgm3x_gpu_ids_virtualclient.json",
        ))
        .unwrap(),
    );
    assert_eq!(judge(&evidence).verdict, Verdict::Healthy);
}

#[test]
fn outputs_not_collected_are_not_judged() {
    let mut log_only = node("ip-8");
    log_only.gpus = None;
    let health = check_node(
        &log_only,
        None,
        &fleet_of(std::slice::from_ref(&log_only)),
        &Policy::default(),
    );
    assert_eq!(health.verdict, Verdict::Healthy, "{:?}", health.reasons);
    assert_eq!(health.gpus, None);
    let checks: Vec<&str> = health.findings.iter().map(|f| f.check).collect();
    assert_eq!(checks, ["cuda_version", "xid"]);
}

#[test]
fn a_hung_dcgm_is_its_own_monitor_finding_not_a_pass() {
    let mut hung = node("c");
    hung.dcgm_hung = Some("dcgmi diag -r 1 gave no answer within 5m (the DCGM watchdog)".into());
    let health = judge(&hung);
    assert_eq!(health.verdict, Verdict::Monitor);
    assert_eq!(
        health.reasons,
        ["MONITOR: dcgm_watchdog: dcgmi diag -r 1 gave no answer within 5m (the DCGM watchdog)"]
    );
    assert_eq!(judge(&node("c")).verdict, Verdict::Healthy);
}
