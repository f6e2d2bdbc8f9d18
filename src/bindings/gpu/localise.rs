//! `nccl::localise`: a collective over a whole fleet and, when it falls short, the search that
//! names the nodes and network blocks responsible (src/acceptance), every run an all-reduce
//! pinned to its group's nodes and cleaned up, all of them journaled as one group.

use std::sync::Arc;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext, Position};

use super::fleet::{RUN_OPTIONS, all_reduce_spec};
use crate::acceptance::localise::{FleetNode, localise};
use crate::acceptance::trials::{Collective, Judge, Measured, gpu_hours, tree};
use crate::bindings::shared::args::{encode, kube_error, selector};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::gpu::{AllReduceSpec, remove_sweep, run_on};
use crate::clients::kube::{KubeClient, ListOptions, NodeSummary};
use crate::guard::Change;
use crate::journal::Undo;
use crate::lab::nccl_scale::{self, Collective as Kind};
use crate::script::{Host, documented as doc};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

const FUNCTION: &str = "nccl::localise";

/// Its own options (then nccl::all_reduce's, [`RUN_OPTIONS`]).
const OPTIONS: &[&str] = &["nodes", "blocks", "instance_type", "floor", "tolerance"];

const DOC: &str = "An all-reduce across the whole fleet and, when it falls short, the nodes and network blocks\nresponsible, found by adaptive group testing along the network (each block alone, binary splitting,\nblocks side by side, each culprit run beside cleared nodes, then the fleet without them). nodes: an\narray of names or a selector (default: Ready nodes with nvidia.com/gpu=true); blocks: #{ node: block }\n(the last of ec2::instance_topology's network_nodes), else each node's\ntopology.k8s.aws/network-node-layer-N labels; instance_type: the published figure for each run's node\ncount (p5 family), or floor (GB/s, any count); tolerance (0.1): a run passes at (1 - tolerance) of its\nfigure; and nccl::all_reduce's options. Answers #{ ok, algorithm, culprits: [#{ kind: node|block,\nname, confirmed }], rest_passed, runs, gpu_hours, seconds, tree, trials }.";

pub(super) fn install_localise(nccl: &mut Module, kube: &Arc<KubeClient>, host: &Arc<Host>) {
    let (k, h) = (kube.clone(), host.clone());
    doc("localise", &["options: Map", "Map"], DOC).set_into_module(
        nccl,
        move |ctx: NativeCallContext, options: Map| -> Result {
            search(&h, &k, ctx.call_position(), &options)
        },
    );
}

/// The collective each group of the search runs, through the cluster.
struct Runs<'a> {
    h: &'a Host,
    k: &'a KubeClient,
    spec: &'a AllReduceSpec,
    group: &'a str,
    position: Position,
    /// Runs made so far: each run's objects are named by it.
    made: usize,
    /// What stopped a run from starting (the API refusing it): the search ends on it.
    failed: Option<Box<EvalAltResult>>,
}

impl Collective for Runs<'_> {
    fn run(&mut self, nodes: &[String]) -> Measured {
        if self.failed.is_some() {
            return Measured {
                busbw: None,
                seconds: 0.0,
                note: None,
            };
        }
        let index = self.made;
        self.made += 1;
        let clock = self.h.clock.clone();
        let answer = self.h.block_on(
            self.position,
            run_on(self.k, self.spec, self.group, index, nodes, clock.as_ref()),
        );
        match answer.and_then(|a| a.map_err(|e| kube_error(e, self.position))) {
            Ok(result) => Measured {
                busbw: (result["status"] == "ok")
                    .then(|| result["peak_busbw"].as_f64())
                    .flatten(),
                seconds: result["duration_s"].as_f64().unwrap_or(0.0),
                note: result["summary"].as_str().map(str::to_string),
            },
            Err(e) => {
                self.failed = Some(e);
                Measured {
                    busbw: None,
                    seconds: 0.0,
                    note: None,
                }
            }
        }
    }
}

