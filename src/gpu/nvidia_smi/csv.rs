//! `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]` rows as JSON maps.

use serde_json::{Map, Number, Value};

use super::error::ParseError;

/// Units nvidia-smi appends to cells when `nounits` is absent. A cell is only read as a
/// number when what remains after one of these is a plain number.
const UNITS: &[&str] = &[
    "MiB", "GiB", "KiB", "TiB", "MB", "GB", "KB", "B", "W", "mW", "%", "MHz", "GHz", "Hz", "us",
    "ms", "ns", "s", "C", "mV", "V", "J", "mJ", "KB/s", "MB/s", "GB/s", "RPM",
];

/// One map per GPU row, keyed by query field name.
///
/// Keys come from `fields` when given (they must match the column count), otherwise from the
/// header with its ` [MiB]`-style unit removed. Output without a header needs `fields`.
/// Cells become numbers when they are a plain number once the unit is stripped, `null` for
/// `N/A` and bracketed statuses such as `[Not Supported]`, and trimmed strings otherwise.
pub fn parse_csv(
    text: &str,
    fields: Option<&[&str]>,
) -> Result<Vec<Map<String, Value>>, ParseError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line.trim_end_matches('\r')))
        .filter(|(_, line)| !line.trim().is_empty());
    let Some((first_no, first)) = lines.next() else {
        return Ok(Vec::new());
    };
    let first_cells = split_cells(first);
    let has_header = looks_like_header(&first_cells, fields);
    let keys: Vec<String> = match (has_header, fields) {
        (true, Some(fields)) if fields.len() != first_cells.len() => {
            return Err(ParseError::ColumnCount {
                line: first_no,
                expected: fields.len(),
                found: first_cells.len(),
                text: first.to_string(),
            });
        }
        (_, Some(fields)) => fields
            .iter()
            .map(|f| strip_header_unit(f).to_string())
            .collect(),
        (true, None) => first_cells
            .iter()
            .map(|c| strip_header_unit(c).to_string())
            .collect(),
        (false, None) => {
            return Err(ParseError::MissingFields {
                line: first_no,
                text: first.to_string(),
            });
        }
    };
    let data = (!has_header)
        .then_some((first_no, first))
        .into_iter()
        .chain(lines);
    let mut rows = Vec::new();
    for (line_no, line) in data {
        let cells = split_cells(line);
        if cells.len() != keys.len() {
            return Err(ParseError::ColumnCount {
                line: line_no,
                expected: keys.len(),
                found: cells.len(),
                text: line.to_string(),
            });
        }
        let row = keys
            .iter()
            .zip(&cells)
            .map(|(key, cell)| (key.clone(), cell_value(cell)))
            .collect();
        rows.push(row);
    }
    Ok(rows)
}

/// nvidia-smi joins cells with ", " and never quotes. A line whose trailing space was
/// trimmed away still ends in an empty last cell.
fn split_cells(line: &str) -> Vec<&str> {
    let mut cells: Vec<&str> = line.split(", ").map(str::trim).collect();
    if let Some(last) = cells.last_mut()
        && let Some(stripped) = last.strip_suffix(',')
    {
        *last = stripped.trim_end();
        cells.push("");
    }
    cells
}

/// The first line is a header when it names the given fields, or when every cell is a
/// field-name token (`memory.total [MiB]`). Without `fields` the bare token shape is enough;
/// with them one token must also carry a `.`, `_` or unit, so that a noheader row such as
/// `localhost` is not mistaken for a header.
fn looks_like_header(cells: &[&str], fields: Option<&[&str]>) -> bool {
    if let Some(fields) = fields
        && fields.len() == cells.len()
        && fields
            .iter()
            .zip(cells)
            .all(|(f, c)| strip_header_unit(f).eq_ignore_ascii_case(strip_header_unit(c)))
    {
        return true;
    }
    let all_names = cells.iter().all(|c| is_field_name(c));
    match fields {
        None => all_names,
        Some(_) => all_names && cells.iter().any(|c| c.contains(['.', '_', '['])),
    }
}

