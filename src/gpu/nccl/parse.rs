//! Line-by-line reading of nccl-tests output into an [`NcclReport`]; never fails.

use super::model::{ErrorColumn, NcclReport, Perf, Rank, Row, Status};
use super::network_clues::NetworkClues;
use super::summary::conclude;

/// Whatever the log shows. Partial, interleaved and garbled logs still give a report; its
/// `status` says whether the run completed cleanly.
pub fn parse(text: &str) -> NcclReport {
    if let Some(report) = super::json_report::parse_json(text) {
        return report;
    }
    let mut scan = Scan::default();
    for line in text.lines() {
        scan.line(line.trim());
    }
    scan.finish()
}

/// Substrings (lowercase) of the messages nccl-tests prints when it stops, saying why
/// (NVIDIA/nccl-tests@a0b82b2 src/common.cu and src/common.h: `Invalid number of GPUs`,
/// `Incompatible NCCL versions`, `Test timeout`, `invalid size specified`, `Test NCCL failure
/// FILE:LINE 'reason'`, ...).
const CAUSE_MARKERS: &[&str] = &[
    "invalid number of gpus",
    "please check the number of processes",
    "incompatible nccl versions",
    "is not supported by this test",
    "test timeout",
    "invalid size",
    "invalid sizes",
    "invalid option",
    "data corruption",
    "requires nccl >=",
    "test nccl failure",
    "test cuda failure",
];

/// Substrings (lowercase) that mark a line outside NCCL's own log as a failure.
const FAILURE_MARKERS: &[&str] = &[
    "failure",
    "error",
    "caught",
    "abort",
    "segmentation fault",
    "core dumped",
    "killed",
    "non-zero exit",
];

#[derive(Default)]
struct Scan {
    nccl_version: Option<String>,
    tests_version: Option<String>,
    collective: Option<String>,
    ranks: Vec<Rank>,
    log_hosts: Vec<String>,
    log_nranks: Option<u64>,
    rows: Vec<Row>,
    /// Row width from the column header, or else from the first row.
    columns: Option<usize>,
    /// From the column header (`#wrong` or `error`), or else from the first row's cells.
    error_column: Option<ErrorColumn>,
    avg_busbw: Option<f64>,
    out_of_bounds: Option<u64>,
    out_of_bounds_ok: Option<bool>,
    network: Option<String>,
    ofi_version: Option<String>,
    algorithm: Option<String>,
    warnings: Vec<String>,
    errors: Vec<String>,
    causes: Vec<String>,
    /// What NCCL's INFO and WARN lines say of the network between the ranks.
    clues: NetworkClues,
}

impl Scan {
    fn line(&mut self, line: &str) {
        let line = strip_launcher_tag(line);
        if line.is_empty() {
            return;
        }
        if let Some(version) = word_after(line, "NCCL version ") {
            let version = version.split('+').next().unwrap_or(version);
            self.nccl_version.get_or_insert_with(|| version.to_string());
        }
        if let Some(host) = log_host(line) {
            push_distinct(&mut self.log_hosts, host);
        }
        let level = log_level(line);
        if level.is_some() {
            self.clues.line(log_message(line));
        }
        if level == Some(LogLevel::Warn) {
            self.warnings.push(line.to_string());
            return;
        }
        if level == Some(LogLevel::Info) {
            if let Some((_, name)) = line.split_once("NCCL INFO Using network ") {
                self.network.get_or_insert_with(|| name.trim().to_string());
            }
            if let Some(version) = word_after(line, "NET/OFI Initializing aws-ofi-nccl ") {
                self.ofi_version.get_or_insert_with(|| version.to_string());
            }
            if let Some((_, algorithm)) = line.split_once("NCCL_ALGO set by environment to ") {
                self.algorithm
                    .get_or_insert_with(|| algorithm.trim().to_string());
            }
            if let Some(n) = word_after(line, " nranks ").and_then(|w| w.parse().ok()) {
                self.log_nranks = self.log_nranks.max(Some(n));
            }
            return;
        }
        if let Some(comment) = line.strip_prefix('#') {
            self.comment(comment.trim());
        } else if let Some(row) = self.row(line) {
            self.columns.get_or_insert(row.1);
            let perf = &row.0.out_of_place;
            let seen = if perf.max_error.is_some() {
                ErrorColumn::MaxError
            } else if perf.wrong.is_some() {
                ErrorColumn::WrongCount
            } else {
                ErrorColumn::NotChecked
            };
            // `N/A` rows under either header mean the run did not check.
            if seen == ErrorColumn::NotChecked || self.error_column.is_none() {
                self.error_column = Some(seen);
            }
            self.rows.push(row.0);
        } else {
            if self.collective.is_none() {
                self.collective = collective_in(line);
            }
            let lower = line.to_ascii_lowercase();
            let cause = CAUSE_MARKERS.iter().any(|m| lower.contains(m));
            if cause {
                self.causes.push(line.to_string());
            }
            if cause || FAILURE_MARKERS.iter().any(|m| lower.contains(m)) {
                self.errors.push(line.to_string());
            }
        }
    }

