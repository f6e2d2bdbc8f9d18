//! `runbook plan`: what a run would change, read from a rehearsal's report and the cost meter
//! around it, grouped by step, with the cleanups' changes apart. Pure: the rehearsal itself is
//! the app's.

mod model;
mod render;

pub use model::{CostDelta, Plan, PlannedStep};
pub use render::{to_summary, to_text};
