//! `nvml::certify`: a machine's birth certificate from what a run read on it (src/acceptance/
//! certificate.rs), compared with the one the run history kept for that machine, and kept
//! in the run's evidence for the history and the report.

use std::collections::BTreeMap;
use std::sync::Arc;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext, Position};
use serde_json::json;

use crate::acceptance::certificate::{Certificate, drift, driver_of, gpus_of};
use crate::bindings::shared::args::encode;
use crate::bindings::shared::options::Spec;
use crate::gpu::nvidia_smi;
use crate::script::{Host, documented as doc, to_json};

use super::health::error;

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

const FUNCTION: &str = "nvml::certify";

const DOC: &str = "A machine's birth certificate and what drifted since the one the run history kept for it.\nOptions: node, instance (the machine, k8s::nodes()'s instance_id: certificates are kept by machine,\nsince EKS reuses node names), instance_type, gpus (nvidia-smi --query-gpu csv with pci.bus_id, uuid,\nserial, vbios_version, driver_version, as nvml::collect reads them, or its parsed rows), versions\n(#{ name: version }: cuda, nccl, aws-ofi-nccl, libfabric, ...), figures (#{ name: number }, higher is\nbetter), tolerance (0.1: a figure that fell by more is drift). Answers #{ certificate, first (no earlier\ncertificate), since_run (the run that kept the earlier one), drift: [#{ kind: gpu|version|figure, what,\nbefore, now, says }] }; the certificate is kept in the run's evidence (node_certificate).";

pub(super) fn install_certificate(nvml: &mut Module, host: &Arc<Host>) {
    let h = host.clone();
    doc("certify", &["options: Map", "Map"], DOC).set_into_module(
        nvml,
        move |ctx: NativeCallContext, options: Map| -> Result {
            certify(&h, ctx.call_position(), &options)
        },
    );
}

fn certify(h: &Host, position: Position, options: &Map) -> Result {
    let keys = [
        "node",
        "instance",
        "instance_type",
        "gpus",
        "versions",
        "figures",
        "tolerance",
    ];
    let s = Spec::new(options, FUNCTION, &keys, position)?;
    let node = s.required("node")?;
    let machine = s.string("instance")?.filter(|m| !m.is_empty()).ok_or_else(|| {
        s.error(format!(
            "{node}: `instance` (the machine, k8s::nodes()'s instance_id) is needed: certificates are kept by machine, since EKS reuses node names"
        ))
    })?;
    let tolerance = s.number("tolerance")?.unwrap_or(0.1);
    if !(0.0..1.0).contains(&tolerance) {
        return Err(s.error(format!(
            "`tolerance` is a share from 0 to below 1, got {tolerance}"
        )));
    }
    let rows = gpu_rows(options, &node, position)?;
    let mut versions: BTreeMap<String, String> = texts(options, "versions", position)?;
    if let Some(driver) = driver_of(&rows) {
        versions.entry("driver".into()).or_insert(driver);
    }
    let certificate = Certificate {
        node: node.clone(),
        machine: machine.clone(),
        instance_type: s.string("instance_type")?,
        gpus: gpus_of(&rows),
        versions,
        figures: numbers(options, position)?,
    };
    let kept = match h.gpu_record() {
        Some(record) => record
            .certificate(&machine)
            .map_err(|e| error(FUNCTION, "HistoryError", e, position))?,
        None => None,
    };
    let before = kept
        .as_ref()
        .and_then(|(_, c)| serde_json::from_value::<Certificate>(c.clone()).ok());
    let drifted = before
        .as_ref()
        .map(|b| drift(b, &certificate, tolerance))
        .unwrap_or_default();
    let answer = json!({
        "certificate": certificate,
        "first": before.is_none(),
        "since_run": kept.map(|(run, _)| run),
        "drift": drifted,
    });
    h.record_evidence("node_certificate", answer.clone());
    Ok(encode(&answer))
}

/// The `gpus` option: a nvidia-smi csv, or rows already parsed.
fn gpu_rows(
    options: &Map,
    node: &str,
    position: Position,
) -> Result<Vec<serde_json::Map<String, serde_json::Value>>> {
    let parsed = |e: &dyn std::fmt::Display| {
        error(
            FUNCTION,
            "ParseError",
            format!("{node}: gpus: {e}"),
            position,
        )
    };
    match options.get("gpus") {
        None => Ok(Vec::new()),
        Some(value) if value.is_unit() => Ok(Vec::new()),
        Some(value) if value.is_string() => {
            let text = value.clone().into_string().unwrap_or_default();
            nvidia_smi::parse_csv(&text, None).map_err(|e| parsed(&e))
        }
        Some(value) => serde_json::from_value(to_json(value)).map_err(|e| parsed(&e)),
    }
}

/// A map option of texts (`versions`): every value a string.
fn texts(options: &Map, key: &str, position: Position) -> Result<BTreeMap<String, String>> {
    let Some(map) = options.get(key).filter(|v| !v.is_unit()) else {
        return Ok(BTreeMap::new());
    };
    let map = map.read_lock::<Map>().ok_or_else(|| {
        error(
            FUNCTION,
            "InvalidArgument",
            format!("`{key}` is a map #{{ name: \"version\" }}"),
            position,
        )
    })?;
    Ok(map
        .iter()
        .filter(|(_, v)| !v.is_unit())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

/// The `figures` option: every value a number (an unmeasured one, (), is left out).
fn numbers(options: &Map, position: Position) -> Result<BTreeMap<String, f64>> {
    let Some(map) = options.get("figures").filter(|v| !v.is_unit()) else {
        return Ok(BTreeMap::new());
    };
    let not_map = || {
        error(
            FUNCTION,
            "InvalidArgument",
            "`figures` is a map #{ name: number }",
            position,
        )
    };
    let map = map.read_lock::<Map>().ok_or_else(not_map)?;
    let mut figures = BTreeMap::new();
    for (name, value) in map.iter().filter(|(_, v)| !v.is_unit()) {
        let number = value
            .as_float()
            .ok()
            .or_else(|| value.as_int().ok().map(|i| i as f64))
            .ok_or_else(|| {
                error(
                    FUNCTION,
                    "InvalidArgument",
                    format!("`figures.{name}` is a number, got {}", value.type_name()),
                    position,
                )
            })?;
        figures.insert(name.to_string(), number);
    }
    Ok(figures)
}
