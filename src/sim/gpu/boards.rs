//! What the twin needs to draw a GPU of each model the way its driver reports it: PCI ids,
//! VBIOS, power limits, clocks, reserved memory and idle readings, each board with the real
//! output its values come from; and where an instance type's GPUs sit on the PCI bus.

use crate::lab::gpu_catalog::GpuInstanceType;

/// One GPU model's board, as `nvidia-smi -q` reports it. `smi_name` ties it to the catalog.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Board {
    pub(crate) smi_name: &'static str,
    pub(crate) architecture: &'static str,
    /// Device and vendor id (`0x223710DE`).
    pub(crate) pci_device_id: u32,
    pub(crate) pci_sub_system_id: u32,
    pub(crate) vbios_version: &'static str,
    pub(crate) inforom_image: &'static str,
    pub(crate) compute_cap: &'static str,
    /// `FB Memory Usage: Total` and `Reserved`, MiB.
    pub(crate) memory_total_mib: u64,
    pub(crate) memory_reserved_mib: u64,
    pub(crate) bar1_total_mib: u64,
    /// Idle temperature range, °C, and idle power draw range in centiwatts.
    pub(crate) idle_temperature_c: (u64, u64),
    pub(crate) idle_centiwatts: (u64, u64),
    /// Whether the board has a fan nvidia-smi reads (SXM modules report N/A).
    pub(crate) fan: bool,
    pub(crate) power_cap_w: u32,
    pub(crate) power_min_w: u32,
    pub(crate) power_max_w: u32,
    /// The performance state an idle GPU reports (P8 on the A10G, P0 on an SXM module).
    pub(crate) idle_pstate: u8,
    /// MIG capable: `Disabled` then, else `N/A`.
    pub(crate) mig: bool,
    /// Idle graphics, SM, memory and video clocks, MHz.
    pub(crate) idle_clocks: (u32, u32, u32, u32),
    /// Maximum graphics, memory and video clocks, MHz.
    pub(crate) max_clocks: (u32, u32, u32),
    /// The real outputs these values are read from.
    pub(crate) source: &'static str,
}

pub(crate) const A10G: Board = Board {
    smi_name: "NVIDIA A10G",
    architecture: "Ampere",
    pci_device_id: 0x2237_10DE,
    pci_sub_system_id: 0x152F_10DE,
    vbios_version: "94.02.75.00.01",
    inforom_image: "G133.0210.00.04",
    compute_cap: "8.6",
    memory_total_mib: 23028,
    memory_reserved_mib: 435,
    bar1_total_mib: 32768,
    idle_temperature_c: (24, 31),
    idle_centiwatts: (1400, 2799),
    fan: true,
    power_cap_w: 300,
    power_min_w: 100,
    power_max_w: 300,
    idle_pstate: 8,
    mig: false,
    idle_clocks: (210, 210, 405, 555),
    max_clocks: (1710, 6251, 1500),
    source: "tests/fixtures/real/nvidia_smi_q_x_a10g_telegraf.xml (influxdata/telegraf testdata/a10g.xml, bus 00000000:00:1E.0) and nvidia_smi_table_a10g_g5xlarge_580.txt (a g5.xlarge, driver 580.95.05)",
};

pub(crate) const H100_SXM: Board = Board {
    smi_name: "NVIDIA H100 80GB HBM3",
    architecture: "Hopper",
    pci_device_id: 0x2330_10DE,
    pci_sub_system_id: 0x16C1_10DE,
    vbios_version: "96.00.A5.00.01",
    inforom_image: "G520.0200.00.05",
    compute_cap: "9.0",
    memory_total_mib: 81559,
    memory_reserved_mib: 479,
    bar1_total_mib: 131072,
    idle_temperature_c: (28, 41),
    idle_centiwatts: (6985, 10000),
    fan: false,
    power_cap_w: 700,
    power_min_w: 200,
    power_max_w: 700,
    idle_pstate: 0,
    mig: true,
    idle_clocks: (345, 345, 2619, 765),
    max_clocks: (1980, 2619, 1545),
    source: "tests/fixtures/real/nvidia_smi_query_gpu_csv_h100_allfields_590.csv (utkuozdemir/nvidia_gpu_exporter H100 capture: ids, VBIOS, 81559/479 MiB, 700/200/700 W, max clocks) and nvidia_smi_table_h100x8_sxm_565.txt (8x H100 SXM idle at P0, 28-31 C, 82-100 W)",
};

