//! The stdout of `all_reduce_perf`, `all_gather_perf` and `alltoall_perf` (nccl-tests 2.17.9,
//! as `mpirun` merges it): the header and device list, the result table, the summary, with
//! NCCL's own log where it falls. The three share common.cu's table; the collective names the
//! binary, the reduction op (`none` where there is none) and the sizes.

use std::fmt::Write as _;

use super::model::{
    Measurement, NCCL_TESTS_VERSION, NCCL_VERSION_CODE, NcclRun, Outcome, RankInfo, measure,
};
use super::nccl_log::{self, Connect, Ids};
use super::printf::{c_g, float_str};
use crate::lab::nccl_scale::Collective;

/// What the run printed, and how it ended: `None` while it still runs (a hang).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Transcript {
    pub(crate) stdout: String,
    pub(crate) exit_code: Option<i32>,
}

/// `#  Rank  0 Group  0 Pid     41 on nccl-worker-0 device  0 [0000:00:1e] NVIDIA A10G`
pub(crate) fn rank_info_line(rank: usize, info: &RankInfo) -> String {
    format!(
        "#  Rank {rank:>2} Group  0 Pid {:>6} on {:>10} device {:>2} [{:04x}:{:02x}:{:02x}] {}\n",
        info.pid,
        info.short_host(),
        info.device,
        info.pci_domain,
        info.pci_bus,
        info.pci_device,
        info.gpu_name
    )
}

/// The largest size that fits: nccl-tests keeps 1 GiB per 16 GiB (at most 4 GiB) plus 1 GiB,
/// and needs send, receive and expected buffers.
pub(crate) fn memory_max_bytes(global_mem: u64) -> u64 {
    const GIB: u64 = 1 << 30;
    let reserve = (global_mem.div_ceil(16 * GIB) * GIB).min(4 * GIB);
    global_mem.saturating_sub(reserve + GIB) / 3
}

fn header(run: &NcclRun, max_bytes: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# nccl-tests version {NCCL_TESTS_VERSION} nccl-headers={NCCL_VERSION_CODE} \
         nccl-library={NCCL_VERSION_CODE}"
    );
    let _ = writeln!(
        out,
        "# Collective test starting: {}",
        run.collective.program()
    );
    let (step, unit) = if run.step_factor > 1 {
        (run.step_factor, "factor")
    } else {
        (run.step_factor, "bytes")
    };
    let _ = writeln!(
        out,
        "# nThread 1 nGpus {} minBytes {} maxBytes {} step: {step}({unit}) warmup iters: {} \
         iters: {} agg iters: 1 validation: 1 graph: 0",
        run.gpus_per_process(),
        run.min_bytes,
        run.max_bytes,
        run.warmup_iters,
        run.iters
    );
    out.push_str("#\n# Using devices\n");
    for (rank, info) in run.ranks.iter().enumerate() {
        out.push_str(&rank_info_line(rank, info));
    }
    if max_bytes < run.max_bytes {
        let _ = writeln!(
            out,
            "#\n# Reducing maxBytes to {max_bytes} due to memory limitation"
        );
    }
    out
}

const TABLE_HEADER: &str = "\
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong 
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         
";

/// A message of this size reaches the memory a corrupted GPU gets wrong.
const CORRUPTED_FROM_BYTES: u64 = 1 << 20;

/// The `#wrong` of one size: elements that fail nccl-tests' check, summed over the ranks.
fn wrong_elements(run: &NcclRun, bytes: u64) -> u64 {
    if bytes < CORRUPTED_FROM_BYTES {
        return 0;
    }
    u64::from(run.corrupted_ranks) * run.ranks.len() as u64
}

/// One size's line: common.cu's `%12li  %12li  %8s  %6s  %6i` (size, count, type, op, root),
/// then each side's time, algbw, busbw and `#wrong`, or `N/A` where the side is not checked.
fn row(run: &NcclRun, m: &Measurement, wrong: [Option<u64>; 2]) -> String {
    // all_gather.cu and alltoall.cu run their test with the op "none" (nothing is reduced).
    let op = if run.collective.reduces() {
        "sum"
    } else {
        "none"
    };
    let mut line = format!(
        "{:>12}  {:>12}  {:>8}  {op:>6}  {:>6}",
        m.bytes, m.count, "float", -1
    );
    for ((time, algbw, busbw), wrong) in [m.out_of_place, m.in_place].into_iter().zip(wrong) {
        let wrong = wrong.map_or_else(|| "N/A".to_string(), |w| w.to_string());
        let _ = write!(
            line,
            "  {}  {}  {}  {wrong:>6}",
            float_str(time, 7),
            float_str(algbw, 6),
            float_str(busbw, 6),
        );
    }
    line.push('\n');
    line
}

