//! The short plain-text outputs of `nvidia-smi`: `-L`, `--version`, `-h`, `topo -m` and
//! `nvlink -s` (the `-q` log is query_log.rs).

use std::fmt::Write as _;

use super::super::gpu_model::{GpuDevice, GpuHost};

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

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
