//! `cost::hybrid(...)`: EKS Hybrid Nodes' vCPU-hour tiers and cluster fees for a plan of
//! nodes (seed 004's model).

use rhai::{Map, Module, NativeCallContext};

use super::args::encode;
use super::options::Spec;
use crate::lab::hybrid_pricing::{HybridUsage, hybrid_cost};
use crate::script::{documented as doc, usage_error};

pub(super) fn register(cost: &mut Module) {
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
