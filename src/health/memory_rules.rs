//! GPU memory error counters -> findings. Each rule names its source (quotes in
//! src/health/SOURCES.md): NVIDIA's A100 memory error management guide (row remapping, RMA
//! thresholds), NVIDIA's dynamic page retirement guide, and AWS's GPU cluster health check
//! for the counters NVIDIA gives no action for.

use super::verdict::{Finding, Verdict};
use crate::gpu::nvidia_smi::MemoryErrors;

const NVIDIA_ROW_REMAP: &str =
    "NVIDIA A100 GPU memory error management: row remapping (a GPU reset applies pending remaps)";
const NVIDIA_RMA: &str =
    "NVIDIA A100 GPU memory error management: RMA policy thresholds for row remapping";
const AWS_ECC: &str =
    "AWS awsome-distributed-training 0-nvidia-smi-check.sh (ECC and retired pages)";
const AZURE_PAGES: &str =
    "Azure azurehpc-health-checks azure_gpu_ecc.nhc check_SDBE_ecc (retirement table full)";

/// NVIDIA: the remapping failure flag is also set "after 512 total remappings".
pub const MAX_UNCORRECTABLE_REMAPS: u64 = 512;
/// AWS: "SBE retired pages approaching limit (NVIDIA limit is 64) -> MONITOR" above 60.
pub const SBE_PAGES_MONITOR: u64 = 60;
/// Azure: SBE + DBE retired pages >= 62 with a page pending: the retirement table is full.
pub const PAGES_TABLE_FULL: u64 = 62;

/// One rule: a finding from one GPU's counters, or none where the GPU does not report them.
type Rule = fn(&MemoryErrors) -> Option<Finding>;

/// The rules, in the order their findings are listed.
const RULES: [Rule; 8] = [
    row_remap_failure,
    row_remap_uncorrectable,
    row_remap_pending,
    sram_threshold,
    ecc_uncorrectable,
    retired_pages_dbe,
    retired_pages_table_or_pending,
    retired_pages_sbe,
];

/// The findings for one GPU's counters; a counter the GPU does not report gives none.
pub fn memory_findings(gpu: &MemoryErrors) -> Vec<Finding> {
    RULES
        .iter()
        .filter_map(|rule| rule(gpu))
        .map(|finding| finding.on_gpu(gpu.bus_id.clone()))
        .collect()
}

/// `verdict` when the counter crossed its threshold, HEALTHY when not.
fn when(crossed: bool, verdict: Verdict) -> Verdict {
    if crossed { verdict } else { Verdict::Healthy }
}

fn row_remap_failure(gpu: &MemoryErrors) -> Option<Finding> {
    let failed = gpu.remapped_rows.failure?;
    Some(Finding::judged(
        "row_remap_failure",
        when(failed, Verdict::Isolate),
        format!("Remapping Failure Occurred: {}", yes_no(failed)),
        "Yes: RMA once the field diagnostic confirms it",
        NVIDIA_RMA,
    ))
}

fn row_remap_uncorrectable(gpu: &MemoryErrors) -> Option<Finding> {
    let uncorrectable = gpu.remapped_rows.uncorrectable?;
    Some(Finding::judged(
        "row_remap_uncorrectable",
        when(uncorrectable >= MAX_UNCORRECTABLE_REMAPS, Verdict::Isolate),
        format!("{uncorrectable} rows remapped for uncorrectable errors"),
        ">= 512: the bank is out of spare rows",
        NVIDIA_RMA,
    ))
}

fn row_remap_pending(gpu: &MemoryErrors) -> Option<Finding> {
    let pending = gpu.remapped_rows.pending?;
    Some(Finding::judged(
        "row_remap_pending",
        when(pending, Verdict::Reset),
        format!("Remapped Rows Pending: {}", yes_no(pending)),
        "Yes: reset the GPU to apply the remap",
        NVIDIA_ROW_REMAP,
    ))
}

fn sram_threshold(gpu: &MemoryErrors) -> Option<Finding> {
    let exceeded = gpu.sram_threshold_exceeded?;
    Some(Finding::judged(
        "sram_threshold",
        when(exceeded, Verdict::Isolate),
        format!("SRAM Threshold Exceeded: {}", yes_no(exceeded)),
        "Yes: RMA",
        NVIDIA_RMA,
    ))
}

fn ecc_uncorrectable(gpu: &MemoryErrors) -> Option<Finding> {
    let uncorrectable = gpu.volatile.uncorrectable?;
    Some(Finding::judged(
        "ecc_uncorrectable",
        when(uncorrectable > 0, Verdict::Reset),
        format!("{uncorrectable} uncorrectable ECC errors since the driver loaded"),
        "> 0: reset the GPU",
        AWS_ECC,
    ))
}

fn retired_pages_dbe(gpu: &MemoryErrors) -> Option<Finding> {
    let dbe = gpu.retired_pages.double_bit?;
    Some(Finding::judged(
        "retired_pages_dbe",
        when(dbe > 0, Verdict::Isolate),
        format!("{dbe} pages retired for double bit errors"),
        "> 0: drain and replace",
        AWS_ECC,
    ))
}