fn search(h: &Host, k: &KubeClient, position: Position, options: &Map) -> Result {
    let known = [OPTIONS, RUN_OPTIONS].concat();
    let s = Spec::new(options, FUNCTION, &known, position)?;
    let spec = all_reduce_spec(options, &s, FUNCTION, position)?;
    let fleet = fleet(h, k, options, &s, &spec, position)?;
    let figure = figure_of(&s, spec.collective)?;
    let judge = Judge {
        expected: &*figure,
        tolerance: s.number("tolerance")?.unwrap_or(0.1).clamp(0.0, 0.9),
    };
    let stamp = h.clock.now().as_millis() as u64 ^ (u64::from(std::process::id()) << 12);
    let group = format!("nccl-localise-{:x}", stamp % 0xff_ffff);
    let undo = Undo::DeleteLabeled {
        kinds: vec!["Pod".into(), "Service".into()],
        namespace: spec.namespace.clone(),
        selector: format!("app.kubernetes.io/managed-by=runbook,runbook/nccl-group={group}"),
    };
    let change = Change::new(format!("{FUNCTION} {group} ({} nodes)", fleet.len()))
        .on(format!("pod/{}/{group}", spec.namespace));
    journaled(h, position, change, Some(undo), || {
        let mut runs = Runs {
            h,
            k,
            spec: &spec,
            group: &group,
            position,
            made: 0,
            failed: None,
        };
        let found = localise(&fleet, &mut runs, &judge);
        if let Some(error) = runs.failed {
            h.block_on_cleanup(remove_sweep(k, &spec.namespace, &group));
            return Err(error);
        }
        let mut answer = serde_json::to_value(&found).unwrap_or_default();
        answer["ok"] = serde_json::json!(found.trials.first().is_some_and(|t| t.passed));
        answer["runs"] = serde_json::json!(found.trials.len());
        answer["gpu_hours"] = serde_json::json!(gpu_hours(&found.trials, spec.gpus_per_node));
        answer["seconds"] = serde_json::json!(found.trials.iter().map(|t| t.seconds).sum::<f64>());
        answer["tree"] = serde_json::json!(tree(&found.trials));
        Ok(encode(&answer))
    })
}

/// The nodes, each with its block: `blocks` where given, else the node's deepest
/// `topology.k8s.aws/network-node-layer-N` label.
fn fleet(
    h: &Host,
    k: &KubeClient,
    options: &Map,
    s: &Spec<'_>,
    spec: &AllReduceSpec,
    position: Position,
) -> Result<Vec<FleetNode>> {
    let given: Option<Vec<String>> = match options.get("nodes") {
        Some(v) if v.is_array() => Some(s.strings("nodes")?),
        _ => None,
    };
    let chosen = match options.get("nodes") {
        Some(v) if !v.is_array() => selector(v, FUNCTION, position)?,
        _ => None,
    };
    let list = ListOptions {
        namespace: None,
        labels: Some(chosen.unwrap_or_else(|| spec.selector.clone())).filter(|_| given.is_none()),
        fields: None,
    };
    let nodes = h
        .block_on(position, k.list("Node", &list))?
        .map_err(|e| kube_error(e, position))?;
    let blocks = s.pairs("blocks")?;
    let mut fleet: Vec<FleetNode> = nodes
        .iter()
        .filter(|n| NodeSummary::from_object(n).ready)
        .filter_map(|node| {
            let name = node["metadata"]["name"].as_str()?.to_string();
            if given.as_ref().is_some_and(|g| !g.contains(&name)) {
                return None;
            }
            let labelled = (1..=4)
                .rev()
                .find_map(|layer| {
                    node["metadata"]["labels"]
                        [format!("topology.k8s.aws/network-node-layer-{layer}")]
                    .as_str()
                })
                .map(str::to_string);
            let block = blocks
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, b)| b.clone())
                .or(labelled);
            Some(FleetNode { name, block })
        })
        .collect();
    fleet.sort_by(|a, b| a.name.cmp(&b.name));
    if fleet.len() < 2 {
        return Err(s.error(format!(
            "a fleet to search needs at least 2 Ready nodes, got {}",
            fleet.len()
        )));
    }
    Ok(fleet)
}

/// The figure a run of n nodes is judged by: `floor` for any count, else the published figure
/// of `instance_type` for the collective the runs make at that count.
fn figure_of(s: &Spec<'_>, collective: Kind) -> Result<Box<dyn Fn(usize) -> f64>> {
    if let Some(floor) = s.number("floor")? {
        return Ok(Box::new(move |_| floor));
    }
    let kind = s.string("instance_type")?.ok_or_else(|| {
        s.error("give `instance_type` (its published figure at each node count) or `floor` (GB/s)")
    })?;
    if nccl_scale::expected(&kind, collective, 2).is_none() {
        return Err(s.error(format!(
            "no published {} figures by node count for `{kind}` (the p5 family has them); give `floor` (GB/s)",
            collective.name()
        )));
    }
    Ok(Box::new(move |nodes| {
        let count = u32::try_from(nodes).unwrap_or(u32::MAX);
        nccl_scale::expected(&kind, collective, count).map_or(0.0, |(busbw, _)| busbw)
    }))
}
