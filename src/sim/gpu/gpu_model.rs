//! The GPU host behind the twin's NVIDIA tools: its devices, their processes, and the identity
//! (UUID, serial, idle readings) that a seed derives for each GPU of a catalog instance type.

use super::boards::{self, Board};
use crate::lab::gpu_catalog::GpuInstanceType;

/// The driver of the lab's AL2023 NVIDIA AMI.
pub(crate) const DRIVER_VERSION: &str = "580.95.05";
/// The CUDA version that driver reports.
pub(crate) const CUDA_VERSION: &str = "13.0";

/// A deterministic stream of numbers from one seed (SplitMix64): same seed, same numbers.
#[derive(Debug, Clone)]
pub(crate) struct SeedStream {
    state: u64,
}

impl SeedStream {
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (0 when `bound` is 0).
    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            0
        } else {
            self.next_u64() % bound
        }
    }

    /// A number in `low..=high`.
    pub(crate) fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high.saturating_sub(low) + 1)
    }
}

/// A stable 64-bit hash of a name (FNV-1a), e.g. to seed a host from its node name.
pub(crate) fn seed_from_name(name: &str) -> u64 {
    name.bytes().fold(0xCBF2_9CE4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// Whether a GPU can be partitioned, and how it is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MigMode {
    /// The GPU has no MIG (the A10G): tools print `N/A` / `[N/A]`.
    Unsupported,
    Disabled,
    #[expect(
        dead_code,
        reason = "the twin enables MIG on no GPU yet; the printers already show one as nvidia-smi does"
    )]
    Enabled,
}

/// One GPU as the driver sees it. The fields are what `nvidia-smi` prints.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GpuDevice {
    pub(crate) index: u32,
    pub(crate) name: String,
    pub(crate) architecture: String,
    pub(crate) uuid: String,
    pub(crate) serial: String,
    pub(crate) pci_domain: u32,
    pub(crate) pci_bus: u32,
    pub(crate) pci_device: u32,
    /// Device and vendor id, as `nvidia-smi` prints it (`0x223710DE`).
    pub(crate) pci_device_id: u32,
    pub(crate) pci_sub_system_id: u32,
    pub(crate) vbios_version: String,
    pub(crate) inforom_image: String,
    pub(crate) compute_cap: String,
    pub(crate) memory_total_mib: u64,
    pub(crate) memory_reserved_mib: u64,
    pub(crate) memory_used_mib: u64,
    pub(crate) bar1_total_mib: u64,
    pub(crate) temperature_c: u32,
    /// `None` where the board reports no fan (`N/A`).
    pub(crate) fan_percent: Option<u32>,
    pub(crate) power_draw_w: f64,
    pub(crate) power_cap_w: u32,
    pub(crate) power_min_w: u32,
    pub(crate) power_max_w: u32,
    pub(crate) utilization_percent: u32,
    pub(crate) memory_utilization_percent: u32,
    /// The `N` of the performance state `PN` (8 at idle, 0 under load).
    pub(crate) performance_state: u8,
    pub(crate) persistence_mode: bool,
    pub(crate) mig_mode: MigMode,
    pub(crate) compute_mode: String,
    pub(crate) ecc_enabled: bool,
    pub(crate) ecc_uncorrected_volatile: u64,
    /// Rows remapped after uncorrectable errors, and whether one waits for a GPU reset.
    pub(crate) remapped_rows_uncorrectable: u64,
    pub(crate) remapped_rows_pending: bool,
    /// Fallen off the bus (Xid 79): listed by the driver, answering nothing.
    pub(crate) lost: bool,
    pub(crate) clock_graphics_mhz: u32,
    pub(crate) clock_sm_mhz: u32,
    pub(crate) clock_mem_mhz: u32,
    pub(crate) clock_video_mhz: u32,
    pub(crate) max_clock_graphics_mhz: u32,
    pub(crate) max_clock_mem_mhz: u32,
    pub(crate) max_clock_video_mhz: u32,
    /// NVLinks of the GPU (0 on a PCIe board), each at `nvlink_speed` (`26.562 GB/s`), and
    /// whether they are down (a fault): its peers then reach it over PCIe.
    pub(crate) nvlinks: u32,
    pub(crate) nvlink_speed: String,
    pub(crate) nvlink_down: bool,
    /// The PCIe link's current width (x8 on every board today; a fault narrows it).
    pub(crate) pcie_width: u32,
    /// What the driver asks for to recover (`None`, `GPU Reset`, `Node Reboot`, ...).
    pub(crate) recovery_action: String,
    /// The NVSwitch fabric's registration (`fabric.state`, `fabric.status`) on 8-GPU NVLink
    /// boards; `None` elsewhere (nvidia-smi prints N/A).
    pub(crate) fabric: Option<(&'static str, &'static str)>,
}

