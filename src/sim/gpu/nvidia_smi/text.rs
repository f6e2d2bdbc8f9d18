//! The plain-text outputs of `nvidia-smi`: `-L`, `--version`, `-h`, `topo -m` and `-q`.

use std::fmt::Write as _;

use super::super::gpu_model::{GpuDevice, GpuHost, MigMode};

/// `-L`: one line per GPU.
pub(crate) fn list(host: &GpuHost) -> String {
    host.gpus
        .iter()
        .map(|g| format!("GPU {}: {} (UUID: {})\n", g.index, g.name, g.uuid))
        .collect()
}

/// `--version`: the tool, NVML (major.minor of the driver), driver and CUDA versions.
pub(crate) fn version(host: &GpuHost) -> String {
    let nvml: Vec<&str> = host.driver_version.split('.').take(2).collect();
    format!(
        "NVIDIA-SMI version  : {0}\nNVML version        : {1}\nDRIVER version      : {0}\n\
         CUDA Version        : {2}\n",
        host.driver_version,
        nvml.join("."),
        host.cuda_version
    )
}

/// `-h`: the head of the real help text (up to the selective query options).
pub(crate) fn help(host: &GpuHost) -> String {
    format!(
        "NVIDIA System Management Interface -- v{}\n\n{HELP}",
        host.driver_version
    )
}

const HELP: &str = "\
NVSMI provides monitoring information for Tesla and select Quadro devices.
The data is presented in either a plain text or an XML format, via stdout or a file.
NVSMI also provides several management operations for changing the device state.

Note that the functionality of NVSMI is exposed through the NVML C-based
library. See the NVIDIA developer website for more information about NVML.
Python wrappers to NVML are also available.  The output of NVSMI is
not guaranteed to be backwards compatible; NVML and the bindings are backwards
compatible.

http://developer.nvidia.com/nvidia-management-library-nvml/
http://pypi.python.org/pypi/nvidia-ml-py/
Supported products:
- Full Support
    - All Tesla products, starting with the Kepler architecture
    - All Quadro products, starting with the Kepler architecture
    - All GRID products, starting with the Kepler architecture
    - GeForce Titan products, starting with the Kepler architecture
- Limited Support
    - All Geforce products, starting with the Kepler architecture
nvidia-smi [OPTION1 [ARG1]] [OPTION2 [ARG2]] ...

    -h,   --help                Print usage information and exit.

  LIST OPTIONS:

    -L,   --list-gpus           Display a list of GPUs connected to the system.

    -B,   --list-excluded-gpus  Display a list of excluded GPUs in the system.

  SUMMARY OPTIONS:

    <no arguments>              Show a summary of GPUs connected to the system.

    [plus any of]

    -i,   --id=                 Target a specific GPU.
    -f,   --filename=           Log to a specified file, rather than to stdout.
    -l,   --loop=               Probe until Ctrl+C at specified second interval.

  QUERY OPTIONS:

    -q,   --query               Display GPU or Unit info.

    [plus any of]

    -u,   --unit                Show unit, rather than GPU, attributes.
    -i,   --id=                 Target a specific GPU or Unit.
    -f,   --filename=           Log to a specified file, rather than to stdout.
    -x,   --xml-format          Produce XML output.
          --dtd                 When showing xml output, embed DTD.

  SELECTIVE QUERY OPTIONS:

    Allows the caller to pass an explicit list of properties to query.

    [one of]

    --query-gpu                 Information about GPU.
                                Call --help-query-gpu for more info.

    [mandatory]

    --format=                   Comma separated list of format options:
                                  csv - comma separated values (MANDATORY)
                                  noheader - skip the first line with column headers
                                  nounits - don't print units for numerical
                                             values

Please see the nvidia-smi(1) manual page for more detailed information.
";

/// How two GPUs of `host` reach each other, as `topo -m` names it: over all their NVLinks
/// (`NV18`) when both have them up, else over PCIe within a NUMA node (`NODE`) or across the
/// SMP interconnect (`SYS`); one GPU alone sits behind the host bridge (`PHB`).
fn gpu_link(host: &GpuHost, a: &GpuDevice, b: &GpuDevice) -> String {
    if a.nvlinks > 0 && b.nvlinks > 0 && !a.nvlink_down && !b.nvlink_down {
        return format!("NV{}", a.nvlinks.min(b.nvlinks));
    }
    pcie_link(
        host.numa_of(a.index),
        host.numa_of(b.index),
        host.gpus.len(),
    )
}

fn pcie_link(numa_a: u32, numa_b: u32, devices: usize) -> String {
    if devices <= 1 {
        "PHB".to_owned()
    } else if numa_a == numa_b {
        "NODE".to_owned()
    } else {
        "SYS".to_owned()
    }
}

/// The NUMA node of NIC `nic`: NICs split evenly over the nodes, like the GPUs.
fn nic_numa(host: &GpuHost, nic: usize) -> u32 {
    let nodes = host.numa_nodes.max(1) as usize;
    let per_node = host.nics.len().div_ceil(nodes).max(1);
    u32::try_from(nic / per_node).unwrap_or(0)
}

/// Which GPU's PCIe switch NIC `nic` shares (the EFA NICs of an 8-GPU type are spread evenly
/// over its GPUs' switches).
fn nic_gpu(host: &GpuHost, nic: usize) -> usize {
    let per_gpu = host.nics.len().div_ceil(host.gpus.len().max(1)).max(1);
    nic / per_gpu
}

