//! `nvml::` (nvidia-smi over exec, and its parsers), `nccl::` (nccl-tests across GPU nodes,
//! and its parser) and `efa::` (libfabric's EFA tools).

use crate::bindings::shared::journaled::journaled;
use crate::guard::Change;
use crate::journal::Undo;
use std::sync::Arc;
use std::time::Duration;

use rhai::{Array, Dynamic, EvalAltResult, Map, Module, NativeCallContext, Position};

use super::fleet::{RUN_OPTIONS, all_reduce_spec, install_fleet};
use super::health::install_health_parsers;
use crate::bindings::shared::args::{encode, kube_error, selector, timeout_of};
use crate::bindings::shared::options::Spec;
use crate::clients::gpu::{
    AllReduce, DEFAULT_FIELDS, QuerySpec, query, query_local, remove_probes,
};
use crate::clients::kube::KubeClient;
use crate::gpu::{nccl, nvidia_smi};
use crate::script::{Extension, Host, documented as doc, from_json};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

pub struct GpuBindings {
    kube: Arc<KubeClient>,
}

impl GpuBindings {
    pub fn new(kube: Arc<KubeClient>) -> Self {
        Self { kube }
    }
}

fn parse_error(
    function: &str,
    error: nvidia_smi::ParseError,
    position: Position,
) -> Box<EvalAltResult> {
    let mut map = Map::new();
    map.insert("code".into(), Dynamic::from("ParseError".to_string()));
    map.insert("reason".into(), Dynamic::from("ParseError".to_string()));
    map.insert(
        "message".into(),
        Dynamic::from(format!("{function}: {error}")),
    );
    EvalAltResult::ErrorRuntime(Dynamic::from_map(map), position).into()
}

fn install_parsers(nvml: &mut Module, nccl_module: &mut Module) {
    doc("parse_csv", &["text: &str", "Array"], "Rows of `nvidia-smi --query-gpu=... --format=csv` (header and units, or not): one map per GPU,\nkeyed by field, numbers as numbers, [N/A] and [Not Supported] as ().")
        .set_into_module(nvml, |ctx: NativeCallContext, text: &str| -> Result {
            nvidia_smi::parse_csv(text, None).map(|rows| encode(&rows)).map_err(|e| parse_error("nvml::parse_csv", e, ctx.call_position()))
        });
    doc(
        "parse_csv",
        &["text: &str", "fields: Array", "Array"],
        "The same for `noheader` output: the fields asked for name the columns.",
    )
    .set_into_module(
        nvml,
        |ctx: NativeCallContext, text: &str, fields: Array| -> Result {
            let fields: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
            let names: Vec<&str> = fields.iter().map(String::as_str).collect();
            nvidia_smi::parse_csv(text, Some(&names))
                .map(|rows| encode(&rows))
                .map_err(|e| parse_error("nvml::parse_csv", e, ctx.call_position()))
        },
    );
    doc(
        "parse_list",
        &["text: &str", "Array"],
        "`nvidia-smi -L`: #{ index, name, uuid, mig_devices: [#{ profile, device, uuid }] }.",
    )
    .set_into_module(nvml, |ctx: NativeCallContext, text: &str| -> Result {
        nvidia_smi::parse_list(text)
            .map(|v| encode(&v))
            .map_err(|e| parse_error("nvml::parse_list", e, ctx.call_position()))
    });
    doc("parse_xml", &["text: &str", "Map"], "`nvidia-smi -q -x`: #{ driver_version, cuda_version, attached_gpus, gpus: [#{ product_name, uuid,\nfb_memory_total_mib, mig_mode_current, temperature_gpu_c, power_draw_w, processes, ... }] }.")
        .set_into_module(nvml, |ctx: NativeCallContext, text: &str| -> Result {
            nvidia_smi::parse_xml(text).map(|v| encode(&v)).map_err(|e| parse_error("nvml::parse_xml", e, ctx.call_position()))
        });
    doc("parse_mig_profiles", &["text: &str", "Array"], "`nvidia-smi mig -lgip`: #{ gpu, name, id, instances_free, instances_total, memory_gib, ... };\n[] when no GPU supports MIG.")
        .set_into_module(nvml, |ctx: NativeCallContext, text: &str| -> Result {
            nvidia_smi::parse_mig_profiles(text).map(|v| encode(&v)).map_err(|e| parse_error("nvml::parse_mig_profiles", e, ctx.call_position()))
        });
    doc("parse_table", &["text: &str", "Map"], "The plain `nvidia-smi` table: #{ driver_version, cuda_version, gpus: [#{ index, name, memory_used_mib,\nmemory_total_mib, utilization_percent, ... }], mig_devices, processes }.")
        .set_into_module(nvml, |ctx: NativeCallContext, text: &str| -> Result {
            nvidia_smi::parse_table(text).map(|v| encode(&v)).map_err(|e| parse_error("nvml::parse_table", e, ctx.call_position()))
        });
    doc("parse", &["text: &str", "Map"], "nccl-tests output (any version, NCCL INFO/WARN lines and all, with or without the word NCCL), or its\n`-J` JSON report (whose `env` is never read): #{ ok, status: ok|error|incomplete, rows, avg_busbw,\nout_of_bounds, nccl_version, tests_version, ranks, devices, warnings, errors, causes (why: first what NCCL's\nown INFO and WARN lines say of the network, one per peer and trouble, such as \"NCCL retried its\nconnect to 10.0.1.7<43211> 3 times (...)\", then the lines that say why, such as \"Invalid number of\nGPUs: ...\"), summary }.")
        .set_into_module(nccl_module, |text: &str| -> Dynamic { encode(&nccl::parse(text)) });
}

