//! Capturing a live lab: the lab-state file's format, and reading a target into it with
//! read-only calls (`runbook state capture`). The twin starts from such a file.

pub mod error;
mod fields;
pub mod format;
mod read_aws;
mod read_kube;
pub mod reader;

pub use error::CaptureError;
pub use format::LabState;
pub use reader::{CaptureTarget, capture};