/// A full retirement table (Azure's rule) outranks the pending page it comes with, so a GPU
/// gets one finding or the other.
fn retired_pages_table_or_pending(gpu: &MemoryErrors) -> Option<Finding> {
    let pages = &gpu.retired_pages;
    if let (Some(sbe), Some(dbe), Some(true)) = (pages.single_bit, pages.double_bit, pages.pending)
        && sbe + dbe >= PAGES_TABLE_FULL
    {
        return Some(Finding::judged(
            "retired_pages_table",
            Verdict::Isolate,
            format!("{} retired pages and one pending", sbe + dbe),
            ">= 62 with a page pending: the retirement table is full",
            AZURE_PAGES,
        ));
    }
    let pending = pages.pending?;
    Some(Finding::judged(
        "retired_pages_pending",
        when(pending, Verdict::Reboot),
        format!("Pending Page Blacklist: {}", yes_no(pending)),
        "Yes: reboot (the page is retired when the driver reloads)",
        AWS_ECC,
    ))
}

fn retired_pages_sbe(gpu: &MemoryErrors) -> Option<Finding> {
    let sbe = gpu.retired_pages.single_bit?;
    Some(Finding::judged(
        "retired_pages_sbe",
        when(sbe > SBE_PAGES_MONITOR, Verdict::Monitor),
        format!("{sbe} pages retired for single bit errors"),
        "> 60: nearing the limit of 64",
        AWS_ECC,
    ))
}

fn yes_no(value: bool) -> &'static str {
    if value { "Yes" } else { "No" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::nvidia_smi::{memory_errors, parse_query_text};
    use crate::gpu::test_fixtures::fixture;
    use crate::health::verdict::worst;

    fn verdicts(name: &str) -> Vec<Verdict> {
        let report = parse_query_text(&fixture(name)).unwrap();
        report
            .gpus
            .iter()
            .map(|g| worst(&memory_findings(&memory_errors(g))))
            .collect()
    }

    #[test]
    fn a_pending_row_remap_calls_for_a_reset() {
        let report = parse_query_text(&fixture(
            "nvidia_smi_q_a10_535_remapped_rows_pending_gpud.txt",
        ))
        .unwrap();
        let findings = memory_findings(&memory_errors(&report.gpus[0]));
        let pending = findings
            .iter()
            .find(|f| f.check == "row_remap_pending")
            .unwrap();
        assert_eq!(pending.verdict, Verdict::Reset);
        assert_eq!(pending.gpu.as_deref(), Some("00000000:07:00.0"));
        assert_eq!(worst(&findings), Verdict::Reset);
        // A GPU that retires no pages (N/A) is not judged on them.
        assert!(
            findings
                .iter()
                .all(|f| !f.check.starts_with("retired_pages"))
        );
    }

    #[test]
    fn healthy_real_gpus_are_healthy() {
        for name in [
            "nvidia_smi_q_h100_80gb_hbm3_590_idle_utkuozdemir.txt",
            "nvidia_smi_q_l40s_595_idle_utkuozdemir.txt",
            "nvidia_smi_q_titan_v_560_gpud.txt",
            "nvidia_smi_q_d_page_retirement_8gpu_535_azurehpc.txt",
        ] {
            assert!(
                verdicts(name).iter().all(|v| *v == Verdict::Healthy),
                "{name}"
            );
        }
    }

    #[test]
    fn retired_page_thresholds_on_the_edited_counters() {
        // Upstream edited these counters to test the same thresholds (SOURCES.md says so).
        let got =
            verdicts("nvidia_smi_q_d_page_retirement_8gpu_535_azurehpc_TEST_EDITED_faults.txt");
        use Verdict::{Healthy, Isolate, Reboot};
        // GPU 1: 5 DBE pages; 2: 2 + 61 pending (table full); 4: a page pending; 6, 8: DBE pages.
        assert_eq!(
            got,
            [
                Isolate, Isolate, Healthy, Reboot, Healthy, Isolate, Healthy, Isolate
            ]
        );
    }

    #[test]
    fn counters_map_to_their_actions() {
        let mut gpu = MemoryErrors::default();
        gpu.volatile.uncorrectable = Some(2);
        gpu.remapped_rows.failure = Some(true);
        let findings = memory_findings(&gpu);
        assert_eq!(worst(&findings), Verdict::Isolate);
        assert!(
            findings
                .iter()
                .any(|f| f.check == "ecc_uncorrectable" && f.verdict == Verdict::Reset)
        );
        let mut pages = MemoryErrors::default();
        pages.retired_pages.single_bit = Some(61);
        pages.retired_pages.double_bit = Some(0);
        pages.retired_pages.pending = Some(false);
        assert_eq!(worst(&memory_findings(&pages)), Verdict::Monitor);
        pages.retired_pages.pending = Some(true);
        assert_eq!(
            worst(&memory_findings(&pages)),
            Verdict::Reboot,
            "61 pages: not yet full"
        );
        pages.retired_pages.double_bit = Some(1);
        let findings = memory_findings(&pages);
        assert!(findings.iter().any(|f| f.check == "retired_pages_table"));
    }
}
