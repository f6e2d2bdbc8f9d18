//! `nccl::in_node`: NCCL inside each node, one all-reduce over all of a node's GPUs per node
//! (NVLink/NVSwitch; no network), judged against the published in-node figure
//! (src/acceptance/in_node.rs), every run cleaned up and all of them journaled as one group.

use std::sync::Arc;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext, Position};

use super::fleet::{RUN_OPTIONS, all_reduce_spec};
use crate::acceptance::in_node::{InNodeRun, judge};
use crate::bindings::shared::args::{encode, kube_error};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::gpu::{remove_sweep, run_each};
use crate::clients::kube::KubeClient;
use crate::guard::Change;
use crate::journal::Undo;
use crate::lab::{gpu_catalog, nccl_figures};
use crate::script::{Host, documented as doc};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

const FUNCTION: &str = "nccl::in_node";

/// Its own options (then nccl::all_reduce's, [`RUN_OPTIONS`]).
const OPTIONS: &[&str] = &[
    "nodes",
    "instance_type",
    "floor",
    "tolerance",
    "concurrency",
];

const DOC: &str = "NCCL inside each node: one all_reduce_perf over every GPU of a node (gpus_per_node: all of\ninstance_type's), per node of `nodes` (an array of names), concurrency (4) nodes at a time, each\nrun cleaned up. A node passes when its run ends ok at a peak bus bandwidth of floor (GB/s), by\ndefault (1 - tolerance (0.1)) of the published in-node figure of instance_type (nccl::expected's\nin_node), and runs up to that figure's message size unless max_bytes says otherwise; also\nnccl::all_reduce's options. Answers #{ floor, figure: #{ busbw, at_bytes, source }, seconds, nodes:\n[#{ node, ok, peak_busbw, floor, reason, seconds, nccl_version, ofi_version (as its log named them) }] }.";

pub(super) fn install_in_node(nccl: &mut Module, kube: &Arc<KubeClient>, host: &Arc<Host>) {
    let (k, h) = (kube.clone(), host.clone());
    doc("in_node", &["options: Map", "Map"], DOC).set_into_module(
        nccl,
        move |ctx: NativeCallContext, options: Map| -> Result {
            in_node(&h, &k, ctx.call_position(), &options)
        },
    );
}

fn in_node(h: &Host, k: &KubeClient, position: Position, options: &Map) -> Result {
    let known = [OPTIONS, RUN_OPTIONS].concat();
    let s = Spec::new(options, FUNCTION, &known, position)?;
    if options.get("nodes").is_none_or(Dynamic::is_unit) {
        return Err(
            s.error("give `nodes`: an array of node names (k8s::nodes(...).map(|n| n.name))")
        );
    }
    let names = s.strings("nodes")?;
    let kind = s.required("instance_type")?;
    let row = gpu_catalog::find(&kind)
        .ok_or_else(|| s.error(format!("`{kind}` is not an instance type of the catalog")))?;
    let figure = nccl_figures::in_node(row);
    let tolerance = s.number("tolerance")?.unwrap_or(0.1);
    if !(0.0..1.0).contains(&tolerance) {
        return Err(s.error(format!(
            "`tolerance` is a share from 0 to under 1, got {tolerance}"
        )));
    }
    let floor = match (s.number("floor")?, figure) {
        (Some(floor), _) => floor,
        (None, Some(figure)) => figure.busbw_gbps * (1.0 - tolerance),
        (None, None) => {
            return Err(s.error(format!(
                "no published in-node figure for {kind}; give floor (GB/s)"
            )));
        }
    };
    let mut spec = all_reduce_spec(options, &s, FUNCTION, position)?;
    if s.int("gpus_per_node")?.is_none() {
        spec.gpus_per_node = row.gpus;
    }
    if let (None, Some(figure)) = (options.get("max_bytes"), figure) {
        spec.max_bytes = figure.at_bytes.to_string();
    }
    let concurrency = s.int("concurrency")?.map_or(4, |c| c.max(1) as usize);
    let stamp = h.clock.now().as_millis() as u64 ^ (u64::from(std::process::id()) << 12);
    let group = format!("nccl-in-node-{:x}", stamp % 0xff_ffff);
    let undo = Undo::DeleteLabeled {
        kinds: vec!["Pod".into(), "Service".into()],
        namespace: spec.namespace.clone(),
        selector: format!("app.kubernetes.io/managed-by=runbook,runbook/nccl-group={group}"),
    };
    let change = Change::new(format!("{FUNCTION} {group} ({} nodes)", names.len()))
        .on(format!("pod/{}/{group}", spec.namespace));
    let clock = h.clock.clone();
    journaled(h, position, change, Some(undo), || {
        let answers = h.block_on(
            position,
            run_each(k, &spec, &group, &names, concurrency, clock.as_ref()),
        )?;
        let mut runs = Vec::new();
        for (node, answer) in names.iter().zip(answers) {
            let result = match answer {
                Ok(result) => result,
                Err(e) => {
                    h.block_on_cleanup(remove_sweep(k, &spec.namespace, &group));
                    return Err(kube_error(e, position));
                }
            };
            runs.push(InNodeRun {
                node: node.clone(),
                status: result["status"].as_str().unwrap_or("error").to_string(),
                peak_busbw: result["peak_busbw"].as_f64(),
                summary: result["summary"].as_str().unwrap_or_default().to_string(),
                seconds: result["duration_s"].as_f64().unwrap_or(0.0),
                nccl_version: result["nccl_version"].as_str().map(str::to_string),
                ofi_version: result["ofi_version"].as_str().map(str::to_string),
            });
        }
        let verdicts = judge(&runs, floor);
        Ok(encode(&serde_json::json!({
            "floor": floor,
            "figure": figure.map(|f| serde_json::json!({"busbw": f.busbw_gbps, "at_bytes": f.at_bytes, "source": f.source})),
            "seconds": runs.iter().map(|r| r.seconds).sum::<f64>(),
            "nodes": verdicts,
        })))
    })
}
