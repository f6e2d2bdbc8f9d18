//! What a healthy node of an instance type looks like: how many GPUs of which model, and the
//! NCCL bus bandwidth a pair of such nodes reaches. A drill can override any of it.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thresholds {
    pub instance_type: String,
    /// GPUs the instance has (AWS's instance type specification).
    pub gpus: u32,
    /// The product name nvidia-smi prints for them.
    pub gpu_name: String,
    /// NVLinks per GPU (0 on PCIe-only types), from the GPU catalog.
    pub nvlinks: u32,
    /// The peak all-reduce bus bandwidth (GB/s) below which a two-node pair is slow; `None`
    /// where no public measurement backs a figure (the drill must then give one).
    pub pair_busbw_gbps: Option<f64>,
    pub source: String,
}

/// Pair bus bandwidth floors (GB/s) that a public measurement backs: (instance type, floor,
/// source). GPUs and their product name come from the GPU catalog for every type.
const PAIR_FLOORS: &[(&str, f64, &str)] = &[(
    "g5.xlarge",
    // A real two-node A10G all-reduce over sockets peaked at 0.82 GB/s
    // (aws-samples/aws-hpc-tutorials, tests/fixtures/real): a pair below 0.5 is slow.
    0.5,
    "NCCL floor: 60% of the 0.82 GB/s peak of a real 2-node A10G socket run (aws-hpc-tutorials)",
)];

/// What a healthy node of `instance_type` has: the GPU catalog's count and product name, and
/// a pair floor where a public run backs one (elsewhere the drill gives one).
pub fn for_instance_type(instance_type: &str) -> Option<Thresholds> {
    let row = crate::lab::gpu_catalog::find(instance_type)?;
    let floor = PAIR_FLOORS.iter().find(|(name, ..)| *name == instance_type);
    Some(Thresholds {
        instance_type: row.instance_type.to_string(),
        gpus: row.gpus,
        gpu_name: row.gpu.smi_name.to_string(),
        nvlinks: row.gpu.interconnect.nvlinks,
        pair_busbw_gbps: floor.map(|(_, floor, _)| *floor),
        source: match floor {
            Some((.., floor_source)) => format!("GPU catalog: {}; {floor_source}", row.source),
            None => format!("GPU catalog: {}", row.source),
        },
    })
}

/// The instance types the thresholds know (the GPU catalog's), for error messages.
pub fn known_instance_types() -> Vec<&'static str> {
    crate::lab::gpu_catalog::INSTANCE_TYPES
        .iter()
        .map(|row| row.instance_type)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_instance_type_has_a_bandwidth_floor() {
        let g5 = for_instance_type("g5.xlarge").unwrap();
        assert_eq!((g5.gpus, g5.gpu_name.as_str()), (1, "NVIDIA A10G"));
        assert_eq!(g5.pair_busbw_gbps, Some(0.5));
        assert_eq!(for_instance_type("p5.48xlarge").unwrap().gpus, 8);
        assert_eq!(for_instance_type("m5.large"), None);
        assert!(known_instance_types().contains(&"p4d.24xlarge"));
    }
}
