//! The GPU health parsers and verdicts as `nvml::` functions: `-q` text and its memory error
//! counters, `topo -m`, `nvlink -s`, the kernel log's Xid lines, `dcgmi diag -j`, and the
//! per-node judgement over what a script gathered.

use std::sync::Arc;

use rhai::{Array, Dynamic, EvalAltResult, Map, Module, NativeCallContext, Position};

use crate::bindings::shared::args::encode;
use crate::gpu::dcgm_diag::parse_diag_json;
use crate::gpu::nvidia_smi::{self, memory_errors, memory_errors_from_csv};
use crate::gpu::xid::parse_kernel_log;
use crate::health::memory::escalations;
use crate::health::node_check::{NodeEvidence, QUERY_FIELDS, check_node, fleet_of};
use crate::health::policy::Policy;
use crate::health::policy_form;
use crate::health::thresholds::{Thresholds, for_instance_type, known_instance_types};
use crate::script::Host;
use crate::script::documented as doc;

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

pub(super) fn error(
    function: &str,
    code: &str,
    message: impl std::fmt::Display,
    position: Position,
) -> Box<EvalAltResult> {
    let mut map = Map::new();
    map.insert("code".into(), Dynamic::from(code.to_string()));
    map.insert("reason".into(), Dynamic::from(code.to_string()));
    map.insert(
        "message".into(),
        Dynamic::from(format!("{function}: {message}")),
    );
    EvalAltResult::ErrorRuntime(Dynamic::from_map(map), position).into()
}

fn parse_failed(
    function: &str,
    message: impl std::fmt::Display,
    position: Position,
) -> Box<EvalAltResult> {
    error(function, "ParseError", message, position)
}

/// Memory error counters from `-q` text or a `--query-gpu` csv, whichever `text` is.
fn memory_counters(text: &str, position: Position) -> Result<Vec<nvidia_smi::MemoryErrors>> {
    let function = "nvml::parse_memory_errors";
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    if first.contains(',') && !first.contains(" : ") {
        let rows =
            nvidia_smi::parse_csv(text, None).map_err(|e| parse_failed(function, e, position))?;
        return Ok(rows.iter().map(memory_errors_from_csv).collect());
    }
    let report =
        nvidia_smi::parse_query_text(text).map_err(|e| parse_failed(function, e, position))?;
    Ok(report.gpus.iter().map(memory_errors).collect())
}

fn text_field(evidence: &Map, key: &str, position: Position) -> Result<Option<String>> {
    match evidence.get(key) {
        None => Ok(None),
        Some(value) if value.is_unit() => Ok(None),
        Some(value) => value.clone().into_string().map(Some).map_err(|got| {
            error(
                "nvml::judge",
                "InvalidArgument",
                format!("`{key}` is the text a tool printed, not {got}"),
                position,
            )
        }),
    }
}

/// One node's evidence from a script map: #{ node, gpus (csv text or parsed rows), cuda_version,
/// kernel_log (text), dcgm (text of dcgmi diag -j) }.
fn evidence_of(value: &Dynamic, position: Position) -> Result<NodeEvidence> {
    let function = "nvml::judge";
    let map = value.read_lock::<Map>().ok_or_else(|| {
        error(
            function,
            "InvalidArgument",
            format!(
                "each node is a map #{{ node, gpus, kernel_log, dcgm }}, not {}",
                value.type_name()
            ),
            position,
        )
    })?;
    for key in map.keys() {
        if ![
            "node",
            "instance",
            "gpus",
            "cuda_version",
            "kernel_log",
            "dcgm",
            "dcgm_hung",
            "nvlink",
        ]
        .contains(&key.as_str())
        {
            return Err(error(
                function,
                "InvalidArgument",
                format!(
                    "unknown key `{key}`; a node has node, instance, gpus, cuda_version, kernel_log, dcgm, dcgm_hung, nvlink"
                ),
                position,
            ));
        }
    }
    let node = text_field(&map, "node", position)?.unwrap_or_default();
    let gpus = match map.get("gpus") {
        Some(value) if value.is_string() => {
            let text = value.clone().into_string().unwrap_or_default();
            Some(
                nvidia_smi::parse_csv(&text, None)
                    .map_err(|e| parse_failed(function, format!("{node}: {e}"), position))?,
            )
        }
        Some(value) if value.is_array() => {
            let json = rhai::serde::from_dynamic::<serde_json::Value>(value)
                .map_err(|e| parse_failed(function, e, position))?;
            Some(serde_json::from_value(json).map_err(|e| parse_failed(function, e, position))?)
        }
        _ => None,
    };
    let kernel_log = text_field(&map, "kernel_log", position)?.map(|t| parse_kernel_log(&t));
    let diag = match text_field(&map, "dcgm", position)? {
        Some(text) => Some(
            parse_diag_json(&text)
                .map_err(|e| parse_failed(function, format!("{node}: {e}"), position))?,
        ),
        None => None,
    };
    let nvlink = match text_field(&map, "nvlink", position)? {
        Some(text) => Some(
            nvidia_smi::nvlink::parse_nvlink_status(&text)
                .map_err(|e| parse_failed(function, format!("{node}: nvlink -s: {e}"), position))?,
        ),
        None => None,
    };
    Ok(NodeEvidence {
        node,
        instance: text_field(&map, "instance", position)?.filter(|i| !i.is_empty()),
        gpus,
        cuda_version: text_field(&map, "cuda_version", position)?,
        kernel_log,
        diag,
        dcgm_hung: text_field(&map, "dcgm_hung", position)?,
        nvlink,
    })
}

