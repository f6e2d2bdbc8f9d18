//! Line-by-line reading of nccl-tests output into an [`NcclReport`]; never fails.

use super::model::{NcclReport, Perf, Rank, Row, Status};
use super::summary::conclude;

/// Whatever the log shows. Partial, interleaved and garbled logs still give a report; its
/// `status` says whether the run completed cleanly.
pub fn parse(text: &str) -> NcclReport {
    let mut scan = Scan::default();
    for line in text.lines() {
        scan.line(line.trim());
    }
    scan.finish()
}

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
    avg_busbw: Option<f64>,
    out_of_bounds: Option<u64>,
    out_of_bounds_ok: Option<bool>,
    warnings: Vec<String>,
    errors: Vec<String>,
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
        if line.contains("NCCL WARN") {
            self.warnings.push(line.to_string());
            return;
        }
        if line.contains("NCCL INFO") {
            if let Some(n) = word_after(line, " nranks ").and_then(|w| w.parse().ok()) {
                self.log_nranks = self.log_nranks.max(Some(n));
            }
            return;
        }
        if let Some(comment) = line.strip_prefix('#') {
            self.comment(comment.trim());
        } else if let Some(row) = self.row(line) {
            self.columns.get_or_insert(row.1);
            self.rows.push(row.0);
        } else {
            if self.collective.is_none() {
                self.collective = collective_in(line);
            }
            let lower = line.to_ascii_lowercase();
            if FAILURE_MARKERS.iter().any(|m| lower.contains(m)) {
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
            out_of_bounds: self.out_of_bounds,
            out_of_bounds_ok: self.out_of_bounds_ok,
            warnings: self.warnings,
            errors: self.errors,
            summary: String::new(),
        };
        conclude(&mut report);
        report
    }
}

/// `time algbw busbw #wrong`; `#wrong` may be `N/A`.
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
            n => Some(n.parse().ok()?),
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

