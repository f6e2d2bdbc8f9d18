//! NCCL inside each node: one all-reduce over every GPU of a node (NVLink/NVSwitch, or PCIe,
//! no network), each node judged alone against a floor drawn from the published in-node
//! figure (lab/nccl_figures.rs). Pure: a binding runs the all-reduces, this judges them.

use serde::Serialize;

/// One node's run as nccl::all_reduce answers it.
#[derive(Debug, Clone, PartialEq)]
pub struct InNodeRun {
    pub node: String,
    /// `ok`, `hang`, `error`.
    pub status: String,
    pub peak_busbw: Option<f64>,
    pub summary: String,
    pub seconds: f64,
    /// The NCCL and aws-ofi-nccl releases its log named (for the node's birth certificate).
    pub nccl_version: Option<String>,
    pub ofi_version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InNodeVerdict {
    pub node: String,
    pub ok: bool,
    pub peak_busbw: Option<f64>,
    /// GB/s the peak had to reach.
    pub floor: f64,
    pub reason: Option<String>,
    pub seconds: f64,
    pub nccl_version: Option<String>,
    pub ofi_version: Option<String>,
}

/// Each run passes when it ended ok with a peak bus bandwidth of `floor` GB/s or more.
pub fn judge(runs: &[InNodeRun], floor: f64) -> Vec<InNodeVerdict> {
    runs.iter()
        .map(|run| {
            let reason = match (run.status.as_str(), run.peak_busbw) {
                ("ok", Some(peak)) if peak >= floor => None,
                ("ok", Some(peak)) => Some(format!(
                    "NCCL inside the node: peak bus bandwidth {peak:.2} GB/s, under the floor of {floor:.2} GB/s"
                )),
                ("ok", None) => Some("NCCL inside the node: no bus bandwidth in the output".into()),
                (status, _) => Some(format!("NCCL inside the node: {status}: {}", run.summary)),
            };
            InNodeVerdict {
                node: run.node.clone(),
                ok: reason.is_none(),
                peak_busbw: run.peak_busbw,
                floor,
                reason,
                seconds: run.seconds,
                nccl_version: run.nccl_version.clone(),
                ofi_version: run.ofi_version.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_under_the_floor_or_that_did_not_finish_fails_with_why() {
        let run = |node: &str, status: &str, peak: Option<f64>| InNodeRun {
            node: node.into(),
            status: status.into(),
            peak_busbw: peak,
            summary: "timed out".into(),
            seconds: 60.0,
            nccl_version: None,
            ofi_version: None,
        };
        let verdicts = judge(
            &[
                run("a", "ok", Some(470.0)),
                run("b", "ok", Some(300.0)),
                run("c", "hang", None),
            ],
            432.0,
        );
        assert!(verdicts[0].ok);
        assert_eq!(
            verdicts[1].reason.as_deref(),
            Some(
                "NCCL inside the node: peak bus bandwidth 300.00 GB/s, under the floor of 432.00 GB/s"
            )
        );
        assert!(
            verdicts[2]
                .reason
                .as_deref()
                .unwrap()
                .contains("hang: timed out")
        );
    }
}