/// The `policy` option (the default's shape, `nvml::policy()`), or the default.
fn policy_of(options: &Map, call: &str, position: Position) -> Result<Policy> {
    let Some(given) = options.get("policy").filter(|v| !v.is_unit()) else {
        return Ok(Policy::default());
    };
    let json = rhai::serde::from_dynamic::<serde_json::Value>(given)
        .map_err(|e| error(call, "InvalidArgument", format!("policy: {e}"), position))?;
    policy_form::from_json(&json).map_err(|e| error(call, "InvalidArgument", e, position))
}

fn thresholds_of(options: &Map, position: Position) -> Result<Option<Thresholds>> {
    let Some(kind) = options.get("instance_type").filter(|v| !v.is_unit()) else {
        return Ok(None);
    };
    let kind = kind.to_string();
    let mut found = for_instance_type(&kind).ok_or_else(|| {
        error(
            "nvml::judge",
            "InvalidArgument",
            format!(
                "no thresholds for instance type `{kind}`; known: {}; or give gpus and gpu_name",
                known_instance_types().join(", ")
            ),
            position,
        )
    })?;
    if let Some(gpus) = options.get("gpus").and_then(|g| g.as_int().ok()) {
        found.gpus = u32::try_from(gpus.max(0)).unwrap_or(0);
    }
    if let Some(name) = options.get("gpu_name").filter(|n| n.is_string()) {
        found.gpu_name = name.to_string();
    }
    Ok(Some(found))
}

