//! `nvidia-smi -q`: the plain-text NVSMI log of every GPU, or with `-d` only the sections of
//! the display types asked for.

use std::fmt::Write as _;

use super::super::gpu_model::{GpuDevice, GpuHost, MigMode};

const NA: &str = "N/A";

/// Writes `label : value` lines with the value column at 44, as `-q` does.
struct Report {
    out: String,
}

impl Report {
    fn kv(&mut self, level: usize, label: &str, value: impl std::fmt::Display) {
        let indent = "    ".repeat(level);
        let width = 42usize.saturating_sub(indent.len());
        let _ = writeln!(self.out, "{indent}{label:<width$}: {value}");
    }

    fn section(&mut self, level: usize, label: &str) {
        let _ = writeln!(self.out, "{}{label}", "    ".repeat(level));
    }
}

/// A `-d` display type: which sections of the `-q` log to print. The twin prints these; the
/// real tool knows more (UTILIZATION, POWER, CLOCK, ...), which the twin answers as unsupported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Display {
    Memory,
    Ecc,
    PageRetirement,
    RowRemapper,
    Temperature,
}

impl Display {
    /// `-d ECC,ROW_REMAPPER,page_retirement`: names in any case, comma separated. `None` when
    /// one is not a display type the twin prints.
    pub(crate) fn parse_list(list: &str) -> Option<Vec<Self>> {
        list.split(',')
            .map(|name| match name.trim().to_ascii_uppercase().as_str() {
                "MEMORY" => Some(Self::Memory),
                "ECC" => Some(Self::Ecc),
                "PAGE_RETIREMENT" => Some(Self::PageRetirement),
                "ROW_REMAPPER" => Some(Self::RowRemapper),
                "TEMPERATURE" => Some(Self::Temperature),
                _ => None,
            })
            .collect()
    }
}

/// `-q`: the plain-text log (570-series layout, GA102 values); with `-d`, only the sections
/// of those display types under each GPU's bus id, as the real tool prints them.
pub(crate) fn query(host: &GpuHost, display: Option<&[Display]>) -> String {
    let mut r = Report {
        out: String::from("\n==============NVSMI LOG==============\n\n"),
    };
    r.kv(0, "Timestamp", &host.timestamp);
    r.kv(0, "Driver Version", &host.driver_version);
    r.kv(0, "CUDA Version", &host.cuda_version);
    r.out.push('\n');
    r.kv(0, "Attached GPUs", host.gpus.len());
    for (n, gpu) in host.gpus.iter().enumerate() {
        if n > 0 {
            r.out.push('\n');
        }
        match display {
            None => gpu_section(&mut r, host, gpu),
            Some(display) => displayed_sections(&mut r, gpu, display),
        }
    }
    r.out
}

/// The sections `-d` asks for, in the order of the full log whatever the order asked.
fn displayed_sections(r: &mut Report, gpu: &GpuDevice, display: &[Display]) {
    r.section(0, &format!("GPU {}", gpu.bus_id()));
    let wants = |d: Display| display.contains(&d);
    if wants(Display::Memory) {
        memory_usage(r, gpu);
    }
    if wants(Display::Ecc) {
        ecc(r, gpu);
    }
    if wants(Display::PageRetirement) {
        retired_pages(r);
    }
    if wants(Display::RowRemapper) {
        remapped_rows(r, gpu);
    }
    if wants(Display::Temperature) {
        temperature(r, gpu);
    }
}

fn gpu_section(r: &mut Report, host: &GpuHost, gpu: &GpuDevice) {
    let idle = gpu.performance_state == 8;
    r.section(0, &format!("GPU {}", gpu.bus_id()));
    product_and_modes(r, gpu);
    board(r, gpu);
    firmware_and_virtualization(r, host, gpu);
    pci(r, gpu, idle);
    r.kv(
        1,
        "Fan Speed",
        gpu.fan_percent
            .map_or_else(|| NA.to_owned(), |f| format!("{f} %")),
    );
    r.kv(1, "Performance State", gpu.pstate());
    clocks_event_reasons(r, idle);
    r.kv(1, "Sparse Operation Mode", NA);
    memory(r, gpu);
    errors(r, gpu);
    power_and_clocks(r, gpu, idle);
    processes(r, host, gpu);
}

