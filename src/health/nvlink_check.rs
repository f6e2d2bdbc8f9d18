//! NVLink state on the types built with it: every link of every GPU active at its speed, as
//! `nvidia-smi nvlink -s` prints them. A link that trained down at boot logs no Xid, so the
//! kernel log alone (Xid 74) does not find it.

use crate::gpu::nvidia_smi::nvlink::NvlinkGpu;

use super::verdict::{Finding, Verdict};

const SOURCE: &str = "NVIDIA nvidia-smi nvlink -s: an inactive link prints `<inactive>`; AWS's Xid table gives an NVLink error (Xid 74) RESET, which this check follows (runbook's choice for a link that is down without an Xid); links per GPU from the GPU catalog";

/// One finding per GPU: its active links against `expected` per GPU (the catalog's, or, when
/// the type is not known, the links the GPU reports at all). GPUs with no NVLink on a type
/// without it give none.
pub fn nvlink_findings(gpus: &[NvlinkGpu], expected: Option<u32>) -> Vec<Finding> {
    gpus.iter()
        .filter_map(|gpu| {
            let reported = u32::try_from(gpu.links.len()).unwrap_or(u32::MAX);
            let want = expected.unwrap_or(reported);
            if want == 0 {
                return None;
            }
            let active = u32::try_from(gpu.links.iter().filter(|l| l.gbps.is_some()).count())
                .unwrap_or(u32::MAX);
            let inactive: Vec<String> = gpu.inactive().map(|l| l.to_string()).collect();
            let observed = if inactive.is_empty() {
                format!("{active} of {want} NVLinks active")
            } else {
                format!(
                    "{active} of {want} NVLinks active (inactive: {})",
                    inactive.join(", ")
                )
            };
            Some(Finding {
                verdict: if active < want {
                    Verdict::Reset
                } else {
                    Verdict::Healthy
                },
                gpu: Some(gpu.index.to_string()),
                gpu_uuid: gpu.uuid.clone(),
                ..Finding::passed("nvlink", observed, format!("{want} active"), SOURCE)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::nvidia_smi::nvlink::parse_nvlink_status;

    fn gpus(links: &[&str]) -> Vec<NvlinkGpu> {
        let mut text = String::from("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-a)\n");
        for (i, l) in links.iter().enumerate() {
            text.push_str(&format!("\t Link {i}: {l}\n"));
        }
        parse_nvlink_status(&text).unwrap()
    }

    #[test]
    fn a_link_down_is_a_reset_on_its_gpu() {
        let up = ["26.562 GB/s"; 18];
        assert_eq!(
            nvlink_findings(&gpus(&up), Some(18))[0].verdict,
            Verdict::Healthy
        );
        let mut down = up.to_vec();
        down[3] = "<inactive>";
        let found = nvlink_findings(&gpus(&down), Some(18));
        assert_eq!(found[0].verdict, Verdict::Reset);
        assert_eq!(found[0].observed, "17 of 18 NVLinks active (inactive: 3)");
        assert_eq!(found[0].gpu_uuid.as_deref(), Some("GPU-a"));
        // Links missing from the listing altogether are counted against the catalog's.
        assert_eq!(
            nvlink_findings(&gpus(&up[..12]), Some(18))[0].verdict,
            Verdict::Reset
        );
        // A PCIe GPU: no links, none expected, no finding.
        assert!(nvlink_findings(&gpus(&[]), Some(0)).is_empty());
        assert!(nvlink_findings(&gpus(&[]), None).is_empty());
    }
}
