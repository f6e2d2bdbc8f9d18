//! What the driver says of each GPU's state beyond its errors: the recovery action it asks for,
//! the power limit and application clocks someone set below the defaults, the NVSwitch
//! fabric's registration on 8-GPU SXM boards, and a PCIe link narrower than its peers'. Each
//! rule names its source; a field the driver does not report (`[N/A]`, deprecated, not asked)
//! gives no finding rather than a failed one.

use serde_json::{Map, Value};

use super::verdict::{Finding, Verdict};

const RECOVERY: &str = "NVIDIA GPU memory error management, Error Recovery and Response Flags (the recovery action flag: None, Reset, Reboot, Drain P2P, Drain and Reset)";
const POWER: &str = "nvidia-smi: power.limit below power.default_limit is a cap someone set (`nvidia-smi -pl`); the GPU runs slower until it is reset to the default";
const CLOCKS: &str = "nvidia-smi: application clocks below their defaults were set with `nvidia-smi -ac`; `-rac` resets them";
const FABRIC: &str = "NVIDIA Fabric Manager user guide: on NVSwitch systems CUDA refuses work until the GPU's fabric registration completes (fabric.state Completed, status Success); restarting nvidia-fabricmanager or the node registers it";
const PCIE: &str = "Oracle Cloud Infrastructure's PCIe missing-lanes check (a GPU's link narrower than its shape's); here the widest link among the run's GPUs of the same model stands for the shape's, since a healthy A10G links at x8 of x16 (src/health/SOURCES.md)";

/// A field's value as nvidia-smi printed it, `None` where it reports nothing.
fn reported<'a>(row: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    let text = row.get(field)?.as_str()?.trim();
    let absent = text.is_empty()
        || text.starts_with('[')
        || text.eq_ignore_ascii_case("N/A")
        || text.eq_ignore_ascii_case("Not Supported");
    (!absent).then_some(text)
}

