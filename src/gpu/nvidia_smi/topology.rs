//! `nvidia-smi topo -m`: the tab-separated matrix of how each GPU and NIC reaches the others
//! (`X`, `NV12`, `PIX`, `PXB`, `PHB`, `NODE`, `SYS`), the CPU/NUMA affinity columns, and the
//! legend. Header cells may carry ANSI underline escapes, which are removed.

use serde::Serialize;

use super::error::ParseError;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Topology {
    /// The matrix's columns in order: `GPU0`, ..., `NIC0`, ...
    pub devices: Vec<String>,
    pub rows: Vec<TopologyRow>,
    /// `NIC Legend` entries: `NIC0` -> `mlx5_0`.
    pub nic_names: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopologyRow {
    pub device: String,
    /// The cell for each column, in `devices` order (`X` on the diagonal).
    pub links: Vec<String>,
    pub cpu_affinity: Option<String>,
    pub numa_affinity: Option<String>,
    pub gpu_numa_id: Option<String>,
}

impl Topology {
    /// How `a` reaches `b` (`NV12`, `SYS`, ...), as printed.
    pub fn link(&self, a: &str, b: &str) -> Option<&str> {
        let column = self.devices.iter().position(|d| d == b)?;
        let row = self.rows.iter().find(|r| r.device == a)?;
        row.links.get(column).map(String::as_str)
    }

    /// The number of bonded NVLinks between two GPUs (`NV12` -> 12); `None` over PCIe.
    pub fn nvlinks(&self, a: &str, b: &str) -> Option<u32> {
        self.link(a, b)?.strip_prefix("NV")?.parse().ok()
    }

    pub fn gpus(&self) -> impl Iterator<Item = &TopologyRow> {
        self.rows.iter().filter(|r| r.device.starts_with("GPU"))
    }
}

const SHAPE: &str =
    "the `nvidia-smi topo -m` matrix: a header of GPU0, GPU1, ... then one row per device";

/// Reads `nvidia-smi topo -m` output.
pub fn parse_topology(text: &str) -> Result<Topology, ParseError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, strip_ansi(l)));
    let (header_no, header) = lines
        .by_ref()
        .find(|(_, l)| !l.trim().is_empty())
        .ok_or_else(|| ParseError::Empty {
            expected: SHAPE.into(),
        })?;
    let columns: Vec<String> = header
        .split('\t')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    let devices: Vec<String> = columns
        .iter()
        .take_while(|c| !c.contains("Affinity") && !c.contains("NUMA"))
        .cloned()
        .collect();
    if devices.first().is_none_or(|d| !d.starts_with("GPU")) {
        return Err(ParseError::Unexpected {
            line: header_no,
            text: header,
            expected: SHAPE.into(),
        });
    }
    let mut topology = Topology {
        devices,
        ..Topology::default()
    };
    let mut in_nic_legend = false;
    for (_, line) in lines {
        let trimmed = line.trim();
        if trimmed.starts_with("Legend:") {
            in_nic_legend = false;
            continue;
        }
        if trimmed.starts_with("NIC Legend:") {
            in_nic_legend = true;
            continue;
        }
        if in_nic_legend {
            if let Some((nic, name)) = trimmed.split_once(':') {
                topology
                    .nic_names
                    .push((nic.trim().to_string(), name.trim().to_string()));
            }
            continue;
        }
        let mut cells = line.split('\t');
        let Some(device) = cells.next().map(str::trim) else {
            continue;
        };
        if device.is_empty() || !topology.devices.iter().any(|d| d == device) {
            continue;
        }
        let cells: Vec<&str> = cells.map(str::trim).collect();
        let width = topology.devices.len().min(cells.len());
        // After the matrix come the affinities; nvidia-smi separates the last one with an
        // extra tab, so empty cells there are padding.
        let mut affinity = cells[width..].iter().filter(|c| !c.is_empty());
        let mut next = || affinity.next().map(|c| c.to_string());
        topology.rows.push(TopologyRow {
            device: device.to_string(),
            links: cells[..width].iter().map(|c| c.to_string()).collect(),
            cpu_affinity: next(),
            numa_affinity: next(),
            gpu_numa_id: next(),
        });
    }
    Ok(topology)
}

/// Drops `ESC [ ... m` sequences (the underlined header).
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::test_fixtures::fixture;

    #[test]
    fn eight_a100s_on_nvlink_with_eight_nics() {
        let topo = parse_topology(&fixture(
            "nvidia_smi_topo_m_a100_sxm4_40gb_x8_nv12_8nic_phb_brev.txt",
        ))
        .unwrap();
        assert_eq!(topo.devices.len(), 16);
        assert_eq!(topo.gpus().count(), 8);
        assert_eq!(topo.rows.len(), 16);
        assert_eq!(topo.link("GPU0", "GPU0"), Some("X"));
        assert_eq!(topo.nvlinks("GPU0", "GPU7"), Some(12));
        assert_eq!(topo.link("NIC3", "GPU5"), Some("PHB"));
        assert_eq!(topo.nvlinks("GPU0", "NIC0"), None);
        // The published output has NIC7's cell run into the CPU affinity (`PH0-115`); the
        // cell is kept as printed rather than guessed at.
        assert_eq!(topo.link("GPU0", "NIC7"), Some("PH0-115"));
        assert_eq!(topo.rows[0].gpu_numa_id, None);
        assert_eq!(topo.rows[8].cpu_affinity, None, "NIC rows have no affinity");
    }

    #[test]
    fn one_h100_with_underlined_header() {
        let text = fixture("nvidia_smi_topo_m_h100_1gpu_590.txt");
        let topo = parse_topology(&text).unwrap();
        assert_eq!(topo.devices, ["GPU0"]);
        let gpu = &topo.rows[0];
        assert_eq!(gpu.links, ["X"]);
        assert_eq!(gpu.cpu_affinity.as_deref(), Some("0-19"));
        assert_eq!(gpu.numa_affinity.as_deref(), Some("0"));
        assert_eq!(gpu.gpu_numa_id.as_deref(), Some("N/A"));
    }

    #[test]
    fn other_text_is_an_error() {
        let err = parse_topology("Failed to initialize NVML: Driver/library version mismatch\n")
            .unwrap_err();
        assert!(err.to_string().contains("topo -m"), "{err}");
    }
}
