//! DCGM's failure reasons (`DCGM_FR_*`): the `error_id` a `dcgmi diag -j` warning carries, its
//! name, and the severity DCGM itself gives it. Copied in order from NVIDIA/DCGM
//! `dcgmlib/src/dcgm_errors.c` @28bfbd4c97413d4aec249cdd9543a67d24f95b78, whose
//! `dcgmErrorMeta` array is indexed by the code (`dcgmErrorMeta[code].severity`).

/// What DCGM says to do about a failure reason: `DCGM_ERROR_MONITOR` or `DCGM_ERROR_ISOLATE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DcgmSeverity {
    Monitor,
    Isolate,
}

use DcgmSeverity::{Isolate, Monitor};

const REASONS: &[(&str, DcgmSeverity)] = &[
    ("DCGM_FR_OK", Monitor),
    ("DCGM_FR_UNKNOWN", Monitor),
    ("DCGM_FR_UNRECOGNIZED", Monitor),
    ("DCGM_FR_PCI_REPLAY_RATE", Isolate),
    ("DCGM_FR_VOLATILE_DBE_DETECTED", Isolate),
    ("DCGM_FR_VOLATILE_SBE_DETECTED", Monitor),
    ("DCGM_FR_PENDING_PAGE_RETIREMENTS", Monitor),
    ("DCGM_FR_RETIRED_PAGES_LIMIT", Isolate),
    ("DCGM_FR_RETIRED_PAGES_DBE_LIMIT", Isolate),
    ("DCGM_FR_CORRUPT_INFOROM", Monitor),
    ("DCGM_FR_CLOCK_THROTTLE_THERMAL", Monitor),
    ("DCGM_FR_POWER_UNREADABLE", Monitor),
    ("DCGM_FR_CLOCK_THROTTLE_POWER", Monitor),
    ("DCGM_FR_NVLINK_ERROR_THRESHOLD", Isolate),
    ("DCGM_FR_NVLINK_DOWN", Isolate),
    ("DCGM_FR_NVSWITCH_FATAL_ERROR", Isolate),
    ("DCGM_FR_NVSWITCH_NON_FATAL_ERROR", Monitor),
    ("DCGM_FR_NVSWITCH_DOWN", Monitor),
    ("DCGM_FR_NO_ACCESS_TO_FILE", Monitor),
    ("DCGM_FR_NVML_API", Monitor),
    ("DCGM_FR_DEVICE_COUNT_MISMATCH", Monitor),
    ("DCGM_FR_BAD_PARAMETER", Monitor),
    ("DCGM_FR_CANNOT_OPEN_LIB", Monitor),
    ("DCGM_FR_BLACKLISTED_DRIVER", Isolate),
    ("DCGM_FR_NVML_LIB_BAD", Isolate),
    ("DCGM_FR_GRAPHICS_PROCESSES", Isolate),
    ("DCGM_FR_HOSTENGINE_CONN", Monitor),
    ("DCGM_FR_FIELD_QUERY", Monitor),
    ("DCGM_FR_BAD_CUDA_ENV", Isolate),
    ("DCGM_FR_PERSISTENCE_MODE", Isolate),
    ("DCGM_FR_LOW_BANDWIDTH", Monitor),
    ("DCGM_FR_HIGH_LATENCY", Monitor),
    ("DCGM_FR_CANNOT_GET_FIELD_TAG", Monitor),
    ("DCGM_FR_FIELD_VIOLATION", Monitor),
    ("DCGM_FR_FIELD_THRESHOLD", Monitor),
    ("DCGM_FR_FIELD_VIOLATION_DBL", Monitor),
    ("DCGM_FR_FIELD_THRESHOLD_DBL", Monitor),
    ("DCGM_FR_UNSUPPORTED_FIELD_TYPE", Monitor),
    ("DCGM_FR_FIELD_THRESHOLD_TS", Monitor),
    ("DCGM_FR_FIELD_THRESHOLD_TS_DBL", Monitor),
    ("DCGM_FR_THERMAL_VIOLATIONS", Monitor),
    ("DCGM_FR_THERMAL_VIOLATIONS_TS", Monitor),
    ("DCGM_FR_TEMP_VIOLATION", Isolate),
    ("DCGM_FR_THROTTLING_VIOLATION", Monitor),
    ("DCGM_FR_INTERNAL", Monitor),
    ("DCGM_FR_PCIE_GENERATION", Monitor),
    ("DCGM_FR_PCIE_WIDTH", Monitor),
    ("DCGM_FR_ABORTED", Monitor),
    ("DCGM_FR_TEST_DISABLED", Monitor),
    ("DCGM_FR_CANNOT_GET_STAT", Monitor),
    ("DCGM_FR_STRESS_LEVEL", Monitor),
    ("DCGM_FR_CUDA_API", Monitor),
    ("DCGM_FR_FAULTY_MEMORY", Isolate),
    ("DCGM_FR_CANNOT_SET_WATCHES", Monitor),
    ("DCGM_FR_CUDA_UNBOUND", Monitor),
    ("DCGM_FR_ECC_DISABLED", Isolate),
    ("DCGM_FR_MEMORY_ALLOC", Monitor),
    ("DCGM_FR_CUDA_DBE", Isolate),
    ("DCGM_FR_MEMORY_MISMATCH", Isolate),
    ("DCGM_FR_CUDA_DEVICE", Monitor),
    ("DCGM_FR_ECC_UNSUPPORTED", Monitor),
    ("DCGM_FR_ECC_PENDING", Monitor),
    ("DCGM_FR_MEMORY_BANDWIDTH", Monitor),
    ("DCGM_FR_TARGET_POWER", Monitor),
    ("DCGM_FR_API_FAIL", Monitor),
    ("DCGM_FR_API_FAIL_GPU", Monitor),
    ("DCGM_FR_CUDA_CONTEXT", Monitor),
    ("DCGM_FR_DCGM_API", Monitor),
    ("DCGM_FR_CONCURRENT_GPUS", Monitor),
    ("DCGM_FR_TOO_MANY_ERRORS", Monitor),
    ("DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD", Isolate),
    ("DCGM_FR_NVLINK_ERROR_CRITICAL", Isolate),
    ("DCGM_FR_ENFORCED_POWER_LIMIT", Monitor),
    ("DCGM_FR_MEMORY_ALLOC_HOST", Monitor),
    ("DCGM_FR_GPU_OP_MODE", Monitor),
    ("DCGM_FR_NO_MEMORY_CLOCKS", Monitor),
    ("DCGM_FR_NO_GRAPHICS_CLOCKS", Monitor),
    ("DCGM_FR_HAD_TO_RESTORE_STATE", Monitor),
    ("DCGM_FR_L1TAG_UNSUPPORTED", Monitor),
    ("DCGM_FR_L1TAG_MISCOMPARE", Isolate),
    ("DCGM_FR_ROW_REMAP_FAILURE", Isolate),
    ("DCGM_FR_UNCONTAINED_ERROR", Isolate),
    ("DCGM_FR_EMPTY_GPU_LIST", Isolate),
    ("DCGM_FR_DBE_PENDING_PAGE_RETIREMENTS", Isolate),
    ("DCGM_FR_UNCORRECTABLE_ROW_REMAP", Isolate),
    ("DCGM_FR_PENDING_ROW_REMAP", Isolate),
    ("DCGM_FR_BROKEN_P2P_MEMORY_DEVICE", Isolate),
    ("DCGM_FR_BROKEN_P2P_WRITER_DEVICE", Isolate),
];

/// The name and DCGM's severity of an `error_id`; `None` for codes newer than the table.
pub fn failure_reason(error_id: u32) -> Option<(&'static str, DcgmSeverity)> {
    REASONS.get(usize::try_from(error_id).ok()?).copied()
}

/// The code of a `DCGM_FR_*` name (the twin writes warnings by name).
pub fn failure_code(name: &str) -> Option<u32> {
    REASONS
        .iter()
        .position(|(n, _)| *n == name)
        .and_then(|at| u32::try_from(at).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_header_order() {
        // error_id 29 in a real DCGM 4.5.2 warning is "Persistence Mode: ... is disabled".
        assert_eq!(
            failure_reason(29),
            Some(("DCGM_FR_PERSISTENCE_MODE", Isolate))
        );
        assert_eq!(failure_reason(0), Some(("DCGM_FR_OK", Monitor)));
        assert_eq!(failure_code("DCGM_FR_PENDING_ROW_REMAP"), Some(85));
        assert_eq!(failure_reason(10_000), None);
    }
}
