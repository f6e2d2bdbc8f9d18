//! `cost::`: the run's cost so far from the lab twin's meter, the price table, and EKS Hybrid
//! Nodes' vCPU-hour tiers and cluster fees for a plan of nodes (seed 004's model).

use std::sync::Arc;

use rhai::{Map, Module, NativeCallContext};

use super::call::{Result, call, json};
use crate::bindings::shared::args::encode;
use crate::bindings::shared::options::Spec;
use crate::clients::aws::AwsClients;
use crate::lab::cost::PRICES;
use crate::lab::hybrid_pricing::{HybridUsage, hybrid_cost};
use crate::script::{Host, documented as doc, usage_error};

pub(super) fn module(clients: &Arc<AwsClients>, host: &Arc<Host>) -> Module {
    let mut cost = Module::new();
    let (c, h) = (clients.clone(), host.clone());
    doc("report", &["Map"], "The run's cost so far from the lab twin's meter: #{ currency, hours, lines: [#{ resource, kind, hours,\nusd_per_hour, usd, running }], total_usd, daily_rate_usd, unpriced }. Real AWS has no such\nmeter: there it raises CostMeterUnavailable.")
        .set_into_module(&mut cost, move |ctx: NativeCallContext| -> Result {
            let report = call(&h, ctx.call_position(), || c.cost_report())?;
            Ok(json(&serde_json::to_value(report).unwrap_or_default()))
        });
    doc("prices", &["Array"], "The price table: #{ kind, usd_per_hour, source } for the EKS control plane, NAT gateway,\nt3.medium and g5.xlarge (ap-northeast-2, on demand).")
        .set_into_module(&mut cost, move || -> Result {
            Ok(json(&serde_json::to_value(PRICES).unwrap_or_default()))
        });
    hybrid(&mut cost);
    cost
}

fn hybrid(cost: &mut Module) {
    doc(
        "hybrid",
        &["options: Map", "Map"],
        "What EKS Hybrid Nodes cost: `nodes` of `vcpus_per_node` vCPUs, `hours_per_month` (730), the\nsame month `months` times (12), with `clusters` clusters ($0.10/h each, 0). Answers #{\nvcpu_hours_per_month, tiers: [#{ usd_per_vcpu_hour, vcpu_hours, usd }], nodes_usd_per_month,\nnodes_usd, clusters_usd, total_usd }: the monthly vCPU-hour tiers ($0.020 for the first 576,000,\nthen $0.014, $0.010, $0.008, $0.006). A model, not a bill.",
    )
    .set_into_module(cost, |ctx: NativeCallContext, options: Map| {
        let position = ctx.call_position();
        let s = Spec::new(
            &options,
            "cost::hybrid",
            &["nodes", "vcpus_per_node", "hours_per_month", "months", "clusters"],
            position,
        )?;
        let count = |key: &str, default: Option<i64>, least: i64| {
            let value = s.int(key)?.or(default).ok_or_else(|| {
                usage_error(format!("cost::hybrid: `{key}` is required"), position)
            })?;
            u64::try_from(value).ok().filter(|v| *v >= least as u64).ok_or_else(|| {
                usage_error(
                    format!("cost::hybrid: `{key}` must be at least {least}, got {value}"),
                    position,
                )
            })
        };
        let hours_per_month = s.number("hours_per_month")?.unwrap_or(730.0);
        if !(0.0..=744.0).contains(&hours_per_month) {
            return Err(usage_error(
                format!("cost::hybrid: `hours_per_month` is between 0 and 744 (31 days), got {hours_per_month}"),
                position,
            ));
        }
        let usage = HybridUsage {
            nodes: count("nodes", None, 0)?,
            vcpus_per_node: count("vcpus_per_node", None, 1)?,
            hours_per_month,
            months: count("months", Some(12), 1)?,
            clusters: count("clusters", Some(0), 0)?,
        };
        Ok(encode(&hybrid_cost(&usage)))
    });
}
