//! The actions a health check can call for, and one finding that calls for one.

use serde::Serialize;

/// What to do with a node, from nothing to taking it out of service. Ordered, so a node's
/// verdict is the worst of its findings. The words are the ones AWS's GPU cluster health
/// check uses (src/health/SOURCES.md): MONITOR "no node action required", RESET "GPU reset
/// required", REBOOT "reboot and re-test", ISOLATE "drain the node and replace the instance".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Healthy,
    Monitor,
    Reset,
    Reboot,
    Isolate,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Healthy => "HEALTHY",
            Verdict::Monitor => "MONITOR",
            Verdict::Reset => "RESET",
            Verdict::Reboot => "REBOOT",
            Verdict::Isolate => "ISOLATE",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            Verdict::Healthy,
            Verdict::Monitor,
            Verdict::Reset,
            Verdict::Reboot,
            Verdict::Isolate,
        ]
        .into_iter()
        .find(|v| v.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One check's outcome on one node: what was measured against what, and what it calls for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// `gpu_count`, `xid`, `ecc_uncorrectable`, `row_remap_pending`, `dcgm_diag`, ...
    pub check: &'static str,
    /// `HEALTHY` when the check passed.
    pub verdict: Verdict,
    /// The GPU it is about (its index or bus id), when it is about one.
    pub gpu: Option<String>,
    /// That GPU's UUID, where nvidia-smi named it: a GPU's record across runs follows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_uuid: Option<String>,
    /// What was read, in words: `Xid 79 at [6781741.548779]: GPU has fallen off the bus.`
    pub observed: String,
    /// The rule applied: `> 0`, `== 1 (g5.xlarge)`.
    pub threshold: String,
    /// Where the rule comes from (a document or a health suite), so a verdict can be argued.
    pub source: &'static str,
}

impl Finding {
    /// A finding with its verdict: what a rule concluded from `observed` against `threshold`.
    pub fn judged(
        check: &'static str,
        verdict: Verdict,
        observed: String,
        threshold: &str,
        source: &'static str,
    ) -> Self {
        Self {
            verdict,
            ..Self::passed(check, observed, threshold.to_string(), source)
        }
    }

    pub fn passed(
        check: &'static str,
        observed: String,
        threshold: String,
        source: &'static str,
    ) -> Self {
        Self {
            check,
            verdict: Verdict::Healthy,
            gpu: None,
            gpu_uuid: None,
            observed,
            threshold,
            source,
        }
    }

    pub fn on_gpu(mut self, gpu: Option<String>) -> Self {
        self.gpu = gpu;
        self
    }
}

/// The worst verdict among findings (`HEALTHY` for none).
pub fn worst(findings: &[Finding]) -> Verdict {
    findings
        .iter()
        .map(|f| f.verdict)
        .max()
        .unwrap_or(Verdict::Healthy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_order_from_healthy_to_isolate() {
        assert!(Verdict::Healthy < Verdict::Monitor);
        assert!(Verdict::Reset < Verdict::Reboot && Verdict::Reboot < Verdict::Isolate);
        assert_eq!(Verdict::parse("reboot"), Some(Verdict::Reboot));
        assert_eq!(Verdict::parse("fine"), None);
        assert_eq!(worst(&[]), Verdict::Healthy);
        assert_eq!(
            serde_json::to_value(Verdict::Isolate).unwrap(),
            serde_json::json!("ISOLATE")
        );
    }
}
