//! The per-node EFA check: each device fi_info lists against the type's count, a device other
//! nodes of the fleet have and this one lacks named as missing (a type's devices sit at the
//! same PCI addresses on every instance, so their names repeat), and each device's loopback
//! against a floor. Pure: a client gathers the outputs, this judges them.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::gpu::efa::fi_info::parse_fi_info;
use crate::gpu::efa::pingpong::parse_pingpong;

/// One device's loopback as it ran: what it printed (stdout and stderr), and its exit status,
/// or why it could not run at all.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceRun {
    pub device: String,
    pub ran: Result<(String, i64), String>,
}

/// What the probe gathered on one node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeEfaOutputs {
    pub node: String,
    /// The probe pod (`namespace/name`).
    pub via: String,
    /// `fi_info -p efa`'s output and exit status, or why it could not run.
    pub fi_info: Result<(String, i64), String>,
    pub loopbacks: Vec<DeviceRun>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Loopback {
    pub device: String,
    /// fi_pingpong's MB/sec at the largest size; `None` when it printed no table.
    pub mbps: Option<f64>,
    pub ok: bool,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EfaVerdict {
    pub node: String,
    pub via: String,
    pub devices: Vec<String>,
    pub expected: u32,
    /// Devices the rest of the fleet has that this node lacks.
    pub missing: Vec<String>,
    pub loopback: Vec<Loopback>,
    pub ok: bool,
    pub reasons: Vec<String>,
}

/// What a node's fi_info lists, or why it could not be read.
fn devices_of(outputs: &NodeEfaOutputs) -> Result<Vec<String>, String> {
    let (text, status) = outputs
        .fi_info
        .as_ref()
        .map_err(|why| format!("fi_info -p efa: {why}"))?;
    let info = parse_fi_info(text).map_err(|e| format!("fi_info -p efa: {e}"))?;
    if info.devices.is_empty() && *status != 0 {
        return Err(format!(
            "fi_info -p efa exited {status}: {}",
            info.error.unwrap_or_else(|| text.trim().to_string())
        ));
    }
    Ok(info.devices)
}

fn judge_loopback(run: &DeviceRun, floor_mbps: f64) -> Loopback {
    let failed = |reason: String| Loopback {
        device: run.device.clone(),
        mbps: None,
        ok: false,
        reason: Some(reason),
    };
    let (text, status) = match &run.ran {
        Ok(ran) => ran,
        Err(why) => return failed(format!("loopback of {}: {why}", run.device)),
    };
    let parsed = match parse_pingpong(text) {
        Ok(parsed) => parsed,
        Err(e) => return failed(format!("loopback of {}: {e}", run.device)),
    };
    let Some(largest) = parsed.largest() else {
        let why = match (parsed.errors.first(), status) {
            (Some(error), _) => error.clone(),
            // coreutils timeout's status when it ended the client.
            (None, 124) => "no answer before the timeout ended fi_pingpong".to_string(),
            (None, status) => format!("exited {status} without a table"),
        };
        return failed(format!("loopback of {}: {why}", run.device));
    };
    let mbps = largest.mb_per_sec;
    let ok = mbps >= floor_mbps && largest.acked == largest.sent;
    Loopback {
        device: run.device.clone(),
        mbps: Some(mbps),
        ok,
        reason: (!ok).then(|| {
            format!(
                "loopback of {} at {mbps:.2} MB/sec, under the floor of {floor_mbps:.2} MB/sec",
                run.device
            )
        }),
    }
}

/// Why a node's loopbacks fail, in few words however many devices it has: a slow NIC slows
/// each of its devices alike, so those under the floor are counted with the slowest named;
/// those that printed no table are named each, the first three with why.
fn loopback_reasons(loopback: &[Loopback], floor_mbps: f64) -> Vec<String> {
    let slow: Vec<&Loopback> = loopback
        .iter()
        .filter(|l| !l.ok && l.mbps.is_some())
        .collect();
    let broken: Vec<&Loopback> = loopback
        .iter()
        .filter(|l| !l.ok && l.mbps.is_none())
        .collect();
    let mut reasons = Vec::new();
    if let [one] = slow[..] {
        reasons.extend(one.reason.clone());
    } else if let Some(slowest) = slow.iter().min_by(|a, b| {
        a.mbps
            .partial_cmp(&b.mbps)
            .unwrap_or(std::cmp::Ordering::Equal)
    }) {
        reasons.push(format!(
            "{} of {} EFA loopbacks under the floor of {floor_mbps:.2} MB/sec (slowest {} at {:.2} MB/sec)",
            slow.len(),
            loopback.len(),
            slowest.device,
            slowest.mbps.unwrap_or_default()
        ));
    }
    reasons.extend(broken.iter().take(3).filter_map(|l| l.reason.clone()));
    if broken.len() > 3 {
        reasons.push(format!(
            "{} more loopbacks printed no table",
            broken.len() - 3
        ));
    }
    reasons
}

/// A verdict per node: `expected` devices each, each loopback at `floor_mbps` or more.
pub fn judge(nodes: &[NodeEfaOutputs], expected: u32, floor_mbps: f64) -> Vec<EfaVerdict> {
    let listed: Vec<Result<Vec<String>, String>> = nodes.iter().map(devices_of).collect();
    let fleet: BTreeSet<&String> = listed.iter().flatten().flatten().collect();
    nodes
        .iter()
        .zip(&listed)
        .map(|(outputs, devices)| {
            let mut reasons = Vec::new();
            let devices = devices.clone().unwrap_or_else(|why| {
                reasons.push(why);
                Vec::new()
            });
            let missing: Vec<String> = fleet
                .iter()
                .filter(|d| !devices.contains(d))
                .map(|d| (*d).clone())
                .collect();
            if devices.len() != expected as usize {
                let named = if missing.is_empty() {
                    String::new()
                } else {
                    format!(" (missing {})", missing.join(", "))
                };
                reasons.push(format!(
                    "fi_info -p efa lists {} of {expected} EFA devices{named}",
                    devices.len()
                ));
            }
            let loopback: Vec<Loopback> = outputs
                .loopbacks
                .iter()
                .map(|run| judge_loopback(run, floor_mbps))
                .collect();
            reasons.extend(loopback_reasons(&loopback, floor_mbps));
            EfaVerdict {
                node: outputs.node.clone(),
                via: outputs.via.clone(),
                devices,
                expected,
                missing,
                loopback,
                ok: reasons.is_empty(),
                reasons,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::test_fixtures::fixture;

    fn node(name: &str, fi_info: &str, loopbacks: Vec<DeviceRun>) -> NodeEfaOutputs {
        NodeEfaOutputs {
            node: name.into(),
            via: format!("default/efa-probe-{name}"),
            fi_info: Ok((fi_info.to_string(), 0)),
            loopbacks,
        }
    }

    #[test]
    fn a_node_short_of_a_device_names_it_and_a_slow_or_failed_loopback_fails() {
        let p4d = fixture("efa_fi_info_p_efa_t_rdm_p4d_4dev_111.20_fsdp_readme.txt");
        let short: String = p4d.lines().take(18).map(|l| format!("{l}\n")).collect();
        let table = fixture("efa_fi_pingpong_loopback_efa_test_p4d_fsdp_readme.txt");
        let refused =
            fixture("efa_fi_pingpong_client_failed_to_connect_libfabric11256_excerpt.txt");
        let run = |device: &str, text: &str, status| DeviceRun {
            device: device.into(),
            ran: Ok((text.to_string(), status)),
        };
        let verdicts = judge(
            &[
                node("a", &p4d, vec![run("rdmap16s27", &table, 0)]),
                node(
                    "b",
                    &short,
                    vec![run("rdmap16s27", &refused, 1), run("rdmap32s27", "", 124)],
                ),
            ],
            4,
            2400.0,
        );
        assert!(verdicts[0].ok, "{:?}", verdicts[0].reasons);
        assert_eq!(verdicts[0].loopback[0].mbps, Some(2614.25));
        let b = &verdicts[1];
        assert!(!b.ok);
        assert_eq!(b.missing, ["rdmap160s27"]);
        assert!(
            b.reasons[0].contains("3 of 4 EFA devices (missing rdmap160s27)"),
            "{:?}",
            b.reasons
        );
        assert!(
            b.reasons[1].contains("failed to connect: Connection refused"),
            "{:?}",
            b.reasons
        );
        assert!(
            b.reasons[2].contains("no answer before the timeout"),
            "{:?}",
            b.reasons
        );
        let slow = judge(
            &[node("a", &p4d, vec![run("rdmap16s27", &table, 0)])],
            4,
            3000.0,
        );
        assert!(slow[0].reasons[0].contains("2614.25 MB/sec, under the floor of 3000.00"));
        let other = fixture("efa_fi_pingpong_loopback_efa_test_cdi_sdk.txt");
        let both = vec![run("rdmap16s27", &table, 0), run("rdmap32s27", &other, 0)];
        let slow = judge(&[node("a", &p4d, both)], 4, 3000.0);
        assert_eq!(
            slow[0].reasons,
            [
                "2 of 2 EFA loopbacks under the floor of 3000.00 MB/sec (slowest rdmap32s27 at 2359.00 MB/sec)"
            ]
        );
    }
}
