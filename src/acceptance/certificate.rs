//! A machine's birth certificate: what it was when it was accepted (each GPU's serial, UUID and
//! VBIOS by PCI slot, the software versions its tools printed, the figures it measured), and
//! what drifted since (a GPU swapped in a slot, a driver changed, bandwidth down). Kept in the
//! run history by machine (the instance id: EKS reuses node names), so a node that comes back
//! from repair or a host replacement is compared with what it was.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One GPU as nvidia-smi names it. The slot (`bus_id`) is where it sits; serial and UUID say
/// which board is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuIdentity {
    pub bus_id: String,
    pub uuid: String,
    pub serial: String,
    pub vbios: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Certificate {
    pub node: String,
    pub machine: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// By PCI slot.
    pub gpus: Vec<GpuIdentity>,
    /// `driver`, `cuda`, `nccl`, `aws-ofi-nccl`, `libfabric`, ...: what the run read; a
    /// version it could not read is absent, never guessed.
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
    /// Measured figures, higher is better (GB/s, MB/s): `in_node_busbw`, `efa_loopback_mbps`.
    #[serde(default)]
    pub figures: BTreeMap<String, f64>,
}

/// One thing that is not as the certificate says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drift {
    /// `gpu`, `version` or `figure`.
    pub kind: &'static str,
    /// The GPU slot, the version's or the figure's name.
    pub what: String,
    pub before: String,
    pub now: String,
    /// In words, for a report line.
    pub says: String,
}