/// `topo -m`: the matrix of GPUs and NICs (with its underline escapes), then the legends.
pub(crate) fn topology(host: &GpuHost) -> String {
    let mut out = String::from("\t\u{1b}[4m");
    for gpu in &host.gpus {
        let _ = write!(out, "GPU{}\t", gpu.index);
    }
    for nic in 0..host.nics.len() {
        let _ = write!(out, "NIC{nic}\t");
    }
    out.push_str("CPU Affinity\tNUMA Affinity\tGPU NUMA ID\u{1b}[0m\n");
    for gpu in &host.gpus {
        let _ = write!(out, "GPU{}\t", gpu.index);
        for peer in &host.gpus {
            if peer.index == gpu.index {
                out.push_str(" X \t");
            } else {
                let _ = write!(out, "{}\t", gpu_link(host, gpu, peer));
            }
        }
        for nic in 0..host.nics.len() {
            let link = if nic_gpu(host, nic) == gpu.index as usize {
                "PXB".to_owned()
            } else {
                pcie_link(host.numa_of(gpu.index), nic_numa(host, nic), 2)
            };
            let _ = write!(out, "{link}\t");
        }
        let numa = host.numa_of(gpu.index);
        let _ = writeln!(out, "{}\t{numa}\t\tN/A", host.cpus_of(numa));
    }
    for nic in 0..host.nics.len() {
        let _ = write!(out, "NIC{nic}\t");
        for gpu in &host.gpus {
            let link = if nic_gpu(host, nic) == gpu.index as usize {
                "PXB".to_owned()
            } else {
                pcie_link(host.numa_of(gpu.index), nic_numa(host, nic), 2)
            };
            let _ = write!(out, "{link}\t");
        }
        for peer in 0..host.nics.len() {
            let link = if peer == nic {
                " X ".to_owned()
            } else if nic_gpu(host, peer) == nic_gpu(host, nic) {
                "PIX".to_owned()
            } else {
                pcie_link(nic_numa(host, nic), nic_numa(host, peer), 2)
            };
            let _ = write!(out, "{link}\t");
        }
        // A NIC has no CPU, NUMA or GPU NUMA cell: they print empty (nvidia/nccl#1264).
        out.push_str("\t\t\t\n");
    }
    out.push_str(LEGEND);
    if !host.nics.is_empty() {
        out.push_str("\nNIC Legend:\n\n");
        for (i, nic) in host.nics.iter().enumerate() {
            let _ = writeln!(out, "  NIC{i}: {nic}");
        }
        out.push('\n');
    }
    out
}

/// `nvlink -s`: each GPU's links and their speed, `<inactive>` for a link that is down; a GPU
/// without NVLink prints its name line only.
pub(crate) fn nvlink_status(host: &GpuHost) -> String {
    let mut out = String::new();
    for gpu in &host.gpus {
        let _ = writeln!(out, "GPU {}: {} (UUID: {})", gpu.index, gpu.name, gpu.uuid);
        for link in 0..gpu.nvlinks {
            if gpu.nvlink_down {
                let _ = writeln!(out, "\t Link {link}: <inactive>");
            } else {
                let _ = writeln!(out, "\t Link {link}: {}", gpu.nvlink_speed);
            }
        }
    }
    out
}

const LEGEND: &str = "
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
";

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
    let na = "N/A";
    let idle = gpu.performance_state == 8;
    let enabled = |on: bool| if on { "Enabled" } else { "Disabled" };
    let mig = match gpu.mig_mode {
        MigMode::Unsupported => na,
        MigMode::Disabled => "Disabled",
        MigMode::Enabled => "Enabled",
    };
    r.section(0, &format!("GPU {}", gpu.bus_id()));
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
    r.kv(2, "Current", na);
    r.kv(2, "Pending", na);
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
    r.kv(1, "Board Part Number", na);
    r.kv(1, "GPU Part Number", "000-00000-0000-000");
    r.kv(1, "FRU Part Number", na);
    r.kv(1, "Module ID", 0);
    r.section(1, "Inforom Version");
    r.kv(2, "Image Version", &gpu.inforom_image);
    r.kv(2, "OEM Object", "2.0");
    r.kv(2, "ECC Object", "6.16");
    r.kv(2, "Power Management Object", na);
    r.section(1, "Inforom BBX Object Flush");
    r.kv(2, "Latest Timestamp", na);
    r.kv(2, "Latest Duration", na);
    r.section(1, "GPU Operation Mode");
    r.kv(2, "Current", na);
    r.kv(2, "Pending", na);
    r.kv(1, "GPU C2C Mode", na);
    r.section(1, "GPU Virtualization Mode");
    r.kv(2, "Virtualization Mode", "Pass-Through");
    r.kv(2, "Host VGPU Mode", na);
    r.kv(2, "vGPU Heterogeneous Mode", na);
    r.section(1, "GPU Reset Status");
    r.kv(2, "Reset Required", "No");
    r.kv(2, "Drain and Reset Recommended", "No");
    r.kv(1, "GPU Recovery Action", "None");
    r.kv(1, "GSP Firmware Version", &host.driver_version);
    r.section(1, "IBMNPU");
    r.kv(2, "Relaxed Ordering Mode", na);
    pci(r, gpu, idle);
    r.kv(
        1,
        "Fan Speed",
        gpu.fan_percent
            .map_or_else(|| na.to_owned(), |f| format!("{f} %")),
    );
    r.kv(1, "Performance State", gpu.pstate());
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
    r.kv(1, "Sparse Operation Mode", na);
    memory(r, gpu);
    errors(r, gpu);
    power_and_clocks(r, gpu, idle);
    processes(r, host, gpu);
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
#[path = "text_tests.rs"]
mod tests;
