//! `nvml::inject_xid` and `nvml::take_back`: a GPU fault put on one node on purpose, for a repair
//! drill, and taken back. Outside the lab twin the injection needs `--disrupt gpu-fault/NODE`
//! besides `--yes`; it is journaled with its take-back, so `runbook recover` undoes it too.

use std::sync::Arc;
use std::time::Duration;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext, Position};

use super::health::error;
use crate::bindings::shared::args::{kube_error, timeout_of};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::gpu::{
    FAULT_PROBE_KIND, XidInjection, agent_pod, inject_xid, probe_selector, remove_fault_probes,
};
use crate::clients::kube::KubeClient;
use crate::guard::Change;
use crate::journal::Undo;
use crate::script::{Host, documented as doc};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

const FUNCTION: &str = "nvml::inject_xid";
const OPTIONS: &[&str] = &["gpu", "image", "namespace", "timeout"];

const DOC: &str = "Injects Xid `xid` on GPU `gpu` (0) of `node` the two ways real drills do, through one privileged\nprobe pod on the host's network (deleted after): into DCGM's field cache (`dcgmi test --inject\n--gpuid G -f 230 -v XID`, as the EKS node monitoring agent's e2e suite does; DCGM's policies and\nthe agent see it) and the driver's line into the kernel log (/dev/kmsg, as gpud's inject-fault\ndoes; what reads dmesg sees it). The GPU itself is untouched. Outside the lab twin it needs\n--disrupt gpu-fault/NODE. Options: image (NVIDIA's DCGM image), namespace, timeout (\"5m\").\nAnswers #{ node, gpu, xid, pci, kernel_line, agent_pod }; nvml::take_back(it) undoes it.";

pub(super) fn install_fault(nvml: &mut Module, kube: &Arc<KubeClient>, host: &Arc<Host>) {
    let (k, h) = (kube.clone(), host.clone());
    doc(
        "inject_xid",
        &["node: &str", "xid: i64", "options: Map", "Map"],
        DOC,
    )
    .set_into_module(
        nvml,
        move |ctx: NativeCallContext, node: &str, xid: i64, options: Map| -> Result {
            inject(&h, &k, ctx.call_position(), node, xid, &options)
        },
    );
    let h = host.clone();
    doc("record_repair", &["drill: Map", "()"], "Keeps a repair drill's outcome in the run's evidence, for the report and the HTML page's \"Repair\ndrill\" section: #{ expected (words), nodes: [#{ node, stages: [#{ stage, at (seconds after\nthe injection, or ()), budget, ok, says }] }], events: [#{ at, node, what }] }.")
        .set_into_module(nvml, move |drill: Map| {
            h.record_evidence("repair_drill", crate::script::to_json(&Dynamic::from_map(drill)));
        });
    let (k, h) = (kube.clone(), host.clone());
    doc("take_back", &["injected: Map", "bool"], "Takes back what nvml::inject_xid injected, where the node is still there: its monitoring agent's\npod is deleted, so the agent starts again with nothing found (DCGM's policy reports only new\nviolations). The kernel log keeps the line until the node reboots. False when there was\nnothing to take back (the node was replaced or rebooted, or runs no agent).")
        .set_into_module(nvml, move |ctx: NativeCallContext, injected: Map| -> Result {
            take_back(&h, &k, ctx.call_position(), &injected)
        });
}

