//! The GPU fleet as scripts drive it: `nvml::collect` (what a health check reads, from every
//! node), `nccl::sweep` (nccl-tests over node pairs, judged, the common node named), and the
//! nccl-tests options both `nccl::all_reduce` and the sweep take.

use std::sync::Arc;
use std::time::Duration;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext, Position};

use crate::bindings::shared::args::{encode, kube_error, selector, timeout_of};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::gpu::{
    AllReduceSpec, HealthSpec, PROBE_KIND, SweepSpec, check_algorithm, collect, collect_local,
    dcgm_watchdog, probe_selector, remove_health_probes, remove_sweep, sweep,
};
use crate::clients::kube::{KubeClient, ListOptions, NodeSummary};
use crate::guard::Change;
use crate::health::node_check::QUERY_FIELDS;
use crate::health::pair_sweep::{PairRun, Pairs, findings, pairs_to_run};
use crate::health::thresholds::for_instance_type;
use crate::journal::Undo;
use crate::lab::nccl_scale::Collective;
use crate::script::documented as doc;
use crate::script::{Host, duration_value};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

/// The nccl-tests options of a run (`nodes` and `names` are the caller's).
pub(super) fn all_reduce_spec(
    options: &Map,
    s: &Spec<'_>,
    function: &str,
    position: Position,
) -> Result<AllReduceSpec> {
    let text_or_int = |key: &str, default: &str| -> Result<String> {
        Ok(match options.get(key) {
            None => default.to_string(),
            Some(v) if v.is_int() => v.to_string(),
            Some(_) => s.required(key)?,
        })
    };
    let selector_value = options.get("selector").cloned().unwrap_or(Dynamic::UNIT);
    Ok(AllReduceSpec {
        selector: selector(&selector_value, function, position)?
            .unwrap_or_else(|| "nvidia.com/gpu=true".into()),
        nodes: 2,
        names: None,
        gpus_per_node: s.int("gpus_per_node")?.map_or(1, |n| n.max(1) as u32),
        efa_per_node: s.int("efa_per_node")?.map_or(0, |n| n.max(0) as u32),
        min_bytes: text_or_int("min_bytes", "8")?,
        max_bytes: text_or_int("max_bytes", "128M")?,
        step_factor: s.int("step_factor")?.map_or(2, |n| n.max(2) as u32),
        iters: s.int("iters")?.map_or(20, |n| n.max(1) as u32),
        timeout: timeout_of(options, function, Duration::from_secs(600), position)?,
        image: s
            .string("image")?
            .unwrap_or_else(|| "public.ecr.aws/hpc-cloud/nccl-tests:latest".into()),
        namespace: s.string("namespace")?.unwrap_or_else(|| "default".into()),
        algorithm: match s.string("algorithm")? {
            Some(value) => {
                check_algorithm(&value).map_err(|e| s.error(e))?;
                Some(value)
            }
            None => None,
        },
        collective: match s.string("collective")? {
            Some(name) => Collective::of_name(&name).map_err(|e| s.error(e))?,
            None => Collective::AllReduce,
        },
    })
}

/// `nodes`: an array of node names, or a label selector (string or map).
fn node_choice(
    options: &Map,
    s: &Spec<'_>,
    function: &str,
    position: Position,
) -> Result<(Option<String>, Option<Vec<String>>)> {
    match options.get("nodes") {
        Some(v) if v.is_array() => Ok((None, Some(s.strings("nodes")?))),
        Some(v) => Ok((selector(v, function, position)?, None)),
        None => Ok((None, None)),
    }
}

/// The Ready nodes a selector picks, by name.
fn ready_nodes(
    h: &Host,
    kube: &KubeClient,
    selector: &str,
    position: Position,
) -> Result<Vec<String>> {
    let options = ListOptions {
        namespace: None,
        labels: Some(selector.to_string()),
        fields: None,
    };
    let nodes = h
        .block_on(position, kube.list("Node", &options))?
        .map_err(|e| kube_error(e, position))?;
    Ok(nodes
        .iter()
        .map(NodeSummary::from_object)
        .filter(|n| n.ready)
        .map(|n| n.name)
        .collect())
}