/// A value of a nvidia-smi query row as text; `[N/A]` and the like count as absent.
fn field(row: &Map<String, Value>, key: &str) -> String {
    let text = match &row[key] {
        Value::String(s) => s.trim().to_string(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    if text.starts_with('[') || text == "N/A" {
        String::new()
    } else {
        text
    }
}

/// The GPUs of `nvidia-smi --query-gpu=pci.bus_id,uuid,serial,vbios_version,...` rows, by slot.
pub fn gpus_of(rows: &[Map<String, Value>]) -> Vec<GpuIdentity> {
    let mut gpus: Vec<GpuIdentity> = rows
        .iter()
        .map(|row| GpuIdentity {
            bus_id: field(row, "pci.bus_id"),
            uuid: field(row, "uuid"),
            serial: field(row, "serial"),
            vbios: field(row, "vbios_version"),
        })
        .collect();
    gpus.sort_by(|a, b| a.bus_id.cmp(&b.bus_id));
    gpus
}

/// The driver version the rows agree on (the first row's).
pub fn driver_of(rows: &[Map<String, Value>]) -> Option<String> {
    rows.first()
        .map(|row| field(row, "driver_version"))
        .filter(|v| !v.is_empty())
}

/// A figure is said to have drifted when it fell by more than `tolerance` (a share, 0.1 for
/// 10%) of what it was; a rise is not drift.
pub fn drift(before: &Certificate, now: &Certificate, tolerance: f64) -> Vec<Drift> {
    let mut found = gpu_drift(&before.gpus, &now.gpus);
    for (name, was) in &before.versions {
        match now.versions.get(name) {
            Some(is) if is != was => found.push(Drift {
                kind: "version",
                what: name.clone(),
                before: was.clone(),
                now: is.clone(),
                says: format!("{name} changed: {was} -> {is}"),
            }),
            _ => {}
        }
    }
    for (name, was) in &before.figures {
        if let Some(is) = now.figures.get(name)
            && *is < was * (1.0 - tolerance)
        {
            let fell = (1.0 - is / was) * 100.0;
            found.push(Drift {
                kind: "figure",
                what: name.clone(),
                before: format!("{was:.2}"),
                now: format!("{is:.2}"),
                says: format!("{name} down {fell:.0}%: {was:.2} -> {is:.2}"),
            });
        }
    }
    found
}

/// Slot by slot: a board swapped (another serial or UUID), a VBIOS flashed, a GPU gone or new.
fn gpu_drift(before: &[GpuIdentity], now: &[GpuIdentity]) -> Vec<Drift> {
    let mut found = Vec::new();
    let gpu = |what: &str, before: String, now: String, says: String| Drift {
        kind: "gpu",
        what: what.to_string(),
        before,
        now,
        says,
    };
    for was in before {
        let Some(is) = now.iter().find(|g| g.bus_id == was.bus_id) else {
            found.push(gpu(
                &was.bus_id,
                was.uuid.clone(),
                String::new(),
                format!("GPU {} ({}) is gone", was.bus_id, was.uuid),
            ));
            continue;
        };
        if is.uuid != was.uuid || is.serial != was.serial {
            found.push(gpu(
                &was.bus_id,
                format!("{} serial {}", was.uuid, was.serial),
                format!("{} serial {}", is.uuid, is.serial),
                format!(
                    "GPU {} swapped: {} (serial {}) -> {} (serial {})",
                    was.bus_id, was.uuid, was.serial, is.uuid, is.serial
                ),
            ));
        } else if is.vbios != was.vbios {
            found.push(gpu(
                &was.bus_id,
                was.vbios.clone(),
                is.vbios.clone(),
                format!("GPU {} VBIOS {} -> {}", was.bus_id, was.vbios, is.vbios),
            ));
        }
    }
    for is in now
        .iter()
        .filter(|g| !before.iter().any(|b| b.bus_id == g.bus_id))
    {
        found.push(gpu(
            &is.bus_id,
            String::new(),
            is.uuid.clone(),
            format!("GPU {} ({}) is new", is.bus_id, is.uuid),
        ));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(bus: &str, uuid: &str, serial: &str) -> Map<String, Value> {
        json!({ "pci.bus_id": bus, "uuid": uuid, "serial": serial,
                "vbios_version": "96.00.A5.00.01", "driver_version": "580.95.05" })
        .as_object()
        .cloned()
        .unwrap_or_default()
    }

    fn certificate(rows: &[Map<String, Value>], busbw: f64) -> Certificate {
        Certificate {
            node: "n".into(),
            machine: "i-1".into(),
            instance_type: None,
            gpus: gpus_of(rows),
            versions: BTreeMap::from([("driver".into(), driver_of(rows).unwrap_or_default())]),
            figures: BTreeMap::from([("in_node_busbw".into(), busbw)]),
        }
    }

    #[test]
    fn the_same_machine_has_no_drift() {
        let rows = [
            row("00000000:18:00.0", "GPU-a", "1"),
            row("00000000:2A:00.0", "GPU-b", "2"),
        ];
        let a = certificate(&rows, 480.0);
        assert!(drift(&a, &certificate(&rows, 470.0), 0.1).is_empty());
    }

    #[test]
    fn a_swapped_board_a_changed_driver_and_a_slower_node_are_each_named() {
        let before = certificate(
            &[
                row("00000000:18:00.0", "GPU-a", "1"),
                row("00000000:2A:00.0", "GPU-b", "2"),
            ],
            480.0,
        );
        let mut swapped = [
            row("00000000:18:00.0", "GPU-a", "1"),
            row("00000000:2A:00.0", "GPU-c", "3"),
        ];
        swapped[0]["driver_version"] = json!("590.48.01");
        swapped[1]["driver_version"] = json!("590.48.01");
        let found = drift(&before, &certificate(&swapped, 300.0), 0.1);
        let says: Vec<&str> = found.iter().map(|d| d.says.as_str()).collect();
        assert_eq!(
            says,
            [
                "GPU 00000000:2A:00.0 swapped: GPU-b (serial 2) -> GPU-c (serial 3)",
                "driver changed: 580.95.05 -> 590.48.01",
                "in_node_busbw down 38%: 480.00 -> 300.00",
            ]
        );
    }

    #[test]
    fn a_gpu_off_the_bus_and_a_na_serial() {
        let before = certificate(
            &[
                row("00000000:18:00.0", "GPU-a", "[N/A]"),
                row("00000000:2A:00.0", "GPU-b", "2"),
            ],
            1.0,
        );
        assert_eq!(before.gpus[0].serial, "");
        let now = certificate(&[row("00000000:18:00.0", "GPU-a", "[N/A]")], 1.0);
        let found = drift(&before, &now, 0.1);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].says, "GPU 00000000:2A:00.0 (GPU-b) is gone");
    }
}
