//! libfabric's EFA tools in the twin's pods: `fi_info -p efa`, one device's three endpoints
//! each (libfabric 2.x: efa-direct RDM, efa RDM, efa DGRAM, version 201.0, as
//! tests/fixtures/real/efa_fi_info_p_efa_1dev_efa_direct_201.0_eks_pod.txt prints them) for
//! every EFA device the container sees, and one device's `fi_pingpong` loopback (the command
//! gpu/efa/loopback.rs writes) with the table util/pingpong.c prints, paced by
//! lab/efa_loopback.rs and slowed by the node's `nic-slow` share. `efa-down=NODE:COUNT` takes
//! the node's last COUNT devices away.

use std::time::Duration;

use serde_json::Value;

use super::efa;
use super::programs::{faults_of, node_name};
use crate::gpu::efa::loopback::{DEFAULT_ITERATIONS, DEFAULT_SIZES};
use crate::lab::efa_loopback;
use crate::sim::kube::programs::{Context, Output};
use crate::sim::kube::storage::state::KubeState;

/// The provider version libfabric 2.x's EFA provider prints (the real fixture above).
const VERSION: &str = "201.0";

/// The twin's name for a node's `index`-th EFA device, in the `rdmap<bus>s<slot>` pattern of
/// real ones (a p4d's: rdmap16s27, rdmap32s27, ...). No public listing of a p5's 32 devices
/// was found (tests/fixtures/real/SOURCES.md, section 6), so the bus numbers are the twin's.
fn device_name(index: u32) -> String {
    format!("rdmap{}s0", 16 + 7 * index)
}

/// The EFA devices a container on `node` sees: all of the node's for a privileged one (the
/// host's /dev/infiniband), else as many as it asked the device plugin for; the node's are
/// its type's less those `efa-down` took.
fn visible_devices(node: &Value, container: &Value, state: &KubeState) -> Vec<String> {
    let down = faults_of(state, node_name(node))
        .and_then(|f| f.efa_down)
        .unwrap_or(0);
    let present = efa::interfaces(node).saturating_sub(down);
    let seen = if container["securityContext"]["privileged"] == true {
        present
    } else {
        efa::requested(container).min(present)
    };
    (0..seen).map(device_name).collect()
}

fn answered(stdout: String, exit_code: i32, seconds: f64) -> Output {
    Output {
        stdout,
        stderr: String::new(),
        exit_code,
        duration: Some(Duration::from_secs_f64(seconds)),
    }
}

/// No EFA device to show: the words the p4d README (tests/fixtures/real/SOURCES.md, section 6)
/// gives for a host where fi_info finds none.
fn no_provider() -> Output {
    Output {
        stdout: String::new(),
        stderr: "fi_getinfo: -61\n".into(),
        exit_code: 1,
        duration: Some(Duration::ZERO),
    }
}

/// `fi_info -p efa`.
pub(super) fn fi_info(context: &Context<'_>, state: &KubeState) -> Output {
    let Some(node) = context.node else {
        return no_provider();
    };
    let devices = visible_devices(node, context.container, state);
    if devices.is_empty() {
        return no_provider();
    }
    let entry = |fabric: &str, domain: String, kind: &str| {
        format!(
            "provider: efa\n    fabric: {fabric}\n    domain: {domain}\n    version: {VERSION}\n    type: {kind}\n    protocol: FI_PROTO_EFA\n"
        )
    };
    let text: String = devices
        .iter()
        .map(|d| {
            [
                entry("efa-direct", format!("{d}-rdm"), "FI_EP_RDM"),
                entry("efa", format!("{d}-rdm"), "FI_EP_RDM"),
                entry("efa", format!("{d}-dgrm"), "FI_EP_DGRAM"),
            ]
            .concat()
        })
        .collect();
    answered(text, 0, 0.0)
}

/// util/pingpong.c's `size_str`: `1m`, `200m`, `1.2k`.
fn size_str(size: u64) -> String {
    let (base, mag) = match size {
        s if s >= 1 << 30 => (1u64 << 30, "g"),
        s if s >= 1 << 20 => (1 << 20, "m"),
        s if s >= 1 << 10 => (1 << 10, "k"),
        _ => (1, ""),
    };
    let fraction = if size / base < 10 {
        (size % base) * 10 / base
    } else {
        0
    };
    if fraction > 0 {
        format!("{}.{fraction}{mag}", size / base)
    } else {
        format!("{}{mag}", size / base)
    }
}