    /// A `#` line: version, collective, rank, column header or the closing figures.
    fn comment(&mut self, text: &str) {
        if let Some(version) = word_after(text, "nccl-tests version ") {
            self.tests_version = Some(version.to_string());
        }
        if let Some(code) = word_after(text, "nccl-library=")
            && let Some(version) = version_from_code(code)
        {
            self.nccl_version.get_or_insert(version);
        }
        if let Some(name) = text
            .strip_prefix("Collective test starting:")
            .or_else(|| text.strip_prefix("Collective test concluded:"))
        {
            self.collective = Some(name.trim().to_string());
        } else if text.starts_with("Rank ")
            && let Some(rank) = parse_rank(text)
        {
            self.ranks.push(rank);
        } else if text.starts_with("size ") {
            self.columns = Some(text.split_whitespace().count());
            if text.contains("#wrong") {
                self.error_column = Some(ErrorColumn::WrongCount);
            } else if text.split_whitespace().any(|w| w == "error") {
                self.error_column = Some(ErrorColumn::MaxError);
            }
        } else if let Some(value) = text.strip_prefix("Out of bounds values") {
            let mut words = value.trim_start_matches([' ', ':']).split_whitespace();
            self.out_of_bounds = words.next().and_then(|w| w.parse().ok());
            self.out_of_bounds_ok = words.next().map(|w| w == "OK");
        } else if let Some(value) = text.strip_prefix("Avg bus bandwidth") {
            let value = value.trim_start_matches([' ', ':']);
            self.avg_busbw = value.split_whitespace().next().and_then(|w| w.parse().ok());
        }
    }

