//! The GPU nodes' record of earlier runs (kept by the app layer's history; the host only asks
//! it), which a health judgement escalates on and a birth certificate is compared with.

use std::sync::Arc;
use std::time::Duration;

use super::Host;

/// Earlier runs' GPU verdicts, as a health judgement reads them.
pub trait GpuRecord: Send + Sync {
    /// The healths judged for `who` (a machine or a node name) within `window` of now, newest
    /// first, each with its age in seconds.
    fn past(&self, who: &str, window: Duration) -> Result<Vec<(f64, serde_json::Value)>, String>;

    /// The newest birth certificate kept for `machine`: the run that kept it, and the
    /// certificate.
    fn certificate(&self, machine: &str) -> Result<Option<(u64, serde_json::Value)>, String>;
}

impl Host {
    /// The record, when the run keeps a history.
    pub(crate) fn gpu_record(&self) -> Option<&Arc<dyn GpuRecord>> {
        self.gpu_record.as_ref()
    }
}