/// From the product name to the driver model: what the GPU is and its display, persistence,
/// MIG and accounting modes.
fn product_and_modes(r: &mut Report, gpu: &GpuDevice) {
    let enabled = |on: bool| if on { "Enabled" } else { "Disabled" };
    let mig = match gpu.mig_mode {
        MigMode::Unsupported => NA,
        MigMode::Disabled => "Disabled",
        MigMode::Enabled => "Enabled",
    };
    r.kv(1, "Product Name", &gpu.name);
    r.kv(1, "Product Brand", "NVIDIA");
    r.kv(1, "Product Architecture", &gpu.architecture);
    r.kv(1, "Display Mode", "Disabled");
    r.kv(1, "Display Active", "Disabled");
    r.kv(1, "Persistence Mode", enabled(gpu.persistence_mode));
    r.kv(1, "Addressing Mode", "None");
    r.section(1, "MIG Mode");
    r.kv(2, "Current", mig);
    r.kv(2, "Pending", mig);
    r.kv(1, "Accounting Mode", "Disabled");
    r.kv(1, "Accounting Mode Buffer Size", 4000);
    r.section(1, "Driver Model");
    r.kv(2, "Current", NA);
    r.kv(2, "Pending", NA);
}

/// The board's identity: serial, UUID, VBIOS and part numbers.
fn board(r: &mut Report, gpu: &GpuDevice) {
    r.kv(1, "Serial Number", &gpu.serial);
    r.kv(1, "GPU UUID", &gpu.uuid);
    r.kv(1, "Minor Number", gpu.index);
    r.kv(1, "VBIOS Version", &gpu.vbios_version);
    r.kv(1, "MultiGPU Board", "No");
    r.kv(
        1,
        "Board ID",
        format!("0x{:x}", gpu.pci_bus << 8 | gpu.pci_device),
    );
    r.kv(1, "Board Part Number", NA);
    r.kv(1, "GPU Part Number", "000-00000-0000-000");
    r.kv(1, "FRU Part Number", NA);
    r.kv(1, "Module ID", 0);
}

/// The InfoROM and GSP firmware, the operation and virtualization modes, the reset status.
fn firmware_and_virtualization(r: &mut Report, host: &GpuHost, gpu: &GpuDevice) {
    r.section(1, "Inforom Version");
    r.kv(2, "Image Version", &gpu.inforom_image);
    r.kv(2, "OEM Object", "2.0");
    r.kv(2, "ECC Object", "6.16");
    r.kv(2, "Power Management Object", NA);
    r.section(1, "Inforom BBX Object Flush");
    r.kv(2, "Latest Timestamp", NA);
    r.kv(2, "Latest Duration", NA);
    r.section(1, "GPU Operation Mode");
    r.kv(2, "Current", NA);
    r.kv(2, "Pending", NA);
    r.kv(1, "GPU C2C Mode", NA);
    r.section(1, "GPU Virtualization Mode");
    r.kv(2, "Virtualization Mode", "Pass-Through");
    r.kv(2, "Host VGPU Mode", NA);
    r.kv(2, "vGPU Heterogeneous Mode", NA);
    r.section(1, "GPU Reset Status");
    r.kv(2, "Reset Required", "No");
    r.kv(2, "Drain and Reset Recommended", "No");
    r.kv(1, "GPU Recovery Action", "None");
    r.kv(1, "GSP Firmware Version", &host.driver_version);
    r.section(1, "IBMNPU");
    r.kv(2, "Relaxed Ordering Mode", NA);
}

