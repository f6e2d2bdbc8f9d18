//! The default `nvidia-smi` table: versions, one block per GPU, MIG devices and processes.

use serde::Serialize;

use super::error::ParseError;

/// Everything the table shows. Values the table prints as `N/A` are `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TableReport {
    /// The date line above the table, when there is one.
    pub timestamp: Option<String>,
    pub smi_version: Option<String>,
    pub driver_version: Option<String>,
    pub cuda_version: Option<String>,
    pub gpus: Vec<TableGpu>,
    pub mig_devices: Vec<TableMigDevice>,
    pub processes: Vec<TableProcess>,
}

/// One GPU block (two or three table rows).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableGpu {
    pub index: u32,
    /// As printed; long names are cut short with `...`.
    pub name: String,
    pub persistence_mode: Option<String>,
    pub bus_id: String,
    pub display_active: Option<String>,
    pub volatile_uncorrected_ecc: Option<String>,
    pub fan_percent: Option<f64>,
    pub temperature_c: Option<f64>,
    pub perf: Option<String>,
    pub power_draw_w: Option<f64>,
    pub power_cap_w: Option<f64>,
    pub memory_used_mib: Option<u64>,
    pub memory_total_mib: Option<u64>,
    pub utilization_percent: Option<f64>,
    pub compute_mode: Option<String>,
    /// The `MIG M.` row; `None` on tables too old to have it.
    pub mig_mode: Option<String>,
}

/// One row pair of the `MIG devices:` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableMigDevice {
    pub gpu: u32,
    pub gi: u32,
    pub ci: u32,
    pub mig_dev: u32,
    pub memory_used_mib: Option<u64>,
    pub memory_total_mib: Option<u64>,
    pub bar1_used_mib: Option<u64>,
    pub bar1_total_mib: Option<u64>,
    pub sm: Option<u32>,
    pub volatile_uncorrected_ecc: Option<u64>,
    pub ce: Option<u32>,
    pub enc: Option<u32>,
    pub dec: Option<u32>,
    pub ofa: Option<u32>,
    pub jpg: Option<u32>,
}

/// One row of the `Processes:` table. `gi`/`ci` are `None` outside MIG and on tables
/// without those columns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableProcess {
    pub gpu: u32,
    pub gi: Option<u32>,
    pub ci: Option<u32>,
    pub pid: u64,
    pub r#type: String,
    pub name: String,
    pub memory_mib: Option<u64>,
}

const HEADER_SHAPE: &str =
    "the \"| NVIDIA-SMI <version>  Driver Version: <version>  CUDA Version: <version> |\" header";
const GPU_ROW: &str = "a GPU row \"| <index>  <name>  <persistence> | <bus id> <disp> | <ecc> |\"";
const SECOND_ROW_SHAPE: &str = "\"| <fan> <temp> <perf> <draw>W / <cap>W | <used>MiB / <total>MiB | <util>% <compute mode> |\"";
const MIG_ROW: &str = "a MIG device row \"| <gpu> <gi> <ci> <mig dev> | <used>MiB / <total>MiB | <sm> <ecc> | <ce> <enc> <dec> <ofa> <jpg> |\"";
const PROCESS_ROW: &str = "a process row \"| <gpu> [<gi> <ci>] <pid> <type> <name> <memory>MiB |\"";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Section {
    Top,
    GpuHeading,
    Gpus,
    MigHeading,
    Migs,
    ProcessHeading,
    Processes,
}

/// A table row: its line number, the line, and the text between its `|` separators.
struct Row<'a> {
    line: usize,
    raw: &'a str,
    cells: Vec<&'a str>,
}

impl Row<'_> {
    fn error(&self, expected: &str) -> ParseError {
        ParseError::Unexpected {
            line: self.line,
            text: self.raw.to_string(),
            expected: expected.to_string(),
        }
    }
}