impl Extension for GpuBindings {
    fn install(&self, engine: &mut rhai::Engine, host: &Arc<Host>) {
        let mut nvml = Module::new();
        let mut nccl_module = Module::new();
        install_parsers(&mut nvml, &mut nccl_module);
        install_health_parsers(&mut nvml, host);
        super::expected::install_expected(&mut nvml, &mut nccl_module);
        install_fleet(&mut nvml, &mut nccl_module, &self.kube, host);
        super::localise::install_localise(&mut nccl_module, &self.kube, host);
        super::at_scale::install_at_scale(&mut nccl_module, &self.kube, host);
        super::isolation::install_isolation(&mut nvml, &self.kube, host);
        super::certificate::install_certificate(&mut nvml, host);
        super::depth::install_depth(&mut nvml);
        super::fault::install_fault(&mut nvml, &self.kube, host);
        install_query(&mut nvml, &self.kube, host);
        install_all_reduce(&mut nccl_module, &self.kube, host);
        super::in_node::install_in_node(&mut nccl_module, &self.kube, host);
        let mut efa = Module::new();
        super::efa::install_efa(&mut efa, &self.kube, host);
        engine.register_static_module("nvml", nvml.into());
        engine.register_static_module("nccl", nccl_module.into());
        engine.register_static_module("efa", efa.into());
    }
}

fn install_query(nvml: &mut Module, kube: &Arc<KubeClient>, host: &Arc<Host>) {
    let (kube, h) = (kube.clone(), host.clone());
    doc("query", &["options: Map", "Array"], "nvidia-smi --query-gpu on every node `nodes` selects (a selector: #{ tier: \"gpu\" } or \"tier=gpu\"), a few\nat a time, through a pod there that sees the GPUs or a short-lived probe pod (deleted after);\none #{ node, ok, via, gpus: [#{ name, memory.total, ... }], error } per node, a failing node\nreported, not raised. Options: fields, concurrency (32), timeout (\"2m\" per node), namespace,\nimage (of the probe pod), local: true (this machine's nvidia-smi instead).")
        .set_into_module(nvml, move |ctx: NativeCallContext, options: Map| -> Result {
            query_gpus(&h, &kube, ctx.call_position(), &options)
        });
}

/// `nvml::query`'s options.
const QUERY_OPTIONS: &[&str] = &[
    "nodes",
    "fields",
    "concurrency",
    "timeout",
    "namespace",
    "image",
    "local",
];

/// `nvml::query`: on the nodes through probe pods, or on this machine with `local`.
fn query_gpus(h: &Host, kube: &KubeClient, position: Position, options: &Map) -> Result {
    let s = Spec::new(options, "nvml::query", QUERY_OPTIONS, position)?;
    let mut fields = s.strings("fields")?;
    if fields.is_empty() {
        fields = DEFAULT_FIELDS.iter().map(|f| (*f).to_string()).collect();
    }
    if options
        .get("local")
        .is_some_and(|v| v.as_bool() == Ok(true))
    {
        let answer = h.block_on(position, query_local(&fields))?;
        return Ok(encode(&vec![answer]));
    }
    let nodes = options.get("nodes").cloned().unwrap_or(Dynamic::UNIT);
    let spec = QuerySpec {
        selector: selector(&nodes, "nvml::query", position)?,
        fields,
        probe_image: s
            .string("image")?
            .unwrap_or_else(|| "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04".into()),
        namespace: s.string("namespace")?.unwrap_or_else(|| "default".into()),
        concurrency: s.int("concurrency")?.map_or(32, |c| c.max(1) as usize),
        timeout: timeout_of(options, "nvml::query", Duration::from_secs(120), position)?,
    };
    let clock = h.clock.clone();
    // Probe pods it may start; a run killed meanwhile leaves them to recover.
    let undo = Undo::DeleteLabeled {
        kinds: vec!["Pod".into()],
        namespace: spec.namespace.clone(),
        selector: "app.kubernetes.io/managed-by=runbook,runbook/probe=nvml".into(),
    };
    let change =
        Change::new("nvml::query (probe pods)").on(format!("pod/{}/nvml-probes", spec.namespace));
    journaled(h, position, change, Some(undo), || {
        let answered = h.block_on(position, query(kube, &spec, clock.as_ref()));
        if answered.is_err() {
            h.block_on_cleanup(remove_probes(kube, &spec));
        }
        Ok(encode(&answered?.map_err(|e| kube_error(e, position))?))
    })
}

