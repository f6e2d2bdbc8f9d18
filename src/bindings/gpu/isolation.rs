//! `nvml::may_isolate`: whether the safety limits let one more GPU node be taken out of
//! service (src/health/breaker.rs), judged on the nodes as the cluster has them now.

use std::sync::Arc;
use std::time::Duration;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext};

use crate::bindings::shared::args::{encode, kube_error, selector};
use crate::bindings::shared::options::Spec;
use crate::clients::kube::{KubeClient, ListOptions};
use crate::health::breaker::{Limits, decide};
use crate::script::documented as doc;
use crate::script::{Host, duration_value};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

/// When the quarantine under `key` on `node` was put on (Unix seconds), from its record.
fn isolated_since(node: &serde_json::Value, key: &str) -> Option<i64> {
    let record = node["metadata"]["annotations"][key].as_str()?;
    let record: serde_json::Value = serde_json::from_str(record).ok()?;
    record["since"].as_i64()
}

pub(super) fn install_isolation(nvml: &mut Module, kube: &Arc<KubeClient>, host: &Arc<Host>) {
    let (k, h) = (kube.clone(), host.clone());
    doc("may_isolate", &["options: Map", "Map"], "Whether one more GPU node may be isolated: no when `share` (0.5) of the GPU nodes `nodes` selects\nwere isolated under `key` (\"runbook.dev/gpu-health\") within `window` (\"10m\"), as NVSentinel's circuit\nbreaker, or when this run already isolated `per_run` (no cap by default; `this_run` says how many).\nAnswers #{ ok, reason, recent, total, allowed, this_run }.")
        .set_into_module(nvml, move |ctx: NativeCallContext, options: Map| -> Result {
            let position = ctx.call_position();
            let function = "nvml::may_isolate";
            let s = Spec::new(&options, function, &["nodes", "key", "share", "window", "per_run", "this_run"], position)?;
            let share = s.number("share")?.unwrap_or(0.5);
            if !(share > 0.0 && share <= 1.0) {
                return Err(s.error(format!("`share` is a part of the GPU nodes, above 0 and at most 1, got {share}")));
            }
            let window = match options.get("window").filter(|v| !v.is_unit()) {
                None => Duration::from_secs(600),
                Some(v) => duration_value(v, &format!("{function}: `window`"), position)?,
            };
            let per_run = match s.int("per_run")? {
                Some(n) if n < 1 => return Err(s.error(format!("`per_run` is at least 1, got {n}"))),
                n => n.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            };
            let this_run = usize::try_from(s.int("this_run")?.unwrap_or(0).max(0)).unwrap_or(0);
            let key = s.string("key")?.unwrap_or_else(|| "runbook.dev/gpu-health".into());
            let nodes = options
                .get("nodes")
                .cloned()
                .unwrap_or_else(|| Dynamic::from("nvidia.com/gpu.present=true"));
            let list = ListOptions { labels: selector(&nodes, function, position)?, ..Default::default() };
            let nodes = h.block_on(position, k.list("Node", &list))?.map_err(|e| kube_error(e, position))?;
            let window_seconds = i64::try_from(window.as_secs()).unwrap_or(i64::MAX);
            let since = h.clock.unix_seconds().saturating_sub(window_seconds);
            let recent = nodes
                .iter()
                .filter(|n| isolated_since(n, &key).is_some_and(|at| at >= since))
                .count();
            let limits = Limits { share, window_seconds, per_run };
            Ok(encode(&decide(nodes.len(), recent, this_run, limits)))
        });
}