/// The report in plain `nvidia-smi` output, old (79 columns) or new (89 columns) layout.
pub fn parse_table(text: &str) -> Result<TableReport, ParseError> {
    let mut report = TableReport::default();
    let mut saw_header = false;
    let mut section = Section::Top;
    let mut block: Vec<Row<'_>> = Vec::new();
    let mut processes_have_gi_ci = false;
    let mut first_line: Option<(usize, &str)> = None;

    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('+') || line.starts_with("|-") {
            flush(&mut block, section, &mut report)?;
            continue;
        }
        first_line.get_or_insert((line_no, raw));
        let unexpected = |expected: &str| ParseError::Unexpected {
            line: line_no,
            text: raw.to_string(),
            expected: expected.to_string(),
        };
        let Some(inner) = line.strip_prefix('|') else {
            if !saw_header && report.timestamp.is_none() {
                report.timestamp = Some(line.to_string());
                continue;
            }
            return Err(unexpected(if saw_header {
                "a table line starting with '|' or '+'"
            } else {
                HEADER_SHAPE
            }));
        };
        if inner.starts_with('=') {
            section = match section {
                Section::GpuHeading => Section::Gpus,
                Section::MigHeading => Section::Migs,
                Section::ProcessHeading => Section::Processes,
                other => other,
            };
            continue;
        }
        if inner.contains("NVIDIA-SMI") && inner.contains("Driver Version") {
            report.smi_version = word_after(inner, "NVIDIA-SMI");
            report.driver_version = word_after(inner, "Driver Version:");
            report.cuda_version = word_after(inner, "CUDA Version:");
            saw_header = true;
            continue;
        }
        if !saw_header {
            return Err(unexpected(HEADER_SHAPE));
        }
        let heading = inner.trim_start();
        if heading.contains("Persistence-M") {
            section = Section::GpuHeading;
            continue;
        }
        if heading.starts_with("MIG devices:") {
            section = Section::MigHeading;
            continue;
        }
        if heading.starts_with("Processes:") {
            section = Section::ProcessHeading;
            continue;
        }
        let Some(inner) = inner.strip_suffix('|') else {
            return Err(unexpected("a table row ending in '|'"));
        };
        match section {
            Section::Gpus | Section::Migs => block.push(Row {
                line: line_no,
                raw,
                cells: inner.split('|').map(str::trim).collect(),
            }),
            Section::ProcessHeading => {
                processes_have_gi_ci |= inner.split_whitespace().any(|w| w == "GI");
            }
            Section::Processes => {
                let inner = inner.trim();
                if !inner.starts_with("No running processes found") {
                    let process = parse_process(inner, processes_have_gi_ci)
                        .ok_or_else(|| unexpected(PROCESS_ROW))?;
                    report.processes.push(process);
                }
            }
            Section::Top | Section::GpuHeading | Section::MigHeading => {}
        }
    }
    flush(&mut block, section, &mut report)?;
    if !saw_header {
        let (line, text) = first_line.unwrap_or((1, ""));
        return Err(ParseError::Unexpected {
            line,
            text: text.to_string(),
            expected: HEADER_SHAPE.to_string(),
        });
    }
    Ok(report)
}

/// Parses the rows gathered since the last border, as a GPU or a MIG device.
fn flush(
    block: &mut Vec<Row<'_>>,
    section: Section,
    report: &mut TableReport,
) -> Result<(), ParseError> {
    if block.is_empty() {
        return Ok(());
    }
    let rows = std::mem::take(block);
    match section {
        Section::Gpus => report.gpus.push(parse_gpu(&rows)?),
        Section::Migs => report.mig_devices.push(parse_mig_device(&rows)?),
        _ => {}
    }
    Ok(())
}

