//! nccl-tests' `all_reduce_perf` as the twin runs it across GPU pods: the run's model, the
//! number formats, NCCL's own log and the assembled stdout.

pub mod model;
pub mod nccl_log;
pub mod printf;
pub mod report;

pub use model::{NcclDebug, NcclRun, Outcome, RankInfo};
pub use report::{Transcript, all_reduce_perf, rank_info_line, run};
