//! DescribeInstanceTypes, answered from the GPU catalog (and the lab's t3.medium), as EC2's
//! query API answers it: `InstanceType.N` names, `instanceTypeSet` items with `gpuInfo`,
//! `networkInfo` (`efaInfo` where supported), `vCpuInfo`, `memoryInfo`, `placementGroupInfo`.

use super::ec2_query::{Params, Wanted};
use super::error::AwsError;
use super::state::AwsState;
use super::wire::Xml;
use crate::lab::gpu_catalog::{self, GpuInstanceType};

/// The lab's system nodes' type: 2 vCPUs, 4 GiB, no GPU (AWS's general purpose instance
/// specifications).
const T3_MEDIUM: (&str, u32, u64, &str) = ("t3.medium", 2, 4096, "Up to 5 Gigabit");

fn gpu_type_xml(xml: &mut Xml, row: &GpuInstanceType) {
    xml.leaf("instanceType", row.instance_type)
        .leaf("currentGeneration", true)
        .open("vCpuInfo")
        .leaf("defaultVCpus", row.vcpus)
        .close("vCpuInfo")
        .open("memoryInfo")
        .leaf("sizeInMiB", row.memory_mib)
        .close("memoryInfo")
        .open("gpuInfo")
        .open("gpus")
        .open("item")
        .leaf("name", row.gpu.aws_name)
        .leaf("manufacturer", "NVIDIA")
        .leaf("count", row.gpus)
        .open("memoryInfo")
        .leaf("sizeInMiB", row.gpu.memory_mib)
        .close("memoryInfo")
        .close("item")
        .close("gpus")
        .leaf(
            "totalGpuMemoryInMiB",
            row.gpu.memory_mib * u64::from(row.gpus),
        )
        .close("gpuInfo")
        .open("networkInfo")
        .leaf("networkPerformance", row.network_performance)
        .leaf("maximumNetworkCards", row.network_cards)
        .leaf("efaSupported", row.efa_supported());
    if row.efa_supported() {
        xml.open("efaInfo")
            .leaf("maximumEfaInterfaces", row.efa_interfaces)
            .close("efaInfo");
    }
    xml.close("networkInfo");
    placement_xml(xml);
}

fn placement_xml(xml: &mut Xml) {
    xml.open("placementGroupInfo").open("supportedStrategies");
    for strategy in ["cluster", "partition", "spread"] {
        xml.leaf("item", strategy);
    }
    xml.close("supportedStrategies").close("placementGroupInfo");
}

fn t3_medium_xml(xml: &mut Xml) {
    let (name, vcpus, memory, network) = T3_MEDIUM;
    xml.leaf("instanceType", name)
        .leaf("currentGeneration", true)
        .open("vCpuInfo")
        .leaf("defaultVCpus", vcpus)
        .close("vCpuInfo")
        .open("memoryInfo")
        .leaf("sizeInMiB", memory)
        .close("memoryInfo")
        .open("networkInfo")
        .leaf("networkPerformance", network)
        .leaf("maximumNetworkCards", 1)
        .leaf("efaSupported", false)
        .close("networkInfo");
    placement_xml(xml);
}

/// A type DescribeInstanceTypes answers for.
#[derive(Debug, Clone, Copy)]
enum Offered {
    Gpu(&'static GpuInstanceType),
    T3Medium,
}

impl Offered {
    fn name(self) -> &'static str {
        match self {
            Self::Gpu(row) => row.instance_type,
            Self::T3Medium => T3_MEDIUM.0,
        }
    }
}

fn offered_xml(xml: &mut Xml, offered: Offered) {
    match offered {
        Offered::Gpu(row) => gpu_type_xml(xml, row),
        Offered::T3Medium => t3_medium_xml(xml),
    }
}

/// The GPU catalog's types, then the t3.medium.
fn offered() -> impl Iterator<Item = Offered> {
    gpu_catalog::INSTANCE_TYPES
        .iter()
        .map(Offered::Gpu)
        .chain([Offered::T3Medium])
}

/// The answer's body; an unknown name is refused as EC2 refuses it, naming it.
pub(super) fn describe_instance_types(
    _state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let wanted = Wanted::listed(params, "InstanceType");
    wanted.all_exist(
        |name| offered().any(|o| o.name() == name),
        |unknown| {
            AwsError::new(
                400,
                "InvalidInstanceType",
                format!("The following supplied instance types do not exist: [{unknown}]"),
            )
        },
    )?;
    let types = offered().filter(|o| wanted.accepts(o.name()));
    xml.items("instanceTypeSet", types, offered_xml);
    Ok(())
}
