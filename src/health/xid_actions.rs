//! Xid code -> action. The table is AWS's GPU cluster health check
//! (aws-samples/awsome-distributed-training `0-nvidia-smi-check.sh` @d63abab2, "Classification
//! aligned with NVIDIA XID Errors r590 catalog", "Resolution Bucket (Immediate Action)"), which
//! already speaks in MONITOR / RESET / REBOOT / ISOLATE. Codes it does not list fall to MONITOR
//! there too. The per-code comparison with NVIDIA's catalog, Azure's NHC and the device plugin
//! is in src/health/SOURCES.md.

use super::verdict::Verdict;

pub const SOURCE: &str = "AWS awsome-distributed-training gpu-cluster-healthcheck (NVIDIA Xid catalog r590 buckets); src/health/SOURCES.md";

/// (code, action, NVIDIA's mnemonic) for every code the AWS table does not leave at MONITOR.
const ACTIONS: &[(u32, Verdict, &str)] = &[
    (48, Verdict::Reset, "double bit ECC error"),
    (
        54,
        Verdict::Isolate,
        "auxiliary power is not connected to the GPU board",
    ),
    (64, Verdict::Reset, "GPU memory remapping failure"),
    (74, Verdict::Reset, "NVLink error"),
    (79, Verdict::Reboot, "GPU has fallen off the bus"),
    (95, Verdict::Reset, "uncontained memory error"),
    (109, Verdict::Reset, "context switch timeout"),
    (110, Verdict::Reset, "security fault"),
    (119, Verdict::Reset, "GSP RPC timeout"),
    (120, Verdict::Reset, "GSP error"),
    (136, Verdict::Reset, "link training failed"),
    (140, Verdict::Reset, "ECC unrecovered error"),
    (143, Verdict::Reset, "GPU initialization error"),
    (151, Verdict::Reboot, "key rotation error"),
    (155, Verdict::Reset, "NVLink SW defined error"),
    (156, Verdict::Reset, "resource retirement event"),
    (158, Verdict::Reset, "GPU fatal timeout"),
    (
        168,
        Verdict::Reboot,
        "errors found in WPR (write protected region)",
    ),
];

/// Codes NVIDIA calls application faults (the device plugin keeps such a GPU healthy too).
const APPLICATION: &[(u32, &str)] = &[
    (13, "graphics engine exception"),
    (31, "GPU memory page fault"),
    (43, "GPU stopped processing"),
    (45, "preemptive cleanup, due to previous errors"),
    (63, "GPU memory remapping event"),
    (68, "NVDEC0 exception"),
    (94, "contained memory error"),
];

/// The table as a policy holds it: code -> action (the A100 exceptions and Xid 154 apart).
pub fn default_actions() -> std::collections::BTreeMap<u32, Verdict> {
    ACTIONS
        .iter()
        .map(|(code, verdict, _)| (*code, *verdict))
        .collect()
}

/// What an Xid calls for on a GPU of `product` (`NVIDIA A100-SXM4-80GB`), with its meaning.
/// `message` is the rest of the line (Xid 154 says there what the GPU needs).
pub fn xid_action(code: u32, product: Option<&str>, message: &str) -> (Verdict, &'static str) {
    let a100 = product.is_some_and(|p| p.contains("A100"));
    if code == 154 {
        let text = message.to_ascii_lowercase();
        let verdict = if text.contains("node reboot required") {
            Verdict::Reboot
        } else if ["gpu reset required", "drain and reset", "drain p2p"]
            .iter()
            .any(|t| text.contains(t))
        {
            Verdict::Reset
        } else {
            Verdict::Monitor
        };
        return (verdict, "GPU recovery action changed");
    }
    if let Some((_, verdict, meaning)) = ACTIONS.iter().find(|(c, _, _)| *c == code) {
        // AWS: "REBOOT on A100" for 64 and 95 (the A100 cannot reset one GPU alone there).
        let verdict = match (code, a100) {
            (64 | 95, true) => Verdict::Reboot,
            _ => *verdict,
        };
        return (verdict, meaning);
    }
    let meaning = APPLICATION
        .iter()
        .find(|(c, _)| *c == code)
        .map_or("not in the table: see NVIDIA's Xid catalog", |(_, m)| m);
    (Verdict::Monitor, meaning)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codes_the_issue_names() {
        assert_eq!(xid_action(79, None, "").0, Verdict::Reboot);
        assert_eq!(xid_action(48, None, "").0, Verdict::Reset);
        assert_eq!(xid_action(13, None, "").0, Verdict::Monitor);
        assert_eq!(xid_action(54, None, "").0, Verdict::Isolate);
        assert_eq!(
            xid_action(64, Some("NVIDIA A100-SXM4-80GB"), "").0,
            Verdict::Reboot
        );
        assert_eq!(
            xid_action(64, Some("NVIDIA H100 80GB HBM3"), "").0,
            Verdict::Reset
        );
        assert_eq!(xid_action(9999, None, "").0, Verdict::Monitor);
    }

    #[test]
    fn xid_154_says_in_its_text_what_it_needs() {
        let line = "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)";
        assert_eq!(xid_action(154, None, line).0, Verdict::Reboot);
        assert_eq!(
            xid_action(154, None, "to 0x1 (GPU Reset Required)").0,
            Verdict::Reset
        );
        assert_eq!(xid_action(154, None, "to 0x0 (None)").0, Verdict::Monitor);
    }
}
