//! `nccl::at_scale`: one collective (all-reduce, all-gather or alltoall) across the nodes given,
//! judged against the figure published for it at that node count (src/acceptance/at_scale.rs),
//! the run cleaned up and journaled.

use std::sync::Arc;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext, Position};

use super::fleet::{RUN_OPTIONS, all_reduce_spec};
use crate::acceptance::at_scale::judge;
use crate::bindings::shared::args::{encode, kube_error};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::gpu::{remove_sweep, run_on};
use crate::clients::kube::KubeClient;
use crate::guard::Change;
use crate::journal::Undo;
use crate::script::{Host, documented as doc};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

const FUNCTION: &str = "nccl::at_scale";

/// Its own options (then nccl::all_reduce's, [`RUN_OPTIONS`], `collective` among them).
const OPTIONS: &[&str] = &["nodes", "instance_type", "tolerance"];

const DOC: &str = "One collective across every node of `nodes` (an array of names, at least 2), judged against the\nbus bandwidth published for `collective` (\"all_reduce\", \"all_gather\", \"alltoall\"; all_reduce by\ndefault) over that many nodes of `instance_type` (p5 family): it passes at (1 - tolerance) of it\n(tolerance 0.1). Takes nccl::all_reduce's options. Answers #{ collective, nodes, busbw (peak\nout-of-place, () without a result), figure, source, floor, ok, reason, seconds, summary }.";

pub(super) fn install_at_scale(nccl: &mut Module, kube: &Arc<KubeClient>, host: &Arc<Host>) {
    let (k, h) = (kube.clone(), host.clone());
    doc("at_scale", &["options: Map", "Map"], DOC).set_into_module(
        nccl,
        move |ctx: NativeCallContext, options: Map| -> Result {
            at_scale(&h, &k, ctx.call_position(), &options)
        },
    );
}

fn at_scale(h: &Host, k: &KubeClient, position: Position, options: &Map) -> Result {
    let known = [OPTIONS, RUN_OPTIONS].concat();
    let s = Spec::new(options, FUNCTION, &known, position)?;
    let spec = all_reduce_spec(options, &s, FUNCTION, position)?;
    let nodes = s.strings("nodes")?;
    if nodes.len() < 2 {
        return Err(s.error(format!(
            "`nodes` names the nodes to run across, at least 2; got {}",
            nodes.len()
        )));
    }
    let instance_type = s.required("instance_type")?;
    let tolerance = s.number("tolerance")?.unwrap_or(0.1).clamp(0.0, 0.9);
    let stamp = h.clock.now().as_millis() as u64 ^ (u64::from(std::process::id()) << 12);
    let group = format!("nccl-scale-{:x}", stamp % 0xff_ffff);
    let undo = Undo::DeleteLabeled {
        kinds: vec!["Pod".into(), "Service".into()],
        namespace: spec.namespace.clone(),
        selector: format!("app.kubernetes.io/managed-by=runbook,runbook/nccl-group={group}"),
    };
    let name = spec.collective.name();
    let change = Change::new(format!("{FUNCTION} {name} {group} ({} nodes)", nodes.len()))
        .on(format!("pod/{}/{group}", spec.namespace));
    journaled(h, position, change, Some(undo), || {
        let clock = h.clock.clone();
        let answer = h.block_on(
            position,
            run_on(k, &spec, &group, 0, &nodes, clock.as_ref()),
        )?;
        let result = match answer {
            Ok(result) => result,
            Err(e) => {
                h.block_on_cleanup(remove_sweep(k, &spec.namespace, &group));
                return Err(kube_error(e, position));
            }
        };
        let busbw = (result["status"] == "ok")
            .then(|| result["peak_busbw"].as_f64())
            .flatten();
        let summary = result["summary"].as_str().unwrap_or_default();
        let seconds = result["duration_s"].as_f64().unwrap_or(0.0);
        let judged = judge(
            spec.collective,
            &instance_type,
            nodes.len(),
            tolerance,
            busbw,
            summary,
            seconds,
        );
        let mut answer = serde_json::to_value(&judged).unwrap_or_default();
        answer["summary"] = serde_json::json!(summary);
        Ok(encode(&answer))
    })
}
