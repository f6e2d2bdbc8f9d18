//! NCCL's own log as the twin writes it: UTC dates, the INFO prefix, the connect retries.

use super::super::model::two_nodes;
use super::*;

#[test]
fn dates_are_utc_civil() {
    assert_eq!(date_time(0), "1970-01-01 00:00:00");
    assert_eq!(date_time(1_767_225_600), "2026-01-01 00:00:00");
    assert_eq!(date_time(1_796_013_825), "2026-11-30 04:43:45");
}

#[test]
fn info_lines_have_the_real_prefix() {
    let run = two_nodes();
    let line = info(&run.ranks[1], 99, "Using network Socket");
    assert_eq!(
        line,
        "nccl-worker-1:38:99 [0] NCCL INFO Using network Socket\n"
    );
    let log = init_start(&run, &Ids::of(&run));
    assert!(
        log.contains("nccl-worker-0:41:41 [0] NCCL INFO Bootstrap: Using eth0:192.168.12.34<0>\n")
    );
    assert!(log.contains("NCCL INFO NCCL version 2.27.3+cuda12.9\n"));
    assert!(log.contains("busId 1e0 commId 0x"));
}

#[test]
fn retries_follow_the_connect_timeout() {
    let run = two_nodes();
    let connect = |target: &str| Connect {
        rank: &run.ranks[1],
        tid: 7,
        target: target.to_owned(),
        function: "socketPollConnect",
    };
    let (lines, exhausted) = connect_retries(&run, &connect("192.168.12.34<40000>"), 300);
    assert_eq!(lines.len(), 2);
    assert!(!exhausted);
    assert!(
        lines[1]
            .1
            .ends_with("retrying (2/34) after sleep for 200 msec\n")
    );
    let (lines, exhausted) = connect_retries(&run, &connect("x<1>"), 10_000);
    assert!(exhausted);
    assert_eq!(lines.len(), 35);
    let warn = &lines[34].1;
    assert!(warn.starts_with("\n[2026-"));
    assert!(
        warn.contains("] nccl-worker-1:38:7 [0] misc/socket.cc:577 NCCL WARN socketPollConnect")
    );
}