/// Why the clocks are where they are: only Idle, and only at P8.
fn clocks_event_reasons(r: &mut Report, idle: bool) {
    r.section(1, "Clocks Event Reasons");
    r.kv(2, "Idle", if idle { "Active" } else { "Not Active" });
    for (level, reason) in [
        (2, "Applications Clocks Setting"),
        (2, "SW Power Cap"),
        (2, "HW Slowdown"),
        (3, "HW Thermal Slowdown"),
        (3, "HW Power Brake Slowdown"),
        (2, "Sync Boost"),
        (2, "SW Thermal Slowdown"),
        (2, "Display Clock Setting"),
    ] {
        r.kv(level, reason, "Not Active");
    }
}

fn pci(r: &mut Report, gpu: &GpuDevice, idle: bool) {
    let generation = if idle { 1 } else { 4 };
    r.section(1, "PCI");
    r.kv(2, "Bus", format!("0x{:02X}", gpu.pci_bus));
    r.kv(2, "Device", format!("0x{:02X}", gpu.pci_device));
    r.kv(2, "Domain", format!("0x{:04X}", gpu.pci_domain));
    r.kv(2, "Base Classcode", "0x3");
    r.kv(2, "Sub Classcode", "0x2");
    r.kv(2, "Device Id", format!("0x{:08X}", gpu.pci_device_id));
    r.kv(2, "Bus Id", gpu.bus_id());
    r.kv(
        2,
        "Sub System Id",
        format!("0x{:08X}", gpu.pci_sub_system_id),
    );
    r.section(2, "GPU Link Info");
    r.section(3, "PCIe Generation");
    r.kv(4, "Max", 4);
    r.kv(4, "Current", generation);
    r.kv(4, "Device Current", generation);
    r.kv(4, "Device Max", 4);
    r.kv(4, "Host Max", 4);
    r.section(3, "Link Width");
    r.kv(4, "Max", "16x");
    r.kv(4, "Current", "8x");
    r.section(2, "Bridge Chip");
    r.kv(3, "Type", "N/A");
    r.kv(3, "Firmware", "N/A");
    r.kv(2, "Replays Since Reset", 0);
    r.kv(2, "Replay Number Rollovers", 0);
    r.kv(2, "Tx Throughput", "0 KB/s");
    r.kv(2, "Rx Throughput", "0 KB/s");
    r.kv(2, "Atomic Caps Outbound", "N/A");
    r.kv(2, "Atomic Caps Inbound", "N/A");
}

fn memory(r: &mut Report, gpu: &GpuDevice) {
    memory_usage(r, gpu);
    r.kv(1, "Compute Mode", &gpu.compute_mode);
    r.section(1, "Utilization");
    r.kv(2, "GPU", format!("{} %", gpu.utilization_percent));
    r.kv(2, "Memory", format!("{} %", gpu.memory_utilization_percent));
    for label in ["Encoder", "Decoder", "JPEG", "OFA"] {
        r.kv(2, label, "0 %");
    }
    for section in ["Encoder Stats", "FBC Stats"] {
        r.section(1, section);
        r.kv(2, "Active Sessions", 0);
        r.kv(2, "Average FPS", 0);
        r.kv(2, "Average Latency", 0);
    }
}

fn memory_usage(r: &mut Report, gpu: &GpuDevice) {
    let mib = |v: u64| format!("{v} MiB");
    r.section(1, "FB Memory Usage");
    r.kv(2, "Total", mib(gpu.memory_total_mib));
    r.kv(2, "Reserved", mib(gpu.memory_reserved_mib));
    r.kv(2, "Used", mib(gpu.memory_used_mib));
    r.kv(2, "Free", mib(gpu.memory_free_mib()));
    r.section(1, "BAR1 Memory Usage");
    r.kv(2, "Total", mib(gpu.bar1_total_mib));
    r.kv(2, "Used", mib(1));
    r.kv(2, "Free", mib(gpu.bar1_total_mib.saturating_sub(1)));
    r.section(1, "Conf Compute Protected Memory Usage");
    for label in ["Total", "Used", "Free"] {
        r.kv(2, label, mib(0));
    }
}