pub(crate) const H200_SXM: Board = Board {
    smi_name: "NVIDIA H200",
    architecture: "Hopper",
    pci_device_id: 0x2335_10DE,
    pci_sub_system_id: 0x18BF_10DE,
    vbios_version: "96.00.A5.00.1A",
    inforom_image: "G520.0282.02.02",
    compute_cap: "9.0",
    memory_total_mib: 143771,
    memory_reserved_mib: 616,
    bar1_total_mib: 262144,
    idle_temperature_c: (28, 46),
    idle_centiwatts: (7400, 11500),
    fan: false,
    power_cap_w: 700,
    power_min_w: 200,
    power_max_w: 700,
    idle_pstate: 0,
    mig: true,
    idle_clocks: (345, 345, 3201, 765),
    max_clocks: (1980, 3201, 1545),
    source: "tests/fixtures/real/nvidia_smi_q_x_h200_580.159_vm.xml (an H200 SXM captured 2026-12-04, driver 580.159.04) and nvidia_smi_query_gpu_csv_h200_allfields_590.csv (77.71 W, 28 C idle)",
};

pub(crate) const A100_SXM4_80GB: Board = Board {
    smi_name: "NVIDIA A100-SXM4-80GB",
    architecture: "Ampere",
    pci_device_id: 0x20B2_10DE,
    pci_sub_system_id: 0x147F_10DE,
    vbios_version: "92.00.36.00.02",
    inforom_image: "G506.0212.00.01",
    compute_cap: "8.0",
    memory_total_mib: 81920,
    memory_reserved_mib: 869,
    bar1_total_mib: 131072,
    idle_temperature_c: (25, 33),
    idle_centiwatts: (5800, 6900),
    fan: false,
    power_cap_w: 500,
    power_min_w: 100,
    power_max_w: 500,
    idle_pstate: 0,
    mig: true,
    idle_clocks: (1275, 1275, 1593, 1275),
    max_clocks: (1410, 1593, 1290),
    source: "tests/fixtures/real/nvidia_smi_q_x_a100_sxm4_telegraf.xml (influxdata/telegraf testdata/a100-sxm4-v12.xml, 4x A100-SXM4-80GB, driver 535.54.03)",
};

pub(crate) const T4: Board = Board {
    smi_name: "Tesla T4",
    architecture: "Turing",
    pci_device_id: 0x1EB8_10DE,
    pci_sub_system_id: 0x12A2_10DE,
    vbios_version: "90.04.96.00.02",
    inforom_image: "G183.0200.00.02",
    compute_cap: "7.5",
    memory_total_mib: 15360,
    memory_reserved_mib: 448,
    bar1_total_mib: 256,
    idle_temperature_c: (28, 29),
    idle_centiwatts: (1012, 1523),
    fan: false,
    power_cap_w: 70,
    power_min_w: 60,
    power_max_w: 70,
    idle_pstate: 8,
    mig: false,
    idle_clocks: (300, 300, 405, 540),
    max_clocks: (1590, 5001, 1470),
    source: "nvidia-smi -q -x on a g4dn.12xlarge: SpareCores/sc-inspector-data@38983b73207478dd06b36f4775529855c6c226c9:data/aws/g4dn.12xlarge/nvidia_smi/stdout (driver 590.48.01)",
};

pub(crate) const T4G: Board = Board {
    smi_name: "NVIDIA T4G",
    architecture: "Turing",
    pci_device_id: 0x1EB4_10DE,
    pci_sub_system_id: 0x157D_10DE,
    vbios_version: "90.04.AF.00.02",
    inforom_image: "G183.0205.00.02",
    compute_cap: "7.5",
    memory_total_mib: 15360,
    memory_reserved_mib: 448,
    bar1_total_mib: 256,
    idle_temperature_c: (57, 62),
    idle_centiwatts: (1042, 1462),
    fan: false,
    power_cap_w: 70,
    power_min_w: 60,
    power_max_w: 70,
    idle_pstate: 8,
    mig: false,
    idle_clocks: (300, 300, 405, 540),
    max_clocks: (1590, 5001, 1470),
    source: "nvidia-smi -q -x on a g5g.16xlarge: SpareCores/sc-inspector-data@0414cae61cfe61fdca5dca7b2c615b3caf4e9a9c:data/aws/g5g.16xlarge/nvidia_smi/stdout (driver 590.48.01)",
};

