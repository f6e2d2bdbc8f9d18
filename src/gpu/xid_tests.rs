//! The kernel log reader on real driver messages (tests/fixtures/real).

use super::*;
use crate::gpu::test_fixtures::fixture;

fn log(name: &str) -> KernelLogErrors {
    parse_kernel_log(&fixture(name))
}

#[test]
fn xid_79_new_style_with_nvswitch_sxids() {
    let found = log("xid_79_with_sxid_dmesg_gpud_readme.log");
    assert_eq!(found.codes(), [79]);
    let event = &found.xids[0];
    assert_eq!(event.timestamp.as_deref(), Some("6781741.548779"));
    assert_eq!(event.pci, "0000:91:00");
    assert_eq!((event.pid, event.process.as_deref()), (None, None));
    assert_eq!(event.message, "GPU has fallen off the bus.");
    assert_eq!(found.sxids.len(), 8);
    assert_eq!(found.sxids[0].switch, "nvidia-nvswitch1");
    assert_eq!(found.sxids[0].pci, "0000:06:00.0");
    assert_eq!(found.sxids[0].sxid, 20034);
    assert!(found.sxids[0].fatal);
    assert!(!found.sxids[2].fatal, "a Severity line");
}

#[test]
fn iso_timestamps_and_memory_error_xids() {
    let found = log("xid_48_63_94_dmesg_iso_gpud.log");
    assert_eq!(found.codes(), [48, 63, 94]);
    let dbe = &found.xids[0];
    assert_eq!(
        dbe.timestamp.as_deref(),
        Some("2024-11-15T12:02:03,470068+00:00")
    );
    assert_eq!(dbe.pci, "0000:19:00");
    assert!(dbe.message.starts_with("An uncorrectable double bit error"));
    let with_pid = found
        .xids
        .iter()
        .find(|e| e.pid.is_some())
        .expect("one Xid 94 names its process");
    assert_eq!(with_pid.xid, 94);
    assert_eq!(with_pid.process.as_deref(), Some("python3.10"));
}

#[test]
fn ctime_prefix_and_gsp_timeouts() {
    let found = log("xid_119_gsp_rpc_timeout_dmesg_ctime_xe9680_gpud.log");
    assert_eq!(found.codes(), [119]);
    let first = &found.xids[0];
    assert_eq!(first.timestamp.as_deref(), Some("Sun Feb 23 16:24:18 2025"));
    assert_eq!(first.pid, Some(2_024_380));
    assert_eq!(first.process.as_deref(), Some("nvidia-smi"));
    assert!(first.message.starts_with("Timeout after 6s"));
}

#[test]
fn dmesg_decode_facility_prefix() {
    let found = log("xid_13_43_dmesg_decode_iso_gpud_excerpt.log");
    assert_eq!(found.codes(), [13, 43]);
    let first = &found.xids[0];
    assert_eq!(
        first.timestamp.as_deref(),
        Some("2025-01-21T02:21:33,498559+00:00")
    );
    let ch = found.xids.iter().find(|e| e.xid == 43).unwrap();
    assert_eq!(ch.process.as_deref(), Some("pt_main_thread"));
    assert_eq!(ch.message, "Ch 00000008");
}

#[test]
fn application_xids_among_other_kernel_lines() {
    let found = log("xid_13_109_dmesg_ctime_gpud_readme.log");
    assert_eq!(found.codes(), [13, 109, 31]);
    assert!(found.sxids.is_empty() && found.fallen_off_bus.is_empty());
}

#[test]
fn mixed_prefixes_caused_by_and_the_no_xid_block() {
    let found = log("xid_kernel_log_lines_mixed_sources.txt");
    assert_eq!(found.codes(), [63, 43, 45]);
    assert_eq!(found.xids[0].timestamp, None, "a bare line");
    assert_eq!(found.xids[0].pid, Some(1896));
    assert_eq!(found.xids[0].process, None, "no name= field");
    assert_eq!(found.xids[1].timestamp.as_deref(), Some("1231741.378609"));
    assert_eq!(found.xids[2].timestamp, None, "`kernel:` alone is no time");
    assert_eq!(found.xids[2].caused_by, Some(149));
    assert_eq!(found.xids[3].caused_by, Some(145));
    assert_eq!(
        found.fallen_off_bus,
        [FallenOffBus {
            line: 10,
            timestamp: Some("1843.308145".into()),
            pci: "0000:b3:00.0".into()
        }]
    );
}

#[test]
fn a_log_without_driver_errors_is_empty() {
    let found = parse_kernel_log(
        "[    0.000000] Linux version 6.1.0\n[ 5.1] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05\n",
    );
    assert_eq!(found, KernelLogErrors::default());
}
