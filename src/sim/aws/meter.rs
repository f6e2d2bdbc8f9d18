//! The cost meter's raw data: when each billed resource started and stopped on the virtual
//! clock. Pricing it is the cost model's job (`lab::cost`).

use std::time::Duration;

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Usage {
    /// The resource's id or name: `myeks5w`, `nat-0abc...`, `i-0f...`.
    pub resource: String,
    /// What is billed: `eks-cluster`, `nat-gateway`, or an instance type.
    pub kind: String,
    pub started_s: f64,
    pub stopped_s: Option<f64>,
}

#[derive(Debug, Default, Clone)]
pub struct Meter {
    pub records: Vec<Usage>,
}

impl Meter {
    pub fn start(&mut self, resource: &str, kind: &str, at: Duration) {
        self.records.push(Usage {
            resource: resource.into(),
            kind: kind.into(),
            started_s: at.as_secs_f64(),
            stopped_s: None,
        });
    }

    pub fn stop(&mut self, resource: &str, at: Duration) {
        for record in self
            .records
            .iter_mut()
            .filter(|r| r.resource == resource && r.stopped_s.is_none())
        {
            record.stopped_s = Some(at.as_secs_f64());
        }
    }
}
