//! `dmesg` on a GPU node of the twin: the NVIDIA driver loading at boot, then what the driver
//! reports for the node's hardware faults, in the line forms of real R535+ drivers
//! (tests/fixtures/real/xid_*.log).

use std::fmt::Write as _;
use std::time::Duration;

use super::gpu_model::GpuDevice;
use super::node_faults::{GpuFaults, NodeFaults};

/// A fault raised before its node booted (named as `gpuN` ahead of time) shows this long after
/// boot, once the driver is up.
const EARLIEST_AFTER_BOOT: Duration = Duration::from_secs(12);

/// The rest of an Xid line after `pid=..., name=...,` for the codes the twin raises by name;
/// the texts are those of real drivers.
fn xid_message(code: u32) -> &'static str {
    match code {
        13 => "Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address",
        31 => {
            "Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f2f_cca58000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ"
        }
        48 => {
            "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 0."
        }
        63 => "Row Remapper: New row marked for remapping, reset gpu to activate.",
        // The line AWS's SageMaker HyperPod guide injects to emulate a failed NVLink.
        74 => "NVLink: fatal error detected on link 0(0x10000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)",
        79 => "GPU has fallen off the bus.",
        94 => "Contained: SM (0x1). RST: No, D-RST: No",
        119 => {
            "Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4)."
        }
        _ => "Ch 00000008",
    }
}

/// `0000:00:1e`, as NVRM names a GPU.
fn nvrm_pci(gpu: &GpuDevice) -> String {
    format!(
        "{:04x}:{:02x}:{:02x}",
        gpu.pci_domain, gpu.pci_bus, gpu.pci_device
    )
}

fn stamp(out: &mut String, since_boot: Duration, line: &str) {
    let _ = writeln!(
        out,
        "[{:>5}.{:06}] {line}",
        since_boot.as_secs(),
        since_boot.subsec_micros()
    );
}

/// The Xids the driver reports for a GPU's faults, each with when it happened (None: since the
/// driver loaded): those raised, 48 for uncorrectable ECC errors, 63 for a pending row remap,
/// 74 for NVLinks down on a GPU that has them.
pub(crate) fn driver_xids(gpu: &GpuDevice, faults: &GpuFaults) -> Vec<(u32, Option<Duration>)> {
    let mut xids: Vec<(u32, Option<Duration>)> = faults
        .xids
        .iter()
        .map(|(code, at)| (*code, Some(*at)))
        .collect();
    if let Some((_, at)) = faults.ecc_uncorrectable {
        xids.push((48, Some(at)));
    }
    if let Some(at) = faults.row_remap_pending {
        xids.push((63, Some(at)));
    }
    if faults.nvlink_down && gpu.nvlinks > 0 {
        xids.push((74, None));
    }
    xids
}

/// The kernel log of a node that booted at `booted`, with `gpus` the GPUs its driver sees,
/// each indexed by its slot (the index a fault names), and the lines written to `/dev/kmsg`
/// since (`written`, each with when).
pub(crate) fn dmesg(
    booted: Duration,
    gpus: &[GpuDevice],
    faults: Option<&NodeFaults>,
    written: &[(Duration, String)],
) -> String {
    let mut out = String::new();
    stamp(
        &mut out,
        Duration::from_micros(4_818_356),
        "nvidia: loading out-of-tree module taints kernel.",
    );
    stamp(
        &mut out,
        Duration::from_micros(4_835_872),
        "nvidia-nvlink: Nvlink Core is being initialized, major device number 239",
    );
    let after_boot = |at: Duration| at.saturating_sub(booted).max(EARLIEST_AFTER_BOOT);
    let mut events: Vec<(Duration, Vec<String>)> = written
        .iter()
        .map(|(at, line)| (at.saturating_sub(booted), vec![line.clone()]))
        .collect();
    let no_faults = NodeFaults::default();
    let faults = faults.unwrap_or(&no_faults);
    for gpu in gpus {
        let Some(on_gpu) = faults.gpu(gpu.index) else {
            continue;
        };
        let pci = nvrm_pci(gpu);
        let xid = |code: u32| {
            format!(
                "NVRM: Xid (PCI:{pci}): {code}, pid='<unknown>', name=<unknown>, {}",
                xid_message(code)
            )
        };
        for (code, at) in driver_xids(gpu, on_gpu) {
            let mut lines = Vec::new();
            if code == 79 {
                lines.push(format!("NVRM: GPU at PCI:{pci}: {}", gpu.uuid));
                lines.push(format!("NVRM: GPU Board Serial Number: {}", gpu.serial));
            }
            lines.push(xid(code));
            if code == 79 {
                lines.push(format!("NVRM: GPU {pci}.0: GPU has fallen off the bus."));
                lines.push(format!(
                    "NVRM: GPU {pci}.0: GPU serial number is {}.",
                    gpu.serial
                ));
            }
            events.push((at.map_or(EARLIEST_AFTER_BOOT, after_boot), lines));
        }
    }
    events.sort_by_key(|(at, _)| *at);
    for (at, lines) in events {
        for (i, line) in lines.iter().enumerate() {
            stamp(&mut out, at + Duration::from_micros(4 * i as u64), line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::gpu_model::GpuHost;
    use super::*;
    use crate::gpu::xid::parse_kernel_log;

    fn gpu() -> GpuDevice {
        GpuHost::a10g("ip-192-168-3-4", 7, "Mon Nov 30 04:43:45 2026").gpus[0].clone()
    }

    #[test]
    fn a_healthy_node_logs_only_the_driver_loading() {
        let log = dmesg(Duration::ZERO, &[gpu()], None, &[]);
        assert!(log.starts_with("[    4.818356] nvidia: loading out-of-tree module"));
        assert!(parse_kernel_log(&log).xids.is_empty());
    }

    #[test]
    fn each_fault_logs_what_the_driver_would_and_the_host_parser_reads_it() {
        let mut faults = NodeFaults::default();
        let on = faults.gpu_mut(0);
        on.xids = vec![(79, Duration::from_secs(700))];
        on.ecc_uncorrectable = Some((2, Duration::from_secs(650)));
        on.row_remap_pending = Some(Duration::from_secs(660));
        let log = dmesg(Duration::from_secs(100), &[gpu()], Some(&faults), &[]);
        assert!(log.contains("[  600.000008] NVRM: Xid (PCI:0000:00:1e): 79, pid='<unknown>'"));
        let parsed = parse_kernel_log(&log);
        let codes: Vec<u32> = parsed.xids.iter().map(|x| x.xid).collect();
        assert_eq!(codes, [48, 63, 79]);
        assert!(log.contains("NVRM: GPU 0000:00:1e.0: GPU has fallen off the bus."));
    }
}