    /// A result row and its width. Old rows have 11 or 12 columns (no root), new ones 13;
    /// markdown bold (`**514.40**`) is tolerated, anything else non-numeric is not a row.
    fn row(&self, line: &str) -> Option<(Row, usize)> {
        let words: Vec<&str> = line
            .split_whitespace()
            .map(|w| w.trim_matches('*'))
            .filter(|w| !w.is_empty())
            .collect();
        let width = words.len();
        if !(11..=13).contains(&width) || self.columns.is_some_and(|c| c != width) {
            return None;
        }
        let (head, perf) = words.split_at(width - 8);
        let (out_of_place, in_place) = perf.split_at(4);
        let kind = head[2];
        if !kind.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return None;
        }
        let (redop, root) = match &head[3..] {
            [] => (None, None),
            [redop, root] => (Some(redop.to_string()), Some(root.parse().ok()?)),
            [only] => match only.parse::<i64>() {
                Ok(root) => (None, Some(root)),
                Err(_) => (Some(only.to_string()), None),
            },
            _ => return None,
        };
        let row = Row {
            size: head[0].parse().ok()?,
            count: head[1].parse().ok()?,
            r#type: kind.to_string(),
            redop,
            root,
            out_of_place: parse_perf(out_of_place)?,
            in_place: parse_perf(in_place)?,
        };
        Some((row, width))
    }

    fn finish(self) -> NcclReport {
        let hosts = if self.ranks.is_empty() {
            self.log_hosts
        } else {
            let mut hosts = Vec::new();
            for rank in &self.ranks {
                push_distinct(&mut hosts, &rank.host);
            }
            hosts
        };
        let mut devices = Vec::new();
        for rank in &self.ranks {
            push_distinct(&mut devices, &rank.gpu);
        }
        let nranks = if self.ranks.is_empty() {
            self.log_nranks
        } else {
            u64::try_from(self.ranks.len()).ok()
        };
        let peak_busbw = self
            .rows
            .iter()
            .flat_map(|r| [r.out_of_place.busbw, r.in_place.busbw])
            .reduce(f64::max);
        let error_column = self.error_column.filter(|_| !self.rows.is_empty());
        let mut report = NcclReport {
            status: Status::Incomplete,
            ok: false,
            nccl_version: self.nccl_version,
            tests_version: self.tests_version,
            collective: self.collective,
            nranks,
            hosts,
            ranks: self.ranks,
            devices,
            rows: self.rows,
            avg_busbw: self.avg_busbw,
            peak_busbw,
            error_column,
            out_of_bounds: self.out_of_bounds,
            out_of_bounds_ok: self.out_of_bounds_ok,
            network: self.network,
            ofi_version: self.ofi_version,
            algorithm: self.algorithm,
            warnings: self.warnings,
            errors: self.errors,
            // What the network did comes first: nccl-tests' own words only say that NCCL failed.
            causes: self.clues.causes().into_iter().chain(self.causes).collect(),
            summary: String::new(),
        };
        conclude(&mut report);
        report
    }
}

/// `time algbw busbw #wrong`; `#wrong` may be `N/A`, or in older builds a deviation in any
/// float notation (`0e+00`, `2e-07`, `1.5e-06`).
fn parse_perf(words: &[&str]) -> Option<Perf> {
    let [time, algbw, busbw, wrong] = words else {
        return None;
    };
    let time_us: f64 = time.parse().ok()?;
    if time_us < 0.0 {
        return None;
    }
    Some(Perf {
        time_us,
        algbw: algbw.parse().ok()?,
        busbw: busbw.parse().ok()?,
        wrong: match *wrong {
            "N/A" => None,
            n => n.parse().ok(),
        },
        max_error: match *wrong {
            "N/A" => None,
            n if n.parse::<u64>().is_ok() => None,
            n => Some(
                n.parse::<f64>()
                    .ok()
                    .filter(|e| e.is_finite() && *e >= 0.0)?,
            ),
        },
    })
}

/// `Rank  0 Group  0 Pid  15738 on ip-172-31-47-40 device  0 [0000:38:00] NVIDIA L40S`,
/// with or without `Group`.
fn parse_rank(text: &str) -> Option<Rank> {
    let (fields, gpu) = text.split_once(']')?;
    let (fields, bus_id) = fields.rsplit_once('[')?;
    let words: Vec<&str> = fields.split_whitespace().collect();
    let after = |key: &str| {
        let at = words.iter().position(|w| *w == key)?;
        words.get(at + 1).copied()
    };
    Some(Rank {
        rank: after("Rank")?.parse().ok()?,
        group: after("Group").and_then(|g| g.parse().ok()),
        pid: after("Pid")?.parse().ok()?,
        host: after("on")?.to_string(),
        device: after("device")?.parse().ok()?,
        bus_id: bus_id.trim().to_string(),
        gpu: gpu.trim().to_string(),
    })
}