pub(super) fn install_health_parsers(nvml: &mut Module, host: &Arc<Host>) {
    doc("parse_query_text", &["text: &str", "Map"], "`nvidia-smi -q [-d ...]` as text: #{ driver_version, cuda_version, attached_gpus, gpus: [#{ bus_id, fields }] },\nfields as nested maps keyed as printed.")
        .set_into_module(nvml, |ctx: NativeCallContext, text: &str| -> Result {
            nvidia_smi::parse_query_text(text).map(|r| encode(&r)).map_err(|e| parse_failed("nvml::parse_query_text", e, ctx.call_position()))
        });
    doc("parse_memory_errors", &["text: &str", "Array"], "Memory error counters per GPU from `nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT` or a\n`--query-gpu=ecc.errors.*,retired_pages.*,remapped_rows.*` csv: #{ bus_id, volatile: #{ correctable,\nuncorrectable }, retired_pages: #{ single_bit, double_bit, pending }, remapped_rows: #{ pending, failure, ... } }; () for N/A.")
        .set_into_module(nvml, |ctx: NativeCallContext, text: &str| -> Result {
            memory_counters(text, ctx.call_position()).map(|v| encode(&v))
        });
    doc("parse_topology", &["text: &str", "Map"], "`nvidia-smi topo -m`: #{ devices, rows: [#{ device, links, cpu_affinity, numa_affinity }], nic_names }.")
        .set_into_module(nvml, |ctx: NativeCallContext, text: &str| -> Result {
            nvidia_smi::parse_topology(text).map(|t| encode(&t)).map_err(|e| parse_failed("nvml::parse_topology", e, ctx.call_position()))
        });
    doc("parse_nvlink", &["text: &str", "Array"], "`nvidia-smi nvlink -s`: #{ index, name, uuid, links: [#{ link, gbps }] } per GPU; gbps () when inactive.")
        .set_into_module(nvml, |ctx: NativeCallContext, text: &str| -> Result {
            nvidia_smi::parse_nvlink_status(text).map(|g| encode(&g)).map_err(|e| parse_failed("nvml::parse_nvlink", e, ctx.call_position()))
        });
    doc("parse_kernel_log", &["text: &str", "Map"], "The NVIDIA driver's reports in a kernel log (dmesg, dmesg -T, journalctl -k): #{ xids: [#{ line,\ntimestamp, pci, xid, pid, process, message, caused_by }], sxids, fallen_off_bus }.")
        .set_into_module(nvml, |text: &str| -> Dynamic { encode(&parse_kernel_log(text)) });
    doc("parse_dcgm_diag", &["text: &str", "Map"], "`dcgmi diag -r N -j` (DCGM 3.x or 4.x): #{ format, version, driver, tests: [#{ category, name, status,\nresults: [#{ gpu, status, info, warnings: [#{ message, error_id, reason, dcgm_action }] }] }] }.")
        .set_into_module(nvml, |ctx: NativeCallContext, text: &str| -> Result {
            parse_diag_json(text).map(|d| encode(&d)).map_err(|e| parse_failed("nvml::parse_dcgm_diag", e, ctx.call_position()))
        });
    doc(
        "health_fields",
        &["Array"],
        "The --query-gpu fields `nvml::judge` reads (one nvidia-smi call per node).",
    )
    .set_into_module(nvml, || -> Array {
        QUERY_FIELDS
            .iter()
            .map(|f| Dynamic::from(f.to_string()))
            .collect()
    });
    doc("policy", &["Map"], "The remediation policy nvml::judge and gpu::health use unless given one: #{ actions: #{ \"79\":\n\"REBOOT\", ... } (AWS's Xid table), product_actions: #{ A100: #{ \"64\": \"REBOOT\" } }, rules: [#{ name,\nxid: [31] or \"fatal\", count, window: \"1d\", burst: \"3m\", scope: same_gpu | different_gpus | node,\naction, source }] (NVSentinel's repeated-Xid rules) }. Change or extend it and pass it as `policy`.")
        .set_into_module(nvml, || -> Dynamic { encode(&policy_form::to_json(&Policy::default())) });
    doc("policy", &["given: Map", "Map"], "`given` checked as a remediation policy (nvml::policy()'s shape) and answered whole, as\nnvml::judge will read it; a wrong key or value is an error naming where. A runbook checks a\npolicy given with --set this way before its first step.")
        .set_into_module(nvml, |ctx: NativeCallContext, given: Map| -> Result {
            let mut options = Map::new();
            options.insert("policy".into(), Dynamic::from_map(given));
            let policy = policy_of(&options, "nvml::policy", ctx.call_position())?;
            Ok(encode(&policy_form::to_json(&policy)))
        });
    let h = host.clone();
    doc("judge", &["nodes: Array", "options: Map", "Array"], "A verdict per node (HEALTHY, MONITOR, RESET, REBOOT, ISOLATE) from what its tools printed:\neach node #{ node, gpus (csv of nvml::health_fields(), or parsed rows), cuda_version, kernel_log,\ndcgm, dcgm_hung (the watchdog's words), nvlink (nvidia-smi nvlink -s), instance (the machine: its record across runs) }. Options: instance_type (its GPU count and model),\ngpus, gpu_name, policy (nvml::policy()'s shape). With a run history, a verdict the record says\ncame back after the policy's memory.reboots REBOOTs, or a node remediated memory.remediations times,\nis ISOLATE. Answers #{ node,\nverdict, reasons, findings: [#{ check, verdict, gpu, observed, threshold, source }] } per node.")
        .set_into_module(nvml, move |ctx: NativeCallContext, nodes: Array, options: Map| -> Result {
            let position = ctx.call_position();
            let evidence = nodes.iter().map(|n| evidence_of(n, position)).collect::<Result<Vec<_>>>()?;
            let expected = thresholds_of(&options, position)?;
            let fleet = fleet_of(&evidence);
            let policy = policy_of(&options, "nvml::judge", position)?;
            let mut verdicts: Vec<_> = evidence.iter().map(|e| check_node(e, expected.as_ref(), &fleet, &policy)).collect();
            if let Some(record) = h.gpu_record() {
                let window = policy.memory.window.max(policy.memory.remediation_window);
                for verdict in &mut verdicts {
                    let who = verdict.instance.clone().unwrap_or_else(|| verdict.node.clone());
                    let past = record.past(&who, window).map_err(|e| error("nvml::judge", "HistoryError", e, position))?;
                    verdict.add(escalations(&policy.memory, verdict, &past));
                }
            }
            for verdict in &verdicts {
                h.record_evidence("gpu_health", serde_json::to_value(verdict).unwrap_or_default());
            }
            Ok(encode(&verdicts))
        });
}