/// A number, with or without its unit (`700.00 W`, `700.00`, `16`).
fn number(row: &Map<String, Value>, field: &str) -> Option<f64> {
    if let Some(n) = row.get(field).and_then(Value::as_f64) {
        return Some(n);
    }
    reported(row, field)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The verdict for the driver's recovery action (nvmlGpuRecoveryAction_t, as nvidia-smi prints
/// it: `None`, `GPU Reset`, `Node Reboot`, `Drain P2P`, `Drain and Reset`, and the newer
/// bus reset and system reboot); an action this table does not know is MONITOR, named.
pub fn recovery_verdict(action: &str) -> Verdict {
    let key: String = action
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    match key.as_str() {
        "none" => Verdict::Healthy,
        "gpureset" | "reset" | "drainp2p" | "drainandreset" | "busreset" => Verdict::Reset,
        "nodereboot" | "reboot" | "systemreboot" => Verdict::Reboot,
        _ => Verdict::Monitor,
    }
}

/// The findings of one GPU's row; `widest` is the widest PCIe link seen on a GPU of its model.
pub fn device_findings(
    row: &Map<String, Value>,
    gpu: Option<String>,
    widest: Option<f64>,
) -> Vec<Finding> {
    let mut findings: Vec<Finding> = recovery_action(row).into_iter().collect();
    findings.extend(
        BELOW_DEFAULT
            .iter()
            .filter_map(|setting| setting.finding(row)),
    );
    findings.extend(nvswitch_fabric(row));
    findings.extend(pcie_link_width(row, widest));
    findings
        .into_iter()
        .map(|finding| finding.on_gpu(gpu.clone()))
        .collect()
}

fn recovery_action(row: &Map<String, Value>) -> Option<Finding> {
    let action = reported(row, "gpu_recovery_action")?;
    Some(Finding::judged(
        "recovery_action",
        recovery_verdict(action),
        format!("the driver's recovery action: {action}"),
        "None",
        RECOVERY,
    ))
}

/// A setting someone may have lowered below its default.
struct BelowDefault {
    check: &'static str,
    set_field: &'static str,
    default_field: &'static str,
    what: &'static str,
    unit: &'static str,
    threshold: &'static str,
    source: &'static str,
}

const BELOW_DEFAULT: [BelowDefault; 2] = [
    BelowDefault {
        check: "power_limit",
        set_field: "power.limit",
        default_field: "power.default_limit",
        what: "power limit",
        unit: "W",
        threshold: ">= the default limit",
        source: POWER,
    },
    BelowDefault {
        check: "application_clocks",
        set_field: "clocks.applications.graphics",
        default_field: "clocks.default_applications.graphics",
        what: "application graphics clock",
        unit: "MHz",
        threshold: ">= the default",
        source: CLOCKS,
    },
];

impl BelowDefault {
    /// MONITOR when the setting is below its default; none when either is not reported.
    fn finding(&self, row: &Map<String, Value>) -> Option<Finding> {
        let set = number(row, self.set_field)?;
        let default = number(row, self.default_field)?;
        let verdict = if set < default {
            Verdict::Monitor
        } else {
            Verdict::Healthy
        };
        let (what, unit) = (self.what, self.unit);
        Some(Finding::judged(
            self.check,
            verdict,
            format!("{what} {set:.0} {unit} of the default {default:.0} {unit}"),
            self.threshold,
            self.source,
        ))
    }
}

fn nvswitch_fabric(row: &Map<String, Value>) -> Option<Finding> {
    let state = reported(row, "fabric.state")?;
    let status = reported(row, "fabric.status").unwrap_or("N/A");
    let verdict = match (state, status) {
        ("Completed", "Success") => Verdict::Healthy,
        ("In Progress", _) => Verdict::Monitor,
        _ => Verdict::Reboot,
    };
    Some(Finding::judged(
        "nvswitch_fabric",
        verdict,
        format!("fabric {state}, status {status}"),
        "Completed, Success",
        FABRIC,
    ))
}

fn pcie_link_width(row: &Map<String, Value>, widest: Option<f64>) -> Option<Finding> {
    let width = number(row, "pcie.link.width.current")?;
    let widest = widest?;
    let max = number(row, "pcie.link.width.max").unwrap_or(widest);
    let verdict = if width < widest {
        Verdict::Monitor
    } else {
        Verdict::Healthy
    };
    Some(Finding::judged(
        "pcie_link_width",
        verdict,
        format!("PCIe x{width:.0} (the GPU's maximum x{max:.0})"),
        &format!(">= x{widest:.0}, the widest of this model in the run"),
        PCIE,
    ))
}

/// The widest current PCIe link among `rows`, by GPU model (`name`).
pub fn widest_links<'a>(
    rows: impl Iterator<Item = &'a Map<String, Value>>,
) -> std::collections::BTreeMap<String, f64> {
    let mut widest = std::collections::BTreeMap::new();
    for row in rows {
        let (Some(name), Some(width)) = (
            row.get("name").and_then(Value::as_str),
            number(row, "pcie.link.width.current"),
        ) else {
            continue;
        };
        let entry = widest.entry(name.to_string()).or_insert(width);
        if width > *entry {
            *entry = width;
        }
    }
    widest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pairs: &[(&str, &str)]) -> Map<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), Value::String((*v).to_string())))
            .collect()
    }

    fn verdicts(findings: &[Finding]) -> Vec<(&'static str, Verdict)> {
        findings.iter().map(|f| (f.check, f.verdict)).collect()
    }

    #[test]
    fn the_recovery_action_is_the_drivers_word() {
        assert_eq!(recovery_verdict("None"), Verdict::Healthy);
        assert_eq!(recovery_verdict("GPU Reset"), Verdict::Reset);
        assert_eq!(recovery_verdict("Drain and Reset"), Verdict::Reset);
        assert_eq!(recovery_verdict("Node Reboot"), Verdict::Reboot);
        assert_eq!(recovery_verdict("Recover IMEX Domain"), Verdict::Monitor);
    }

    #[test]
    fn a_healthy_hgx_gpu_passes_every_check() {
        // The values of the real H100 HGX capture (590 driver): deprecated application clocks
        // give no finding.
        let gpu = row(&[
            ("name", "NVIDIA H100 80GB HBM3"),
            ("pcie.link.width.current", "16"),
            ("pcie.link.width.max", "16"),
            ("power.limit", "700.00 W"),
            ("power.default_limit", "700.00 W"),
            (
                "clocks.applications.graphics",
                "[Requested functionality has been deprecated]",
            ),
            (
                "clocks.default_applications.graphics",
                "[Requested functionality has been deprecated]",
            ),
            ("gpu_recovery_action", "None"),
            ("fabric.state", "Completed"),
            ("fabric.status", "Success"),
        ]);
        let widest = widest_links(std::iter::once(&gpu));
        let findings = device_findings(
            &gpu,
            Some("0".into()),
            widest.get("NVIDIA H100 80GB HBM3").copied(),
        );
        assert_eq!(
            verdicts(&findings),
            [
                ("recovery_action", Verdict::Healthy),
                ("power_limit", Verdict::Healthy),
                ("nvswitch_fabric", Verdict::Healthy),
                ("pcie_link_width", Verdict::Healthy),
            ]
        );
    }

    #[test]
    fn each_departure_is_named() {
        let gpu = row(&[
            ("name", "NVIDIA A10G"),
            ("pcie.link.width.current", "4"),
            ("pcie.link.width.max", "16"),
            ("power.limit", "150.00 W"),
            ("power.default_limit", "300.00 W"),
            ("clocks.applications.graphics", "1200 MHz"),
            ("clocks.default_applications.graphics", "1710 MHz"),
            ("gpu_recovery_action", "Node Reboot"),
            ("fabric.state", "N/A"),
            ("fabric.status", "N/A"),
        ]);
        let findings = device_findings(&gpu, Some("0".into()), Some(8.0));
        assert_eq!(
            verdicts(&findings),
            [
                ("recovery_action", Verdict::Reboot),
                ("power_limit", Verdict::Monitor),
                ("application_clocks", Verdict::Monitor),
                ("pcie_link_width", Verdict::Monitor),
            ]
        );
        assert_eq!(findings[3].observed, "PCIe x4 (the GPU's maximum x16)");
        let unregistered = row(&[("fabric.state", "Not Started"), ("fabric.status", "N/A")]);
        assert_eq!(
            verdicts(&device_findings(&unregistered, None, None)),
            [("nvswitch_fabric", Verdict::Reboot)]
        );
    }

    #[test]
    fn the_g5s_x8_link_is_not_a_fault_when_its_peers_have_the_same() {
        // A real g5.xlarge's A10G links at x8 of x16: the width is judged against its peers'.
        let a = row(&[
            ("name", "NVIDIA A10G"),
            ("pcie.link.width.current", "8"),
            ("pcie.link.width.max", "16"),
        ]);
        let b = a.clone();
        let widest = widest_links([&a, &b].into_iter());
        assert_eq!(widest["NVIDIA A10G"], 8.0);
        assert_eq!(
            verdicts(&device_findings(&a, None, Some(8.0))),
            [("pcie_link_width", Verdict::Healthy)]
        );
    }
}