/// Drops the per-line tag a launcher adds: mpirun `--tag-output` (`[1,0]<stdout>:`) or
/// `srun --label` (`0: `), so tagged rows and `#` lines read like untagged ones.
fn strip_launcher_tag(line: &str) -> &str {
    if line.starts_with('[')
        && let Some(end) = line.find(">:")
        && line[..end].contains("]<")
    {
        return line[end + 2..].trim();
    }
    if let Some((label, rest)) = line.split_once(": ")
        && !label.is_empty()
        && label.bytes().all(|b| b.is_ascii_digit())
    {
        return rest.trim();
    }
    line
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LogLevel {
    Info,
    Warn,
}

/// A line of NCCL's own log: `... NCCL INFO ...` / `... NCCL WARN ...` (2.3.5 and later,
/// src/include/debug.h), or without the word NCCL as older releases printed them: bare
/// `INFO msg` and `WARN file:line msg` lines (NVIDIA/nccl@cdc36ae src/core.h, before 2.3.5),
/// and the prefixed `host:pid:tid [dev] INFO ...` / `... [dev] file:line WARN ...`.
fn log_level(line: &str) -> Option<LogLevel> {
    if line.contains("NCCL WARN") {
        return Some(LogLevel::Warn);
    }
    if line.contains("NCCL INFO") {
        return Some(LogLevel::Info);
    }
    if line.starts_with("INFO ") {
        return Some(LogLevel::Info);
    }
    if line.starts_with("WARN ") {
        return Some(LogLevel::Warn);
    }
    log_host(line)?;
    level_after_device(line.split_once(' ')?.1)
}

/// The message of one of NCCL's log lines: what follows its level.
fn log_message(line: &str) -> &str {
    ["NCCL WARN ", "NCCL INFO ", "WARN ", "INFO "]
        .iter()
        .find_map(|level| line.split_once(level).map(|(_, message)| message))
        .unwrap_or(line)
}

/// INFO or WARN right after a `[dev]` prefix, past a `file.cu:LINE` where WARN has one.
fn level_after_device(rest: &str) -> Option<LogLevel> {
    let after = rest.trim_start().split_once(']')?.1.trim_start();
    let after = match after.split_once(' ') {
        Some((place, tail)) if place.contains(':') && !place.ends_with(':') => tail,
        _ => after,
    };
    if after.starts_with("WARN ") {
        Some(LogLevel::Warn)
    } else if after.starts_with("INFO ") {
        Some(LogLevel::Info)
    } else {
        None
    }
}

/// The host in an NCCL log prefix: `ip-10-3-67-21:1129:1211 [1] NCCL INFO ...` (or, from
/// NCCL 2.0-2.3, `... [1] INFO ...`).
fn log_host(line: &str) -> Option<&str> {
    let (prefix, rest) = line.split_once(' ')?;
    let rest = rest.trim_start();
    let logged = rest.contains("NCCL") || level_after_device(rest).is_some();
    if !rest.starts_with('[') || !logged {
        return None;
    }
    let mut parts = prefix.split(':');
    let host = parts.next()?;
    let numeric = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let ids: Vec<&str> = parts.collect();
    (!host.is_empty() && ids.len() == 2 && ids.iter().all(|p| numeric(p))).then_some(host)
}

/// A nccl-tests binary named on a command line, e.g. `./build/all_reduce_perf -b 8`.
fn collective_in(line: &str) -> Option<String> {
    line.split_whitespace().find_map(|word| {
        let name = word.rsplit('/').next()?;
        let base = name.strip_suffix("_mpi").unwrap_or(name);
        let stem = base.strip_suffix("_perf")?;
        let valid = !stem.is_empty() && stem.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
        valid.then(|| base.to_string())
    })
}

/// NCCL_VERSION_CODE to `major.minor.patch`: `22903` -> `2.29.3` (2.9 and later),
/// `2708` -> `2.7.8` (earlier).
pub(super) fn version_from_code(code: &str) -> Option<String> {
    let code: u64 = code.parse().ok()?;
    let (major, minor, patch) = if code >= 10000 {
        (code / 10000, code / 100 % 100, code % 100)
    } else {
        (code / 1000, code / 100 % 10, code % 100)
    };
    Some(format!("{major}.{minor}.{patch}"))
}

fn word_after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let (_, after) = text.split_once(key)?;
    after.split_whitespace().next()
}

pub(super) fn push_distinct(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|existing| existing == item) {
        list.push(item.to_string());
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
