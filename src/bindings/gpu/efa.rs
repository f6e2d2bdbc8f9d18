//! `efa::`: libfabric's EFA tools as Rhai functions: their parsers, and `efa::check`, each
//! node's EFA devices (fi_info) and their own loopbacks (fi_pingpong) through a probe pod per
//! node, judged (src/acceptance/efa_check.rs).

use std::sync::Arc;
use std::time::Duration;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext, Position};

use super::health::error;
use crate::acceptance::efa_check::judge;
use crate::bindings::shared::args::{encode, timeout_of};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::gpu::{
    EFA_PROBE_KIND, EfaSpec, efa_outputs, probe_selector, remove_efa_probes,
};
use crate::clients::kube::KubeClient;
use crate::gpu::efa::{fi_info::parse_fi_info, pingpong::parse_pingpong};
use crate::guard::Change;
use crate::journal::Undo;
use crate::lab::{efa_loopback, gpu_catalog};
use crate::script::{Host, documented as doc};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

const FUNCTION: &str = "efa::check";

const OPTIONS: &[&str] = &[
    "nodes",
    "instance_type",
    "expected",
    "floor",
    "tolerance",
    "loopback",
    "image",
    "namespace",
    "concurrency",
    "timeout",
];

const DOC: &str = "Each node's EFA devices, through one privileged probe pod per node (deleted after): `fi_info -p efa`\nagainst the devices its type has, a device the other nodes have and it lacks named as missing,\nthen each listed device's own loopback (fi_pingpong server and client on the node, as\nefa_test.sh runs it) at its largest size, 1 MiB, against a floor. nodes: an array of names; instance_type (its EFA count and\nhealthy loopback figure) or expected (a count) and floor (MB/sec); tolerance (0.1): the floor is\n(1 - tolerance) of the healthy figure; loopback (true; false runs fi_info alone); image (with\nlibfabric's tools: public.ecr.aws/hpc-cloud/nccl-tests:latest), namespace, concurrency (16),\ntimeout (\"5m\" per node). One #{ node, via, devices, expected, missing, loopback: [#{ device, mbps,\nok, reason }], ok, reasons } per node.";

pub(super) fn install_efa(efa: &mut Module, kube: &Arc<KubeClient>, host: &Arc<Host>) {
    doc("parse_fi_info", &["text: &str", "Map"], "`fi_info -p efa [-t FI_EP_RDM]`: #{ endpoints: [#{ provider, fabric, domain, version, endpoint_type,\nprotocol }], devices (each domain without -rdm/-dgrm, once), version, error (`fi_getinfo: -61` when none) }.")
        .set_into_module(efa, |ctx: NativeCallContext, text: &str| -> Result {
            parse_fi_info(text).map(|i| encode(&i)).map_err(|e| error("efa::parse_fi_info", "ParseError", e, ctx.call_position()))
        });
    doc("parse_pingpong", &["text: &str", "Map"], "`fi_pingpong`'s output: #{ rows: [#{ bytes, sent, acked, seconds, mb_per_sec, usec_per_xfer,\nmxfers_per_sec }], errors (its `[error] ...` lines) }.")
        .set_into_module(efa, |ctx: NativeCallContext, text: &str| -> Result {
            parse_pingpong(text).map(|p| encode(&p)).map_err(|e| error("efa::parse_pingpong", "ParseError", e, ctx.call_position()))
        });
    let (k, h) = (kube.clone(), host.clone());
    doc("check", &["options: Map", "Array"], DOC).set_into_module(
        efa,
        move |ctx: NativeCallContext, options: Map| -> Result {
            check(&h, &k, ctx.call_position(), &options)
        },
    );
}

/// The device count and loopback floor to hold each node to.
fn expectations(s: &Spec<'_>) -> Result<(u32, f64)> {
    let tolerance = s.number("tolerance")?.unwrap_or(0.1);
    if !(0.0..1.0).contains(&tolerance) {
        return Err(s.error(format!(
            "`tolerance` is a share from 0 to under 1, got {tolerance}"
        )));
    }
    let kind = s.string("instance_type")?;
    let row = match &kind {
        Some(kind) => Some(gpu_catalog::find(kind).filter(|r| r.efa_interfaces > 0).ok_or_else(|| {
            s.error(format!("`{kind}` is not an EFA instance type of the catalog; give expected (a count) and floor (MB/sec)"))
        })?),
        None => None,
    };
    let expected = match (s.int("expected")?, row) {
        (Some(n), _) if n >= 0 => n as u32,
        (Some(n), _) => return Err(s.error(format!("`expected` is a device count, got {n}"))),
        (None, Some(row)) => row.efa_interfaces,
        (None, None) => {
            return Err(
                s.error("give instance_type, or expected (a device count) and floor (MB/sec)")
            );
        }
    };
    let floor = match (s.number("floor")?, &kind) {
        (Some(floor), _) => floor,
        (None, Some(kind)) => {
            efa_loopback::healthy_mb_per_sec(kind).unwrap_or(0.0) * (1.0 - tolerance)
        }
        (None, None) => return Err(s.error("give floor (MB/sec) with expected, or instance_type")),
    };
    Ok((expected, floor))
}

fn check(h: &Host, k: &KubeClient, position: Position, options: &Map) -> Result {
    let s = Spec::new(options, FUNCTION, OPTIONS, position)?;
    if options.get("nodes").is_none_or(Dynamic::is_unit) {
        return Err(
            s.error("give `nodes`: an array of node names (k8s::nodes(...).map(|n| n.name))")
        );
    }
    let names = s.strings("nodes")?;
    let (expected, floor) = expectations(&s)?;
    let spec = EfaSpec {
        names,
        image: s
            .string("image")?
            .unwrap_or_else(|| "public.ecr.aws/hpc-cloud/nccl-tests:latest".into()),
        namespace: s.string("namespace")?.unwrap_or_else(|| "default".into()),
        concurrency: s.int("concurrency")?.map_or(16, |c| c.max(1) as usize),
        timeout: timeout_of(options, FUNCTION, Duration::from_secs(300), position)?,
        loopback: options
            .get("loopback")
            .is_none_or(|v| v.as_bool() != Ok(false)),
    };
    let undo = Undo::DeleteLabeled {
        kinds: vec!["Pod".into()],
        namespace: spec.namespace.clone(),
        selector: probe_selector(EFA_PROBE_KIND),
    };
    let clock = h.clock.clone();
    let change =
        Change::new("efa::check (probe pods)").on(format!("pod/{}/efa-probes", spec.namespace));
    journaled(h, position, change, Some(undo), || {
        let answered = h.block_on(position, efa_outputs(k, &spec, clock.as_ref()));
        if answered.is_err() {
            h.block_on_cleanup(remove_efa_probes(k, &spec.namespace));
        }
        Ok(encode(&judge(&answered?, expected, floor)))
    })
}