pub(super) fn install_fleet(
    nvml: &mut Module,
    nccl: &mut Module,
    kube: &Arc<KubeClient>,
    host: &Arc<Host>,
) {
    install_collect(nvml, kube, host);
    install_sweep(nccl, kube, host);
}

fn install_collect(nvml: &mut Module, kube: &Arc<KubeClient>, host: &Arc<Host>) {
    let (k, h) = (kube.clone(), host.clone());
    doc("collect", &["options: Map", "Array"], "What a GPU health check reads, from every node `nodes` names (an array of names or a selector),\nthrough one privileged DCGM probe pod per node (deleted after): the nvml::health_fields() query,\nthe kernel log, and `dcgmi diag -r level -j` (level 0-4, 1 by default; 0 runs none). One\n#{ node, via, gpus, kernel_log, dcgm, errors, dcgm_hung } per node; what could not be read is () with why in\nerrors. Options: level, image, namespace, concurrency (16), timeout (\"5m\" per node), dcgm_timeout\n(the watchdog on dcgmi diag: 5m at level 1, 10m at 2, 45m at 3, 4h at 4; past it dcgm_hung says so); local: true\nreads this machine instead (its nvidia-smi, dmesg, and dcgmi where DCGM is installed; no cluster),\none answer with via \"local\".")
        .set_into_module(nvml, move |ctx: NativeCallContext, options: Map| -> Result {
            collect_health(&h, &k, ctx.call_position(), &options)
        });
}

/// `nvml::collect`'s options.
const COLLECT_OPTIONS: &[&str] = &[
    "nodes",
    "level",
    "image",
    "namespace",
    "concurrency",
    "timeout",
    "local",
    "dcgm_timeout",
];

/// `nvml::collect`: from the nodes through probe pods, or from this machine with `local`.
fn collect_health(h: &Host, k: &KubeClient, position: Position, options: &Map) -> Result {
    let function = "nvml::collect";
    let s = Spec::new(options, function, COLLECT_OPTIONS, position)?;
    let level = s.int("level")?.unwrap_or(1);
    if !(0..=4).contains(&level) {
        return Err(s.error(format!(
            "`level` is a dcgmi diag run level, 0 (none) to 4, got {level}"
        )));
    }
    let dcgm_timeout = match options.get("dcgm_timeout").filter(|v| !v.is_unit()) {
        None => dcgm_watchdog(level as u32),
        Some(v) => duration_value(v, &format!("{function}: `dcgm_timeout`"), position)?,
    };
    if options
        .get("local")
        .is_some_and(|v| v.as_bool() == Ok(true))
    {
        let fields: Vec<String> = QUERY_FIELDS.iter().map(|f| (*f).to_string()).collect();
        let timeout = timeout_of(options, function, Duration::from_secs(300), position)?;
        let answer = h.block_on(
            position,
            collect_local(&fields, level as u32, timeout, dcgm_timeout),
        )?;
        return Ok(encode(&vec![answer]));
    }
    let spec = health_spec(options, &s, level as u32, dcgm_timeout, position)?;
    let undo = Undo::DeleteLabeled {
        kinds: vec!["Pod".into()],
        namespace: spec.namespace.clone(),
        selector: probe_selector(PROBE_KIND),
    };
    let clock = h.clock.clone();
    let change =
        Change::new("nvml::collect (probe pods)").on(format!("pod/{}/dcgm-probes", spec.namespace));
    journaled(h, position, change, Some(undo), || {
        let answered = h.block_on(position, collect(k, &spec, clock.as_ref()));
        if answered.is_err() {
            h.block_on_cleanup(remove_health_probes(k, &spec.namespace));
        }
        Ok(encode(&answered?.map_err(|e| kube_error(e, position))?))
    })
}