fn is_field_name(cell: &str) -> bool {
    let name = strip_header_unit(cell);
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// `memory.total [MiB]` -> `memory.total`.
fn strip_header_unit(cell: &str) -> &str {
    let cell = cell.trim();
    match cell.rfind(" [") {
        Some(at) if cell.ends_with(']') => cell[..at].trim_end(),
        _ => cell,
    }
}

/// `[N/A]`, `[Not Supported]`, `[Requested functionality has been deprecated]` and any other
/// bracketed status mean the value is missing.
pub(crate) fn is_missing(cell: &str) -> bool {
    cell.is_empty()
        || cell == "N/A"
        || cell == "Not Supported"
        || (cell.starts_with('[') && cell.ends_with(']'))
}

fn cell_value(cell: &str) -> Value {
    let cell = cell.trim();
    if is_missing(cell) {
        return Value::Null;
    }
    let bare = strip_unit(cell);
    plain_number(bare).unwrap_or_else(|| Value::String(cell.to_string()))
}

/// `81559 MiB` -> `81559`; any other text comes back unchanged.
fn strip_unit(cell: &str) -> &str {
    match cell.rsplit_once(' ') {
        Some((number, unit)) if UNITS.contains(&unit) => number.trim_end(),
        _ => cell,
    }
}

/// A JSON number for a plain decimal integer or float. Versions (`580.95.05`), hex
/// (`0x1E`) and zero-padded digits (serials, masked ids) are not numbers.
pub(crate) fn plain_number(text: &str) -> Option<Value> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (int_part, frac_part) = match digits.split_once('.') {
        Some((int_part, frac_part)) => (int_part, Some(frac_part)),
        None => (digits, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int_part) || (int_part.len() > 1 && int_part.starts_with('0')) {
        return None;
    }
    match frac_part {
        None => text
            .parse::<i64>()
            .map(Value::from)
            .ok()
            .or_else(|| text.parse::<u64>().map(Value::from).ok()),
        Some(frac) if all_digits(frac) => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::test_fixtures::fixture;
    use serde_json::json;

    #[test]
    fn h100_allfields_header_units_and_statuses() {
        let text = fixture("nvidia_smi_query_gpu_csv_h100_allfields_590.csv");
        let rows = parse_csv(&text, None).unwrap();
        assert_eq!(rows.len(), 1);
        let gpu = &rows[0];
        assert_eq!(gpu["name"], json!("NVIDIA H100 80GB HBM3"));
        assert_eq!(gpu["driver_version"], json!("590.48.01"));
        assert_eq!(gpu["pci.bus_id"], json!("00000000:00:09.0"));
        assert_eq!(gpu["memory.total"], json!(81559));
        assert_eq!(gpu["memory.used"], json!(0));
        assert_eq!(gpu["power.draw"], json!(69.85));
        assert_eq!(gpu["power.limit"], json!(700.0));
        assert_eq!(gpu["clocks.max.sm"], json!(1980));
        assert_eq!(gpu["utilization.gpu"], json!(0));
        assert_eq!(gpu["temperature.gpu"], json!(41));
        assert_eq!(gpu["count"], json!(1));
        assert_eq!(gpu["compute_cap"], json!(9.0));
        assert_eq!(gpu["vbios_version"], json!("96.00.A5.00.01"));
        assert_eq!(gpu["pci.device_id"], json!("0x233010DE"));
        // The masked serial is all zeros: kept as text, not collapsed to 0.
        assert_eq!(gpu["serial"], json!("0000000000000"));
        assert_eq!(gpu["mig.mode.current"], json!("Disabled"));
        assert_eq!(gpu["display_mode"], Value::Null, "deprecated status");
        assert_eq!(gpu["fan.speed"], Value::Null, "[N/A]");
        assert_eq!(gpu["fabric.health.summary"], Value::Null, "bare N/A");
        assert_eq!(
            gpu["platform.chassis_serial_number"],
            Value::Null,
            "empty cell"
        );
        assert_eq!(gpu["platform.peer_type"], json!("Direct Connected"));
        assert_eq!(gpu["clocks_event_reasons_counters.sw_power_cap"], json!(0));
        assert_eq!(gpu["timestamp"], json!("2026/07/14 08:12:38.696"));
        assert!(gpu.keys().all(|k| !k.contains('[')));
    }

    #[test]
    fn h200_allfields() {
        let text = fixture("nvidia_smi_query_gpu_csv_h200_allfields_590.csv");
        let rows = parse_csv(&text, None).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["name"], json!("NVIDIA H200"));
        assert_eq!(rows[0]["memory.total"], json!(143771));
        assert_eq!(rows[0]["driver_version"], json!("590.48.01"));
    }

    #[test]
    fn noheader_nounits_with_fields() {
        let text = "0, NVIDIA A10G, 23028, 22, 25.90, [N/A], 580.95.05\n\
                    1, NVIDIA A10G, 23028, 0, 11.02, [Not Supported], 580.95.05\n";
        let fields = [
            "index",
            "name",
            "memory.total",
            "memory.used",
            "power.draw",
            "fan.speed",
            "driver_version",
        ];
        let rows = parse_csv(text, Some(&fields)).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1]["index"], json!(1));
        assert_eq!(rows[0]["memory.used"], json!(22));
        assert_eq!(rows[0]["power.draw"], json!(25.9));
        assert_eq!(rows[0]["fan.speed"], Value::Null);
        assert_eq!(rows[1]["fan.speed"], Value::Null);
        assert_eq!(rows[0]["driver_version"], json!("580.95.05"));
    }

    #[test]
    fn header_with_fields_uses_the_callers_names() {
        let text = "name, memory.total [MiB]\nNVIDIA A10G, 23028 MiB\n";
        let rows = parse_csv(text, Some(&["gpu_name", "memory.total"])).unwrap();
        assert_eq!(
            rows,
            [json!({"gpu_name": "NVIDIA A10G", "memory.total": 23028})
                .as_object()
                .unwrap()
                .clone()]
        );
    }

    #[test]
    fn noheader_single_lowercase_value_is_data() {
        let rows = parse_csv("localhost\n", Some(&["hostname"])).unwrap();
        assert_eq!(rows[0]["hostname"], json!("localhost"));
    }

    #[test]
    fn noheader_without_fields_asks_for_them() {
        let err = parse_csv("0, NVIDIA A10G, 23028\n", None).unwrap_err();
        assert!(matches!(err, ParseError::MissingFields { line: 1, .. }));
        assert!(
            err.to_string().contains("pass the --query-gpu fields"),
            "{err}"
        );
    }

    #[test]
    fn mismatched_column_count_names_the_line() {
        let text = "index, name\n0, NVIDIA A10G\n1, NVIDIA A10G, extra\n";
        let err = parse_csv(text, None).unwrap_err();
        assert_eq!(
            err,
            ParseError::ColumnCount {
                line: 3,
                expected: 2,
                found: 3,
                text: "1, NVIDIA A10G, extra".into()
            }
        );
        assert!(err.to_string().starts_with("line 3: expected 2"), "{err}");
    }

    #[test]
    fn trimmed_trailing_empty_cell_still_counts() {
        let rows = parse_csv("index, serial\n0,\n", None).unwrap();
        assert_eq!(rows[0]["serial"], Value::Null);
    }

    #[test]
    fn numbers_only_when_plain() {
        assert_eq!(cell_value("580.95.05"), json!("580.95.05"));
        assert_eq!(cell_value("0x1E"), json!("0x1E"));
        assert_eq!(cell_value("007"), json!("007"));
        assert_eq!(cell_value("0"), json!(0));
        assert_eq!(cell_value("-1"), json!(-1));
        assert_eq!(cell_value("0.5"), json!(0.5));
        assert_eq!(cell_value("100.00 %"), json!(100.0));
        assert_eq!(cell_value("1980 MHz"), json!(1980));
        assert_eq!(cell_value("1.5.2 MiB"), json!("1.5.2 MiB"));
        assert_eq!(cell_value("Enabled"), json!("Enabled"));
        assert_eq!(cell_value("[Unknown Error]"), Value::Null);
        assert_eq!(cell_value("18446744073709551615"), json!(u64::MAX));
    }

    #[test]
    fn empty_input_is_no_rows() {
        assert!(parse_csv("\n", None).unwrap().is_empty());
    }
}
