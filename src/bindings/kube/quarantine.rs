//! `k8s::quarantine` and `k8s::release`: a node out of service under a key with a verdict and
//! its evidence, and back exactly as it was. The quarantine is journaled with its release.

use std::sync::Arc;
use std::time::Duration;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext};

use crate::bindings::shared::args::kube_error;
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::kube::{KubeClient, Quarantine, is_label_value};
use crate::clock::dates::iso_basic_utc;
use crate::journal::Undo;
use crate::script::{Host, documented as doc, duration_value, from_json, to_json};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

pub(super) fn install_quarantine(m: &mut Module, client: &Arc<KubeClient>, host: &Arc<Host>) {
    let (kube, h) = (client.clone(), host.clone());
    doc("quarantine", &["node: &str", "options: Map", "Map"], "Takes a node out of service: cordon, taint `key=value:NoSchedule`, label `key=value` and\n`key-valid-until` (now + valid_for, \"24h\"), annotation `key` with the evidence. Options: key,\nvalue (a label value), valid_for, evidence (any value). Journaled; `k8s::release` undoes it.\nAnswers #{ node, key, value, valid_until }.")
        .set_into_module(m, move |ctx: NativeCallContext, node: &str, options: Map| -> Result {
            let position = ctx.call_position();
            let function = "k8s::quarantine";
            let s = Spec::new(&options, function, &["key", "value", "valid_for", "evidence"], position)?;
            let key = s.required("key")?;
            let value = s.required("value")?;
            if !is_label_value(&value) {
                return Err(s.error(format!("`value` is a label value (letters, digits, - _ ., at most 63), got `{value}`")));
            }
            let valid_for = match options.get("valid_for") {
                None => Duration::from_secs(86_400),
                Some(v) => duration_value(v, &format!("{function}: `valid_for`"), position)?,
            };
            let valid_for = i64::try_from(valid_for.as_secs()).unwrap_or(i64::MAX / 2);
            let valid_until = iso_basic_utc(h.clock.unix_seconds().saturating_add(valid_for));
            let evidence = options.get("evidence").map_or(serde_json::Value::Null, to_json);
            let since = h.clock.unix_seconds();
            let quarantine = Quarantine { key: &key, value: &value, valid_until: valid_until.clone(), evidence, since };
            let undo = Undo::ReleaseNode { node: node.to_string(), key: key.clone() };
            journaled(&h, position, crate::guard::Change::new(format!("k8s::quarantine {node} {key}={value}")).on(format!("node/{node}")), Some(undo), || {
                h.block_on(position, kube.quarantine(node, &quarantine))?.map_err(|e| kube_error(e, position))?;
                Ok(from_json(&serde_json::json!({"node": node, "key": key, "value": value, "valid_until": valid_until})))
            })
        });
    let (kube, h) = (client.clone(), host.clone());
    doc("release", &["node: &str", "key: &str", "bool"], "Takes the `key` quarantine off a node: its taint, labels and annotation go, and the cordon too\nif the quarantine put it there. False when there was nothing to take off.")
        .set_into_module(m, move |ctx: NativeCallContext, node: &str, key: &str| -> Result<bool> {
            let position = ctx.call_position();
            journaled(&h, position, crate::guard::Change::new(format!("k8s::release {node} {key}")).on(format!("node/{node}")), None, || {
                h.block_on(position, kube.release(node, key))?.map_err(|e| kube_error(e, position))
            })
        });
}