/// A board's UUID and serial, drawn from `seeds`.
fn identity(seeds: &mut SeedStream) -> (String, String) {
    let (high, low) = (seeds.next_u64(), seeds.next_u64());
    let uuid = format!(
        "GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xFFFF,
        high & 0xFFFF,
        low >> 48,
        low & 0xFFFF_FFFF_FFFF
    );
    let serial = format!("1{:012}", seeds.below(1_000_000_000_000));
    (uuid, serial)
}

impl GpuDevice {
    /// Another board in the same slot (an RMA swap): a new UUID and serial, drawn from the
    /// old UUID so that one swap gives one board.
    pub(crate) fn replace_board(&mut self) {
        let (uuid, serial) = identity(&mut SeedStream::new(seed_from_name(&self.uuid)));
        self.uuid = uuid;
        self.serial = serial;
    }

    /// An idle A10G at `00000000:00:1E.0` (the g5 layout), its identity drawn from `seeds`.
    pub(crate) fn a10g(index: u32, seeds: &mut SeedStream) -> Self {
        Self::idle(&boards::A10G, index, (0x00, 0x1E), seeds)
    }

    /// An idle GPU of `board` in PCI slot `(bus, device)`, its identity (UUID, serial) and idle
    /// readings drawn from `seeds` in a fixed order, so one seed gives one GPU.
    pub(crate) fn idle(
        board: &Board,
        index: u32,
        (bus, device): (u32, u32),
        seeds: &mut SeedStream,
    ) -> Self {
        let (uuid, serial) = identity(seeds);
        let (cool, warm) = board.idle_temperature_c;
        let temperature_c = u32::try_from(seeds.between(cool, warm)).unwrap_or(24);
        let (low_cw, high_cw) = board.idle_centiwatts;
        let centiwatts = seeds.between(low_cw, high_cw);
        let (graphics, sm, memory, video) = board.idle_clocks;
        let (max_graphics, max_memory, max_video) = board.max_clocks;
        Self {
            index,
            name: board.smi_name.to_owned(),
            architecture: board.architecture.to_owned(),
            uuid,
            serial,
            pci_domain: 0,
            pci_bus: bus,
            pci_device: device,
            pci_device_id: board.pci_device_id,
            pci_sub_system_id: board.pci_sub_system_id,
            vbios_version: board.vbios_version.to_owned(),
            inforom_image: board.inforom_image.to_owned(),
            compute_cap: board.compute_cap.to_owned(),
            memory_total_mib: board.memory_total_mib,
            memory_reserved_mib: board.memory_reserved_mib,
            memory_used_mib: 0,
            bar1_total_mib: board.bar1_total_mib,
            temperature_c,
            fan_percent: board.fan.then_some(0),
            power_draw_w: centiwatts as f64 / 100.0,
            power_cap_w: board.power_cap_w,
            power_min_w: board.power_min_w,
            power_max_w: board.power_max_w,
            utilization_percent: 0,
            memory_utilization_percent: 0,
            performance_state: board.idle_pstate,
            persistence_mode: true,
            mig_mode: if board.mig {
                MigMode::Disabled
            } else {
                MigMode::Unsupported
            },
            compute_mode: "Default".to_owned(),
            ecc_enabled: true,
            ecc_uncorrected_volatile: 0,
            remapped_rows_uncorrectable: 0,
            remapped_rows_pending: false,
            lost: false,
            clock_graphics_mhz: graphics,
            clock_sm_mhz: sm,
            clock_mem_mhz: memory,
            clock_video_mhz: video,
            max_clock_graphics_mhz: max_graphics,
            max_clock_mem_mhz: max_memory,
            max_clock_video_mhz: max_video,
            nvlinks: 0,
            nvlink_speed: String::new(),
            nvlink_down: false,
            pcie_width: 8,
            recovery_action: "None".to_owned(),
            fabric: None,
        }
    }

