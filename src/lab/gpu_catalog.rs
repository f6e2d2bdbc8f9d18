//! Every NVIDIA GPU instance type of EC2 as data: its GPUs (how many, which, how much memory
//! each), vCPUs, memory, network cards and EFA, and its on-demand price, each row with the
//! sources its numbers come from. The cost meter, the guards, the health thresholds, the twin
//! and `ec2::instance_types` on the twin all read it.

use serde::Serialize;

pub use super::gpu_catalog_rows::{GPU_MODELS, INSTANCE_TYPES};

/// A GPU model: how DescribeInstanceTypes names it, how nvidia-smi names it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GpuModel {
    /// `GpuInfo.Gpus[].Name`: `H100`, `A10G`, `L40S`.
    pub aws_name: &'static str,
    /// The product name nvidia-smi prints: `NVIDIA H100 80GB HBM3`.
    pub smi_name: &'static str,
    /// `GpuInfo.Gpus[].MemoryInfo.SizeInMiB`, per GPU.
    pub memory_mib: u64,
    /// The framebuffer nvidia-smi reports (`FB Memory Usage: Total`), where a real output
    /// shows it; a little under the nominal size.
    pub smi_memory_mib: Option<u64>,
    pub source: &'static str,
    pub interconnect: &'static Interconnect,
}

/// How a GPU model talks to its peers and its host, from NVIDIA's datasheet for it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interconnect {
    /// NVLinks per GPU (0: PCIe only). On an 8-GPU SXM baseboard every GPU reaches every
    /// other through NVSwitch over all of them: `topo -m` prints `NV18` (H100) or `NV12` (A100).
    pub nvlinks: u32,
    /// One link's speed as `nvidia-smi nvlink -s` prints it (`26.562 GB/s`).
    pub nvlink_speed: &'static str,
    pub pcie_gen: u32,
    /// Multi-Instance GPU.
    pub mig: bool,
    pub source: &'static str,
}

/// One instance type. Prices are on-demand Linux, USD per hour.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GpuInstanceType {
    pub instance_type: &'static str,
    pub gpus: u32,
    pub gpu: &'static GpuModel,
    pub vcpus: u32,
    pub memory_mib: u64,
    /// `NetworkInfo.NetworkPerformance`: `Up to 10 Gigabit`, `3200 Gigabit`.
    pub network_performance: &'static str,
    pub network_cards: u32,
    /// `NetworkInfo.EfaInfo.MaximumEfaInterfaces`; 0 when EFA is not supported.
    pub efa_interfaces: u32,
    /// ap-northeast-2 (Seoul), the lab's region; None where the type is not offered there.
    pub usd_per_hour_seoul: Option<f64>,
    pub usd_per_hour_us_east_1: Option<f64>,
    pub source: &'static str,
}

impl GpuModel {
    pub fn has_nvlink(&self) -> bool {
        self.interconnect.nvlinks > 0
    }
}

impl GpuInstanceType {
    pub fn efa_supported(&self) -> bool {
        self.efa_interfaces > 0
    }

    /// The price the lab's meter bills it at: Seoul's, else us-east-1's (said in the source).
    pub fn lab_price(&self) -> Option<(f64, &'static str)> {
        match (self.usd_per_hour_seoul, self.usd_per_hour_us_east_1) {
            (Some(seoul), _) => Some((seoul, "ap-northeast-2")),
            (None, Some(virginia)) => Some((virginia, "us-east-1 (not offered in ap-northeast-2)")),
            (None, None) => None,
        }
    }
}

/// The catalog's row for an instance type.
pub fn find(instance_type: &str) -> Option<&'static GpuInstanceType> {
    INSTANCE_TYPES
        .iter()
        .find(|row| row.instance_type == instance_type)
}

/// GPUs per node of an instance type: the catalog's count; 0 for a type it does not know.
pub fn gpus_of(instance_type: &str) -> u32 {
    find(instance_type).map_or(0, |row| row.gpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_and_model_names_its_source_and_adds_up() {
        assert!(INSTANCE_TYPES.len() >= 45, "{} rows", INSTANCE_TYPES.len());
        for row in INSTANCE_TYPES {
            assert!(
                !row.source.trim().is_empty(),
                "{} has no source",
                row.instance_type
            );
            assert!(
                row.gpus >= 1 && row.vcpus >= 4 && row.memory_mib >= 8192,
                "{row:?}"
            );
            assert!(
                row.usd_per_hour_seoul
                    .or(row.usd_per_hour_us_east_1)
                    .is_some()
                    || row.source.contains("no on-demand price in any source"),
                "{} has no price and does not say why",
                row.instance_type
            );
            assert!(
                super::super::is_gpu_instance_type(row.instance_type),
                "{}",
                row.instance_type
            );
        }
        for model in GPU_MODELS {
            assert!(
                !model.source.trim().is_empty(),
                "{} has no source",
                model.aws_name
            );
            if let Some(smi) = model.smi_memory_mib {
                assert!(smi <= model.memory_mib + 1024, "{model:?}");
            }
        }
        let names: std::collections::BTreeSet<_> =
            INSTANCE_TYPES.iter().map(|r| r.instance_type).collect();
        assert_eq!(names.len(), INSTANCE_TYPES.len(), "each type once");
    }

    #[test]
    fn the_training_types_are_there_with_eight_gpus_and_efa() {
        for (name, smi) in [
            ("p4d.24xlarge", "NVIDIA A100-SXM4-40GB"),
            ("p4de.24xlarge", "NVIDIA A100-SXM4-80GB"),
            ("p5.48xlarge", "NVIDIA H100 80GB HBM3"),
            ("p5e.48xlarge", "NVIDIA H200"),
            ("p5en.48xlarge", "NVIDIA H200"),
        ] {
            let row = find(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(row.gpus, 8, "{name}");
            assert_eq!(row.gpu.smi_name, smi, "{name}");
            assert!(row.efa_supported(), "{name}");
        }
        assert_eq!(gpus_of("g5.xlarge"), 1);
        assert_eq!(gpus_of("t3.medium"), 0);
    }
}
