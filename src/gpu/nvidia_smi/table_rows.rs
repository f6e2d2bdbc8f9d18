//! The rows of the default `nvidia-smi` table: a GPU's block, a MIG device's, a process row,
//! and the cells in them (`N/A` read as nothing, numbers without their units).

use super::error::ParseError;
use super::table::{TableGpu, TableMigDevice, TableProcess};

const GPU_ROW: &str = "a GPU row \"| <index>  <name>  <persistence> | <bus id> <disp> | <ecc> |\"";
const SECOND_ROW_SHAPE: &str = "\"| <fan> <temp> <perf> <draw>W / <cap>W | <used>MiB / <total>MiB | <util>% <compute mode> |\"";
const MIG_ROW: &str = "a MIG device row \"| <gpu> <gi> <ci> <mig dev> | <used>MiB / <total>MiB | <sm> <ecc> | <ce> <enc> <dec> <ofa> <jpg> |\"";
pub(super) const PROCESS_ROW: &str =
    "a process row \"| <gpu> [<gi> <ci>] <pid> <type> <name> <memory>MiB |\"";

/// A table row: its line number, the line, and the text between its `|` separators.
pub(super) struct Row<'a> {
    pub(super) line: usize,
    pub(super) raw: &'a str,
    pub(super) cells: Vec<&'a str>,
}

impl Row<'_> {
    fn error(&self, expected: &str) -> ParseError {
        unexpected(self.line, self.raw, expected)
    }
}

/// Line `line` (`raw`) is not what was `expected` there.
pub(super) fn unexpected(line: usize, raw: &str, expected: &str) -> ParseError {
    ParseError::Unexpected {
        line,
        text: raw.to_string(),
        expected: expected.to_string(),
    }
}

pub(super) fn parse_gpu(rows: &[Row<'_>]) -> Result<TableGpu, ParseError> {
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

pub(super) fn parse_mig_device(rows: &[Row<'_>]) -> Result<TableMigDevice, ParseError> {
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
pub(super) fn parse_process(row: &str, has_gi_ci: bool) -> Option<TableProcess> {
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
pub(super) fn word_after(line: &str, key: &str) -> Option<String> {
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