/// Microseconds per transfer of the first size, whose round trips carry the connection's
/// setup: the p4d loopback's 64-byte row (tests/fixtures/real/SOURCES.md, section 6).
const FIRST_SIZE_US: f64 = 1579.10;

/// The client's table of one loopback run at `share` of the device's rate, as `show_perf`
/// prints it (fi_pingpong's default sizes and round trips), and the seconds it took.
fn table(gbps: f64, share: f64) -> (String, f64) {
    let mut text = format!(
        "{:<8}{:<8}{:<9}{:<8}{:>8} {:>10}{:>13}{:>13}\n",
        "bytes", "#sent", "#ack", "total", "time", "MB/sec", "usec/xfer", "Mxfers/sec"
    );
    let sent = DEFAULT_ITERATIONS;
    let mut seconds = 0.0;
    for (i, &size) in DEFAULT_SIZES.iter().enumerate() {
        let usec = if i == 0 {
            FIRST_SIZE_US
        } else {
            efa_loopback::usec_per_xfer(size, gbps, share)
        };
        let elapsed_us = usec * sent as f64 * 2.0;
        let total = sent * size * 2;
        text.push_str(&format!(
            "{:<8}{:<8}={:<8}{:<8}{:>8.2}s{:>10.2}{:>11.2}{:>11.2}\n",
            size_str(size),
            sent,
            sent,
            size_str(total),
            elapsed_us / 1e6,
            total as f64 / elapsed_us,
            usec,
            1.0 / usec
        ));
        seconds += elapsed_us / 1e6;
    }
    (text, seconds)
}

/// One device's loopback: the client's table, or, for a device the container does not see,
/// the client's failure when its server could not open the device and closed the control
/// connection: `PP_ERR` in `pp_ctrl_recv`, ofiwg/libfabric@af8ddbe92f033b7deb9c4e4f47197d1fd4bcf150
/// util/pingpong.c line 571 (read from the source; no real capture of it was found).
pub(super) fn loopback(device: &str, context: &Context<'_>, state: &KubeState) -> Output {
    let Some(node) = context.node else {
        return no_provider();
    };
    if !visible_devices(node, context.container, state)
        .iter()
        .any(|d| d == device)
    {
        return Output {
            stdout: String::new(),
            stderr:
                "[error] util/pingpong.c:571 : ctrl/read: no data or remote connection closed\n"
                    .into(),
            exit_code: 1,
            duration: Some(Duration::from_millis(500)),
        };
    }
    let kind = super::programs::instance_type(node);
    let gbps = efa_loopback::device_gbps(kind).unwrap_or(100.0);
    let share = faults_of(state, node_name(node))
        .and_then(|f| f.nic_share)
        .unwrap_or(1.0);
    let (text, seconds) = table(gbps, share);
    // efa_test.sh's half-second head start for the server, then the run.
    answered(text, 0, 0.5 + seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::efa::pingpong::parse_pingpong;

    #[test]
    fn the_table_is_laid_out_as_show_perf_lays_it_out() {
        let (text, seconds) = table(100.0, 1.0);
        let real = crate::gpu::test_fixtures::fixture(
            "efa_fi_pingpong_loopback_efa_test_p4d_fsdp_readme.txt",
        );
        let real: Vec<&str> = real.lines().skip(2).collect();
        let twin: Vec<&str> = text.lines().collect();
        assert_eq!(twin.len(), real.len());
        // The header, the setup-laden first row and the 1 MiB row are the p4d's own.
        assert_eq!(twin[0], real[0]);
        assert_eq!(twin[1], real[1]);
        assert_eq!(twin[6], real[6]);
        assert!((seconds - 0.0416).abs() < 1e-3, "{seconds}");
        let parsed = parse_pingpong(&text).unwrap();
        assert_eq!(parsed.largest().unwrap().mb_per_sec, 2614.25);
        let slow = parse_pingpong(&table(100.0, 0.5).0).unwrap();
        assert_eq!(slow.largest().unwrap().mb_per_sec, 1347.70);
        assert_eq!(size_str(1280), "1.2k");
        assert_eq!(size_str(5 * 1024), "5k");
    }
}
