//! A GPU's memory error counters (ECC, retired pages, remapped rows) from either form a health
//! check reads them in: `nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT` text or a
//! `--query-gpu=ecc.errors.*,retired_pages.*,remapped_rows.*` csv row.

use serde::Serialize;
use serde_json::{Map, Value};

use super::query_text::{QueryGpu, Section};

/// What one GPU reports. Every counter is `None` where the tool prints `N/A` (the GPU has
/// no such mechanism: the A10G and H100 retire no pages, Volta remaps no rows) or the
/// output does not include it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MemoryErrors {
    pub bus_id: Option<String>,
    pub product: Option<String>,
    /// `Enabled`, `Disabled`, or `None` for `N/A`.
    pub ecc_mode: Option<String>,
    /// Since the driver loaded.
    pub volatile: EccCounts,
    /// Over the board's life (kept in the InfoROM).
    pub aggregate: EccCounts,
    /// `SRAM Threshold Exceeded` (newer drivers): too many SRAM errors, NVIDIA says to RMA.
    pub sram_threshold_exceeded: Option<bool>,
    pub retired_pages: RetiredPages,
    pub remapped_rows: RemappedRows,
    /// `GPU Recovery Action` (drivers 570+): `None`, `GPU Reset`, `Node Reboot`, `Drain P2P`...
    pub recovery_action: Option<String>,
}

