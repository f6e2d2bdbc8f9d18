//! `dcgmi diag -r 1|2|3|4 -j` on a GPU node of the twin, in DCGM 4.x's JSON shape
//! (tests/fixtures/real/dcgmi_diag_*_dcgm4*): the tests of the level asked, each GPU's result,
//! and the failure reasons (`error_id` = DCGM_FR_*, messages from dcgm_errors.h) that the
//! node's hardware faults call for.

use std::time::Duration;

use serde_json::{Value, json};

use super::gpu_model::{DRIVER_VERSION, GpuHost};
use super::node_faults::NodeFaults;

/// The DCGM release the twin's `dcgmi` reports.
pub(crate) const DCGM_VERSION: &str = "4.2.3";

/// DCGM_FR_VOLATILE_DBE_DETECTED and DCGM_FR_PENDING_ROW_REMAP (dcgm_errors.h).
const VOLATILE_DBE_DETECTED: u32 = 4;
const PENDING_ROW_REMAP: u32 = 85;

/// What `dcgmi` printed, how it ended and how long it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DcgmiOutput {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) exit_code: i32,
    pub(crate) duration: Duration,
}

/// How long a diagnostic runs on the twin's GPUs, by level: NVIDIA's figures ("seconds",
/// "approximately two minutes", "approximately 15 minutes": the dcgmi-diag reference), and
/// for level 4, which NVIDIA gives no length, 45 minutes: level 3's 15 with memtest's 600 s
/// default `test_duration`, the pulse test and what is left of the low end platforms report
/// (45 minutes to 2 hours; an acceptance plans the high end, acceptance/depth.rs).
pub(crate) fn run_time(level: u32) -> Duration {
    Duration::from_secs(match level {
        1 => 20,
        2 => 120,
        3 => 900,
        _ => 2700,
    })
}

fn usage(message: &str) -> DcgmiOutput {
    DcgmiOutput {
        stdout: String::new(),
        stderr: format!("{message}\n"),
        exit_code: 1,
        duration: Duration::ZERO,
    }
}

/// The tests a run level includes, by category, in the order DCGM 4 reports them: each level
/// adds to the one below (NVIDIA/DCGM nvvs/src/NvidiaValidationSuite.cpp, FillTestVectors;
/// level 4 adds memtest, a Stress plugin, and the pulse test, a Hardware one). Level 3's EUD
/// and nvbandwidth run only where their packages are installed, which the twin's image is not.
fn tests_of(level: u32) -> Vec<(&'static str, &'static str)> {
    let mut tests = vec![("Deployment", "software")];
    if level >= 2 {
        tests.push(("Integration", "pcie"));
        tests.push(("Hardware", "memory"));
    }
    if level >= 3 {
        tests.push(("Hardware", "diagnostic"));
        tests.push(("Stress", "targeted_stress"));
        tests.push(("Stress", "targeted_power"));
        tests.push(("Stress", "memory_bandwidth"));
    }
    if level >= 4 {
        tests.push(("Hardware", "pulse_test"));
        tests.push(("Stress", "memtest"));
    }
    tests
}

/// The warnings a test gives GPU `gpu` on a node with `faults`.
fn warnings(test: &str, gpu: u32, faults: Option<&NodeFaults>) -> Vec<Value> {
    let Some(faults) = faults.and_then(|f| f.gpu(gpu)) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    if test == "software" && faults.row_remap_pending.is_some() {
        found.push(json!({
            "error_id": PENDING_ROW_REMAP,
            "warning": format!("GPU {gpu} had memory errors and row remappings are pending"),
        }));
    }
    if test == "memory"
        && let Some((count, _)) = faults.ecc_uncorrectable
    {
        found.push(json!({
            "error_id": VOLATILE_DBE_DETECTED,
            "warning": format!("Detected {count} volatile double-bit ECC error(s) in GPU {gpu}."),
        }));
    }
    found
}

