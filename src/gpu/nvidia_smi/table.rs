//! The default `nvidia-smi` table: versions, one block per GPU, MIG devices and processes.
//! Here the report and the walk through the table's sections; the rows are read in
//! [`super::table_rows`].

use serde::Serialize;

use super::error::ParseError;
use super::table_rows::{
    PROCESS_ROW, Row, parse_gpu, parse_mig_device, parse_process, unexpected, word_after,
};

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

#[derive(Debug, Clone, Copy, PartialEq, Default)]
enum Section {
    #[default]
    Top,
    GpuHeading,
    Gpus,
    MigHeading,
    Migs,
    ProcessHeading,
    Processes,
}

impl Section {
    /// The rows a heading's `===` rule leads into; elsewhere such a rule changes nothing.
    fn below_rule(self) -> Self {
        match self {
            Section::GpuHeading => Section::Gpus,
            Section::MigHeading => Section::Migs,
            Section::ProcessHeading => Section::Processes,
            other => other,
        }
    }

    /// The heading a line is, if it is one.
    fn heading(inner: &str) -> Option<Self> {
        let heading = inner.trim_start();
        if heading.contains("Persistence-M") {
            Some(Section::GpuHeading)
        } else if heading.starts_with("MIG devices:") {
            Some(Section::MigHeading)
        } else if heading.starts_with("Processes:") {
            Some(Section::ProcessHeading)
        } else {
            None
        }
    }
}

/// The report in plain `nvidia-smi` output, old (79 columns) or new (89 columns) layout.
pub fn parse_table(text: &str) -> Result<TableReport, ParseError> {
    let mut parser = Parser::default();
    for (index, raw) in text.lines().enumerate() {
        parser.line(index + 1, raw)?;
    }
    parser.finish()
}

/// A parse under way: what it has read, the section it is in, and the rows of the block
/// (a GPU's or a MIG device's) since the last border.
#[derive(Default)]
struct Parser<'a> {
    report: TableReport,
    saw_header: bool,
    section: Section,
    block: Vec<Row<'a>>,
    processes_have_gi_ci: bool,
    first_line: Option<(usize, &'a str)>,
}

impl<'a> Parser<'a> {
    fn line(&mut self, line_no: usize, raw: &'a str) -> Result<(), ParseError> {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('+') || line.starts_with("|-") {
            return self.flush();
        }
        self.first_line.get_or_insert((line_no, raw));
        let Some(inner) = line.strip_prefix('|') else {
            return self.outside_table(line_no, raw);
        };
        if inner.starts_with('=') {
            self.section = self.section.below_rule();
            return Ok(());
        }
        if inner.contains("NVIDIA-SMI") && inner.contains("Driver Version") {
            self.report.smi_version = word_after(inner, "NVIDIA-SMI");
            self.report.driver_version = word_after(inner, "Driver Version:");
            self.report.cuda_version = word_after(inner, "CUDA Version:");
            self.saw_header = true;
            return Ok(());
        }
        if !self.saw_header {
            return Err(unexpected(line_no, raw, HEADER_SHAPE));
        }
        if let Some(heading) = Section::heading(inner) {
            self.section = heading;
            return Ok(());
        }
        let Some(inner) = inner.strip_suffix('|') else {
            return Err(unexpected(line_no, raw, "a table row ending in '|'"));
        };
        self.row(line_no, raw, inner)
    }

    /// A line without the table's `|`: the date above the table, or else out of place.
    fn outside_table(&mut self, line_no: usize, raw: &str) -> Result<(), ParseError> {
        if !self.saw_header && self.report.timestamp.is_none() {
            self.report.timestamp = Some(raw.trim().to_string());
            return Ok(());
        }
        let expected = if self.saw_header {
            "a table line starting with '|' or '+'"
        } else {
            HEADER_SHAPE
        };
        Err(unexpected(line_no, raw, expected))
    }

    /// A row between the borders, read as the section it is in says.
    fn row(&mut self, line_no: usize, raw: &'a str, inner: &'a str) -> Result<(), ParseError> {
        match self.section {
            Section::Gpus | Section::Migs => self.block.push(Row {
                line: line_no,
                raw,
                cells: inner.split('|').map(str::trim).collect(),
            }),
            Section::ProcessHeading => {
                self.processes_have_gi_ci |= inner.split_whitespace().any(|w| w == "GI");
            }
            Section::Processes => {
                let inner = inner.trim();
                if !inner.starts_with("No running processes found") {
                    let process = parse_process(inner, self.processes_have_gi_ci)
                        .ok_or_else(|| unexpected(line_no, raw, PROCESS_ROW))?;
                    self.report.processes.push(process);
                }
            }
            Section::Top | Section::GpuHeading | Section::MigHeading => {}
        }
        Ok(())
    }

    /// Parses the rows gathered since the last border, as a GPU or a MIG device.
    fn flush(&mut self) -> Result<(), ParseError> {
        if self.block.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.block);
        match self.section {
            Section::Gpus => self.report.gpus.push(parse_gpu(&rows)?),
            Section::Migs => self.report.mig_devices.push(parse_mig_device(&rows)?),
            _ => {}
        }
        Ok(())
    }

    /// The report, once the last block is parsed; an error when no header was found.
    fn finish(mut self) -> Result<TableReport, ParseError> {
        self.flush()?;
        if !self.saw_header {
            let (line, text) = self.first_line.unwrap_or((1, ""));
            return Err(unexpected(line, text, HEADER_SHAPE));
        }
        Ok(self.report)
    }
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