    /// The bus id as `nvidia-smi` prints it: `00000000:00:1E.0`.
    pub(crate) fn bus_id(&self) -> String {
        format!(
            "{:08X}:{:02X}:{:02X}.0",
            self.pci_domain, self.pci_bus, self.pci_device
        )
    }

    /// `memory_total - reserved - used`, never below 0.
    pub(crate) fn memory_free_mib(&self) -> u64 {
        self.memory_total_mib
            .saturating_sub(self.memory_reserved_mib)
            .saturating_sub(self.memory_used_mib)
    }

    /// `P8`, `P0`, ...
    pub(crate) fn pstate(&self) -> String {
        format!("P{}", self.performance_state)
    }
}

/// A process that holds GPU memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GpuProcess {
    pub(crate) gpu_index: u32,
    pub(crate) pid: u32,
    /// `C` (compute), `G` (graphics) or `C+G`.
    pub(crate) process_type: String,
    pub(crate) name: String,
    pub(crate) used_memory_mib: u64,
}

/// A node's view of its GPUs at one instant of virtual time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GpuHost {
    pub(crate) hostname: String,
    pub(crate) driver_version: String,
    pub(crate) cuda_version: String,
    pub(crate) gpus: Vec<GpuDevice>,
    pub(crate) processes: Vec<GpuProcess>,
    /// vCPUs of the instance (4 on a g5.xlarge): the GPU's CPU affinity in `topo -m`.
    pub(crate) vcpus: u32,
    /// NUMA nodes the vCPUs and GPUs spread over (2 on the 8-GPU types, GPUs split in halves).
    pub(crate) numa_nodes: u32,
    /// The EFA devices of the instance (`rdmap...`), as `topo -m` lists NICs; empty without EFA.
    pub(crate) nics: Vec<String>,
    /// The caller's virtual time in `ctime` form: `Mon Nov 30 04:43:45 2026`.
    pub(crate) timestamp: String,
}

impl GpuHost {
    /// A g5.xlarge: one idle A10G whose identity and idle readings come from `seed`.
    pub(crate) fn a10g(hostname: &str, seed: u64, timestamp: &str) -> Self {
        let mut seeds = SeedStream::new(seed);
        Self {
            hostname: hostname.to_owned(),
            driver_version: DRIVER_VERSION.to_owned(),
            cuda_version: CUDA_VERSION.to_owned(),
            gpus: vec![GpuDevice::a10g(0, &mut seeds)],
            processes: Vec::new(),
            vcpus: 4,
            numa_nodes: 1,
            nics: Vec::new(),
            timestamp: timestamp.to_owned(),
        }
    }

    /// A node of catalog type `row`, every GPU idle, each drawn from `seed` in index order;
    /// `None` when the twin has no board for the type's GPU.
    pub(crate) fn of_type(
        row: &GpuInstanceType,
        hostname: &str,
        seed: u64,
        timestamp: &str,
    ) -> Option<Self> {
        let board = boards::board_of(row.gpu.smi_name)?;
        let mut seeds = SeedStream::new(seed);
        let interconnect = row.gpu.interconnect;
        let gpus = boards::slots_of(row)
            .into_iter()
            .zip(0..)
            .map(|(slot, index)| {
                let mut gpu = GpuDevice::idle(board, index, slot, &mut seeds);
                gpu.nvlinks = interconnect.nvlinks;
                gpu.nvlink_speed = interconnect.nvlink_speed.to_owned();
                // Eight NVLink GPUs sit on an NVSwitch baseboard, registered with its fabric
                // (the real H100 HGX capture: Completed, Success).
                if row.gpus == 8 && interconnect.nvlinks > 0 {
                    gpu.fabric = Some(("Completed", "Success"));
                }
                gpu
            })
            .collect();
        let numa_nodes = if row.gpus >= 8 { 2 } else { 1 };
        Some(Self {
            hostname: hostname.to_owned(),
            driver_version: DRIVER_VERSION.to_owned(),
            cuda_version: CUDA_VERSION.to_owned(),
            gpus,
            processes: Vec::new(),
            vcpus: row.vcpus,
            numa_nodes,
            // EFA devices are named from their PCI slot (`rdmap<bus>s0`); the buses are the
            // twin's, one per interface.
            nics: (0..row.efa_interfaces)
                .map(|i| format!("rdmap{}s0", 16 + i))
                .collect(),
            timestamp: timestamp.to_owned(),
        })
    }

