//! nccl-tests output (`all_reduce_perf` and friends): ranks, result rows, verdict and summary.

mod json_report;
pub mod model;
mod network_clues;
pub mod parse;
mod summary;

pub use model::{NcclReport, Perf, Rank, Row, Status};
pub use parse::parse;
