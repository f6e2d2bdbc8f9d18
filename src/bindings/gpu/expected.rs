//! `nvml::expected` and `nccl::expected`: what the GPU catalog says a node of an instance type
//! has (GPUs, links, EFA) and what NCCL reaches on it, each with its source, for drills that
//! check a type they were not written for.

use rhai::{Dynamic, EvalAltResult, Module, NativeCallContext};
use serde_json::{Value, json};

use super::health::error;
use crate::bindings::shared::args::encode;
use crate::lab::gpu_catalog::{self, GpuInstanceType};
use crate::lab::nccl_figures::{self, Figure};
use crate::script::documented as doc;

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

fn row_of(
    function: &str,
    instance_type: &str,
    ctx: &NativeCallContext,
) -> Result<&'static GpuInstanceType> {
    gpu_catalog::find(instance_type).ok_or_else(|| {
        error(
            function,
            "InvalidArgument",
            format!(
                "`{instance_type}` is not an NVIDIA GPU instance type of the catalog (src/lab/gpu_catalog_rows.rs); e.g. g5.xlarge, p4d.24xlarge, p5.48xlarge"
            ),
            ctx.call_position(),
        )
    })
}

fn gpus_json(row: &GpuInstanceType) -> Value {
    let link = row.gpu.interconnect;
    json!({
        "instance_type": row.instance_type,
        "gpus": row.gpus,
        "gpu_name": row.gpu.smi_name,
        "gpu_memory_mib": row.gpu.smi_memory_mib.unwrap_or(row.gpu.memory_mib),
        "nvlinks": link.nvlinks,
        "nvlink_speed": if link.nvlinks > 0 { Value::from(link.nvlink_speed) } else { Value::Null },
        "pcie_gen": link.pcie_gen,
        "mig": link.mig,
        "efa_interfaces": row.efa_interfaces,
        "network_cards": row.network_cards,
        "source": row.source,
    })
}

fn figure_json(figure: Option<Figure>) -> Value {
    figure.map_or(
        Value::Null,
        |f| json!({"busbw": f.busbw_gbps, "at_bytes": f.at_bytes, "source": f.source}),
    )
}

fn nccl_json(row: &GpuInstanceType) -> Value {
    json!({
        "instance_type": row.instance_type,
        "in_node": figure_json(nccl_figures::in_node(row)),
        "two_nodes_efa": figure_json(nccl_figures::two_nodes_efa(row)),
        "sockets": {
            "busbw": nccl_figures::socket_busbw_gbps(row),
            "source": "a model, not a measurement: the lab's g5.xlarge socket efficiency (1.1 GB/s of 1.25) on one of the type's network cards",
        },
    })
}

pub(super) fn install_expected(nvml: &mut Module, nccl: &mut Module) {
    doc("expected", &["instance_type: &str", "Map"], "What the GPU catalog says a node of `instance_type` has: #{ instance_type, gpus, gpu_name (as\nnvidia-smi prints it), gpu_memory_mib, nvlinks (per GPU; 0 on PCIe), nvlink_speed, pcie_gen, mig,\nefa_interfaces, network_cards, source }.")
        .set_into_module(nvml, |ctx: NativeCallContext, instance_type: &str| -> Result {
            Ok(encode(&gpus_json(row_of("nvml::expected", instance_type, &ctx)?)))
        });
    doc("expected", &["instance_type: &str", "Map"], "Published all_reduce_perf bus bandwidths for `instance_type`, GB/s, each #{ busbw, at_bytes, source }\nor () where none is published: in_node (every GPU of one node), two_nodes_efa, and sockets (#{ busbw,\nsource }: the model of NCCL's socket transport between two nodes).")
        .set_into_module(nccl, |ctx: NativeCallContext, instance_type: &str| -> Result {
            Ok(encode(&nccl_json(row_of("nccl::expected", instance_type, &ctx)?)))
        });
}
