//! What a parsed nccl-tests log holds; the shapes scripts see.

use serde::Serialize;

/// The verdict on a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The run finished (`# Avg bus bandwidth` is present) with no errors.
    Ok,
    /// Wrong values, failed out-of-bounds check, or failure lines.
    Error,
    /// No errors, but the run never reported its average bandwidth.
    Incomplete,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Incomplete => "incomplete",
        }
    }
}

/// Everything recognised in one nccl-tests log, however partial.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NcclReport {
    pub status: Status,
    /// `status == ok`, for scripts that only need a yes or no.
    pub ok: bool,
    /// The NCCL library version, e.g. `2.29.3`.
    pub nccl_version: Option<String>,
    /// `# nccl-tests version 2.17.9`.
    pub tests_version: Option<String>,
    /// e.g. `all_reduce_perf`, when the log names it.
    pub collective: Option<String>,
    /// Ranks listed, or else the `nranks` NCCL INFO lines report.
    pub nranks: Option<u64>,
    /// Distinct hosts, from the rank list or else from NCCL log line prefixes.
    pub hosts: Vec<String>,
    pub ranks: Vec<Rank>,
    /// Distinct GPU names from the rank list.
    pub devices: Vec<String>,
    pub rows: Vec<Row>,
    pub avg_busbw: Option<f64>,
    /// The highest busbw of any row, out-of-place or in-place.
    pub peak_busbw: Option<f64>,
    /// What the rows' check column holds; `None` without rows.
    pub error_column: Option<ErrorColumn>,
    pub out_of_bounds: Option<u64>,
    pub out_of_bounds_ok: Option<bool>,
    /// The network NCCL chose between nodes, from its `Using network X` line (needs
    /// `NCCL_DEBUG=INFO`): `Socket`, `IB`, `Libfabric` (aws-ofi-nccl over EFA; `AWS Libfabric`
    /// with plugins before 1.13). A run meant for EFA that says `Socket` fell back.
    pub network: Option<String>,
    /// The aws-ofi-nccl plugin's release, from `NET/OFI Initializing aws-ofi-nccl 1.13.2-aws`
    /// (its first INFO line): with the NCCL version, what a bandwidth baseline is kept by.
    pub ofi_version: Option<String>,
    /// `NCCL_ALGO` as NCCL acknowledged it (`NCCL_ALGO set by environment to Ring`): the
    /// algorithms the figures were measured with; None when NCCL chose.
    pub algorithm: Option<String>,
    /// Lines containing `NCCL WARN`.
    pub warnings: Vec<String>,
    /// Failure lines (`Test failure`, `NCCL failure`, `Caught ...`, errors).
    pub errors: Vec<String>,
    /// Why the run failed or stopped, rather than where (`Test failure common.cu:1454`): first
    /// what NCCL's own log says of the network, one line per peer and trouble (`NCCL retried
    /// its connect to 10.0.1.7<43211> 3 times ('Connection timed out', try 3 of 34): ...`,
    /// read from INFO lines too, the only clue a hung connect leaves before its retries run
    /// out), then nccl-tests' own messages (`Invalid number of GPUs: 2 requested but only 1
    /// were found.`, a failed call with its reason).
    pub causes: Vec<String>,
    /// One line saying what happened.
    pub summary: String,
}

/// A `# Rank ...` line under `# Using devices`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rank {
    pub rank: u32,
    /// Only in the newer format (`Group  0`).
    pub group: Option<u32>,
    pub pid: u64,
    pub host: String,
    pub device: u32,
    /// As printed between the brackets: `0x07` or `0000:38:00`.
    pub bus_id: String,
    pub gpu: String,
}

/// One result row: a message size measured out-of-place and in-place.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub size: u64,
    pub count: u64,
    pub r#type: String,
    /// `sum`, `none`, ...; absent from old rows of rootless, opless collectives.
    pub redop: Option<String>,
    /// `-1` where the collective has no root; `None` in the old format without the column.
    pub root: Option<i64>,
    pub out_of_place: Perf,
    pub in_place: Perf,
}

/// Time and bandwidths (GB/s) of one measurement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Perf {
    pub time_us: f64,
    pub algbw: f64,
    pub busbw: f64,
    /// `#wrong`; `None` when the log prints `N/A` (validation off) or the older `error` column.
    pub wrong: Option<u64>,
    /// The older `error` column: the largest deviation from the expected result (`2e-07`).
    pub max_error: Option<f64>,
}

/// The check column of the result rows, which tells the nccl-tests generations apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorColumn {
    /// `#wrong`: how many elements came out wrong (nccl-tests 2.12 and later).
    WrongCount,
    /// `error`: the largest deviation, printed as `%6.0e` (`0e+00`; NCCL 2.11-era builds). The
    /// run's verdict is then its `# Out of bounds values` line.
    MaxError,
    /// `N/A`: the run did not check its results (`-c 0`).
    NotChecked,
}
