//! `runbooks/gpu-judge.rhai`: one node judged from outputs collected on it (real ones, from
//! tests/fixtures/real and ../shared/fixtures/real).

use std::path::PathBuf;

use crate::support::{Runbook, repo_root};

fn real(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures/real").join(name)
}

fn judge(sets: &[String], code: i32) -> String {
    let mut runbook = Runbook::new().args([
        "run",
        "runbooks/gpu-judge.rhai",
        "--progress",
        "never",
        "--allow-read",
    ]);
    runbook = runbook.arg(repo_root().join("tests/fixtures/real"));
    if let Some(shared) = shared_dir() {
        runbook = runbook.arg("--allow-read").arg(shared);
    }
    for set in sets {
        runbook = runbook.arg("--set").arg(set);
    }
    let ran = runbook.run().expect_code(code);
    format!("{}{}", ran.stdout(), ran.stderr())
}

fn shared_dir() -> Option<PathBuf> {
    let dir = repo_root().join("../shared/fixtures/real");
    dir.is_dir().then_some(dir)
}

#[test]
fn a_gpu_that_fell_off_the_bus_needs_a_reboot() {
    let log = real("xid_79_with_sxid_dmesg_gpud_readme.log");
    let out = judge(&[format!("kernel_log=@{}", log.display())], 1);
    assert!(
        out.contains(
            "REBOOT xid (GPU 0000:91:00): Xid 79 (GPU has fallen off the bus) at [6781741.548779]"
        ),
        "{out}"
    );
    assert!(out.contains("worse than the allowed MONITOR"), "{out}");
    // No nvidia-smi output was given, so its checks are not run (rather than failed).
    assert!(!out.contains("gpu_count"), "{out}");
    // Allowed up to REBOOT, the same node passes.
    judge(
        &[
            format!("kernel_log=@{}", log.display()),
            "allow=REBOOT".into(),
        ],
        0,
    );
}

#[test]
fn a_failed_dcgm_diagnostic_isolates_with_dcgms_reason() {
    let diag = real("dcgmi_diag_r1_json_dcgm4.2.3_gb10_native_glimmer.json");
    let out = judge(&[format!("dcgm=@{}", diag.display())], 1);
    assert!(
        out.contains("ISOLATE dcgm_diag (GPU 0): software failed: DCGM_FR_PERSISTENCE_MODE"),
        "{out}"
    );
}

#[test]
fn a_real_healthy_h100_is_healthy_and_unknown_instance_types_are_refused() {
    let Some(shared) = shared_dir() else {
        eprintln!("skipping: ../shared/fixtures/real not found");
        return;
    };
    let csv = shared.join("nvidia_smi_query_gpu_csv_h100_allfields_590.csv");
    let out = judge(&[format!("gpus=@{}", csv.display())], 0);
    assert!(
        out.contains("HEALTHY row_remap_pending (GPU 0): Remapped Rows Pending: No"),
        "{out}"
    );
    assert!(
        out.contains("HEALTHY clocks_throttle (GPU 0): no hardware clock slowdown"),
        "{out}"
    );
    let refused = Runbook::new()
        .args([
            "run",
            "runbooks/gpu-judge.rhai",
            "--progress",
            "never",
            "--set",
            "instance_type=x9.huge",
        ])
        .run()
        .expect_code(1);
    let refused = format!("{}{}", refused.stdout(), refused.stderr());
    assert!(
        refused.contains("no thresholds for instance type `x9.huge`"),
        "{refused}"
    );
}