fn parse_gpu(rows: &[Row<'_>]) -> Result<TableGpu, ParseError> {
    let [first, second, rest @ ..] = rows else {
        return Err(rows[0].error(&format!(
            "a second row {SECOND_ROW_SHAPE} after this GPU row"
        )));
    };
    let [id_cell, bus_cell, ecc_cell] = first.cells[..] else {
        return Err(first.error(GPU_ROW));
    };
    let [fan_cell, memory_cell, util_cell] = second.cells[..] else {
        return Err(second_row_error(second));
    };
    let (index, name, persistence) = split_id_cell(id_cell).ok_or_else(|| first.error(GPU_ROW))?;
    let mut bus = bus_cell.split_whitespace();
    let bus_id = bus.next().ok_or_else(|| first.error(GPU_ROW))?;

    let vitals: Vec<&str> = fan_cell.split_whitespace().collect();
    let [fan, temp, perf, power @ ..] = vitals.as_slice() else {
        return Err(second_row_error(second));
    };
    let power = power.join(" ");
    let (draw, cap) = power.split_once('/').unwrap_or((&power, ""));
    let (used, total) = memory_cell
        .split_once('/')
        .ok_or_else(|| second_row_error(second))?;
    let mut util = util_cell.split_whitespace();
    let utilization = util.next();
    let compute_mode = util.collect::<Vec<_>>().join(" ");
    let mig_mode = rest
        .first()
        .and_then(|row| row.cells.get(2))
        .and_then(|c| text(c));

    Ok(TableGpu {
        index,
        name,
        persistence_mode: persistence.and_then(text),
        bus_id: bus_id.to_string(),
        display_active: bus.next().and_then(text),
        volatile_uncorrected_ecc: text(ecc_cell),
        fan_percent: number(fan),
        temperature_c: number(temp),
        perf: text(perf),
        power_draw_w: number(draw),
        power_cap_w: number(cap),
        memory_used_mib: number(used),
        memory_total_mib: number(total),
        utilization_percent: utilization.and_then(number),
        compute_mode: text(&compute_mode),
        mig_mode,
    })
}

fn second_row_error(row: &Row<'_>) -> ParseError {
    row.error(&format!("the GPU's second row {SECOND_ROW_SHAPE}"))
}

/// `0  NVIDIA H100 80GB HBM3          On` -> (0, name, persistence).
fn split_id_cell(cell: &str) -> Option<(u32, String, Option<&str>)> {
    let (index, rest) = cell.trim().split_once(char::is_whitespace)?;
    let rest = rest.trim();
    let (name, persistence) = match rest.rsplit_once(char::is_whitespace) {
        Some((name, persistence)) => (name.trim_end(), Some(persistence)),
        None => (rest, None),
    };
    if name.is_empty() {
        return None;
    }
    Some((index.parse().ok()?, name.to_string(), persistence))
}

fn parse_mig_device(rows: &[Row<'_>]) -> Result<TableMigDevice, ParseError> {
    let first = &rows[0];
    let [ids, memory, sm_ecc, engines] = first.cells[..] else {
        return Err(first.error(MIG_ROW));
    };
    let ids: Vec<u32> = ids
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| first.error(MIG_ROW))?;
    let [gpu, gi, ci, mig_dev] = ids[..] else {
        return Err(first.error(MIG_ROW));
    };
    let (memory_used, memory_total) = memory.split_once('/').unwrap_or((memory, ""));
    let bar1 = rows
        .get(1)
        .and_then(|row| row.cells.get(1))
        .copied()
        .unwrap_or("");
    let (bar1_used, bar1_total) = bar1.split_once('/').unwrap_or((bar1, ""));
    let mut sm_ecc = sm_ecc.split_whitespace();
    let mut engines = engines.split_whitespace().map(number);
    let mut engine = || engines.next().flatten();
    Ok(TableMigDevice {
        gpu,
        gi,
        ci,
        mig_dev,
        memory_used_mib: number(memory_used),
        memory_total_mib: number(memory_total),
        bar1_used_mib: number(bar1_used),
        bar1_total_mib: number(bar1_total),
        sm: sm_ecc.next().and_then(number),
        volatile_uncorrected_ecc: sm_ecc.next().and_then(number),
        ce: engine(),
        enc: engine(),
        dec: engine(),
        ofa: engine(),
        jpg: engine(),
    })
}

/// `0   N/A  N/A           11327      C   /root/tools/memhog                     2566MiB`.
/// The name keeps its inner spaces (Windows paths have them).
fn parse_process(row: &str, has_gi_ci: bool) -> Option<TableProcess> {
    let mut rest = row;
    let mut word = || {
        let (word, tail) = rest.trim_start().split_once(char::is_whitespace)?;
        rest = tail;
        Some(word)
    };
    let gpu = word()?.parse().ok()?;
    let (gi, ci) = if has_gi_ci {
        (word()?, word()?)
    } else {
        ("N/A", "N/A")
    };
    let pid = word()?.parse().ok()?;
    let kind = word()?.to_string();
    let (name, memory) = rest.trim().rsplit_once(char::is_whitespace)?;
    if !(memory.ends_with("MiB") || memory == "N/A") {
        return None;
    }
    Some(TableProcess {
        gpu,
        gi: number(gi),
        ci: number(ci),
        pid,
        r#type: kind,
        name: name.trim().to_string(),
        memory_mib: number(memory),
    })
}

/// The first word after `key`, unless it is `N/A`.
fn word_after(line: &str, key: &str) -> Option<String> {
    let (_, after) = line.split_once(key)?;
    after.split_whitespace().next().and_then(text)
}

fn text(cell: &str) -> Option<String> {
    let cell = cell.trim();
    (!super::csv::is_missing(cell)).then(|| cell.to_string())
}

/// The number in `17C`, `0%`, `300W`, `23028MiB` or `N/A` (None).
fn number<T: std::str::FromStr>(cell: &str) -> Option<T> {
    let cell = cell.trim();
    let digits = cell.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '%');
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::test_fixtures::fixture;

    #[test]
    fn a10g_580_with_timestamp() {
        let text = fixture("nvidia_smi_table_a10g_g5xlarge_580.txt");
        let report = parse_table(&text).unwrap();
        assert_eq!(
            report.timestamp.as_deref(),
            Some("Mon Dec 22 17:29:56 2025")
        );
        assert_eq!(report.smi_version.as_deref(), Some("580.95.05"));
        assert_eq!(report.driver_version.as_deref(), Some("580.95.05"));
        assert_eq!(report.cuda_version.as_deref(), Some("13.0"));
        assert_eq!(
            report.gpus,
            [TableGpu {
                index: 0,
                name: "NVIDIA A10G".into(),
                persistence_mode: Some("On".into()),
                bus_id: "00000000:00:1E.0".into(),
                display_active: Some("Off".into()),
                volatile_uncorrected_ecc: Some("0".into()),
                fan_percent: Some(0.0),
                temperature_c: Some(17.0),
                perf: Some("P8".into()),
                power_draw_w: Some(11.0),
                power_cap_w: Some(300.0),
                memory_used_mib: Some(0),
                memory_total_mib: Some(23028),
                utilization_percent: Some(0.0),
                compute_mode: Some("Default".into()),
                mig_mode: None,
            }]
        );
        assert!(report.mig_devices.is_empty());
        assert!(report.processes.is_empty());
    }

    #[test]
    fn h100x8_565_without_timestamp() {
        let text = fixture("nvidia_smi_table_h100x8_sxm_565.txt");
        let report = parse_table(&text).unwrap();
        assert_eq!(report.timestamp, None);
        assert_eq!(report.driver_version.as_deref(), Some("565.57.01"));
        assert_eq!(report.cuda_version.as_deref(), Some("12.7"));
        assert_eq!(report.gpus.len(), 8);
        let indexes: Vec<u32> = report.gpus.iter().map(|g| g.index).collect();
        assert_eq!(indexes, [0, 1, 2, 3, 4, 5, 6, 7]);
        let last = &report.gpus[7];
        assert_eq!(last.name, "NVIDIA H100 80GB HBM3");
        assert_eq!(last.bus_id, "00000000:DB:00.0");
        assert_eq!(last.fan_percent, None);
        assert_eq!(last.temperature_c, Some(29.0));
        assert_eq!(last.power_draw_w, Some(75.0));
        assert_eq!(last.power_cap_w, Some(700.0));
        assert_eq!(last.memory_used_mib, Some(1));
        assert_eq!(last.memory_total_mib, Some(81559));
        assert_eq!(last.mig_mode.as_deref(), Some("Disabled"));
        assert_eq!(report.gpus[0].power_draw_w, Some(100.0));
        assert!(report.processes.is_empty());
    }

    #[test]
    fn h100_590_idle_and_load() {
        let idle = fixture("nvidia_smi_table_h100_idle_590.txt");
        let idle = parse_table(&idle).unwrap();
        assert_eq!(idle.driver_version.as_deref(), Some("590.48.01"));
        assert_eq!(idle.cuda_version.as_deref(), Some("13.1"));
        assert_eq!(idle.gpus[0].power_draw_w, Some(69.0));
        assert!(idle.processes.is_empty());

        let load = fixture("nvidia_smi_table_h100_load_590.txt");
        let load = parse_table(&load).unwrap();
        let gpu = &load.gpus[0];
        assert_eq!(gpu.memory_used_mib, Some(19818));
        assert_eq!(gpu.utilization_percent, Some(100.0));
        assert_eq!(gpu.power_draw_w, Some(629.0));
        assert_eq!(gpu.temperature_c, Some(59.0));
        assert_eq!(load.processes.len(), 3);
        assert_eq!(
            load.processes[0],
            TableProcess {
                gpu: 0,
                gi: None,
                ci: None,
                pid: 11327,
                r#type: "C".into(),
                name: "/root/tools/memhog".into(),
                memory_mib: Some(2566),
            }
        );
        assert_eq!(load.processes[2].name, "./gpu_burn");
        assert_eq!(load.processes[2].memory_mib, Some(15690));
    }

    #[test]
    fn h200_idle() {
        let text = fixture("nvidia_smi_table_h200_idle_590.txt");
        let report = parse_table(&text).unwrap();
        assert_eq!(
            report.timestamp.as_deref(),
            Some("Fri Jul  3 22:10:45 2026")
        );
        assert_eq!(report.gpus[0].name, "NVIDIA H200");
        assert_eq!(report.gpus[0].memory_total_mib, Some(143771));
        assert_eq!(report.gpus[0].bus_id, "00000000:83:00.0");
    }

    #[test]
    fn h200_mig_devices_table() {
        let text = fixture("nvidia_smi_table_h200_mig_idle_590.txt");
        let report = parse_table(&text).unwrap();
        let gpu = &report.gpus[0];
        assert_eq!(gpu.mig_mode.as_deref(), Some("Enabled"));
        assert_eq!(gpu.utilization_percent, None);
        assert_eq!(gpu.volatile_uncorrected_ecc.as_deref(), Some("On"));
        assert_eq!(gpu.memory_used_mib, Some(55));
        assert_eq!(report.mig_devices.len(), 5);
        assert_eq!(
            report.mig_devices[0],
            TableMigDevice {
                gpu: 0,
                gi: 2,
                ci: 0,
                mig_dev: 0,
                memory_used_mib: Some(22),
                memory_total_mib: Some(71424),
                bar1_used_mib: Some(0),
                bar1_total_mib: Some(59237),
                sm: Some(16),
                volatile_uncorrected_ecc: Some(0),
                ce: Some(3),
                enc: Some(0),
                dec: Some(3),
                ofa: Some(0),
                jpg: Some(3),
            }
        );
        let last = &report.mig_devices[4];
        assert_eq!((last.gi, last.ci, last.mig_dev), (10, 0, 4));
        assert_eq!(last.memory_total_mib, Some(16384));
        assert_eq!(last.bar1_total_mib, Some(14809));
        assert_eq!(report.mig_devices[2].sm, Some(32));
        assert!(report.processes.is_empty());
    }

    /// The older 79-column layout, with a process table that lacks GI/CI columns.
    const OLD_LAYOUT: &str = "\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 418.87.01    Driver Version: 418.87.01    CUDA Version: 10.1     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla V100-SXM2...  On   | 00000000:00:1E.0 Off |                    0 |
| N/A   36C    P0    38W / 300W |    310MiB / 16130MiB |     42%   E. Process |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                       GPU Memory |
|  GPU       PID   Type   Process name                             Usage      |
|=============================================================================|
|    0      4242      C   C:\\Program Files\\app one.exe                 300MiB |
+-----------------------------------------------------------------------------+
";

    #[test]
    fn old_layout() {
        let report = parse_table(OLD_LAYOUT).unwrap();
        assert_eq!(report.cuda_version.as_deref(), Some("10.1"));
        let gpu = &report.gpus[0];
        assert_eq!(gpu.name, "Tesla V100-SXM2...");
        assert_eq!(gpu.persistence_mode.as_deref(), Some("On"));
        assert_eq!(gpu.compute_mode.as_deref(), Some("E. Process"));
        assert_eq!(gpu.utilization_percent, Some(42.0));
        assert_eq!(gpu.mig_mode, None);
        let process = &report.processes[0];
        assert_eq!((process.gpu, process.pid, process.gi), (0, 4242, None));
        assert_eq!(process.name, "C:\\Program Files\\app one.exe");
        assert_eq!(process.memory_mib, Some(300));
    }

    #[test]
    fn garbled_gpu_row_names_its_line() {
        let text = fixture("nvidia_smi_table_a10g_g5xlarge_580.txt");
        let garbled = text.replace("|   0  NVIDIA A10G ", "|   X  NVIDIA A10G ");
        let err = parse_table(&garbled).unwrap_err();
        assert!(
            matches!(err, ParseError::Unexpected { line: 9, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("expected a GPU row"), "{err}");

        let cut: String = text.lines().take(9).map(|l| format!("{l}\n")).collect();
        let err = parse_table(&cut).unwrap_err();
        assert!(
            err.to_string().contains("a second row \"| <fan> <temp>"),
            "{err}"
        );
    }

    #[test]
    fn not_a_table() {
        let err = parse_table(
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        )
        .unwrap_err();
        assert!(
            matches!(err, ParseError::Unexpected { line: 1, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("Driver Version"), "{err}");
        let err = parse_table("hello\nworld\n").unwrap_err();
        assert!(
            matches!(err, ParseError::Unexpected { line: 2, .. }),
            "{err}"
        );
        let err = parse_table(
            "| NVIDIA-SMI 1.0  Driver Version: 1.0  CUDA Version: N/A |\n| Processes: |\n|===|\n| 0 1 C x |\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("a process row"), "{err}");
    }
}
