//! One collective across a whole group, judged against the figure published for that
//! collective, instance type and node count (lab/nccl_scale.rs): a run passes at
//! (1 - tolerance) of it; a run without a figure, or without a result, says why it is not
//! judged a pass.

use serde::Serialize;

use crate::lab::nccl_scale::{self, Collective};

/// What one run at scale showed, as the acceptance reads it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AtScale {
    pub collective: &'static str,
    pub nodes: usize,
    /// The peak out-of-place bus bandwidth, GB/s; None when the run gave no result.
    pub busbw: Option<f64>,
    /// The published figure and where it comes from; None where nothing is published.
    pub figure: Option<f64>,
    pub source: Option<String>,
    pub floor: Option<f64>,
    pub ok: bool,
    pub reason: String,
    pub seconds: f64,
}

/// Judges a run of `collective` over `nodes` nodes of `instance_type` that reached `busbw`
/// (None: it failed, `note` says how) in `seconds`.
pub fn judge(
    collective: Collective,
    instance_type: &str,
    nodes: usize,
    tolerance: f64,
    busbw: Option<f64>,
    note: &str,
    seconds: f64,
) -> AtScale {
    let count = u32::try_from(nodes).unwrap_or(u32::MAX);
    let published = nccl_scale::expected(instance_type, collective, count);
    let floor = published.as_ref().map(|(f, _)| f * (1.0 - tolerance));
    let name = collective.name();
    let (ok, reason) = match (busbw, floor) {
        (None, _) => (
            false,
            format!("{name} at {nodes} nodes gave no result: {note}"),
        ),
        (Some(_), None) => (
            false,
            format!(
                "{name} at {nodes} nodes: nothing is published for {instance_type} at that count to judge it by"
            ),
        ),
        (Some(got), Some(floor)) if got < floor => (
            false,
            format!(
                "{name} at {nodes} nodes: {got:.2} GB/s under {floor:.2} ({:.0}% of the published {:.2})",
                (1.0 - tolerance) * 100.0,
                published.as_ref().map_or(0.0, |(f, _)| *f)
            ),
        ),
        (Some(got), Some(floor)) => (
            true,
            format!("{name} at {nodes} nodes: {got:.2} GB/s, at least {floor:.2}"),
        ),
    };
    AtScale {
        collective: name,
        nodes,
        busbw,
        figure: published.as_ref().map(|(f, _)| *f),
        source: published.map(|(_, s)| s),
        floor,
        ok,
        reason,
        seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_passes_at_its_collectives_figure_less_the_tolerance() {
        // all_gather at 4 nodes: 330.92 published, 297.83 with 10 % off.
        let passed = judge(
            Collective::AllGather,
            "p5.48xlarge",
            4,
            0.1,
            Some(300.0),
            "",
            60.0,
        );
        assert!(passed.ok, "{}", passed.reason);
        assert_eq!(passed.figure, Some(330.92));
        assert!(passed.source.as_deref().unwrap().contains("4 nodes"));
        let short = judge(
            Collective::AllToAll,
            "p5.48xlarge",
            4,
            0.1,
            Some(30.0),
            "",
            60.0,
        );
        assert!(!short.ok);
        assert!(
            short
                .reason
                .starts_with("alltoall at 4 nodes: 30.00 GB/s under 48.66"),
            "{}",
            short.reason
        );
    }

    #[test]
    fn no_result_or_no_figure_is_not_a_pass() {
        let failed = judge(
            Collective::AllGather,
            "p5.48xlarge",
            4,
            0.1,
            None,
            "hang: no result within 15m",
            900.0,
        );
        assert!(!failed.ok);
        assert!(
            failed.reason.contains("hang: no result"),
            "{}",
            failed.reason
        );
        let unknown = judge(
            Collective::AllGather,
            "g5.xlarge",
            4,
            0.1,
            Some(1.0),
            "",
            1.0,
        );
        assert!(!unknown.ok);
        assert!(
            unknown.reason.contains("nothing is published"),
            "{}",
            unknown.reason
        );
    }
}