fn errors(r: &mut Report, gpu: &GpuDevice) {
    r.section(1, "DRAM Encryption Mode");
    r.kv(2, "Current", "N/A");
    r.kv(2, "Pending", "N/A");
    ecc(r, gpu);
    retired_pages(r);
    remapped_rows(r, gpu);
    temperature(r, gpu);
}

fn ecc(r: &mut Report, gpu: &GpuDevice) {
    let ecc = if gpu.ecc_enabled {
        "Enabled"
    } else {
        "Disabled"
    };
    r.section(1, "ECC Mode");
    r.kv(2, "Current", ecc);
    r.kv(2, "Pending", ecc);
    r.section(1, "ECC Errors");
    for scope in ["Volatile", "Aggregate"] {
        r.section(2, scope);
        r.kv(3, "SRAM Correctable", 0);
        r.kv(3, "SRAM Uncorrectable Parity", 0);
        r.kv(3, "SRAM Uncorrectable SEC-DED", 0);
        r.kv(3, "DRAM Correctable", 0);
        r.kv(3, "DRAM Uncorrectable", gpu.ecc_uncorrected_volatile);
    }
    r.kv(3, "SRAM Threshold Exceeded", "No");
    r.section(2, "Aggregate Uncorrectable SRAM Sources");
    for source in [
        "SRAM L2",
        "SRAM SM",
        "SRAM Microcontroller",
        "SRAM PCIE",
        "SRAM Other",
    ] {
        r.kv(3, source, 0);
    }
}

/// An A10G remaps rows instead of retiring pages: every count is N/A.
fn retired_pages(r: &mut Report) {
    r.section(1, "Retired Pages");
    r.kv(2, "Single Bit ECC", "N/A");
    r.kv(2, "Double Bit ECC", "N/A");
    r.kv(2, "Pending Page Blacklist", "N/A");
}

fn remapped_rows(r: &mut Report, gpu: &GpuDevice) {
    r.section(1, "Remapped Rows");
    r.kv(2, "Correctable Error", 0);
    r.kv(2, "Uncorrectable Error", gpu.remapped_rows_uncorrectable);
    r.kv(
        2,
        "Pending",
        if gpu.remapped_rows_pending {
            "Yes"
        } else {
            "No"
        },
    );
    r.kv(2, "Remapping Failure Occurred", "No");
    r.section(2, "Bank Remap Availability Histogram");
    r.kv(3, "Max", "192 bank(s)");
    for bucket in ["High", "Partial", "Low", "None"] {
        r.kv(3, bucket, "0 bank(s)");
    }
}

fn temperature(r: &mut Report, gpu: &GpuDevice) {
    r.section(1, "Temperature");
    r.kv(2, "GPU Current Temp", format!("{} C", gpu.temperature_c));
    r.kv(2, "GPU T.Limit Temp", "N/A");
    r.kv(2, "GPU Shutdown Temp", "98 C");
    r.kv(2, "GPU Slowdown Temp", "95 C");
    r.kv(2, "GPU Max Operating Temp", "88 C");
    r.kv(2, "GPU Target Temperature", "N/A");
    r.kv(2, "Memory Current Temp", "N/A");
    r.kv(2, "Memory Max Operating Temp", "N/A");
}

