//! The cost meter's raw data: when each billed resource started and stopped on the virtual
//! clock. Pricing it is the cost model's job (`lab::cost`).

use std::time::Duration;

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Usage {
    /// The resource's id or name: `myeks5w`, `nat-0abc...`, `i-0f...`.
    pub(crate) resource: String,
    /// What is billed: `eks-cluster`, `nat-gateway`, or an instance type.
    pub(crate) kind: String,
    pub(crate) started_s: f64,
    pub(crate) stopped_s: Option<f64>,
}

#[derive(Debug, Default, Clone)]
pub(crate) struct Meter {
    pub(crate) records: Vec<Usage>,
}

impl Meter {
    pub(crate) fn start(&mut self, resource: &str, kind: &str, at: Duration) {
        self.records.push(Usage {
            resource: resource.into(),
            kind: kind.into(),
            started_s: at.as_secs_f64(),
            stopped_s: None,
        });
    }

    pub(crate) fn stop(&mut self, resource: &str, at: Duration) {
        for record in self
            .records
            .iter_mut()
            .filter(|r| r.resource == resource && r.stopped_s.is_none())
        {
            record.stopped_s = Some(at.as_secs_f64());
        }
    }
}