/// The whole run.
pub(crate) fn run(run: &NcclRun) -> Transcript {
    let ids = Ids::of(run);
    let max_bytes = run.max_bytes.min(memory_max_bytes(run.global_mem_bytes()));
    let mut out = header(run, max_bytes);
    out.push_str(&nccl_log::init_start(run, &ids));
    if let Outcome::Hang {
        unreachable_peer_ip,
        waited_s,
    } = &run.outcome
    {
        let exit_code = hang(run, &ids, unreachable_peer_ip, *waited_s, &mut out);
        return Transcript {
            stdout: out,
            exit_code,
        };
    }
    out.push_str(&nccl_log::init_complete(run, &ids));
    out.push_str(TABLE_HEADER);
    out.push_str(&nccl_log::connect(run, &ids));
    if let Outcome::EfaUnreachable { host_id, .. } = &run.outcome {
        out.push_str(&efa_unreachable_end(run, &ids, host_id));
        return Transcript {
            stdout: out,
            exit_code: Some(3),
        };
    }
    let measured = measure(run, max_bytes);
    let mut busbw_sum = 0.0;
    // nccl-tests counts a side of a size with any wrong element as one error.
    let mut errors = 0;
    // alltoall.cu checks no in-place result ("We don't support in-place alltoall").
    let in_place_checked = run.collective != Collective::AllToAll;
    for m in &measured {
        let wrong = wrong_elements(run, m.bytes);
        let in_place = in_place_checked.then_some(wrong);
        out.push_str(&row(run, m, [Some(wrong), in_place]));
        busbw_sum += m.out_of_place.2 + m.in_place.2;
        if wrong > 0 {
            errors += 1 + usize::from(in_place_checked);
        }
    }
    let first_process = |r: &usize| {
        let (a, b) = (&run.ranks[*r], &run.ranks[0]);
        a.host == b.host && a.pid == b.pid
    };
    let all = 0..run.ranks.len();
    out.push_str(&nccl_log::destroy(
        run,
        &ids,
        all.clone().filter(first_process),
    ));
    let average = if measured.is_empty() {
        0.0
    } else {
        busbw_sum / (2 * measured.len()) as f64
    };
    let _ = writeln!(
        out,
        "# {:<20} : {errors} {}",
        "Out of bounds values",
        if errors > 0 { "FAILED" } else { "OK" }
    );
    let _ = writeln!(out, "# {:<20} : {} ", "Avg bus bandwidth", c_g(average));
    let _ = write!(
        out,
        "#\n# Collective test concluded: {}\n#\n\n",
        run.collective.program()
    );
    out.push_str(&nccl_log::destroy(
        run,
        &ids,
        all.filter(|r| !first_process(r)),
    ));
    Transcript {
        stdout: out,
        // exit(EXIT_FAILURE) when any value was out of bounds.
        exit_code: Some(i32::from(errors > 0)),
    }
}

/// How long the first collective waits on an EFA peer that never completes the handshake
/// before aws-ofi-nccl gives up (reporters describe minutes: aws/aws-ofi-nccl#663).
pub(crate) const EFA_HANDSHAKE_GIVES_UP_S: u64 = 300;

/// What follows the connect lines when the security groups drop EFA's traffic: after
/// [`EFA_HANDSHAKE_GIVES_UP_S`], the plugin's warning, then nccl-tests' failure (exit 3).
pub(crate) fn efa_unreachable_end(run: &NcclRun, ids: &Ids, host_id: &str) -> String {
    let at = run.started_unix_s + EFA_HANDSHAKE_GIVES_UP_S as i64;
    let (mut out, message) = nccl_log::efa_handshake_failed(run, ids, host_id, at);
    if let Some(rank) = run.ranks.first() {
        let host = rank.short_host();
        let _ = writeln!(
            out,
            "{host}: Test NCCL failure common.cu:209 'remote process exited or there was a \
             network error / {message}'"
        );
        let _ = writeln!(
            out,
            " .. {host} pid {}: Test failure common.cu:1357",
            rank.pid
        );
        let _ = writeln!(
            out,
            " .. {host} pid {}: Test failure common.cu:1189",
            rank.pid
        );
    }
    out
}

