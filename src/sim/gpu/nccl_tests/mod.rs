//! nccl-tests' `all_reduce_perf` as the twin runs it across GPU pods: the run's model, the
//! number formats, NCCL's own log and the assembled stdout.

pub(crate) mod model;
pub(crate) mod nccl_log;
pub(crate) mod printf;
pub(crate) mod report;

pub(crate) use model::{NcclDebug, NcclRun, Outcome, RankInfo};
pub(crate) use report::run;
