//! Capturing a live lab: reading a target into a lab-state file ([`crate::lab_state`]) with
//! read-only calls (`runbook state capture`). The twin starts from such a file.

pub mod error;
mod fields;
mod read_aws;
mod read_kube;
mod read_vpc;
pub mod reader;

pub use error::CaptureError;
pub use reader::{CaptureTarget, capture};
