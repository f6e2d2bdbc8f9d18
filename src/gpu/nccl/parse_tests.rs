//! The nccl-tests log reader on real and hand-made logs.

use super::*;
use crate::gpu::nccl::model::ErrorColumn;
use crate::gpu::test_fixtures::fixture;

#[test]
fn superbench_a100x8_old_format() {
    let text = fixture("nccl_all_reduce_perf_a100x8_single_node_superbench.txt");
    let report = parse(&text);
    assert_eq!(report.status, Status::Ok, "{}", report.summary);
    assert!(report.ok);
    assert_eq!(report.avg_busbw, Some(68.4048));
    assert_eq!(
        (report.out_of_bounds, report.out_of_bounds_ok),
        (Some(0), Some(true))
    );
    assert_eq!(report.ranks.len(), 8);
    assert_eq!(
        report.ranks[7],
        Rank {
            rank: 7,
            group: None,
            pid: 112424,
            host: "localhost".into(),
            device: 7,
            bus_id: "0x00".into(),
            gpu: "A100-SXM4-40GB".into(),
        }
    );
    assert_eq!(report.devices, ["A100-SXM4-40GB"]);
    // The INFO line's "hostname" prefix does not count once ranks are listed.
    assert_eq!(report.hosts, ["localhost"]);
    assert_eq!(report.nranks, Some(8));
    assert_eq!(report.rows.len(), 34);
    let first = &report.rows[0];
    assert_eq!((first.size, first.count), (0, 0));
    assert_eq!(first.r#type, "float");
    assert_eq!(first.redop.as_deref(), Some("sum"));
    assert_eq!(first.root, None);
    assert_eq!(
        first.out_of_place,
        Perf {
            time_us: 35.20,
            algbw: 0.0,
            busbw: 0.0,
            wrong: None,
            max_error: None,
        }
    );
    let last = report.rows.last().unwrap();
    assert_eq!(last.size, 8_589_934_592);
    assert_eq!(last.out_of_place.busbw, 235.26);
    assert_eq!(last.in_place.time_us, 63959.0);
    assert_eq!(report.peak_busbw, Some(235.26));
    assert_eq!(
        (
            report.nccl_version.as_deref(),
            report.tests_version.as_deref()
        ),
        (None, None)
    );
    assert_eq!(report.collective, None);
    assert!(report.warnings.is_empty() && report.errors.is_empty());
    assert_eq!(
        report.summary,
        "ok: 8 ranks on 1 host, 8 GPUs (A100-SXM4-40GB), 33 sizes 0 B..8 GiB, avg busbw 68.40 GB/s"
    );
}

#[test]
fn l40s_x4_newest_format() {
    let text = fixture("nccl_all_reduce_perf_l40s_x4_single_node_nccltests2.17.9.txt");
    let report = parse(&text);
    assert_eq!(report.status, Status::Ok, "{}", report.summary);
    assert_eq!(report.tests_version.as_deref(), Some("2.17.9"));
    assert_eq!(report.nccl_version.as_deref(), Some("2.29.3"));
    assert_eq!(report.collective.as_deref(), Some("all_reduce_perf"));
    assert_eq!(report.ranks.len(), 4);
    assert_eq!(
        report.ranks[0],
        Rank {
            rank: 0,
            group: Some(0),
            pid: 15738,
            host: "ip-172-31-47-40".into(),
            device: 0,
            bus_id: "0000:38:00".into(),
            gpu: "NVIDIA L40S".into(),
        }
    );
    assert_eq!(report.ranks[3].bus_id, "0000:3e:00");
    assert_eq!(report.devices, ["NVIDIA L40S"]);
    assert_eq!(report.rows.len(), 25);
    let first = &report.rows[0];
    assert_eq!((first.size, first.root), (8, Some(-1)));
    assert_eq!(first.out_of_place.wrong, Some(0));
    let last = report.rows.last().unwrap();
    assert_eq!(last.size, 134_217_728);
    assert_eq!(last.out_of_place.time_us, 37188.0);
    assert_eq!(last.in_place.busbw, 5.44);
    assert_eq!(report.avg_busbw, Some(2.30498));
    assert_eq!(report.peak_busbw, Some(5.58));
    assert_eq!(
        report.summary,
        "ok: all_reduce_perf, 4 ranks on 1 host, 4 GPUs (NVIDIA L40S), 25 sizes 8 B..128 MiB, avg busbw 2.30 GB/s"
    );
}

#[test]
fn efa_2node_annotated_excerpt() {
    let text = fixture("nccl_all_reduce_perf_2node_x8_efa_annotated_excerpt.txt");
    let report = parse(&text);
    assert_eq!(report.status, Status::Ok, "{}", report.summary);
    assert_eq!(report.avg_busbw, Some(97.4466));
    assert_eq!(report.out_of_bounds_ok, Some(true));
    assert_eq!(report.collective.as_deref(), Some("all_reduce_perf"));
    // The excerpt cuts the header and rank list; the Destroy lines still give nranks.
    assert!(report.ranks.is_empty());
    assert_eq!(report.nranks, Some(16));
    assert_eq!(report.hosts, ["ip-10-3-67-21", "ip-10-3-70-232"]);
    assert_eq!(report.rows.len(), 28);
    assert!(
        report
            .rows
            .iter()
            .all(|r| r.root == Some(-1) && r.in_place.wrong == Some(0))
    );
    let last = report.rows.last().unwrap();
    assert_eq!(last.size, 1_073_741_824);
    assert_eq!(last.out_of_place.busbw, 514.40, "markdown bold stripped");
    assert_eq!(report.peak_busbw, Some(514.40));
    assert!(
        report.warnings.is_empty() && report.errors.is_empty(),
        "{:?}",
        report.errors
    );
    assert_eq!(
        report.summary,
        "ok: all_reduce_perf, 16 ranks on 2 hosts, 28 sizes 8 B..1 GiB, avg busbw 97.45 GB/s"
    );
}

const NEW_HEADER: &str = "\
# nccl-tests version 2.17.9 nccl-headers=22605 nccl-library=22903
# Collective test starting: all_reduce_perf
#  Rank  0 Group  0 Pid  15738 on node-a device  0 [0000:38:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  15739 on node-b device  0 [0000:38:00] NVIDIA H100 80GB HBM3
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
       8             2     float     sum      -1    42.76    0.00    0.00       0    42.18    0.00    0.00       0
";

#[test]
fn truncated_mid_table_is_incomplete() {
    let text = format!(
        "{NEW_HEADER}          16             4     float     sum      -1    42.14    0.00    0.00       0    42.18    0.\n"
    );
    let report = parse(&text);
    assert_eq!(report.status, Status::Incomplete);
    assert!(!report.ok);
    assert_eq!(report.rows.len(), 1, "the cut row is ignored");
    assert_eq!(report.nranks, Some(2));
    assert_eq!(
        report.summary,
        "incomplete: no '# Avg bus bandwidth' line, 2 ranks on 2 hosts, 1 result row, last size 8 B"
    );
}

#[test]
fn wrong_values_are_an_error() {
    let text = format!(
        "{NEW_HEADER}    16777216       4194304     float     sum      -1    188.1   89.21  167.26      3    187.1   89.69  168.16      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 12.5
"
    );
    let report = parse(&text);
    assert_eq!(report.status, Status::Error);
    assert!(!report.ok);
    assert_eq!(report.rows[1].out_of_place.wrong, Some(3));
    assert_eq!(
        report.summary,
        "error: 1 row with #wrong > 0 (first at 16 MiB), 2 ranks on 2 hosts, avg busbw 12.50 GB/s"
    );
}

#[test]
fn only_warn_lines_is_incomplete_with_warnings() {
    let text = "\
ip-192-168-12-10:123:456 [0] NCCL WARN socketProgressOpt: Call to connect returned Connection timed out, retrying
ip-192-168-12-10:123:456 [0] NCCL WARN socketProgressOpt: Call to connect returned Connection timed out, retrying
";
    let report = parse(text);
    assert_eq!(report.status, Status::Incomplete);
    assert_eq!(report.warnings.len(), 2);
    assert!(report.errors.is_empty());
    assert_eq!(report.hosts, ["ip-192-168-12-10"]);
    assert!(report.summary.starts_with(
        "incomplete: no '# Avg bus bandwidth' line, 1 host, no result rows, 2 NCCL WARN lines, last: ip-192-168-12-10:123:456 [0] NCCL WARN socketProgressOpt"
    ), "{}", report.summary);
}

#[test]
fn failure_lines_are_errors() {
    let text = format!(
        "{NEW_HEADER}node-a:15738:15738 [0] NCCL WARN Cuda failure 'out of memory'
node-a: Test NCCL failure common.cu:958 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '
 .. node-a pid 15738: Test failure common.cu:842
"
    );
    let report = parse(&text);
    assert_eq!(report.status, Status::Error);
    assert_eq!(report.warnings.len(), 1);
    assert_eq!(report.errors.len(), 2);
    assert!(
        report.summary.starts_with(
            "error: cause: node-a: Test NCCL failure common.cu:958 'unhandled cuda error"
        ),
        "{}",
        report.summary
    );
}

#[test]
fn out_of_bounds_failed_is_an_error() {
    let report = parse("# Out of bounds values : 5 FAILED\n# Avg bus bandwidth    : 1.0\n");
    assert_eq!(report.status, Status::Error);
    assert_eq!(
        (report.out_of_bounds, report.out_of_bounds_ok),
        (Some(5), Some(false))
    );
    assert!(
        report.summary.contains("out of bounds values: 5 FAILED"),
        "{}",
        report.summary
    );
}

#[test]
fn old_rootless_and_root_only_rows() {
    let report = parse(
        "          8             2   float    35.20    0.00    0.00    N/A    34.05    0.00    0.00    N/A\n\
         #       size         count    type    root     time   algbw   busbw  error     time   algbw   busbw  error\n\
                 8             2   float       0    35.20    0.00    0.00      0    34.05    0.00    0.00      0\n",
    );
    assert_eq!(report.rows.len(), 2);
    assert_eq!(
        (report.rows[0].redop.as_deref(), report.rows[0].root),
        (None, None)
    );
    assert_eq!(
        (report.rows[1].redop.as_deref(), report.rows[1].root),
        (None, Some(0))
    );
}

#[test]
fn nccl_versions_and_collective_from_command_line() {
    let report = parse(
        "$ mpirun -np 16 /opt/nccl-tests/build/all_gather_perf -b 8 -e 1G\n\
         node-a:1:1 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n",
    );
    assert_eq!(report.collective.as_deref(), Some("all_gather_perf"));
    assert_eq!(report.nccl_version.as_deref(), Some("2.18.5"));
    assert_eq!(version_from_code("2708").as_deref(), Some("2.7.8"));
    assert_eq!(version_from_code("22605").as_deref(), Some("2.26.5"));
    assert_eq!(version_from_code("x"), None);
}

#[test]
fn launcher_tags_are_dropped() {
    let report = parse(
        "[1,0]<stdout>:#  Rank  0 Group  0 Pid  1 on node-a device  0 [0x07] NVIDIA A100\n\
         [1,0]<stdout>:           8             2     float     sum      -1    42.76    0.00    0.00       0    42.18    0.00    0.00       0\n\
         0: # Avg bus bandwidth    : 0.5\n",
    );
    assert_eq!(report.ranks.len(), 1);
    assert_eq!(report.rows.len(), 1);
    assert_eq!(report.status, Status::Ok, "{}", report.summary);
}

#[test]
fn garbage_never_panics() {
    for text in [
        "",
        "...",
        "#",
        "# Rank",
        "#  Rank x [",
        "1 2 3 4 5 6 7 8 9 10 11",
        "**",
        "\u{feff}é\t#",
    ] {
        let report = parse(text);
        assert_eq!(report.status, Status::Incomplete, "{text:?}");
    }
}

#[test]
fn nccl_2_11_era_two_nodes_with_a_float_error_column() {
    let report = parse(&fixture(
        "nccl_all_reduce_perf_2_11_4_sci_error_a10g_2node_socket_debuginfo_awshpctutorials.txt",
    ));
    assert_eq!(report.rows.len(), 25, "{}", report.summary);
    assert_eq!(report.error_column, Some(ErrorColumn::MaxError));
    assert!(
        report
            .rows
            .iter()
            .all(|r| r.out_of_place.max_error == Some(0.0)
                && r.in_place.max_error == Some(0.0)
                && r.out_of_place.wrong.is_none())
    );
    assert_eq!(report.status, Status::Ok, "{}", report.summary);
    assert_eq!(report.nccl_version.as_deref(), Some("2.11.4"));
    assert_eq!(report.hosts, ["ip-10-0-139-244", "ip-10-0-142-242"]);
    assert_eq!(report.avg_busbw, Some(0.300212));
    assert!(report.peak_busbw.is_some());
}

#[test]
fn nccl_2_11_era_nonzero_deviation_still_passes_its_bounds_check() {
    let report = parse(&fixture(
        "nccl_all_reduce_perf_2_11_sci_error_2e-07_k80_x4_azureml.txt",
    ));
    assert_eq!(report.rows.len(), 7);
    assert_eq!(report.error_column, Some(ErrorColumn::MaxError));
    assert_eq!(report.rows[0].out_of_place.max_error, Some(2e-7));
    assert_eq!(report.devices, ["Tesla K80"]);
    assert_eq!(report.status, Status::Ok, "{}", report.summary);
    let one_gpu = parse(&fixture(
        "nccl_all_reduce_perf_2_11_sci_error_a10g_1gpu_awshpctutorials.txt",
    ));
    assert_eq!(one_gpu.error_column, Some(ErrorColumn::MaxError));
    assert!(!one_gpu.rows.is_empty());
}

#[test]
fn the_error_column_names_the_format_read() {
    let new = fixture("nccl_all_reduce_perf_l40s_x4_single_node_nccltests2.17.9.txt");
    assert_eq!(parse(&new).error_column, Some(ErrorColumn::WrongCount));
    let unchecked = fixture("nccl_all_reduce_perf_a100x8_single_node_superbench.txt");
    assert_eq!(
        parse(&unchecked).error_column,
        Some(ErrorColumn::NotChecked)
    );
    assert_eq!(parse("# nothing here\n").error_column, None);
}

#[test]
fn the_network_nccl_chose_is_read_from_its_using_network_line() {
    let text = fixture("nccl_all_reduce_perf_h200_1gpu_nccl_debug_info_nccltests2.19.6.txt");
    assert_eq!(parse(&text).network.as_deref(), Some("Socket"));
    // aws-ofi-nccl before 1.13 named its network "AWS Libfabric" (aws-samples/aws-efa-eks).
    let efa = "nccl-tests-efa-16-worker-0:25:25 [0] NCCL INFO Using network AWS Libfabric\n";
    assert_eq!(parse(efa).network.as_deref(), Some("AWS Libfabric"));
    assert_eq!(parse("# nccl-tests version 2.17.9\n").network, None);
}

#[test]
fn the_cause_nccl_tests_prints_is_the_summarys_not_the_line_it_stopped_at() {
    // nccl-tests' own message (src/common.cu) and the failure lines after it.
    let text = "# nThread 1 nGpus 2 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n\
Invalid number of GPUs: 2 requested but only 1 were found.\n\
Please check the number of processes and GPUs per process.\n \
.. vm pid 1328: Test failure common.cu:1454\n";
    let report = parse(text);
    assert_eq!(report.status, Status::Error);
    assert_eq!(
        report.causes,
        vec![
            "Invalid number of GPUs: 2 requested but only 1 were found.".to_string(),
            "Please check the number of processes and GPUs per process.".to_string(),
        ]
    );
    assert_eq!(report.errors.len(), 3, "{:?}", report.errors);
    assert!(
        report.summary.starts_with(
            "error: cause: Invalid number of GPUs: 2 requested but only 1 were found., 3 error"
        ),
        "{}",
        report.summary
    );
}

#[test]
fn a_failed_nccl_call_is_the_cause_on_a_real_h200() {
    let text =
        fixture("nccl_all_reduce_perf_h200_all_types_ops_invalid_argument_nccltests2.19.6.txt");
    let report = parse(&text);
    assert_eq!(report.status, Status::Error);
    assert_eq!(report.causes.len(), 1, "{:?}", report.causes);
    assert!(report.causes[0].contains("Test NCCL failure all_reduce.cu:507 'invalid argument"));
    assert!(
        report
            .summary
            .contains("cause: vm: Test NCCL failure all_reduce.cu:507"),
        "{}",
        report.summary
    );
}

#[test]
fn nccl_tests_json_report_reads_as_its_text_does_and_keeps_no_environment() {
    let text = fixture("nccl_all_reduce_perf_h200_1gpu_J_json_v3_nccltests2.19.6.json");
    let report = parse(&text);
    assert_eq!(report.status, Status::Ok, "{}", report.summary);
    assert_eq!(report.nccl_version.as_deref(), Some("2.28.3"));
    assert_eq!(report.collective.as_deref(), Some("all_reduce_perf"));
    assert_eq!(report.hosts, vec!["vm".to_string()]);
    assert_eq!(report.devices, vec!["NVIDIA H200".to_string()]);
    assert_eq!(report.nranks, Some(1));
    // -b 8 -e 64M -f 8: 8 B, 64 B, ... 16 MiB.
    let sizes: Vec<u64> = report.rows.iter().map(|r| r.size).collect();
    assert_eq!(
        sizes,
        vec![8, 64, 512, 4096, 32768, 262144, 2097152, 16777216]
    );
    assert_eq!(report.rows[0].root, Some(-1));
    assert_eq!(report.rows[0].out_of_place.wrong, Some(0));
    assert_eq!(report.avg_busbw, Some(0.0));
    assert_eq!(
        (report.out_of_bounds, report.out_of_bounds_ok),
        (Some(0), Some(true))
    );
    assert_eq!(report.error_column, Some(ErrorColumn::WrongCount));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let shown = serde_json::to_string(&report).expect("serializes");
    assert!(
        !shown.contains("CUDA_VERSION") && !shown.contains("NCCL_VERSION="),
        "the environment stays out: {shown}"
    );
}

#[test]
fn a_json_report_with_errors_and_wrong_values_is_an_error() {
    let text = r#"{"version": 3, "args": ["./build/all_reduce_perf"], "nccl_version": 22803,
        "config": {"validation": 1, "devices": [{"rank": 0, "group": 0, "pid": 1, "hostname": "a", "device": 0, "device_hex": "0000:00:06", "device_info": "NVIDIA H200"}]},
        "results": [{"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "    -1",
            "out_of_place": {"time": 5.0, "alg_bw": 0.1, "bus_bw": 0.1, "nwrong": 3.0},
            "in_place": {"time": 5.0, "alg_bw": 0.1, "bus_bw": 0.1, "nwrong": 0.0}}],
        "out_of_bounds": {"count": 1, "okay": "false"},
        "average_bus_bandwidth": {"bandwidth": 0.1, "okay": "false"},
        "errors": ["Test NCCL failure common.cu:1 'unhandled system error'"]}"#;
    let report = parse(text);
    assert_eq!(report.status, Status::Error);
    assert_eq!(report.out_of_bounds_ok, Some(false));
    assert_eq!(report.causes.len(), 1);
    assert!(
        report.summary.contains("1 row with #wrong > 0"),
        "{}",
        report.summary
    );
    // Text that only looks like JSON is still read as text.
    assert_eq!(parse("{ not json").status, Status::Incomplete);
}