fn install_all_reduce(nccl_module: &mut Module, kube: &Arc<KubeClient>, host: &Arc<Host>) {
    let (kube, h) = (kube.clone(), host.clone());
    doc("all_reduce", &["options: Map", "Map"], "A multi-node nccl-tests all_reduce_perf, as an MPIJob runs it (headless Service, one worker pod per\nGPU node with the GPU taint tolerated and nvidia.com/gpu requested, an mpirun launcher), always\ncleaned up. Options: nodes (how many, 2), selector (\"nvidia.com/gpu=true\"), gpus_per_node (1),\nefa_per_node (0: EFA devices each worker asks for, vpc.amazonaws.com/efa; 32 on a p5.48xlarge),\nmin_bytes (\"8\"), max_bytes (\"128M\"), step_factor (2), iters (20), timeout (\"10m\": past it the\nrun is a hang), image, namespace, algorithm (NCCL_ALGO: \"Ring\" measures the network between nodes, which a\ntree's figure overstates; NCCL chooses by default), collective (\"all_reduce\", \"all_gather\" or \"alltoall\": the\nnccl-tests binary it runs). Answers #{ ok, collective, program (the binary its output names), status: ok|hang|error, summary, avg_busbw, rows,\nranks, devices, nccl_version, tests_version, ofi_version (aws-ofi-nccl's release), algorithm (as NCCL\nacknowledged it), network (\"Socket\", \"Libfabric\": NCCL's \"Using network\"\nline), warnings, nodes, ... }.")
        .set_into_module(nccl_module, move |ctx: NativeCallContext, options: Map| -> Result {
            all_reduce(&h, &kube, ctx.call_position(), &options)
        });
}

/// `nccl::all_reduce`: one run, always cleaned up, its result kept as the run's evidence.
fn all_reduce(h: &Host, kube: &KubeClient, position: Position, options: &Map) -> Result {
    // `nodes` (how many) first, then what every run takes.
    let known = [&["nodes"], RUN_OPTIONS].concat();
    let s = Spec::new(options, "nccl::all_reduce", &known, position)?;
    let mut spec = all_reduce_spec(options, &s, "nccl::all_reduce", position)?;
    spec.nodes = s.int("nodes")?.map_or(2, |n| n.max(0) as usize);
    let clock = h.clock.clone();
    let salt = if clock.is_virtual() {
        0
    } else {
        std::process::id()
    };
    let mut run = AllReduce::new(&spec, clock.now(), salt);
    let undo = Undo::DeleteLabeled {
        kinds: vec!["Job".into(), "Pod".into(), "Service".into()],
        namespace: spec.namespace.clone(),
        selector: format!(
            "app.kubernetes.io/managed-by=runbook,runbook/nccl={}",
            run.name
        ),
    };
    let change = Change::new(format!("nccl::all_reduce {}", run.name))
        .on(format!("pod/{}/{}", spec.namespace, run.name));
    journaled(h, position, change, Some(undo), || {
        let outcome = h.block_on(position, run.run(kube, &spec, clock.as_ref()));
        let cleaned = h.block_on_cleanup(run.cleanup(kube));
        let result = outcome?.map_err(|e| kube_error(e, position))?;
        if let Some(Err(e)) = cleaned {
            return Err(kube_error(e, position));
        }
        record_nccl_evidence(h, &result);
        Ok(from_json(&result))
    })
}

/// What of an all-reduce the run's evidence keeps.
fn record_nccl_evidence(h: &Host, result: &serde_json::Value) {
    h.record_evidence(
        "nccl",
        serde_json::json!({
            "status": result["status"], "summary": result["summary"],
            "network": result["network"], "avg_busbw": result["avg_busbw"],
            "peak_busbw": result["peak_busbw"], "rows": result["rows"],
            "nccl_version": result["nccl_version"], "tests_version": result["tests_version"],
        }),
    );
}