pub(crate) const L4: Board = Board {
    smi_name: "NVIDIA L4",
    architecture: "Ada Lovelace",
    pci_device_id: 0x27B8_10DE,
    pci_sub_system_id: 0x16CA_10DE,
    vbios_version: "95.04.65.00.37",
    inforom_image: "G193.0200.00.01",
    compute_cap: "8.9",
    memory_total_mib: 23034,
    memory_reserved_mib: 469,
    bar1_total_mib: 32768,
    idle_temperature_c: (32, 36),
    idle_centiwatts: (1231, 1302),
    fan: false,
    power_cap_w: 72,
    power_min_w: 40,
    power_max_w: 72,
    idle_pstate: 8,
    mig: false,
    idle_clocks: (210, 210, 405, 765),
    max_clocks: (2040, 6251, 1770),
    source: "nvidia-smi -q -x on a g6.48xlarge: SpareCores/sc-inspector-data@35595b9628ed64ce5502a466c97bd7b166dd7b56:data/aws/g6.48xlarge/nvidia_smi/stdout (driver 590.48.01)",
};

pub(crate) const L40S: Board = Board {
    smi_name: "NVIDIA L40S",
    architecture: "Ada Lovelace",
    pci_device_id: 0x26B9_10DE,
    pci_sub_system_id: 0x1851_10DE,
    vbios_version: "95.02.66.00.15",
    inforom_image: "G133.0242.00.03",
    compute_cap: "8.9",
    memory_total_mib: 46068,
    memory_reserved_mib: 609,
    bar1_total_mib: 65536,
    idle_temperature_c: (32, 35),
    idle_centiwatts: (2467, 2660),
    fan: false,
    power_cap_w: 350,
    power_min_w: 100,
    power_max_w: 350,
    idle_pstate: 8,
    mig: false,
    idle_clocks: (210, 210, 405, 1185),
    max_clocks: (2520, 9001, 1965),
    source: "nvidia-smi -q -x on a g6e.48xlarge: SpareCores/sc-inspector-data@11111568460efdf5c7029e6cc0d31a48cc326f83:data/aws/g6e.48xlarge/nvidia_smi/stdout (driver 590.48.01)",
};

pub(crate) const A100_SXM4_40GB: Board = Board {
    smi_name: "NVIDIA A100-SXM4-40GB",
    architecture: "Ampere",
    pci_device_id: 0x20B0_10DE,
    pci_sub_system_id: 0x134F_10DE,
    vbios_version: "92.00.36.00.04",
    inforom_image: "G506.0200.00.04",
    compute_cap: "8.0",
    memory_total_mib: 40960,
    memory_reserved_mib: 620,
    bar1_total_mib: 65536,
    idle_temperature_c: (38, 42),
    idle_centiwatts: (4516, 5194),
    fan: false,
    power_cap_w: 400,
    power_min_w: 100,
    power_max_w: 400,
    idle_pstate: 0,
    mig: true,
    idle_clocks: (210, 210, 1215, 585),
    max_clocks: (1410, 1215, 1290),
    source: "nvidia-smi -q -x on a p4d.24xlarge: SpareCores/sc-inspector-data@4a2d1c6c9aacda45f70325588fcf896e0363d91a:data/aws/p4d.24xlarge/nvidia_smi/stdout (driver 535.183.01)",
};

pub(crate) const RTX_PRO_6000_SERVER: Board = Board {
    smi_name: "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    architecture: "Blackwell",
    pci_device_id: 0x2BB5_10DE,
    pci_sub_system_id: 0x204E_10DE,
    vbios_version: "98.02.9E.00.03",
    inforom_image: "G153.0210.00.02",
    compute_cap: "12.0",
    memory_total_mib: 97887,
    memory_reserved_mib: 635,
    bar1_total_mib: 131072,
    idle_temperature_c: (21, 22),
    idle_centiwatts: (2852, 3000),
    fan: false,
    power_cap_w: 600,
    power_min_w: 300,
    power_max_w: 600,
    idle_pstate: 8,
    mig: true,
    idle_clocks: (180, 180, 405, 600),
    max_clocks: (2430, 12481, 2107),
    source: "nvidia-smi -q -x on a g7e.48xlarge: SpareCores/sc-inspector-data@54f5531b915aae736835cdc46a0ad88e5b2e4933:data/aws/g7e.48xlarge/nvidia_smi/stdout (driver 590.48.01)",
};

