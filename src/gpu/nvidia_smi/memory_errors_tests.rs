//! The memory error readers on real `nvidia-smi` output (tests/fixtures/real).

use super::*;
use crate::gpu::nvidia_smi::{parse_csv, parse_query_text};
use crate::gpu::test_fixtures::fixture;

fn from_text(name: &str) -> Vec<MemoryErrors> {
    let report = parse_query_text(&fixture(name)).unwrap();
    report.gpus.iter().map(memory_errors).collect()
}

#[test]
fn a10_with_a_pending_row_remap() {
    let gpus = from_text("nvidia_smi_q_a10_535_remapped_rows_pending_gpud.txt");
    assert_eq!(gpus.len(), 1);
    let gpu = &gpus[0];
    assert_eq!(gpu.bus_id.as_deref(), Some("00000000:07:00.0"));
    assert_eq!(gpu.product.as_deref(), Some("NVIDIA A10"));
    assert_eq!(
        gpu.remapped_rows,
        RemappedRows {
            correctable: Some(0),
            uncorrectable: Some(4),
            pending: Some(true),
            failure: Some(false),
            banks_without_spares: Some(0),
        }
    );
    assert_eq!(gpu.volatile.uncorrectable, Some(0));
    assert_eq!(gpu.retired_pages, RetiredPages::default(), "N/A on an A10");
}

#[test]
fn h100_newest_layout_adds_the_split_sram_counts() {
    let gpus = from_text("nvidia_smi_q_h100_80gb_hbm3_590_idle_utkuozdemir.txt");
    let gpu = &gpus[0];
    assert_eq!(gpu.ecc_mode.as_deref(), Some("Enabled"));
    assert_eq!(gpu.volatile.sram_uncorrectable, Some(0), "parity + SEC-DED");
    assert_eq!(gpu.aggregate.uncorrectable, Some(0));
    assert_eq!(gpu.sram_threshold_exceeded, Some(false));
    assert_eq!(gpu.remapped_rows.pending, Some(false));
    assert_eq!(gpu.recovery_action.as_deref(), Some("None"));
}

#[test]
fn a100_excerpt_with_elisions_still_reads() {
    let gpus = from_text(
        "nvidia_smi_q_a100_sxm4_80gb_510_remapped_rows_pending_excerpt_mlengineering.txt",
    );
    let gpu = &gpus[0];
    assert_eq!(gpu.product.as_deref(), Some("NVIDIA A100-SXM4-80GB"));
    assert_eq!(gpu.volatile.dram_correctable, Some(177));
    assert_eq!(gpu.volatile.correctable, Some(177));
    assert_eq!(gpu.remapped_rows.correctable, Some(1));
    assert_eq!(gpu.remapped_rows.pending, Some(true));
}

#[test]
fn volta_layout_and_single_line_remapped_rows() {
    let gpus = from_text("nvidia_smi_q_titan_v_560_gpud.txt");
    let gpu = &gpus[0];
    assert_eq!(gpu.product.as_deref(), Some("NVIDIA TITAN V"));
    assert_eq!(gpu.ecc_mode, None, "N/A");
    assert_eq!(gpu.volatile, EccCounts::default());
    assert_eq!(gpu.remapped_rows, RemappedRows::default());
}

#[test]
fn page_retirement_only_output_for_eight_gpus() {
    let clean = from_text("nvidia_smi_q_d_page_retirement_8gpu_535_azurehpc.txt");
    assert_eq!(clean.len(), 8);
    assert!(clean.iter().all(|g| g.retired_pages
        == RetiredPages {
            single_bit: Some(0),
            double_bit: Some(0),
            pending: Some(false)
        }));
    // Counters edited upstream to simulate faults: for threshold logic only.
    let faulty =
        from_text("nvidia_smi_q_d_page_retirement_8gpu_535_azurehpc_TEST_EDITED_faults.txt");
    assert_eq!(faulty[1].bus_id.as_deref(), Some("00000002:00:00.0"));
    assert_eq!(
        faulty[1].retired_pages,
        RetiredPages {
            single_bit: Some(2),
            double_bit: Some(61),
            pending: Some(true)
        }
    );
}

#[test]
fn a_pasted_fragment_with_uneven_spacing() {
    let gpus = from_text("nvidia_smi_q_retired_pages_pending_fragment_mlengineering.txt");
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0].retired_pages.single_bit, Some(2));
    assert_eq!(gpus[0].retired_pages.pending, Some(true));
}

#[test]
fn the_same_counters_from_a_query_gpu_csv() {
    let text = fixture("nvidia_smi_query_gpu_csv_h100_allfields_590.csv");
    let rows = parse_csv(&text, None).unwrap();
    let gpu = memory_errors_from_csv(&rows[0]);
    assert_eq!(gpu.bus_id.as_deref(), Some("00000000:00:09.0"));
    assert_eq!(gpu.product.as_deref(), Some("NVIDIA H100 80GB HBM3"));
    assert_eq!(gpu.ecc_mode.as_deref(), Some("Enabled"));
    assert_eq!(gpu.volatile.uncorrectable, Some(0));
    assert_eq!(gpu.remapped_rows.pending, Some(false));
    assert_eq!(gpu.remapped_rows.failure, Some(false));
    // The same GPU's -q text says the same.
    let text = from_text("nvidia_smi_q_h100_80gb_hbm3_590_idle_utkuozdemir.txt");
    assert_eq!(gpu.remapped_rows, text[0].remapped_rows);
    assert_eq!(gpu.retired_pages, text[0].retired_pages);
}
