//! `runbooks/gpu-judge.rhai`: one node judged from outputs collected on it (real ones, from
//! tests/fixtures/real).

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
    for set in sets {
        runbook = runbook.arg("--set").arg(set);
    }
    let ran = runbook.run().expect_code(code);
    format!("{}{}", ran.stdout(), ran.stderr())
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
    let csv = real("nvidia_smi_query_gpu_csv_h100_allfields_590.csv");
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

/// A GPU host's tools as stand-ins on PATH: an nvidia-smi that answers the health query for 8
/// H200s (the real H200's values as captured, once per GPU) and a dmesg with `kernel_log`; no
/// dcgmi, as on a host without DCGM. An nvidia-smi of an older driver refuses the fields in
/// `unknown` as the real one does, by name, and answers the others.
fn local_tools(kernel_log: &str, unknown: &[&str]) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    // The health query's fields in nvml::health_fields() order, with the H200's values
    // (nvidia_smi_query_gpu_health_fields_h200_580.159_vm.csv, _pcie_clocks_power_, -q).
    let cells = |gpu: usize| -> Vec<(&'static str, String)> {
        vec![
            ("index", gpu.to_string()),
            ("name", "NVIDIA H200".into()),
            ("pci.bus_id", format!("00000000:{:02X}:00.0", 0x18 + gpu)),
            ("driver_version", "580.159.04".into()),
            ("ecc.mode.current", "Enabled".into()),
            ("ecc.errors.uncorrected.volatile.total", "0".into()),
            (
                "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded",
                "No".into(),
            ),
            ("retired_pages.single_bit_ecc.count", "[N/A]".into()),
            ("retired_pages.double_bit.count", "[N/A]".into()),
            ("retired_pages.pending", "[N/A]".into()),
            ("remapped_rows.uncorrectable", "0".into()),
            ("remapped_rows.pending", "No".into()),
            ("remapped_rows.failure", "No".into()),
            ("clocks_event_reasons.hw_slowdown", "Not Active".into()),
            (
                "clocks_event_reasons.hw_thermal_slowdown",
                "Not Active".into(),
            ),
            (
                "clocks_event_reasons.hw_power_brake_slowdown",
                "Not Active".into(),
            ),
            (
                "clocks_event_reasons.sw_thermal_slowdown",
                "Not Active".into(),
            ),
            (
                "uuid",
                format!("GPU-ab74e90a-e9eb-5eb4-eee0-15b41e839cf{gpu}"),
            ),
            ("pcie.link.width.current", "16".into()),
            ("pcie.link.width.max", "16".into()),
            ("power.limit", "700.00".into()),
            ("power.default_limit", "700.00".into()),
            ("clocks.applications.graphics", "1980".into()),
            ("clocks.default_applications.graphics", "1980".into()),
            ("gpu_recovery_action", "None".into()),
            ("fabric.state", "N/A".into()),
            ("fabric.status", "N/A".into()),
            // The -q fixture's serial (one board's; each GPU here gets its own) and VBIOS.
            ("serial", format!("165402419752{gpu}")),
            ("vbios_version", "96.00.A5.00.1A".into()),
        ]
    };
    let mut rows = String::new();
    for gpu in 0..8 {
        let row: Vec<String> = cells(gpu)
            .into_iter()
            .filter(|(field, _)| !unknown.contains(field))
            .map(|(_, value)| value)
            .collect();
        rows.push_str(&row.join(", "));
        rows.push('\n');
    }
    let refusals: String = unknown
        .iter()
        .map(|f| format!("case \"$*\" in *{f}*) printf 'Field \"{f}\" is not a valid field to query.\\n\\n'; exit 2;; esac\n"))
        .collect();
    // `nvidia-smi nvlink -s` of a p5e: 18 links of 26.562 GB/s on each H200.
    let mut links = String::new();
    for gpu in 0..8 {
        links.push_str(&format!(
            "GPU {gpu}: NVIDIA H200 (UUID: GPU-ab74e90a-e9eb-5eb4-eee0-15b41e839cf{gpu})\n"
        ));
        for link in 0..18 {
            links.push_str(&format!("\t Link {link}: 26.562 GB/s\n"));
        }
    }
    std::fs::write(dir.path().join("nvlink.out"), links).expect("write");
    let refusals = format!(
        "case \"$1\" in nvlink) cat '{}'; exit 0;; esac\n{refusals}",
        dir.path().join("nvlink.out").display()
    );
    let tools = [
        ("nvidia-smi", rows, refusals),
        ("dmesg", kernel_log.to_string(), String::new()),
    ];
    for (name, output, refusals) in tools {
        let data = dir.path().join(format!("{name}.out"));
        std::fs::write(&data, output).expect("write");
        let script = dir.path().join(name);
        let body = format!("#!/bin/sh\n{refusals}cat '{}'\n", data.display());
        std::fs::write(&script, body).expect("write");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    dir
}

fn run_local(tools: &tempfile::TempDir, code: i32) -> String {
    run_local_with(tools, &[], code)
}

fn run_local_with(tools: &tempfile::TempDir, extra: &[&str], code: i32) -> String {
    let path = format!(
        "{}:{}",
        tools.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Runbook::new()
        .env("PATH", path)
        .args([
            "run",
            "runbooks/gpu-health.rhai",
            "--progress",
            "never",
            "--set",
            "local=true",
            "--set",
            "instance_type=p5e.48xlarge",
        ])
        .args(extra)
        .run()
        .expect_code(code)
        .stdout()
}

#[test]
fn the_health_runbook_judges_this_machine_alone_with_its_own_tools() {
    let healthy = "[    0.685912] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)\n";
    let tools = local_tools(healthy, &[]);
    let out = run_local(&tools, 0);
    assert!(out.contains(": HEALTHY"), "{out}");
    assert!(!out.contains("not asked"), "{out}");
    assert!(
        !out.contains("[step] GPU nodes"),
        "no cluster is touched: {out}"
    );
    assert!(
        !out.contains("NCCL pair sweep"),
        "one machine has no pairs: {out}"
    );

    // The same host after an Xid 79: found on this machine and failing the run.
    let fallen = format!(
        "{healthy}[ 1234.5678] NVRM: Xid (PCI:0000:1b:00): 79, pid=0, GPU has fallen off the bus.\n"
    );
    let tools = local_tools(&fallen, &[]);
    let out = run_local(&tools, 1);
    assert!(out.contains("Xid 79"), "{out}");
    assert!(out.contains("worse than the allowed MONITOR"), "{out}");

    // An older driver that knows neither the recovery action nor the fabric fields: asked
    // again without them, judged on the rest, and said so.
    let tools = local_tools(
        healthy,
        &["gpu_recovery_action", "fabric.state", "fabric.status"],
    );
    let out = run_local(&tools, 0);
    assert!(out.contains(": HEALTHY"), "{out}");
    assert!(
        out.contains(r#"not asked (its driver does not know them): ["gpu_recovery_action", "fabric.state", "fabric.status"]"#),
        "{out}"
    );

    // A DCGM whose diagnostic never returns: the watchdog names it, the run is not passed.
    let tools = local_tools(healthy, &[]);
    let dcgmi = tools.path().join("dcgmi");
    std::fs::write(&dcgmi, "#!/bin/sh\nexec sleep 30\n").expect("write");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dcgmi, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let out = run_local_with(&tools, &["--set", "dcgm_timeout=1s"], 1);
    assert!(
        out.contains(
            "MONITOR: dcgm_watchdog: dcgmi diag -r 1 gave no answer within 1s (the DCGM watchdog)"
        ),
        "{out}"
    );
}