/// Corrected and uncorrected counts. The totals add the SRAM and DRAM counts the newer layout
/// prints (SRAM uncorrectable split into parity and SEC-DED on some drivers), or are the
/// `Single Bit` / `Double Bit` totals of the Volta-era layout.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EccCounts {
    pub correctable: Option<u64>,
    pub uncorrectable: Option<u64>,
    pub dram_correctable: Option<u64>,
    pub dram_uncorrectable: Option<u64>,
    pub sram_correctable: Option<u64>,
    pub sram_uncorrectable: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RetiredPages {
    pub single_bit: Option<u64>,
    pub double_bit: Option<u64>,
    /// A page waits to be retired: the GPU needs a reset for it to take effect.
    pub pending: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RemappedRows {
    pub correctable: Option<u64>,
    pub uncorrectable: Option<u64>,
    /// A remap waits for a GPU reset.
    pub pending: Option<bool>,
    /// A remap failed: the bank has no spare rows left.
    pub failure: Option<bool>,
    /// Banks with no spare rows left (`Bank Remap Availability Histogram > None`).
    pub banks_without_spares: Option<u64>,
}

/// The counters in one GPU's `-q` block.
pub fn memory_errors(gpu: &QueryGpu) -> MemoryErrors {
    let f = &gpu.fields;
    let retired = |key: &str| f.value(&["Retired Pages", key]);
    let remapped = |key: &str| f.value(&["Remapped Rows", key]);
    MemoryErrors {
        bus_id: gpu.bus_id.clone(),
        product: f.value(&["Product Name"]).map(str::to_string),
        ecc_mode: f
            .value(&["Ecc Mode", "Current"])
            .and_then(known)
            .map(str::to_string),
        volatile: f
            .section(&["ECC Errors", "Volatile"])
            .map(ecc_counts)
            .unwrap_or_default(),
        aggregate: f
            .section(&["ECC Errors", "Aggregate"])
            .map(ecc_counts)
            .unwrap_or_default(),
        sram_threshold_exceeded: f
            .value(&["ECC Errors", "Aggregate", "SRAM Threshold Exceeded"])
            .and_then(yes_no),
        retired_pages: RetiredPages {
            single_bit: retired("Single Bit ECC").and_then(count),
            double_bit: retired("Double Bit ECC").and_then(count),
            pending: retired("Pending Page Blacklist")
                .or_else(|| retired("Pending"))
                .and_then(yes_no),
        },
        remapped_rows: RemappedRows {
            correctable: remapped("Correctable Error").and_then(count),
            uncorrectable: remapped("Uncorrectable Error").and_then(count),
            pending: remapped("Pending").and_then(yes_no),
            failure: remapped("Remapping Failure Occurred").and_then(yes_no),
            banks_without_spares: f
                .value(&["Remapped Rows", "Bank Remap Availability Histogram", "None"])
                .and_then(count),
        },
        recovery_action: f
            .value(&["GPU Recovery Action"])
            .and_then(known)
            .map(str::to_string),
    }
}

fn ecc_counts(section: &Section) -> EccCounts {
    let get = |key: &str| section.value(&[key]).and_then(count);
    let sram_uncorrectable = get("SRAM Uncorrectable").or_else(|| {
        sum(&[
            get("SRAM Uncorrectable Parity"),
            get("SRAM Uncorrectable SEC-DED"),
        ])
    });
    let counts = EccCounts {
        dram_correctable: get("DRAM Correctable"),
        dram_uncorrectable: get("DRAM Uncorrectable"),
        sram_correctable: get("SRAM Correctable"),
        sram_uncorrectable,
        ..EccCounts::default()
    };
    // The Volta-era layout: `Single Bit` / `Double Bit` sections with a `Total`.
    let single = section.value(&["Single Bit", "Total"]).and_then(count);
    let double = section.value(&["Double Bit", "Total"]).and_then(count);
    EccCounts {
        correctable: single.or_else(|| sum(&[counts.sram_correctable, counts.dram_correctable])),
        uncorrectable: double
            .or_else(|| sum(&[counts.sram_uncorrectable, counts.dram_uncorrectable])),
        ..counts
    }
}

/// The counters in one row of `nvidia-smi --query-gpu=... --format=csv` as
/// [`super::parse_csv`] returns it (field names as keys, units stripped, `[N/A]` as null).
pub fn memory_errors_from_csv(row: &Map<String, Value>) -> MemoryErrors {
    let text = |field: &str| -> Option<String> {
        match row.get(field)? {
            Value::String(s) => known(s).map(str::to_string),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(if *b { "Yes" } else { "No" }.to_string()),
            _ => None,
        }
    };
    let number = |field: &str| text(field).as_deref().and_then(count);
    let flag = |field: &str| text(field).as_deref().and_then(yes_no);
    let ecc = |kind: &str| EccCounts {
        correctable: number(&format!("ecc.errors.corrected.{kind}.total")),
        uncorrectable: number(&format!("ecc.errors.uncorrected.{kind}.total")),
        dram_correctable: number(&format!("ecc.errors.corrected.{kind}.dram")),
        dram_uncorrectable: number(&format!("ecc.errors.uncorrected.{kind}.dram")),
        sram_correctable: number(&format!("ecc.errors.corrected.{kind}.sram")),
        sram_uncorrectable: number(&format!("ecc.errors.uncorrected.{kind}.sram")),
    };
    MemoryErrors {
        // `--query-gpu` names them `pci.bus_id` and `name`; `--query-remapped-rows` `gpu_*`.
        bus_id: text("pci.bus_id").or_else(|| text("gpu_bus_id")),
        product: text("name").or_else(|| text("gpu_name")),
        ecc_mode: text("ecc.mode.current"),
        volatile: ecc("volatile"),
        aggregate: ecc("aggregate"),
        sram_threshold_exceeded: flag("ecc.errors.uncorrected.aggregate.sram.thresholdExceeded"),
        retired_pages: RetiredPages {
            single_bit: number("retired_pages.single_bit_ecc.count"),
            double_bit: number("retired_pages.double_bit.count"),
            pending: flag("retired_pages.pending"),
        },
        remapped_rows: RemappedRows {
            correctable: number("remapped_rows.correctable"),
            uncorrectable: number("remapped_rows.uncorrectable"),
            pending: flag("remapped_rows.pending"),
            failure: flag("remapped_rows.failure"),
            banks_without_spares: number("remapped_rows.histogram.none"),
        },
        recovery_action: None,
    }
}

/// `N/A` and its csv forms are "not reported".
fn known(value: &str) -> Option<&str> {
    let value = value.trim();
    let unknown = value.is_empty()
        || value.eq_ignore_ascii_case("N/A")
        || value.starts_with('[')
        || value.starts_with("Not ");
    (!unknown).then_some(value)
}

/// `177`, `1 bank(s)`; `N/A` is `None`.
fn count(value: &str) -> Option<u64> {
    known(value)?.split_whitespace().next()?.parse().ok()
}

fn yes_no(value: &str) -> Option<bool> {
    match known(value)?.to_ascii_lowercase().as_str() {
        "yes" | "true" | "1" => Some(true),
        "no" | "false" | "0" => Some(false),
        _ => None,
    }
}

/// The sum of the counts that are known; `None` when none is.
fn sum(counts: &[Option<u64>]) -> Option<u64> {
    counts
        .iter()
        .flatten()
        .copied()
        .reduce(|a, b| a.saturating_add(b))
}

#[cfg(test)]
#[path = "memory_errors_tests.rs"]
mod tests;