fn inject(
    h: &Host,
    k: &KubeClient,
    position: Position,
    node: &str,
    xid: i64,
    options: &Map,
) -> Result {
    let s = Spec::new(options, FUNCTION, OPTIONS, position)?;
    let xid = u32::try_from(xid).ok().filter(|x| *x > 0).ok_or_else(|| {
        s.error(format!(
            "the Xid is a positive number (79, 48, ...), got {xid}"
        ))
    })?;
    let gpu = s.int("gpu")?.unwrap_or(0);
    let gpu = u32::try_from(gpu)
        .map_err(|_| s.error(format!("`gpu` is a GPU index from 0, got {gpu}")))?;
    let spec = XidInjection {
        node: node.to_string(),
        gpu,
        xid,
        image: s
            .string("image")?
            .unwrap_or_else(|| "nvcr.io/nvidia/cloud-native/dcgm:4.2.3-1-ubuntu22.04".into()),
        namespace: s.string("namespace")?.unwrap_or_else(|| "default".into()),
        timeout: timeout_of(options, FUNCTION, Duration::from_secs(300), position)?,
    };
    // The take-back names the agent pod that runs there now: its restart forgets the finding.
    let agent = h.block_on(position, agent_pod(k, node))?;
    let undo = agent
        .as_deref()
        .and_then(|pod| pod.split_once('/'))
        .map(|(ns, name)| Undo::DeleteObject {
            kind: "Pod".into(),
            namespace: Some(ns.to_string()),
            name: name.to_string(),
        });
    let change = Change::new(format!("{FUNCTION} {xid} on {node} GPU {gpu}"))
        .on(format!("gpu-fault/{node}"))
        .disrupting(crate::guard::World::Kubernetes);
    let clock = h.clock.clone();
    // The probe pod is a change of its own: a run killed while it exists leaves it for
    // `recover` to delete, as the other probes' calls do.
    let probes = Change::new(format!("{FUNCTION} (probe pod)"))
        .on(format!("pod/{}/fault-probes", spec.namespace));
    let probe_undo = Undo::DeleteLabeled {
        kinds: vec!["Pod".into()],
        namespace: spec.namespace.clone(),
        selector: probe_selector(FAULT_PROBE_KIND),
    };
    journaled(h, position, probes, Some(probe_undo), || {
        journaled(h, position, change, undo, || {
            inject_now(h, k, &spec, position, clock.as_ref())
        })
    })
}

/// The injection itself, once journaled; what it answers the script.
fn inject_now(
    h: &Host,
    k: &KubeClient,
    spec: &XidInjection,
    position: Position,
    clock: &dyn crate::clock::Clock,
) -> Result {
    let (node, gpu, xid) = (spec.node.as_str(), spec.gpu, spec.xid);
    let answered = h.block_on(position, inject_xid(k, spec, clock))?;
    let injected = answered.map_err(|why| {
        h.block_on_cleanup(remove_fault_probes(k, &spec.namespace));
        error(
            FUNCTION,
            "InjectionFailed",
            format!("{node}: {why}"),
            position,
        )
    })?;
    let mut answer = Map::new();
    answer.insert("node".into(), node.into());
    answer.insert("gpu".into(), Dynamic::from(i64::from(gpu)));
    answer.insert("xid".into(), Dynamic::from(i64::from(xid)));
    answer.insert("pci".into(), injected.pci.into());
    answer.insert("kernel_line".into(), injected.kernel_line.into());
    answer.insert(
        "agent_pod".into(),
        injected.agent_pod.map_or(Dynamic::UNIT, Dynamic::from),
    );
    Ok(Dynamic::from_map(answer))
}

fn take_back(h: &Host, k: &KubeClient, position: Position, injected: &Map) -> Result {
    let text = |key: &str| injected.get(key).and_then(|v| v.clone().into_string().ok());
    let Some(node) = text("node") else {
        return Err(error(
            "nvml::take_back",
            "BadInput",
            "give what nvml::inject_xid answered (a map with `node`)",
            position,
        ));
    };
    // The agent running on the node now: the injection's, or one since restarted (the node
    // rebooted or was replaced, and there is nothing left to take back).
    let now = h.block_on(position, agent_pod(k, &node))?;
    let Some((namespace, pod)) = now
        .as_deref()
        .filter(|p| text("agent_pod").as_deref() == Some(*p))
        .and_then(|p| p.split_once('/'))
    else {
        return Ok(Dynamic::from(false));
    };
    let change =
        Change::new(format!("nvml::take_back on {node}")).on(format!("pod/{namespace}/{pod}"));
    journaled(h, position, change, None, || {
        h.block_on(position, k.delete("Pod", pod, Some(namespace)))?
            .map_err(|e| kube_error(e, position))?;
        Ok(Dynamic::from(true))
    })
}