/// What `nvml::collect` reads from the nodes, and how: its options with their defaults.
fn health_spec(
    options: &Map,
    s: &Spec<'_>,
    level: u32,
    dcgm_timeout: Duration,
    position: Position,
) -> Result<HealthSpec> {
    let function = "nvml::collect";
    let (selector, names) = node_choice(options, s, function, position)?;
    Ok(HealthSpec {
        selector: selector.or_else(|| names.is_none().then(|| "nvidia.com/gpu=true".into())),
        names,
        fields: QUERY_FIELDS.iter().map(|f| (*f).to_string()).collect(),
        level,
        image: s
            .string("image")?
            .unwrap_or_else(|| "nvcr.io/nvidia/cloud-native/dcgm:4.2.3-1-ubuntu22.04".into()),
        namespace: s.string("namespace")?.unwrap_or_else(|| "default".into()),
        concurrency: s.int("concurrency")?.map_or(16, |c| c.max(1) as usize),
        timeout: timeout_of(options, function, Duration::from_secs(300), position)?,
        dcgm_timeout,
    })
}

fn install_sweep(nccl: &mut Module, kube: &Arc<KubeClient>, host: &Arc<Host>) {
    let (k, h) = (kube.clone(), host.clone());
    doc("sweep", &["options: Map", "Map"], "nccl-tests all-reduce on node pairs, `concurrency` (4) pairs at a time, each pair cleaned up:\npairs \"ring\" (each node with the next, by name) or \"all\". A pair fails on no result, values\nout of bounds, or a peak bus bandwidth under `floor` (GB/s; from `instance_type`'s thresholds\nwhen not given). nodes: an array of names or a selector (default: Ready nodes with\nnvidia.com/gpu=true). Also nccl::all_reduce's options. Answers #{ ok, summary, pairs: [#{ nodes,\nok, reason, peak_busbw, seconds }], suspects: [#{ node, failed_pairs, pairs }], common, floor_busbw,\nseconds (the pairs' run times added up) }.")
        .set_into_module(nccl, move |ctx: NativeCallContext, options: Map| -> Result {
            sweep_pairs(&h, &k, ctx.call_position(), &options)
        });
}

/// `nccl::all_reduce`'s options but `nodes`, which runs over several node groups take too.
pub(super) const RUN_OPTIONS: &[&str] = &[
    "selector",
    "gpus_per_node",
    "efa_per_node",
    "min_bytes",
    "max_bytes",
    "step_factor",
    "iters",
    "timeout",
    "image",
    "namespace",
    "algorithm",
    "collective",
];

/// `nccl::sweep`'s own options (then [`RUN_OPTIONS`]).
const SWEEP_OPTIONS: &[&str] = &["nodes", "pairs", "floor", "instance_type", "concurrency"];

/// `nccl::sweep`: the pairs planned, run, cleaned up and judged against the floor.
fn sweep_pairs(h: &Host, k: &KubeClient, position: Position, options: &Map) -> Result {
    let function = "nccl::sweep";
    let known = [SWEEP_OPTIONS, RUN_OPTIONS].concat();
    let s = Spec::new(options, function, &known, position)?;
    let pairs_text = s.string("pairs")?.unwrap_or_else(|| "ring".into());
    let pairs = Pairs::parse(&pairs_text).ok_or_else(|| {
        s.error(format!(
            "`pairs` is \"ring\" or \"all\", got `{pairs_text}`"
        ))
    })?;
    let floor = sweep_floor(&s)?;
    let spec = sweep_spec(h, k, options, &s, pairs, position)?;
    let undo = Undo::DeleteLabeled {
        kinds: vec!["Pod".into(), "Service".into()],
        namespace: spec.run.namespace.clone(),
        selector: format!(
            "app.kubernetes.io/managed-by=runbook,runbook/nccl-group={}",
            spec.group
        ),
    };
    let clock = h.clock.clone();
    let change = Change::new(format!(
        "nccl::sweep {} ({} pairs)",
        spec.group,
        spec.pairs.len()
    ))
    .on(format!("pod/{}/{}", spec.run.namespace, spec.group));
    journaled(h, position, change, Some(undo), || {
        let answers = h.block_on(position, sweep(k, &spec, clock.as_ref()));
        let answers = match answers {
            Ok(answers) => answers,
            Err(e) => {
                h.block_on_cleanup(remove_sweep(k, &spec.run.namespace, &spec.group));
                return Err(e);
            }
        };
        Ok(encode(&findings(&pair_runs(&spec, answers), floor)))
    })
}

