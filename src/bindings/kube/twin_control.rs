//! `twin::fault(spec)`: a drill switches one of the lab twin's faults while it runs (cuts the
//! on-premises link, then restores it). Only the twin has faults; a real cluster refuses.

use std::sync::Arc;

use rhai::{Dynamic, EvalAltResult, Module, NativeCallContext};

use crate::bindings::shared::args::kube_error;
use crate::clients::kube::KubeClient;
use crate::script::{Host, documented as doc, failure_error};

pub(super) fn module(client: &Arc<KubeClient>, host: &Arc<Host>) -> Module {
    let mut m = Module::new();
    let (kube, h) = (client.clone(), host.clone());
    doc(
        "fault",
        &["spec: &str", "String"],
        "Switches a lab twin fault as `--fault` does, while the run goes on: `link-down=onprem` cuts\nevery hybrid node off the control plane (`link-down=NODE` one node), `link-down=off` restores\nthem; any other `--fault NAME=VALUE` too. Answers the faults now on. Fails on a real cluster, and under --read-only.",
    )
    .set_into_module(
        &mut m,
        move |ctx: NativeCallContext, spec: &str| -> Result<Dynamic, Box<EvalAltResult>> {
            let position = ctx.call_position();
            h.guard_read_only(&format!("twin::fault {spec}"), None)
                .map_err(|e| failure_error(e, position))?;
            let on = h
                .block_on(position, kube.twin_fault(spec))?
                .map_err(|e| kube_error(e, position))?;
            Ok(Dynamic::from(on))
        },
    );
    m
}
