//! nccl-tests' own JSON report (`-J FILE`, `"version": 3` in nccl-tests 2.19): the same
//! [`NcclReport`] as its text output gives. Its `env` array holds the whole process
//! environment, secrets included, so it is never read.

use serde_json::Value;

use super::model::{ErrorColumn, NcclReport, Perf, Rank, Row, Status};
use super::parse::{push_distinct, version_from_code};
use super::summary::conclude;

/// How such a document starts: text that starts otherwise is not tried as JSON.
const OBJECT_OPEN: char = '{';

/// The report, when `text` is such a JSON document (an object with `results`); `None` for
/// anything else, which is read as text.
pub(super) fn parse_json(text: &str) -> Option<NcclReport> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with(OBJECT_OPEN) {
        return None;
    }
    let document: Value = serde_json::from_str(trimmed).ok()?;
    let results = document.get("results")?.as_array()?;
    let config = &document["config"];
    let ranks: Vec<Rank> = config["devices"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(rank)
        .collect();
    let rows: Vec<Row> = results.iter().filter_map(row).collect();
    let (mut hosts, mut devices) = (Vec::new(), Vec::new());
    for rank in &ranks {
        push_distinct(&mut hosts, &rank.host);
        push_distinct(&mut devices, &rank.gpu);
    }
    let validated = config["validation"].as_i64().unwrap_or(1) != 0;
    let errors = errors(&document);
    let mut report = NcclReport {
        status: Status::Incomplete,
        ok: false,
        nccl_version: document["nccl_version"]
            .as_u64()
            .and_then(|code| version_from_code(&code.to_string())),
        tests_version: None,
        collective: collective(&document),
        nranks: u64::try_from(ranks.len()).ok().filter(|n| *n > 0),
        hosts,
        devices,
        ranks,
        error_column: error_column(&rows, validated),
        peak_busbw: peak_busbw(&rows),
        rows,
        avg_busbw: document["average_bus_bandwidth"]["bandwidth"].as_f64(),
        out_of_bounds: document["out_of_bounds"]["count"].as_u64(),
        out_of_bounds_ok: match document["out_of_bounds"]["okay"].as_str() {
            Some("true") => Some(true),
            Some("false") => Some(false),
            _ => None,
        },
        network: None,
        ofi_version: None,
        algorithm: algorithm(&document),
        warnings: Vec::new(),
        causes: errors.clone(),
        errors,
        summary: String::new(),
    };
    conclude(&mut report);
    Some(report)
}

/// The document's failure lines, blank ones left out.
fn errors(document: &Value) -> Vec<String> {
    document["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_string)
        .collect()
}

/// The program's name without its directory or `_mpi` suffix: `all_reduce_perf`.
fn collective(document: &Value) -> Option<String> {
    document["args"][0]
        .as_str()
        .and_then(|program| program.rsplit('/').next())
        .map(|name| name.strip_suffix("_mpi").unwrap_or(name).to_string())
}

/// `NCCL_ALGO` from `env`: the one entry of it read, since it holds the whole environment,
/// secrets included.
fn algorithm(document: &Value) -> Option<String> {
    document["env"].as_array().and_then(|env| {
        env.iter()
            .filter_map(|e| e.as_str()?.strip_prefix("NCCL_ALGO="))
            .next()
            .map(str::to_string)
    })
}

/// What the rows' check column holds: `nwrong` counts, or nothing when validation was off.
fn error_column(rows: &[Row], validated: bool) -> Option<ErrorColumn> {
    (!rows.is_empty()).then_some(if validated {
        ErrorColumn::WrongCount
    } else {
        ErrorColumn::NotChecked
    })
}

fn peak_busbw(rows: &[Row]) -> Option<f64> {
    rows.iter()
        .flat_map(|r| [r.out_of_place.busbw, r.in_place.busbw])
        .reduce(f64::max)
}

fn rank(device: &Value) -> Option<Rank> {
    Some(Rank {
        rank: u32::try_from(device["rank"].as_u64()?).ok()?,
        group: device["group"].as_u64().and_then(|g| u32::try_from(g).ok()),
        pid: device["pid"].as_u64()?,
        host: device["hostname"].as_str()?.to_string(),
        device: u32::try_from(device["device"].as_u64()?).ok()?,
        bus_id: device["device_hex"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        gpu: device["device_info"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    })
}

fn perf(measured: &Value) -> Option<Perf> {
    Some(Perf {
        time_us: measured["time"].as_f64()?,
        algbw: measured["alg_bw"].as_f64()?,
        busbw: measured["bus_bw"].as_f64()?,
        // A whole number written as a float (`0.0`); absent or null when not checked.
        wrong: measured["nwrong"]
            .as_f64()
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map(|n| n as u64),
        max_error: None,
    })
}

fn row(result: &Value) -> Option<Row> {
    // `root` is the text's right-aligned column (`"    -1"`).
    let root = match &result["root"] {
        Value::String(text) => text.trim().parse().ok(),
        other => other.as_i64(),
    };
    Some(Row {
        size: result["size"].as_u64()?,
        count: result["count"].as_u64()?,
        r#type: result["type"].as_str()?.to_string(),
        redop: result["redop"].as_str().map(str::to_string),
        root,
        out_of_place: perf(&result["out_of_place"])?,
        in_place: perf(&result["in_place"])?,
    })
}