#[test]
fn nccl_logs_without_the_word_nccl_are_nccls_own_lines() {
    // Before 2.3.5 NCCL wrote `INFO msg` / `WARN file:line msg` (NVIDIA/nccl@cdc36ae
    // src/core.h); prefixed lines without the word NCCL read the same way.
    let text = "INFO NET : Using interface eth0:10.0.0.1<0>\n\
WARN misc/ibvwrap.cu:61 Failed to open libibverbs.so[.1]\n\
node1:1234:1240 [0] INFO Using internal Network Socket\n\
node1:1234:1240 [0] misc/socket.cu:221 WARN Connect to 10.0.0.2<39413> failed : Connection refused\n\
node1:1234:1240 [0] misc/group.cu:351 NCCL WARN another\n";
    let report = parse(text);
    assert_eq!(report.warnings.len(), 3, "{:?}", report.warnings);
    assert!(
        report.errors.is_empty(),
        "log lines are not failures: {:?}",
        report.errors
    );
    assert_eq!(report.hosts, vec!["node1".to_string()]);
}

#[test]
fn the_ofi_plugins_release_and_a_forced_algorithm_are_read_from_the_info_lines() {
    // Lines as public p5 logs print them (NCCL 2.26.2 with aws-ofi-nccl 1.14.0; NCCL 2.28
    // acknowledging NCCL_ALGO, src/graph/tuning.cc), and a build from git.
    let log = "\
2: p5-dy-gpu-3:60823:61204 [2] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.14.0
2: p5-dy-gpu-3:60823:61204 [2] NCCL INFO NET/OFI Using Libfabric version 1.22
gpu-dev-7d5e8186:1795:1795 [0] NCCL INFO NCCL_ALGO set by environment to ring,tree
";
    let report = parse(log);
    assert_eq!(report.ofi_version.as_deref(), Some("1.14.0"));
    assert_eq!(report.algorithm.as_deref(), Some("ring,tree"));
    let git = parse("x:1:1 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl git-6e504db\n");
    assert_eq!(git.ofi_version.as_deref(), Some("git-6e504db"));
    // The real H200 run forced RING but logged only INIT and TUNING: NCCL did not say so, and
    // neither does the report; it used no plugin.
    let text = fixture("nccl_all_reduce_perf_h200_ring_debug_init_tuning_nccltests2.19.6.txt");
    let real = parse(&text);
    assert_eq!((real.ofi_version, real.algorithm), (None, None));
}