/// The host in an NCCL log prefix: `ip-10-3-67-21:1129:1211 [1] NCCL INFO ...`.
fn log_host(line: &str) -> Option<&str> {
    let (prefix, rest) = line.split_once(' ')?;
    if !rest.trim_start().starts_with('[') || !rest.contains("NCCL") {
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
fn version_from_code(code: &str) -> Option<String> {
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

fn push_distinct(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|existing| existing == item) {
        list.push(item.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::test_fixtures::fixture;

    #[test]
    fn superbench_a100x8_old_format() {
        let Some(text) = fixture("nccl_all_reduce_perf_a100x8_single_node_superbench.txt") else {
            return;
        };
        let report = parse(&text);
        assert_eq!(report.status, Status::Ok, "{}", report.summary);
        assert!(report.ok);
        assert_eq!(report.avg_busbw, Some(68.4048));
        assert_eq!(
            (report.out_of_bounds, report.out_of_bounds_ok),
            (Some(0), Some(true))
        );
        assert_eq!(report.ranks.len(), 8);
        assert_eq!(
            report.ranks[7],
            Rank {
                rank: 7,
                group: None,
                pid: 112424,
                host: "localhost".into(),
                device: 7,
                bus_id: "0x00".into(),
                gpu: "A100-SXM4-40GB".into(),
            }
        );
        assert_eq!(report.devices, ["A100-SXM4-40GB"]);
        // The INFO line's "hostname" prefix does not count once ranks are listed.
        assert_eq!(report.hosts, ["localhost"]);
        assert_eq!(report.nranks, Some(8));
        assert_eq!(report.rows.len(), 34);
        let first = &report.rows[0];
        assert_eq!((first.size, first.count), (0, 0));
        assert_eq!(first.r#type, "float");
        assert_eq!(first.redop.as_deref(), Some("sum"));
        assert_eq!(first.root, None);
        assert_eq!(
            first.out_of_place,
            Perf {
                time_us: 35.20,
                algbw: 0.0,
                busbw: 0.0,
                wrong: None
            }
        );
        let last = report.rows.last().unwrap();
        assert_eq!(last.size, 8_589_934_592);
        assert_eq!(last.out_of_place.busbw, 235.26);
        assert_eq!(last.in_place.time_us, 63959.0);
        assert_eq!(report.peak_busbw, Some(235.26));
        assert_eq!(
            (
                report.nccl_version.as_deref(),
                report.tests_version.as_deref()
            ),
            (None, None)
        );
        assert_eq!(report.collective, None);
        assert!(report.warnings.is_empty() && report.errors.is_empty());
        assert_eq!(
            report.summary,
            "ok: 8 ranks on 1 host, 8 GPUs (A100-SXM4-40GB), 33 sizes 0 B..8 GiB, avg busbw 68.40 GB/s"
        );
    }

    #[test]
    fn l40s_x4_newest_format() {
        let Some(text) = fixture("nccl_all_reduce_perf_l40s_x4_single_node_nccltests2.17.9.txt")
        else {
            return;
        };
        let report = parse(&text);
        assert_eq!(report.status, Status::Ok, "{}", report.summary);
        assert_eq!(report.tests_version.as_deref(), Some("2.17.9"));
        assert_eq!(report.nccl_version.as_deref(), Some("2.29.3"));
        assert_eq!(report.collective.as_deref(), Some("all_reduce_perf"));
        assert_eq!(report.ranks.len(), 4);
        assert_eq!(
            report.ranks[0],
            Rank {
                rank: 0,
                group: Some(0),
                pid: 15738,
                host: "ip-172-31-47-40".into(),
                device: 0,
                bus_id: "0000:38:00".into(),
                gpu: "NVIDIA L40S".into(),
            }
        );
        assert_eq!(report.ranks[3].bus_id, "0000:3e:00");
        assert_eq!(report.devices, ["NVIDIA L40S"]);
        assert_eq!(report.rows.len(), 25);
        let first = &report.rows[0];
        assert_eq!((first.size, first.root), (8, Some(-1)));
        assert_eq!(first.out_of_place.wrong, Some(0));
        let last = report.rows.last().unwrap();
        assert_eq!(last.size, 134_217_728);
        assert_eq!(last.out_of_place.time_us, 37188.0);
        assert_eq!(last.in_place.busbw, 5.44);
        assert_eq!(report.avg_busbw, Some(2.30498));
        assert_eq!(report.peak_busbw, Some(5.58));
        assert_eq!(
            report.summary,
            "ok: all_reduce_perf, 4 ranks on 1 host, 4 GPUs (NVIDIA L40S), 25 sizes 8 B..128 MiB, avg busbw 2.30 GB/s"
        );
    }

    #[test]
    fn efa_2node_annotated_excerpt() {
        let Some(text) = fixture("nccl_all_reduce_perf_2node_x8_efa_annotated_excerpt.txt") else {
            return;
        };
        let report = parse(&text);
        assert_eq!(report.status, Status::Ok, "{}", report.summary);
        assert_eq!(report.avg_busbw, Some(97.4466));
        assert_eq!(report.out_of_bounds_ok, Some(true));
        assert_eq!(report.collective.as_deref(), Some("all_reduce_perf"));
        // The excerpt cuts the header and rank list; the Destroy lines still give nranks.
        assert!(report.ranks.is_empty());
        assert_eq!(report.nranks, Some(16));
        assert_eq!(report.hosts, ["ip-10-3-67-21", "ip-10-3-70-232"]);
        assert_eq!(report.rows.len(), 28);
        assert!(
            report
                .rows
                .iter()
                .all(|r| r.root == Some(-1) && r.in_place.wrong == Some(0))
        );
        let last = report.rows.last().unwrap();
        assert_eq!(last.size, 1_073_741_824);
        assert_eq!(last.out_of_place.busbw, 514.40, "markdown bold stripped");
        assert_eq!(report.peak_busbw, Some(514.40));
        assert!(
            report.warnings.is_empty() && report.errors.is_empty(),
            "{:?}",
            report.errors
        );
        assert_eq!(
            report.summary,
            "ok: all_reduce_perf, 16 ranks on 2 hosts, 28 sizes 8 B..1 GiB, avg busbw 97.45 GB/s"
        );
    }

    const NEW_HEADER: &str = "\
# nccl-tests version 2.17.9 nccl-headers=22605 nccl-library=22903
# Collective test starting: all_reduce_perf
#  Rank  0 Group  0 Pid  15738 on node-a device  0 [0000:38:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  15739 on node-b device  0 [0000:38:00] NVIDIA H100 80GB HBM3
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    42.76    0.00    0.00       0    42.18    0.00    0.00       0
";

    #[test]
    fn truncated_mid_table_is_incomplete() {
        let text = format!(
            "{NEW_HEADER}          16             4     float     sum      -1    42.14    0.00    0.00       0    42.18    0.\n"
        );
        let report = parse(&text);
        assert_eq!(report.status, Status::Incomplete);
        assert!(!report.ok);
        assert_eq!(report.rows.len(), 1, "the cut row is ignored");
        assert_eq!(report.nranks, Some(2));
        assert_eq!(
            report.summary,
            "incomplete: no '# Avg bus bandwidth' line, 2 ranks on 2 hosts, 1 result row, last size 8 B"
        );
    }

    #[test]
    fn wrong_values_are_an_error() {
        let text = format!(
            "{NEW_HEADER}    16777216       4194304     float     sum      -1    188.1   89.21  167.26      3    187.1   89.69  168.16      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 12.5
"
        );
        let report = parse(&text);
        assert_eq!(report.status, Status::Error);
        assert!(!report.ok);
        assert_eq!(report.rows[1].out_of_place.wrong, Some(3));
        assert_eq!(
            report.summary,
            "error: 1 row with #wrong > 0 (first at 16 MiB), 2 ranks on 2 hosts, avg busbw 12.50 GB/s"
        );
    }

    #[test]
    fn only_warn_lines_is_incomplete_with_warnings() {
        let text = "\
ip-192-168-12-10:123:456 [0] NCCL WARN socketProgressOpt: Call to connect returned Connection timed out, retrying
ip-192-168-12-10:123:456 [0] NCCL WARN socketProgressOpt: Call to connect returned Connection timed out, retrying
";
        let report = parse(text);
        assert_eq!(report.status, Status::Incomplete);
        assert_eq!(report.warnings.len(), 2);
        assert!(report.errors.is_empty());
        assert_eq!(report.hosts, ["ip-192-168-12-10"]);
        assert!(report.summary.starts_with(
            "incomplete: no '# Avg bus bandwidth' line, 1 host, no result rows, 2 NCCL WARN lines, last: ip-192-168-12-10:123:456 [0] NCCL WARN socketProgressOpt"
        ), "{}", report.summary);
    }

    #[test]
    fn failure_lines_are_errors() {
        let text = format!(
            "{NEW_HEADER}node-a:15738:15738 [0] NCCL WARN Cuda failure 'out of memory'
node-a: Test NCCL failure common.cu:958 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '
 .. node-a pid 15738: Test failure common.cu:842
"
        );
        let report = parse(&text);
        assert_eq!(report.status, Status::Error);
        assert_eq!(report.warnings.len(), 1);
        assert_eq!(report.errors.len(), 2);
        assert!(
            report
                .summary
                .starts_with("error: 2 error lines, last: .. node-a pid 15738: Test failure"),
            "{}",
            report.summary
        );
    }

    #[test]
    fn out_of_bounds_failed_is_an_error() {
        let report = parse("# Out of bounds values : 5 FAILED\n# Avg bus bandwidth    : 1.0\n");
        assert_eq!(report.status, Status::Error);
        assert_eq!(
            (report.out_of_bounds, report.out_of_bounds_ok),
            (Some(5), Some(false))
        );
        assert!(
            report.summary.contains("out of bounds values: 5 FAILED"),
            "{}",
            report.summary
        );
    }

    #[test]
    fn old_rootless_and_root_only_rows() {
        let report = parse(
            "          8             2   float    35.20    0.00    0.00    N/A    34.05    0.00    0.00    N/A\n\
             #       size         count    type    root     time   algbw   busbw  error     time   algbw   busbw  error\n\
                     8             2   float       0    35.20    0.00    0.00      0    34.05    0.00    0.00      0\n",
        );
        assert_eq!(report.rows.len(), 2);
        assert_eq!(
            (report.rows[0].redop.as_deref(), report.rows[0].root),
            (None, None)
        );
        assert_eq!(
            (report.rows[1].redop.as_deref(), report.rows[1].root),
            (None, Some(0))
        );
    }

    #[test]
    fn nccl_versions_and_collective_from_command_line() {
        let report = parse(
            "$ mpirun -np 16 /opt/nccl-tests/build/all_gather_perf -b 8 -e 1G\n\
             node-a:1:1 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n",
        );
        assert_eq!(report.collective.as_deref(), Some("all_gather_perf"));
        assert_eq!(report.nccl_version.as_deref(), Some("2.18.5"));
        assert_eq!(version_from_code("2708").as_deref(), Some("2.7.8"));
        assert_eq!(version_from_code("22605").as_deref(), Some("2.26.5"));
        assert_eq!(version_from_code("x"), None);
    }

    #[test]
    fn launcher_tags_are_dropped() {
        let report = parse(
            "[1,0]<stdout>:#  Rank  0 Group  0 Pid  1 on node-a device  0 [0x07] NVIDIA A100\n\
             [1,0]<stdout>:           8             2     float     sum      -1    42.76    0.00    0.00       0    42.18    0.00    0.00       0\n\
             0: # Avg bus bandwidth    : 0.5\n",
        );
        assert_eq!(report.ranks.len(), 1);
        assert_eq!(report.rows.len(), 1);
        assert_eq!(report.status, Status::Ok, "{}", report.summary);
    }

    #[test]
    fn garbage_never_panics() {
        for text in [
            "",
            "...",
            "#",
            "# Rank",
            "#  Rank x [",
            "1 2 3 4 5 6 7 8 9 10 11",
            "**",
            "\u{feff}é\t#",
        ] {
            let report = parse(text);
            assert_eq!(report.status, Status::Incomplete, "{text:?}");
        }
    }
}