fn power_and_clocks(r: &mut Report, gpu: &GpuDevice, idle: bool) {
    let w = |v: f64| format!("{v:.2} W");
    let mhz = |v: u32| format!("{v} MHz");
    r.section(1, "GPU Power Readings");
    r.kv(2, "Average Power Draw", w(gpu.power_draw_w));
    r.kv(2, "Instantaneous Power Draw", w(gpu.power_draw_w));
    r.kv(2, "Current Power Limit", w(f64::from(gpu.power_cap_w)));
    r.kv(2, "Requested Power Limit", w(f64::from(gpu.power_cap_w)));
    r.kv(2, "Default Power Limit", w(f64::from(gpu.power_max_w)));
    r.kv(2, "Min Power Limit", w(f64::from(gpu.power_min_w)));
    r.kv(2, "Max Power Limit", w(f64::from(gpu.power_max_w)));
    r.section(1, "GPU Memory Power Readings ");
    r.kv(2, "Average Power Draw", "N/A");
    r.kv(2, "Instantaneous Power Draw", "N/A");
    r.section(1, "Module Power Readings");
    for label in [
        "Average Power Draw",
        "Instantaneous Power Draw",
        "Current Power Limit",
        "Requested Power Limit",
        "Default Power Limit",
        "Min Power Limit",
        "Max Power Limit",
    ] {
        r.kv(2, label, "N/A");
    }
    r.kv(1, "Power Smoothing", "N/A");
    r.section(1, "Workload Power Profiles");
    r.kv(2, "Requested Profiles", "N/A");
    r.kv(2, "Enforced Profiles", "N/A");
    r.section(1, "Clocks");
    r.kv(2, "Graphics", mhz(gpu.clock_graphics_mhz));
    r.kv(2, "SM", mhz(gpu.clock_sm_mhz));
    r.kv(2, "Memory", mhz(gpu.clock_mem_mhz));
    r.kv(2, "Video", mhz(gpu.clock_video_mhz));
    for section in ["Applications Clocks", "Default Applications Clocks"] {
        r.section(1, section);
        r.kv(2, "Graphics", mhz(gpu.max_clock_graphics_mhz));
        r.kv(2, "Memory", mhz(gpu.max_clock_mem_mhz));
    }
    r.section(1, "Deferred Clocks");
    r.kv(2, "Memory", "N/A");
    r.section(1, "Max Clocks");
    r.kv(2, "Graphics", mhz(gpu.max_clock_graphics_mhz));
    r.kv(2, "SM", mhz(gpu.max_clock_graphics_mhz));
    r.kv(2, "Memory", mhz(gpu.max_clock_mem_mhz));
    r.kv(2, "Video", mhz(gpu.max_clock_video_mhz));
    r.section(1, "Max Customer Boost Clocks");
    r.kv(2, "Graphics", mhz(gpu.max_clock_graphics_mhz));
    r.section(1, "Clock Policy");
    r.kv(2, "Auto Boost", "N/A");
    r.kv(2, "Auto Boost Default", "N/A");
    r.section(1, "Voltage");
    r.kv(
        2,
        "Graphics",
        if idle { "693.750 mV" } else { "881.250 mV" },
    );
    r.section(1, "Fabric");
    for label in ["State", "Status", "CliqueId", "ClusterUUID"] {
        r.kv(2, label, "N/A");
    }
    r.section(2, "Health");
    for label in [
        "Bandwidth",
        "Route Recovery in progress",
        "Route Unhealthy",
        "Access Timeout Recovery",
    ] {
        r.kv(3, label, "N/A");
    }
}

fn processes(r: &mut Report, host: &GpuHost, gpu: &GpuDevice) {
    let mut listed = host.processes_on(gpu.index).peekable();
    if listed.peek().is_none() {
        r.kv(1, "Processes", "None");
    } else {
        r.section(1, "Processes");
        for process in listed {
            r.kv(2, "GPU instance ID", "N/A");
            r.kv(2, "Compute instance ID", "N/A");
            r.kv(2, "Process ID", process.pid);
            r.kv(3, "Type", &process.process_type);
            r.kv(3, "Name", &process.name);
            r.kv(
                3,
                "Used GPU Memory",
                format!("{} MiB", process.used_memory_mib),
            );
        }
    }
    r.section(1, "Capabilities");
    r.kv(2, "EGM", "disabled");
}

#[cfg(test)]
#[path = "query_log_tests.rs"]
mod tests;