/// Every board the twin can draw.
pub(crate) const BOARDS: &[Board] = &[
    A10G,
    H100_SXM,
    H200_SXM,
    A100_SXM4_80GB,
    A100_SXM4_40GB,
    T4,
    T4G,
    L4,
    L40S,
    RTX_PRO_6000_SERVER,
];

/// The board of a GPU that nvidia-smi names `smi_name`, if the twin models it.
pub(crate) fn board_of(smi_name: &str) -> Option<&'static Board> {
    BOARDS.iter().find(|board| board.smi_name == smi_name)
}

/// Where a type's GPUs sit on the PCI bus, as `(bus, device)` in GPU index order, read from a
/// real host of that type where one was published.
struct Layout {
    instance_type: &'static str,
    slots: &'static [(u32, u32)],
    /// Where the layout was read: kept with the data it vouches for.
    #[expect(
        dead_code,
        reason = "a citation beside the data, read by people, not code"
    )]
    source: &'static str,
}

const LAYOUTS: &[Layout] = &[
    Layout {
        instance_type: "g5.xlarge",
        slots: &[(0x00, 0x1E)],
        source: "nvidia_smi_table_a10g_g5xlarge_580.txt (00000000:00:1E.0); nvidia-smi -q -x: SpareCores/sc-inspector-data@6fbaa5c2d41579f6bfbc90408de8f82cd604413f:data/aws/g5.xlarge/nvidia_smi/stdout",
    },
    Layout {
        instance_type: "g5.48xlarge",
        slots: &[
            (0x00, 0x16),
            (0x00, 0x17),
            (0x00, 0x18),
            (0x00, 0x19),
            (0x00, 0x1A),
            (0x00, 0x1B),
            (0x00, 0x1C),
            (0x00, 0x1D),
        ],
        source: "nvidia-smi -q -x: SpareCores/sc-inspector-data@e38adc5d4601029fe6a6ae40c0e824b0a08e2d20:data/aws/g5.48xlarge/nvidia_smi/stdout",
    },
    Layout {
        instance_type: "g4dn.12xlarge",
        slots: &[(0x00, 0x1B), (0x00, 0x1C), (0x00, 0x1D), (0x00, 0x1E)],
        source: "nvidia-smi -q -x: SpareCores/sc-inspector-data@38983b73207478dd06b36f4775529855c6c226c9:data/aws/g4dn.12xlarge/nvidia_smi/stdout",
    },
    Layout {
        instance_type: "g5g.16xlarge",
        slots: &[(0x00, 0x1E), (0x00, 0x1F)],
        source: "nvidia-smi -q -x: SpareCores/sc-inspector-data@0414cae61cfe61fdca5dca7b2c615b3caf4e9a9c:data/aws/g5g.16xlarge/nvidia_smi/stdout",
    },
    Layout {
        instance_type: "g6.xlarge",
        slots: &[(0x31, 0x00)],
        source: "nvidia-smi -q -x: SpareCores/sc-inspector-data@03e83329a9441c1e1dcf8cc368f039bf0f8d4a6d:data/aws/g6.xlarge/nvidia_smi/stdout",
    },
    Layout {
        instance_type: "g6.48xlarge",
        slots: &[
            (0x9F, 0x00),
            (0xA1, 0x00),
            (0xA3, 0x00),
            (0xA5, 0x00),
            (0xAE, 0x00),
            (0xB0, 0x00),
            (0xB2, 0x00),
            (0xB4, 0x00),
        ],
        source: "nvidia-smi -q -x: SpareCores/sc-inspector-data@35595b9628ed64ce5502a466c97bd7b166dd7b56:data/aws/g6.48xlarge/nvidia_smi/stdout",
    },
    Layout {
        instance_type: "g6e.48xlarge",
        slots: &[
            (0x9E, 0x00),
            (0xA0, 0x00),
            (0xA2, 0x00),
            (0xA4, 0x00),
            (0xC6, 0x00),
            (0xC8, 0x00),
            (0xCA, 0x00),
            (0xCC, 0x00),
        ],
        source: "nvidia-smi -q -x: SpareCores/sc-inspector-data@11111568460efdf5c7029e6cc0d31a48cc326f83:data/aws/g6e.48xlarge/nvidia_smi/stdout",
    },
    Layout {
        instance_type: "gr6.4xlarge",
        slots: &[(0x35, 0x00)],
        source: "nvidia-smi -q -x: SpareCores/sc-inspector-data@c9295388ab90fc9ed4a7cb1facf29e6702b1ea5e:data/aws/gr6.4xlarge/nvidia_smi/stdout",
    },
    Layout {
        instance_type: "gr6.8xlarge",
        slots: &[(0x36, 0x00)],
        source: "nvidia-smi -q -x: SpareCores/sc-inspector-data@1186fff60305fe7adea22aec483cfca8aeff41d2:data/aws/gr6.8xlarge/nvidia_smi/stdout",
    },
    Layout {
        instance_type: "p4d.24xlarge",
        slots: &[
            (0x10, 0x1C),
            (0x10, 0x1D),
            (0x20, 0x1C),
            (0x20, 0x1D),
            (0x90, 0x1C),
            (0x90, 0x1D),
            (0xA0, 0x1C),
            (0xA0, 0x1D),
        ],
        source: "nvidia-smi -q -x: SpareCores/sc-inspector-data@4a2d1c6c9aacda45f70325588fcf896e0363d91a:data/aws/p4d.24xlarge/nvidia_smi/stdout",
    },
    Layout {
        instance_type: "g7e.48xlarge",
        slots: &[
            (0x92, 0x00),
            (0x93, 0x00),
            (0xA3, 0x00),
            (0xA4, 0x00),
            (0xB4, 0x00),
            (0xB5, 0x00),
            (0xC5, 0x00),
            (0xC6, 0x00),
        ],
        source: "nvidia-smi -q -x: SpareCores/sc-inspector-data@54f5531b915aae736835cdc46a0ad88e5b2e4933:data/aws/g7e.48xlarge/nvidia_smi/stdout",
    },
];

