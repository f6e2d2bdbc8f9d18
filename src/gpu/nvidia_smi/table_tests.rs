//! The default-table parser on real `nvidia-smi` tables (tests/fixtures/real), an old
//! 79-column layout, and text that is not a table.

use super::*;
use crate::gpu::test_fixtures::fixture;

#[test]
fn a10g_580_with_timestamp() {
    let text = fixture("nvidia_smi_table_a10g_g5xlarge_580.txt");
    let report = parse_table(&text).unwrap();
    assert_eq!(
        report.timestamp.as_deref(),
        Some("Mon Dec 22 17:29:56 2025")
    );
    assert_eq!(report.smi_version.as_deref(), Some("580.95.05"));
    assert_eq!(report.driver_version.as_deref(), Some("580.95.05"));
    assert_eq!(report.cuda_version.as_deref(), Some("13.0"));
    assert_eq!(
        report.gpus,
        [TableGpu {
            index: 0,
            name: "NVIDIA A10G".into(),
            persistence_mode: Some("On".into()),
            bus_id: "00000000:00:1E.0".into(),
            display_active: Some("Off".into()),
            volatile_uncorrected_ecc: Some("0".into()),
            fan_percent: Some(0.0),
            temperature_c: Some(17.0),
            perf: Some("P8".into()),
            power_draw_w: Some(11.0),
            power_cap_w: Some(300.0),
            memory_used_mib: Some(0),
            memory_total_mib: Some(23028),
            utilization_percent: Some(0.0),
            compute_mode: Some("Default".into()),
            mig_mode: None,
        }]
    );
    assert!(report.mig_devices.is_empty());
    assert!(report.processes.is_empty());
}

#[test]
fn h100x8_565_without_timestamp() {
    let text = fixture("nvidia_smi_table_h100x8_sxm_565.txt");
    let report = parse_table(&text).unwrap();
    assert_eq!(report.timestamp, None);
    assert_eq!(report.driver_version.as_deref(), Some("565.57.01"));
    assert_eq!(report.cuda_version.as_deref(), Some("12.7"));
    assert_eq!(report.gpus.len(), 8);
    let indexes: Vec<u32> = report.gpus.iter().map(|g| g.index).collect();
    assert_eq!(indexes, [0, 1, 2, 3, 4, 5, 6, 7]);
    let last = &report.gpus[7];
    assert_eq!(last.name, "NVIDIA H100 80GB HBM3");
    assert_eq!(last.bus_id, "00000000:DB:00.0");
    assert_eq!(last.fan_percent, None);
    assert_eq!(last.temperature_c, Some(29.0));
    assert_eq!(last.power_draw_w, Some(75.0));
    assert_eq!(last.power_cap_w, Some(700.0));
    assert_eq!(last.memory_used_mib, Some(1));
    assert_eq!(last.memory_total_mib, Some(81559));
    assert_eq!(last.mig_mode.as_deref(), Some("Disabled"));
    assert_eq!(report.gpus[0].power_draw_w, Some(100.0));
    assert!(report.processes.is_empty());
}

#[test]
fn h100_590_idle_and_load() {
    let idle = fixture("nvidia_smi_table_h100_idle_590.txt");
    let idle = parse_table(&idle).unwrap();
    assert_eq!(idle.driver_version.as_deref(), Some("590.48.01"));
    assert_eq!(idle.cuda_version.as_deref(), Some("13.1"));
    assert_eq!(idle.gpus[0].power_draw_w, Some(69.0));
    assert!(idle.processes.is_empty());

    let load = fixture("nvidia_smi_table_h100_load_590.txt");
    let load = parse_table(&load).unwrap();
    let gpu = &load.gpus[0];
    assert_eq!(gpu.memory_used_mib, Some(19818));
    assert_eq!(gpu.utilization_percent, Some(100.0));
    assert_eq!(gpu.power_draw_w, Some(629.0));
    assert_eq!(gpu.temperature_c, Some(59.0));
    assert_eq!(load.processes.len(), 3);
    assert_eq!(
        load.processes[0],
        TableProcess {
            gpu: 0,
            gi: None,
            ci: None,
            pid: 11327,
            r#type: "C".into(),
            name: "/root/tools/memhog".into(),
            memory_mib: Some(2566),
        }
    );
    assert_eq!(load.processes[2].name, "./gpu_burn");
    assert_eq!(load.processes[2].memory_mib, Some(15690));
}