/// `dcgmi diag -r LEVEL -j` against `host`.
fn diag(host: &GpuHost, level: u32, faults: Option<&NodeFaults>) -> DcgmiOutput {
    if host.gpus.is_empty() || host.gpus.iter().any(|g| g.lost) {
        // The twin's wording: DCGM cannot attach to a GPU the driver has lost or never saw.
        return DcgmiOutput {
            stdout: String::new(),
            stderr: "Error: Unable to complete diagnostic for group 2147483647. Return: (-37) GPU is lost.\n".into(),
            exit_code: 1,
            duration: Duration::ZERO,
        };
    }
    let mut categories: Vec<(String, Vec<Value>)> = Vec::new();
    for (category, test) in tests_of(level) {
        let results: Vec<Value> = host
            .gpus
            .iter()
            .map(|g| {
                let warnings = warnings(test, g.index, faults);
                let mut result = json!({
                    "entity_group": "GPU",
                    "entity_group_id": 1,
                    "entity_id": g.index,
                    "status": if warnings.is_empty() { "Pass" } else { "Fail" },
                });
                if !warnings.is_empty() {
                    result["warnings"] = json!(warnings);
                }
                result
            })
            .collect();
        let failed = results.iter().any(|r| r["status"] == "Fail");
        let test = json!({
            "name": test,
            "results": results,
            "test_summary": {"status": if failed { "Fail" } else { "Pass" }},
        });
        match categories.iter_mut().find(|(name, _)| name == category) {
            Some((_, tests)) => tests.push(test),
            None => categories.push((category.to_string(), vec![test])),
        }
    }
    let report = json!({
        "DCGM Diagnostic": {
            "test_categories": categories
                .into_iter()
                .map(|(category, tests)| json!({"category": category, "tests": tests}))
                .collect::<Vec<_>>(),
        },
        "entity_groups": [{
            "entities": host.gpus.iter().map(|g| json!({
                "device_id": format!("{:04x}", g.pci_device_id >> 16),
                "entity_id": g.index,
                "serial_num": g.serial,
            })).collect::<Vec<_>>(),
            "entity_group": "GPU",
            "entity_group_id": 1,
        }],
        "metadata": {"Driver Version Detected": DRIVER_VERSION, "version": DCGM_VERSION},
    });
    DcgmiOutput {
        stdout: format!(
            "{}\n",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ),
        stderr: String::new(),
        // The run completed: its verdict is in the JSON, whatever the tests found.
        exit_code: 0,
        duration: run_time(level),
    }
}

/// Runs `dcgmi ARGS` on `host`: `diag -r N [-j]` is simulated, JSON only.
pub(crate) fn run(host: &GpuHost, args: &[&str], faults: Option<&NodeFaults>) -> DcgmiOutput {
    let Some((&"diag", rest)) = args.split_first() else {
        return usage("the lab twin's dcgmi runs `dcgmi diag -r 1|2|3|4 -j` only");
    };
    let mut level = None;
    let mut json_output = false;
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            "-r" | "--run" => {
                level = rest.get(i + 1).and_then(|l| l.parse::<u32>().ok());
                i += 1;
            }
            "-j" | "--json" => json_output = true,
            other => {
                return usage(&format!(
                    "PARSE ERROR: Argument: {other} not recognized by the lab twin's dcgmi"
                ));
            }
        }
        i += 1;
    }
    match (level, json_output) {
        (Some(level @ 1..=4), true) => diag(host, level, faults),
        (Some(1..=4), false) => usage("the lab twin's dcgmi prints JSON only: add -j"),
        _ => usage("dcgmi diag needs -r 1, 2, 3 or 4 (a run level)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::dcgm_diag::{DiagStatus, parse_diag_json};
    use std::time::Duration;

    fn host() -> GpuHost {
        GpuHost::a10g("ip-192-168-3-4", 7, "Mon Nov 30 04:43:45 2026")
    }

    #[test]
    fn a_healthy_gpu_passes_every_level_and_the_parser_reads_dcgm4() {
        for (level, tests) in [(1, 1), (2, 3), (3, 7), (4, 9)] {
            let out = run(&host(), &["diag", "-r", &level.to_string(), "-j"], None);
            assert_eq!(out.exit_code, 0, "{}", out.stderr);
            let report = parse_diag_json(&out.stdout).unwrap();
            assert_eq!(report.format, "dcgm4");
            assert_eq!(report.tests.len(), tests);
            assert_eq!(report.status(), DiagStatus::Pass);
        }
    }

    #[test]
    fn faults_fail_the_test_that_finds_them() {
        let mut faults = NodeFaults::default();
        let gpu = faults.gpu_mut(0);
        gpu.row_remap_pending = Some(Duration::ZERO);
        gpu.ecc_uncorrectable = Some((3, Duration::ZERO));
        let level1 = run(&host(), &["diag", "-r", "1", "-j"], Some(&faults));
        assert_eq!(level1.exit_code, 0);
        let report = parse_diag_json(&level1.stdout).unwrap();
        let ids: Vec<u32> = report
            .problems()
            .flat_map(|(_, r)| r.warnings.iter().filter_map(|w| w.error_id))
            .collect();
        assert_eq!(ids, [PENDING_ROW_REMAP]);
        let level2 = run(&host(), &["diag", "-r", "2", "-j"], Some(&faults));
        assert!(
            level2
                .stdout
                .contains("Detected 3 volatile double-bit ECC error(s) in GPU 0.")
        );
    }

    #[test]
    fn what_it_does_not_simulate_is_an_error() {
        assert_eq!(run(&host(), &["discovery", "-l"], None).exit_code, 1);
        assert_eq!(run(&host(), &["diag", "-r", "1"], None).exit_code, 1);
        assert_eq!(run(&host(), &["diag", "-r", "5", "-j"], None).exit_code, 1);
    }
}
