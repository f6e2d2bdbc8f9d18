//! `k8s::`'s waits on the run's clock: an object meeting a condition, nodes joining, a
//! rollout finishing.

use std::sync::Arc;
use std::time::Duration;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext};

use super::extension::{call, handles};
use crate::bindings::shared::args::{encode, known_options, selector, string_option, timeout_of};
use crate::clients::kube::{Condition, KubeClient, NodeWait};
use crate::script::{Host, documented as doc, from_json, usage_error};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

/// Registers waits on the run's clock: `wait`, `wait_nodes`, `rollout_status`.
pub(super) fn install_waits(m: &mut Module, c: &Arc<KubeClient>, h: &Arc<Host>) {
    let (client, host) = handles!(c, h);
    doc(
        "wait",
        &["kind: &str", "name: &str", "condition: &str", "options: Map", "Dynamic"],
        "Waits on the run's clock until an object meets a condition, as kubectl wait: \"condition=Available\",\n\"condition=Ready=False\", \"delete\", \"create\", \"jsonpath={.status.phase}=Running\". Options `timeout`\n(default \"5m\"), `namespace`. Returns the object (() after delete).",
    )
    .set_into_module(m, move |ctx: NativeCallContext, kind: &str, name: &str, condition: &str, options: Map| -> Result {
        let position = ctx.call_position();
        known_options(&options, "k8s::wait", &["namespace", "timeout"], position)?;
        let namespace = string_option(&options, "namespace", "k8s::wait", position)?;
        let timeout = timeout_of(&options, "k8s::wait", Duration::from_secs(300), position)?;
        let condition = Condition::parse(condition).map_err(|e| usage_error(e.to_string(), position))?;
        let clock = host.clock.clone();
        let object = call(&host, position, client.wait(kind, name, namespace.as_deref(), &condition, timeout, clock.as_ref()))?;
        Ok(object.map_or(Dynamic::UNIT, |o| from_json(&o)))
    });

    let (client, host) = handles!(c, h);
    doc("wait_nodes", &["options: Map", "Array"], "Waits until `count` nodes match `labels` (and are Ready when `ready`), within `timeout`; returns them as nodes() does.")
        .set_into_module(m, move |ctx: NativeCallContext, options: Map| -> Result {
            let position = ctx.call_position();
            known_options(&options, "k8s::wait_nodes", &["labels", "count", "ready", "timeout"], position)?;
            let wait = NodeWait {
                labels: match options.get("labels") {
                    Some(v) => selector(v, "k8s::wait_nodes", position)?,
                    None => None,
                },
                count: options.get("count").map_or(Ok(1), |c| c.as_int()).map_err(|t| usage_error(format!("k8s::wait_nodes: `count` must be an integer, got {t}"), position))?.max(0) as usize,
                ready: options.get("ready").map_or(Ok(true), |r| r.as_bool()).map_err(|t| usage_error(format!("k8s::wait_nodes: `ready` must be true or false, got {t}"), position))?,
                timeout: timeout_of(&options, "k8s::wait_nodes", Duration::from_secs(900), position)?,
            };
            let clock = host.clock.clone();
            Ok(encode(&call(&host, position, client.wait_nodes(&wait, clock.as_ref()))?))
        });

    let (client, host) = handles!(c, h);
    doc("rollout_status", &["kind: &str", "name: &str", "options: Map", "Map"], "Waits until a Deployment or DaemonSet has rolled out; options `namespace`, `timeout` (default \"5m\").")
        .set_into_module(m, move |ctx: NativeCallContext, kind: &str, name: &str, options: Map| -> Result {
            let position = ctx.call_position();
            known_options(&options, "k8s::rollout_status", &["namespace", "timeout"], position)?;
            let namespace = string_option(&options, "namespace", "k8s::rollout_status", position)?;
            let timeout = timeout_of(&options, "k8s::rollout_status", Duration::from_secs(300), position)?;
            let clock = host.clock.clone();
            Ok(from_json(&call(&host, position, client.rollout_status(kind, name, namespace.as_deref(), timeout, clock.as_ref()))?))
        });
}
