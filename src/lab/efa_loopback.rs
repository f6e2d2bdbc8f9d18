//! What one EFA device's own loopback measures (a `fi_pingpong` of 1 MiB messages, server and
//! client on the host, as aws-efa-installer's efa_test.sh runs it) on a healthy device of each
//! EFA instance type: the twin prints it, and a per-node check's floor derives from it.
//!
//! The one real loopback with a known line rate is a p4d.24xlarge's (4 devices of its 400
//! Gbps: 100 Gb/s each), tests/fixtures/real/efa_fi_pingpong_loopback_efa_test_p4d_fsdp_readme.txt:
//! 24.15 usec per transfer at 1 KiB (latency) and 401.10 at 1 MiB (2614.25 MB/sec). A transfer
//! is taken as that latency plus the bytes at the device's rate; a p5.48xlarge's devices have
//! the same 100 Gb/s (3200 Gbps over 32), so its figure is the p4d's. Other per-device rates
//! scale the rate part: an extrapolation, no loopback of theirs having been found.

use super::gpu_catalog;

/// Microseconds per transfer of a small message (the p4d loopback's 1 KiB row).
pub const LATENCY_US: f64 = 24.15;

/// Microseconds per transfer of 1 MiB on a 100 Gb/s device (the p4d loopback's 1 MiB row).
const ONE_MIB_US_AT_100_GBPS: f64 = 401.10;

const ONE_MIB: f64 = 1_048_576.0;

/// Gb/s of one EFA device of `instance_type`: its network performance over its EFA devices.
pub fn device_gbps(instance_type: &str) -> Option<f64> {
    let row = gpu_catalog::find(instance_type)?;
    // "3200 Gigabit", or "4x 100 Gigabit" (the p4d's four cards).
    let mut words = row.network_performance.split_whitespace();
    let first = words.next()?;
    let total: f64 = match first.strip_suffix('x') {
        Some(cards) => cards.parse::<f64>().ok()? * words.next()?.parse::<f64>().ok()?,
        None => first.parse().ok()?,
    };
    (row.efa_interfaces > 0).then(|| total / f64::from(row.efa_interfaces))
}

/// Microseconds per transfer of `bytes` on a device of `gbps` that sends at `share` of its rate.
pub fn usec_per_xfer(bytes: u64, gbps: f64, share: f64) -> f64 {
    let at_rate = (ONE_MIB_US_AT_100_GBPS - LATENCY_US) * (bytes as f64 / ONE_MIB) * (100.0 / gbps);
    LATENCY_US + at_rate / share.max(1e-3)
}

/// fi_pingpong's MB/sec for `bytes` at that pace: bytes per microsecond.
pub fn mb_per_sec(bytes: u64, gbps: f64, share: f64) -> f64 {
    bytes as f64 / usec_per_xfer(bytes, gbps, share)
}

/// A healthy device's 1 MiB loopback MB/sec on `instance_type`; `None` without EFA.
pub fn healthy_mb_per_sec(instance_type: &str) -> Option<f64> {
    Some(mb_per_sec(1 << 20, device_gbps(instance_type)?, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_p5_device_loops_back_as_the_p4d_one_and_a_slow_nic_in_proportion() {
        assert_eq!(device_gbps("p5.48xlarge"), Some(100.0));
        assert_eq!(device_gbps("p4d.24xlarge"), Some(100.0));
        let healthy = healthy_mb_per_sec("p5.48xlarge").unwrap();
        assert!((healthy - 2614.25).abs() < 0.01, "{healthy}");
        // Half the rate: the transfer part doubles, the latency stays.
        let slow = mb_per_sec(1 << 20, 100.0, 0.5);
        assert!((slow / healthy - 0.5155).abs() < 0.001, "{slow}");
        assert_eq!(healthy_mb_per_sec("g5.xlarge"), None);
    }
}