    /// The NUMA node of GPU `index`: GPUs split evenly over the nodes, in index order.
    pub(crate) fn numa_of(&self, index: u32) -> u32 {
        let per_node = (self.gpus.len() as u32)
            .div_ceil(self.numa_nodes.max(1))
            .max(1);
        index / per_node
    }

    /// The CPUs of NUMA node `numa` as `topo -m` prints them: each node holds one half of the
    /// physical cores and their hyperthread siblings (`0-47,96-143` on a p5.48xlarge).
    pub(crate) fn cpus_of(&self, numa: u32) -> String {
        let nodes = self.numa_nodes.max(1);
        if nodes == 1 {
            return format!("0-{}", self.vcpus.saturating_sub(1));
        }
        let cores = self.vcpus / 2;
        let per_node = cores / nodes;
        let first = numa * per_node;
        format!(
            "{first}-{},{}-{}",
            first + per_node - 1,
            cores + first,
            cores + first + per_node - 1
        )
    }

    /// Starts a process on its GPU: it appears in the process lists and its memory is used.
    #[cfg(test)]
    pub(crate) fn add_process(&mut self, process: GpuProcess) {
        if let Some(gpu) = self.gpus.iter_mut().find(|g| g.index == process.gpu_index) {
            gpu.memory_used_mib += process.used_memory_mib;
        }
        self.processes.push(process);
    }

    /// Ends a process and frees its memory; false when no process has that pid.
    #[cfg(test)]
    pub(crate) fn remove_process(&mut self, pid: u32) -> bool {
        let Some(at) = self.processes.iter().position(|p| p.pid == pid) else {
            return false;
        };
        let process = self.processes.remove(at);
        if let Some(gpu) = self.gpus.iter_mut().find(|g| g.index == process.gpu_index) {
            gpu.memory_used_mib = gpu.memory_used_mib.saturating_sub(process.used_memory_mib);
        }
        true
    }

    /// The processes on one GPU, in start order.
    pub(crate) fn processes_on(&self, gpu_index: u32) -> impl Iterator<Item = &GpuProcess> {
        self.processes
            .iter()
            .filter(move |p| p.gpu_index == gpu_index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(seed: u64) -> GpuHost {
        GpuHost::a10g("ip-192-168-12-34", seed, "Mon Nov 30 04:43:45 2026")
    }

    #[test]
    fn same_seed_same_host() {
        assert_eq!(host(7), host(7));
        assert_ne!(host(7).gpus[0].uuid, host(8).gpus[0].uuid);
    }

    #[test]
    fn identity_has_the_real_shapes() {
        for seed in 0..200 {
            let gpu = &host(seed_from_name(&format!("node-{seed}"))).gpus[0];
            let parts: Vec<&str> = gpu.uuid.trim_start_matches("GPU-").split('-').collect();
            assert!(gpu.uuid.starts_with("GPU-"));
            assert_eq!(
                parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
                [8, 4, 4, 4, 12]
            );
            assert!(
                parts
                    .iter()
                    .all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
            );
            assert!(parts.concat().chars().all(|c| !c.is_ascii_uppercase()));
            assert_eq!(gpu.serial.len(), 13);
            assert!(gpu.serial.chars().all(|c| c.is_ascii_digit()));
            assert!((24..=31).contains(&gpu.temperature_c));
            assert!((14.0..28.0).contains(&gpu.power_draw_w));
        }
    }

    #[test]
    fn bus_id_is_the_g5_slot() {
        let gpu = &host(1).gpus[0];
        assert_eq!(gpu.bus_id(), "00000000:00:1E.0");
        assert_eq!(gpu.memory_total_mib, 23028);
        assert_eq!(gpu.memory_free_mib(), 23028 - 435);
    }

    #[test]
    fn processes_use_and_free_memory() {
        let mut host = host(3);
        host.add_process(GpuProcess {
            gpu_index: 0,
            pid: 4242,
            process_type: "C".to_owned(),
            name: "/usr/local/bin/all_reduce_perf".to_owned(),
            used_memory_mib: 1200,
        });
        assert_eq!(host.gpus[0].memory_used_mib, 1200);
        assert_eq!(host.processes_on(0).count(), 1);
        assert!(host.remove_process(4242));
        assert!(!host.remove_process(4242));
        assert_eq!(host.gpus[0].memory_used_mib, 0);
    }
}