/// The slots of an 8-GPU SXM baseboard (an HGX H100's, nvidia_smi_table_h100x8_sxm_565.txt),
/// for the NVLink types no published EC2 layout covers (p4de, p5, p5e, p5en).
const HGX_SLOTS: [(u32, u32); 8] = [
    (0x18, 0),
    (0x2A, 0),
    (0x3A, 0),
    (0x5D, 0),
    (0x9A, 0),
    (0xAB, 0),
    (0xBA, 0),
    (0xDB, 0),
];

/// The `(bus, device)` of each GPU of `row`: its published layout; else an HGX baseboard's
/// slots for an 8-GPU NVLink type; else consecutive devices on bus 0 from `00:16.0`, the
/// virtual slots Nitro gives PCIe GPUs.
pub(crate) fn slots_of(row: &GpuInstanceType) -> Vec<(u32, u32)> {
    if let Some(layout) = LAYOUTS
        .iter()
        .find(|l| l.instance_type == row.instance_type)
        && layout.slots.len() == row.gpus as usize
    {
        return layout.slots.to_vec();
    }
    if row.gpus == 8 && row.gpu.has_nvlink() {
        return HGX_SLOTS.to_vec();
    }
    let first = 0x1F_u32.saturating_sub(row.gpus);
    (0..row.gpus).map(|i| (0, first + i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::gpu_catalog::{GPU_MODELS, find};

    #[test]
    fn every_board_is_a_catalog_model_with_its_memory_and_a_source() {
        for board in BOARDS {
            let model = GPU_MODELS
                .iter()
                .find(|m| m.smi_name == board.smi_name)
                .unwrap_or_else(|| panic!("{} is not in the catalog", board.smi_name));
            if let Some(smi) = model.smi_memory_mib {
                assert_eq!(smi, board.memory_total_mib, "{}", board.smi_name);
            }
            assert_eq!(model.interconnect.mig, board.mig, "{}", board.smi_name);
            assert!(!board.source.is_empty());
            assert!(board.idle_temperature_c.0 <= board.idle_temperature_c.1);
            assert!(board.idle_centiwatts.0 <= board.idle_centiwatts.1);
        }
    }

    #[test]
    fn slots_are_distinct_and_as_many_as_the_gpus() {
        for name in [
            "g5.xlarge",
            "p5.48xlarge",
            "p4d.24xlarge",
            "g6e.48xlarge",
            "g5.12xlarge",
        ] {
            let row = find(name).unwrap();
            let slots = slots_of(row);
            assert_eq!(slots.len(), row.gpus as usize, "{name}");
            let distinct: std::collections::BTreeSet<_> = slots.iter().collect();
            assert_eq!(distinct.len(), slots.len(), "{name}");
        }
        assert_eq!(slots_of(find("g5.xlarge").unwrap()), [(0, 0x1E)]);
    }
}
