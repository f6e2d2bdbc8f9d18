//! `nvml::may_isolate`: whether the safety limits let one more GPU node be taken out of
//! service (src/health/breaker.rs), judged on the nodes as the cluster has them now; and
//! `nvml::passing_streak`: how many checks in a row a node has passed, which decides its
//! release (src/health/release.rs).

use std::sync::Arc;
use std::time::Duration;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext};

use crate::bindings::shared::args::{encode, kube_error, selector};
use crate::bindings::shared::options::Spec;
use crate::clients::kube::{KubeClient, ListOptions};
use crate::health::breaker::{Limits, decide};
use crate::health::release::passing_streak;
use crate::health::verdict::Verdict;
use crate::script::documented as doc;
use crate::script::{Host, duration_value};

use super::health::error;

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
    let h = host.clone();
    doc("passing_streak", &["verdict: Map", "i64"], "How many checks in a row the node of `verdict` (one of nvml::judge's or gpu::health's answers)\nhas passed (HEALTHY or MONITOR, its DCGM diagnostic having answered): this one, then the run history's\nrecord of its machine, newest first, up to the first that did not pass. Without a history only this\ncheck counts.")
        .set_into_module(nvml, move |ctx: NativeCallContext, verdict: Map| -> Result<i64> {
            let position = ctx.call_position();
            let function = "nvml::passing_streak";
            let text = |key: &str| verdict.get(key).filter(|v| v.is_string()).map(|v| v.to_string());
            text("verdict")
                .and_then(|v| Verdict::parse(&v))
                .ok_or_else(|| error(function, "InvalidArgument", "`verdict` is one of nvml::judge's answers: #{ node, instance, verdict: \"HEALTHY\" .. \"ISOLATE\" }", position))?;
            let who = text("instance").or_else(|| text("node")).ok_or_else(|| {
                error(function, "InvalidArgument", "the verdict names no node or instance", position)
            })?;
            let past = match h.gpu_record() {
                None => Vec::new(),
                Some(record) => record
                    .past(&who, RECORD_WINDOW)
                    .map_err(|e| error(function, "HistoryError", e, position))?,
            };
            let current = crate::script::to_json(&Dynamic::from_map(verdict.clone()));
            Ok(i64::try_from(passing_streak(&current, &past)).unwrap_or(i64::MAX))
        });
}

/// How far back a streak is read: longer than any gap between health checks worth counting.
const RECORD_WINDOW: Duration = Duration::from_secs(90 * 24 * 3600);
