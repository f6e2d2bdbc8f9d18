//! `nvidia-smi nvlink -s` (`--status`): each GPU's NVLinks and their speed, `<inactive>` for a
//! link that is down. GPUs without NVLink print only their `GPU n:` line.

use serde::Serialize;

use super::error::ParseError;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvlinkGpu {
    pub index: u32,
    pub name: String,
    pub uuid: Option<String>,
    pub links: Vec<NvlinkLink>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvlinkLink {
    pub link: u32,
    /// GB/s; `None` when the link is inactive.
    pub gbps: Option<f64>,
}

impl NvlinkGpu {
    pub fn inactive(&self) -> impl Iterator<Item = u32> + '_ {
        self.links
            .iter()
            .filter(|l| l.gbps.is_none())
            .map(|l| l.link)
    }
}

const SHAPE: &str = "\"GPU <n>: <name> (UUID: ...)\" followed by \"Link <n>: <speed> GB/s\" lines";

/// Reads `nvidia-smi nvlink -s [-i N]` output.
pub fn parse_nvlink_status(text: &str) -> Result<Vec<NvlinkGpu>, ParseError> {
    let mut gpus: Vec<NvlinkGpu> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let unexpected = || ParseError::Unexpected {
            line: index + 1,
            text: raw.to_string(),
            expected: SHAPE.into(),
        };
        if let Some(rest) = line.strip_prefix("GPU ") {
            let (number, rest) = rest.split_once(':').ok_or_else(unexpected)?;
            let rest = rest.trim();
            let (name, uuid) = match rest.rsplit_once(" (UUID: ") {
                Some((name, uuid)) => (name, Some(uuid.trim_end_matches(')').to_string())),
                None => (rest, None),
            };
            gpus.push(NvlinkGpu {
                index: number.trim().parse().map_err(|_| unexpected())?,
                name: name.trim().to_string(),
                uuid,
                links: Vec::new(),
            });
        } else if let Some(rest) = line.strip_prefix("Link ") {
            let (number, speed) = rest.split_once(':').ok_or_else(unexpected)?;
            let speed = speed.trim();
            let gbps = if speed.contains("inactive") {
                None
            } else {
                let value = speed.strip_suffix("GB/s").ok_or_else(unexpected)?;
                Some(value.trim().parse().map_err(|_| unexpected())?)
            };
            let link = NvlinkLink {
                link: number.trim().parse().map_err(|_| unexpected())?,
                gbps,
            };
            gpus.last_mut().ok_or_else(unexpected)?.links.push(link);
        } else {
            return Err(unexpected());
        }
    }
    Ok(gpus)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::test_fixtures::fixture;

    #[test]
    fn twelve_links_of_an_a100() {
        let gpus = parse_nvlink_status(&fixture(
            "nvidia_smi_nvlink_s_i0_a100_sxm4_40gb_12links_brev.txt",
        ))
        .unwrap();
        assert_eq!(gpus.len(), 1);
        assert_eq!(gpus[0].name, "NVIDIA A100-SXM4-40GB");
        assert_eq!(
            gpus[0].uuid.as_deref(),
            Some("GPU-fde0a018-ad1a-bbec-ccf6-50a9f64bd178")
        );
        assert_eq!(gpus[0].links.len(), 12);
        assert!(gpus[0].links.iter().all(|l| l.gbps == Some(25.0)));
        assert_eq!(gpus[0].inactive().count(), 0);
    }

    #[test]
    fn inactive_links_and_gpus_without_nvlink() {
        let text = "GPU 0: NVIDIA A10G (UUID: GPU-1)\nGPU 1: X (UUID: GPU-2)\n\t Link 0: <inactive>\n\t Link 1: 25 GB/s\n";
        let gpus = parse_nvlink_status(text).unwrap();
        assert!(gpus[0].links.is_empty());
        assert_eq!(gpus[1].inactive().collect::<Vec<_>>(), [0]);
        let err = parse_nvlink_status("Link 0: 25 GB/s\n").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }
}