#[test]
fn a_hang_whose_only_clue_is_nccls_connect_retries_reports_them_as_its_cause() {
    // NCCL 2.7 (Oneflow-Inc/oneflow#3586): two INFO lines, then nothing.
    let report = parse(&fixture(
        "nccl_connect_retry_timed_out_2.7_oneflow3586_excerpt.txt",
    ));
    assert_eq!(report.status, Status::Incomplete);
    assert_eq!(
        report.causes,
        [
            "NCCL retried its connect to a peer 2 times ('Connection timed out'): packets to the peer are dropped; check the security groups, network ACLs and firewalls between the nodes"
        ]
    );
    assert!(
        report.summary.contains("cause: NCCL retried its connect"),
        "{}",
        report.summary
    );
    // The 2.24 form in a site's own prefix (NVIDIA/nccl#1618): the try count is read.
    let report = parse(&fixture(
        "nccl_connect_retry_2.24_format_nccl_pr1618_excerpt.txt",
    ));
    assert_eq!(
        report.causes[0],
        "NCCL retried its connect to a peer once ('Connection timed out', try 1 of 34): packets to the peer are dropped; check the security groups, network ACLs and firewalls between the nodes"
    );
}

#[test]
fn failed_connects_and_broken_connections_name_their_peer() {
    let report = parse(&fixture(
        "nccl_socket_start_connect_failed_2.18_nccltests166_excerpt.txt",
    ));
    assert_eq!(
        report.causes,
        [
            "NCCL could not connect to 10.0.0.2<45763> ('Software caused connection abort'): the network between the nodes refused the connection",
            "NCCL's connection to node1<57557> broke ('Connection closed by remote peer'): the peer's process exited or its network went away during the run",
        ]
    );
    let report = parse(&fixture(
        "nccl_socket_poll_connect_no_route_2.23_sglang3820_excerpt.txt",
    ));
    assert_eq!(
        report.causes,
        [
            "NCCL could not connect to 10.0.0.4<56849> ('No route to host'): there is no route to the peer; check the interface NCCL uses (NCCL_SOCKET_IFNAME) and the routes between the nodes"
        ]
    );
    let report = parse(&fixture(
        "nccl_recv_timed_out_2.12.12_horovod3611_excerpt.txt",
    ));
    assert_eq!(
        report.causes,
        [
            "NCCL's connection to 100.96.188.199<41468> broke ('Connection timed out'): packets to the peer are dropped; check the security groups, network ACLs and firewalls between the nodes"
        ]
    );
}