/// The bootstrap never completes: the ranks that cannot reach `peer_ip` retry their connect.
/// Returns the exit code once a rank gives up (3, nccl-tests' NCCL error), `None` while it hangs.
fn hang(run: &NcclRun, ids: &Ids, peer_ip: &str, waited_s: u64, out: &mut String) -> Option<i32> {
    let root = run.ranks.first()?;
    // Unreachable root: every rank elsewhere fails to check in with it (an abortable, polled
    // socket). Any other peer: the root's thread (a blocking socket) fails to hand that rank
    // its ring neighbour, and everyone waits.
    let connects: Vec<Connect<'_>> = if root.ip == peer_ip {
        let target = format!("{peer_ip}<{}>", ids.root_port);
        (0..run.ranks.len())
            .filter(|&r| run.ranks[r].ip != peer_ip)
            .map(|r| Connect {
                rank: &run.ranks[r],
                tid: ids.init_tid[r],
                target: target.clone(),
                function: "socketPollConnect",
            })
            .collect()
    } else {
        let port = run
            .ranks
            .iter()
            .position(|r| r.ip == peer_ip)
            .map_or(ids.root_port + 1, |r| ids.listen_port[r]);
        vec![Connect {
            rank: root,
            tid: ids.root_tid,
            target: format!("{peer_ip}<{port}>"),
            function: "socketStartConnect",
        }]
    };
    let mut timeline: Vec<(f64, usize, String)> = Vec::new();
    let mut failed = Vec::new();
    for (order, connect) in connects.iter().enumerate() {
        let (lines, exhausted) = nccl_log::connect_retries(run, connect, waited_s);
        timeline.extend(lines.into_iter().map(|(at, line)| (at, order, line)));
        if exhausted && root.ip == peer_ip {
            failed.push(connect);
        }
    }
    timeline.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    for (_, _, line) in timeline {
        out.push_str(&line);
    }
    if failed.is_empty() {
        return None;
    }
    for connect in failed {
        let rank = connect.rank;
        let host = rank.short_host();
        let _ = writeln!(
            out,
            "{host}: Test NCCL failure common.cu:209 'remote process exited or there was a \
             network error / {}'",
            nccl_log::retry_exhausted(connect.function, &connect.target)
        );
        let _ = writeln!(
            out,
            " .. {host} pid {}: Test failure common.cu:1357",
            rank.pid
        );
        let _ = writeln!(
            out,
            " .. {host} pid {}: Test failure common.cu:1189",
            rank.pid
        );
    }
    Some(3)
}

#[cfg(test)]
mod tests {
    use super::super::super::test_support::fixture;
    use super::super::model::{NcclDebug, two_nodes};
    use super::*;

    fn columns(line: &str) -> Vec<usize> {
        // The end of each field: where a non-space is followed by a space or the line's end.
        let bytes = line.as_bytes();
        (0..bytes.len())
            .filter(|&i| bytes[i] != b' ' && bytes.get(i + 1).is_none_or(|b| *b == b' '))
            .collect()
    }

    #[test]
    fn rows_have_the_fixture_columns() {
        let real = fixture("nccl_all_reduce_perf_l40s_x4_single_node_nccltests2.17.9.txt");
        let real_rows: Vec<&str> = real
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .collect();
        let ours = run(&two_nodes()).stdout;
        let our_rows: Vec<&str> = ours
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .collect();
        assert_eq!(our_rows.len(), real_rows.len());
        for (a, b) in our_rows.iter().zip(&real_rows) {
            assert_eq!(columns(a), columns(b), "\n{a}\n{b}");
        }
        for header in real
            .lines()
            .filter(|l| l.starts_with("#  ") || l.starts_with("#   "))
        {
            if header.contains("size") || header.contains("(B)") || header.contains("out-of-place")
            {
                assert!(ours.contains(&format!("{header}\n")), "{header:?}");
            }
        }
    }