/// The bus bandwidth a pair must reach: `floor`, or `instance_type`'s public pair figure.
fn sweep_floor(s: &Spec<'_>) -> Result<Option<f64>> {
    match (s.number("floor")?, s.string("instance_type")?) {
        (Some(floor), _) => Ok(Some(floor)),
        (None, Some(kind)) => {
            let known = for_instance_type(&kind).ok_or_else(|| {
                s.error(format!(
                    "no thresholds for instance type `{kind}`; give `floor` (GB/s)"
                ))
            })?;
            Ok(Some(known.pair_busbw_gbps.ok_or_else(|| {
                s.error(format!(
                    "no public pair bandwidth figure for {kind}; give `floor` (GB/s)"
                ))
            })?))
        }
        (None, None) => Ok(None),
    }
}

/// The sweep to run: the run every pair makes, the pairs of the chosen nodes, and a group
/// name that labels everything it starts.
fn sweep_spec(
    h: &Host,
    k: &KubeClient,
    options: &Map,
    s: &Spec<'_>,
    pairs: Pairs,
    position: Position,
) -> Result<SweepSpec> {
    let function = "nccl::sweep";
    let run = all_reduce_spec(options, s, function, position)?;
    let (chosen, names) = node_choice(options, s, function, position)?;
    let nodes = match names {
        Some(names) => names,
        None => ready_nodes(h, k, chosen.as_deref().unwrap_or(&run.selector), position)?,
    };
    let planned = pairs_to_run(&nodes, pairs);
    if planned.is_empty() {
        return Err(s.error(format!(
            "a sweep needs at least 2 nodes, got {}",
            nodes.len()
        )));
    }
    let clock = h.clock.clone();
    let salt = if clock.is_virtual() {
        0
    } else {
        std::process::id()
    };
    let stamp = (clock.now().as_millis() as u64) ^ (u64::from(salt) << 12);
    Ok(SweepSpec {
        group: format!("nccl-sweep-{:x}", stamp % 0xff_ffff),
        run,
        pairs: planned,
        concurrency: s.int("concurrency")?.map_or(4, |c| c.max(1) as usize),
    })
}

/// Each pair's answer as the judgement reads it.
fn pair_runs(
    spec: &SweepSpec,
    answers: Vec<std::result::Result<serde_json::Value, crate::clients::kube::KubeError>>,
) -> Vec<PairRun> {
    let mut runs = Vec::new();
    for ((a, b), answer) in spec.pairs.iter().zip(answers) {
        // A pair that could not run (a node gone, not Ready) is a failed pair.
        let result = answer
            .unwrap_or_else(|e| serde_json::json!({"status": "error", "summary": e.to_string()}));
        runs.push(PairRun {
            nodes: [a.clone(), b.clone()],
            status: result["status"].as_str().unwrap_or("error").to_string(),
            peak_busbw: result["peak_busbw"].as_f64(),
            out_of_bounds: result["out_of_bounds"].as_u64(),
            summary: result["summary"].as_str().unwrap_or_default().to_string(),
            seconds: result["duration_s"].as_f64().unwrap_or(0.0),
        });
    }
    runs
}
