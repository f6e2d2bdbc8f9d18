//! `nvml::acceptance_depth`: the deepest per-node checks an acceptance can run within a time
//! budget (src/acceptance/depth.rs), with their planned time, GPU-hours and dollars.

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext, Position};
use serde_json::json;

use crate::acceptance::depth::{Fleet, choose};
use crate::bindings::shared::args::encode;
use crate::bindings::shared::options::Spec;
use crate::lab::gpu_catalog;
use crate::script::{documented as doc, duration_value};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

const FUNCTION: &str = "nvml::acceptance_depth";

const DOC: &str = "The deepest per-node checks an acceptance of `nodes` nodes of `instance_type` can run within\n`budget` (a duration, \"30m\"), checking `concurrency` nodes at once (default: all): the DCGM level\n(4, 3, 2, 1: planned 2 hours, NVIDIA's approximately 15 minutes, 2 minutes, seconds), NCCL inside each node, the EFA\nloopback (on EFA types), then one collective at scale. Answers #{ level, in_node, efa_loopback,\nstages: [#{ stage, seconds }], planned_seconds, gpu_hours, usd (at the catalog's on-demand price),\nleft_out (the deeper choices that did not fit) }; an error naming the least budget when nothing fits.";

pub(super) fn install_depth(nvml: &mut Module) {
    doc("acceptance_depth", &["options: Map", "Map"], DOC).set_into_module(
        nvml,
        move |ctx: NativeCallContext, options: Map| -> Result {
            depth(ctx.call_position(), &options)
        },
    );
}

fn depth(position: Position, options: &Map) -> Result {
    let s = Spec::new(
        options,
        FUNCTION,
        &["budget", "nodes", "instance_type", "concurrency"],
        position,
    )?;
    let instance_type = s.required("instance_type")?;
    let row = gpu_catalog::find(&instance_type).ok_or_else(|| {
        s.error(format!(
            "`instance_type` {instance_type} is not a GPU type the catalog knows"
        ))
    })?;
    let nodes = match s.int("nodes")? {
        Some(n) if n >= 1 => n as usize,
        other => {
            return Err(s.error(format!(
                "`nodes` is how many nodes are accepted, at least 1, got {other:?}"
            )));
        }
    };
    let budget = match options.get("budget") {
        Some(v) if !v.is_unit() => duration_value(v, &format!("{FUNCTION}: `budget`"), position)?,
        _ => return Err(s.error("`budget` is the time the checks may take, e.g. \"30m\"")),
    };
    let concurrency = match s.int("concurrency")? {
        None => nodes,
        Some(c) if c >= 1 => c as usize,
        Some(c) => return Err(s.error(format!("`concurrency` is at least 1, got {c}"))),
    };
    let fleet = Fleet {
        nodes,
        gpus_per_node: row.gpus,
        concurrency,
        efa: row.efa_supported(),
    };
    let depth = choose(budget.as_secs_f64(), fleet).map_err(|e| s.error(e))?;
    let usd = row
        .lab_price()
        .map(|(hourly, _)| hourly * nodes as f64 * depth.planned_seconds / 3600.0);
    Ok(encode(&json!({
        "level": depth.checks.level,
        "in_node": depth.checks.in_node,
        "efa_loopback": depth.checks.efa_loopback,
        "stages": depth.stages,
        "planned_seconds": depth.planned_seconds,
        "gpu_hours": depth.gpu_hours,
        "usd": usd,
        "left_out": depth.left_out,
    })))
}