    #[test]
    fn the_fixture_header_is_reproduced() {
        let real = fixture("nccl_all_reduce_perf_l40s_x4_single_node_nccltests2.17.9.txt");
        let ranks = (0..4)
            .map(|d| RankInfo {
                host: "ip-172-31-47-40".to_owned(),
                ip: "172.31.47.40".to_owned(),
                pid: 15738,
                device: d,
                pci_domain: 0,
                pci_bus: 0x38 + 2 * d,
                pci_device: 0,
                gpu_name: "NVIDIA L40S".to_owned(),
                global_mem_bytes: (46068 - 609) << 20,
            })
            .collect();
        let mut l40s = NcclRun::new(ranks, 0);
        l40s.warmup_iters = 1;
        l40s.debug = NcclDebug::Off;
        let ours = run(&l40s).stdout.replace(
            "nccl-headers=22703 nccl-library=22703",
            "nccl-headers=22605 nccl-library=22903",
        );
        let head: String = real.lines().take(13).map(|l| format!("{l}\n")).collect();
        assert!(ours.starts_with(&head), "{ours}");
        let tail: String = real
            .lines()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .map(|l| format!("{l}\n"))
            .collect();
        let ours_tail = ours.trim_end_matches('\n').to_owned() + "\n";
        let strip = |t: &str| {
            t.lines()
                .filter(|l| !l.contains("Avg bus"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert!(strip(&ours_tail).ends_with(&strip(&tail)), "{ours_tail}");
    }

    #[test]
    fn ok_run_is_complete_and_ordered() {
        let out = run(&two_nodes());
        assert_eq!(out.exit_code, Some(0));
        let text = out.stdout;
        let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("no {needle}"));
        assert!(at("# Using devices") < at("NCCL INFO Bootstrap: Using eth0:192.168.12.34<0>"));
        assert!(at("Init COMPLETE") < at("#       size"));
        assert!(at("#       size") < at("[send] via NET/Socket/0"));
        assert!(at("Connected all rings") < at("           8             2"));
        assert!(at("Destroy COMPLETE") < at("# Out of bounds values : 0 OK"));
        assert!(text.contains("# Avg bus bandwidth    : "));
        assert!(text.ends_with(" - Destroy COMPLETE\n"));
        assert!(text.contains("#\n# Collective test concluded: all_reduce_perf\n#\n\n"));
    }

    #[test]
    fn all_gather_and_alltoall_print_their_binary_no_op_and_parse_back() {
        for collective in [Collective::AllGather, Collective::AllToAll] {
            let mut nccl = two_nodes();
            nccl.collective = collective;
            let text = run(&nccl).stdout;
            let program = collective.program();
            assert!(text.contains(&format!("# Collective test starting: {program}\n")));
            assert!(text.contains(&format!("# Collective test concluded: {program}\n")));
            // 16 bytes over two ranks: 2 floats each, under a 16-byte unit, so none.
            assert!(text.contains("\n           0             0     float    none      -1 "));
            let row = text
                .lines()
                .find(|l| l.starts_with("     1048576"))
                .unwrap();
            assert_eq!(
                row.ends_with("N/A"),
                collective == Collective::AllToAll,
                "{row}"
            );
            let report = crate::gpu::nccl::parse(&text);
            assert!(report.ok, "{}", report.summary);
            assert_eq!(report.collective.as_deref(), Some(program));
        }
    }

    #[test]
    fn hang_retries_and_never_summarises() {
        let mut hung = two_nodes();
        hung.outcome = Outcome::Hang {
            unreachable_peer_ip: "192.168.12.34".to_owned(),
            waited_s: 600,
        };
        let out = run(&hung);
        assert_eq!(out.exit_code, None);
        assert!(!out.stdout.contains("# Avg bus bandwidth"));
        assert!(!out.stdout.contains("#       size"));
        let retries = out
            .stdout
            .matches("returned Connection timed out, retrying")
            .count();
        assert_eq!(retries, 4);
        assert!(out.stdout.contains("nccl-worker-1:38:"));
        assert!(
            !out.stdout.contains("RAS client"),
            "RAS starts after the bootstrap"
        );

        hung.outcome = Outcome::Hang {
            unreachable_peer_ip: "192.168.12.34".to_owned(),
            waited_s: 5 * 3600,
        };
        let out = run(&hung);
        assert_eq!(out.exit_code, Some(3));
        assert!(
            out.stdout
                .contains("NCCL WARN socketPollConnect: connect to 192.168.12.34<")
        );
        assert!(
            out.stdout
                .contains("nccl-worker-1: Test NCCL failure common.cu:209 'remote process exited")
        );
        assert!(!out.stdout.contains("# Avg bus bandwidth"));
    }

    #[test]
    fn hang_on_a_worker_keeps_waiting_after_the_warning() {
        let mut hung = two_nodes();
        hung.outcome = Outcome::Hang {
            unreachable_peer_ip: "192.168.40.7".to_owned(),
            waited_s: 5 * 3600,
        };
        let out = run(&hung);
        assert_eq!(out.exit_code, None);
        assert!(out.stdout.contains("nccl-worker-0:41:"));
        assert!(
            out.stdout
                .contains("NCCL WARN socketStartConnect: connect to 192.168.40.7<")
        );
        assert!(!out.stdout.contains("Test NCCL failure"));
    }

    #[test]
    fn large_max_bytes_is_reduced_like_nccl_tests() {
        let mut big = two_nodes();
        big.max_bytes = 16 << 30;
        big.debug = NcclDebug::Off;
        let out = run(&big).stdout;
        let limit = memory_max_bytes((23028 - 435) << 20);
        assert!(out.contains(&format!(
            "#\n# Reducing maxBytes to {limit} due to memory limitation\n"
        )));
        assert!(out.contains(&format!("maxBytes {}", 16u64 << 30)));
    }

    #[test]
    fn same_run_same_bytes() {
        let mut a = two_nodes();
        assert_eq!(run(&a), run(&a));
        a.outcome = Outcome::Hang {
            unreachable_peer_ip: "192.168.40.7".to_owned(),
            waited_s: 900,
        };
        assert_eq!(run(&a), run(&a));
    }

    /// Two p5 hosts' first GPUs, EFA between them: the lines aws-ofi-nccl prints, read back.
    fn over_efa() -> NcclRun {
        use super::super::model::{LocalPath, Network};
        let mut run = two_nodes();
        run.network = Network::Efa {
            nics: 32,
            instance_type: "p5.48xlarge".to_owned(),
        };
        run.local = LocalPath::NvLink;
        run.aws_ofi_nccl = true;
        run
    }

    #[test]
    fn efa_runs_say_libfabric_and_a_blocked_one_fails_with_the_plugins_error() {
        let efa = run(&over_efa()).stdout;
        assert!(efa.contains("NCCL INFO NET/OFI Selected Provider is efa (found 32 nics)\n"));
        assert!(efa.contains("[send] via NET/Libfabric/0/GDRDMA\n"), "{efa}");
        let parsed = crate::gpu::nccl::parse::parse(&efa);
        assert_eq!(parsed.network.as_deref(), Some("Libfabric"));
        assert!(parsed.ok, "{}", parsed.summary);
        let mut blocked = over_efa();
        blocked.outcome = Outcome::EfaUnreachable {
            peer_ip: "192.168.40.7".to_owned(),
            host_id: "i-0123456789abcdef0".to_owned(),
        };
        let transcript = run(&blocked);
        assert_eq!(transcript.exit_code, Some(3));
        let parsed = crate::gpu::nccl::parse::parse(&transcript.stdout);
        assert!(!parsed.ok);
        assert!(parsed.rows.is_empty());
        assert!(
            parsed
                .warnings
                .iter()
                .any(|w| w.contains("Error: 4126 (Unresponsive receiver")
                    && w.contains("My host id: i-0123456789abcdef0")),
            "{:?}",
            parsed.warnings
        );
        // A pod given no EFA device on an EFA type: the plugin finds none, NCCL uses sockets.
        let mut fallback = two_nodes();
        fallback.aws_ofi_nccl = true;
        let out = run(&fallback).stdout;
        assert!(out.contains("NET/OFI No eligible providers were found\n"));
        assert!(out.contains("Failed to initialize NET plugin Libfabric\n"));
        assert_eq!(
            crate::gpu::nccl::parse::parse(&out).network.as_deref(),
            Some("Socket")
        );
    }
}