#[test]
fn h200_idle() {
    let text = fixture("nvidia_smi_table_h200_idle_590.txt");
    let report = parse_table(&text).unwrap();
    assert_eq!(
        report.timestamp.as_deref(),
        Some("Fri Jul  3 22:10:45 2026")
    );
    assert_eq!(report.gpus[0].name, "NVIDIA H200");
    assert_eq!(report.gpus[0].memory_total_mib, Some(143771));
    assert_eq!(report.gpus[0].bus_id, "00000000:83:00.0");
}

#[test]
fn h200_mig_devices_table() {
    let text = fixture("nvidia_smi_table_h200_mig_idle_590.txt");
    let report = parse_table(&text).unwrap();
    let gpu = &report.gpus[0];
    assert_eq!(gpu.mig_mode.as_deref(), Some("Enabled"));
    assert_eq!(gpu.utilization_percent, None);
    assert_eq!(gpu.volatile_uncorrected_ecc.as_deref(), Some("On"));
    assert_eq!(gpu.memory_used_mib, Some(55));
    assert_eq!(report.mig_devices.len(), 5);
    assert_eq!(
        report.mig_devices[0],
        TableMigDevice {
            gpu: 0,
            gi: 2,
            ci: 0,
            mig_dev: 0,
            memory_used_mib: Some(22),
            memory_total_mib: Some(71424),
            bar1_used_mib: Some(0),
            bar1_total_mib: Some(59237),
            sm: Some(16),
            volatile_uncorrected_ecc: Some(0),
            ce: Some(3),
            enc: Some(0),
            dec: Some(3),
            ofa: Some(0),
            jpg: Some(3),
        }
    );
    let last = &report.mig_devices[4];
    assert_eq!((last.gi, last.ci, last.mig_dev), (10, 0, 4));
    assert_eq!(last.memory_total_mib, Some(16384));
    assert_eq!(last.bar1_total_mib, Some(14809));
    assert_eq!(report.mig_devices[2].sm, Some(32));
    assert!(report.processes.is_empty());
}

/// The older 79-column layout, with a process table that lacks GI/CI columns.
const OLD_LAYOUT: &str = "\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 418.87.01    Driver Version: 418.87.01    CUDA Version: 10.1     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla V100-SXM2...  On   | 00000000:00:1E.0 Off |                    0 |
| N/A   36C    P0    38W / 300W |    310MiB / 16130MiB |     42%   E. Process |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                       GPU Memory |
|  GPU       PID   Type   Process name                             Usage      |
|=============================================================================|
|    0      4242      C   C:\\Program Files\\app one.exe                 300MiB |
+-----------------------------------------------------------------------------+
";

#[test]
fn old_layout() {
    let report = parse_table(OLD_LAYOUT).unwrap();
    assert_eq!(report.cuda_version.as_deref(), Some("10.1"));
    let gpu = &report.gpus[0];
    assert_eq!(gpu.name, "Tesla V100-SXM2...");
    assert_eq!(gpu.persistence_mode.as_deref(), Some("On"));
    assert_eq!(gpu.compute_mode.as_deref(), Some("E. Process"));
    assert_eq!(gpu.utilization_percent, Some(42.0));
    assert_eq!(gpu.mig_mode, None);
    let process = &report.processes[0];
    assert_eq!((process.gpu, process.pid, process.gi), (0, 4242, None));
    assert_eq!(process.name, "C:\\Program Files\\app one.exe");
    assert_eq!(process.memory_mib, Some(300));
}

#[test]
fn garbled_gpu_row_names_its_line() {
    let text = fixture("nvidia_smi_table_a10g_g5xlarge_580.txt");
    let garbled = text.replace("|   0  NVIDIA A10G ", "|   X  NVIDIA A10G ");
    let err = parse_table(&garbled).unwrap_err();
    assert!(
        matches!(err, ParseError::Unexpected { line: 9, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("expected a GPU row"), "{err}");

    let cut: String = text.lines().take(9).map(|l| format!("{l}\n")).collect();
    let err = parse_table(&cut).unwrap_err();
    assert!(
        err.to_string().contains("a second row \"| <fan> <temp>"),
        "{err}"
    );
}

#[test]
fn not_a_table() {
    let err = parse_table(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
    )
    .unwrap_err();
    assert!(
        matches!(err, ParseError::Unexpected { line: 1, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("Driver Version"), "{err}");
    let err = parse_table("hello\nworld\n").unwrap_err();
    assert!(
        matches!(err, ParseError::Unexpected { line: 2, .. }),
        "{err}"
    );
    let err = parse_table(
        "| NVIDIA-SMI 1.0  Driver Version: 1.0  CUDA Version: N/A |\n| Processes: |\n|===|\n| 0 1 C x |\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("a process row"), "{err}");
}
