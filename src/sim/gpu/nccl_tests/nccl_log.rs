//! What NCCL 2.27 itself writes to stdout during a run (`NCCL_DEBUG`): the init log of the
//! socket transport or of aws-ofi-nccl's Libfabric plugin over EFA, channel setup, teardown,
//! the connect retries and warning of a peer that never answers, and the completion error of
//! an EFA peer the security groups cut off.

use std::fmt::Write as _;

use super::super::gpu_model::SeedStream;
use super::model::{
    CUDA_DRIVER_VERSION, LocalPath, NCCL_VERSION, NcclDebug, NcclRun, Network, RankInfo,
};

/// The aws-ofi-nccl release and Libfabric version the twin's EFA lines name (those of the AWS
/// Deep Learning AMI guide's p4d log: "NET/OFI Initializing aws-ofi-nccl 1.13.2-aws").
pub(crate) const OFI_NCCL_VERSION: &str = "1.13.2-aws";
const LIBFABRIC_VERSION: &str = "1.22";
/// The CUDA runtime NCCL 2.27.3+cuda12.9 was built with.
const CUDA_RUNTIME_VERSION: u32 = 12090;

/// What the network plugin and NCCL log while picking the transport between nodes, as
/// aws-ofi-nccl (< 1.15) and NCCL 2.27 word it: EFA found, or (when the pod was given no EFA
/// device) the plugin finding no provider and NCCL falling back to its sockets.
fn network_lines(run: &NcclRun, rank: &RankInfo) -> Vec<String> {
    let ofi_preamble = || {
        vec![
            format!("NET/OFI Initializing aws-ofi-nccl {OFI_NCCL_VERSION}"),
            format!("NET/OFI Using Libfabric version {LIBFABRIC_VERSION}"),
            format!(
                "NET/OFI Using CUDA driver version {CUDA_DRIVER_VERSION} with runtime {CUDA_RUNTIME_VERSION}"
            ),
            "NET/OFI Configuring AWS-specific options".to_owned(),
            "NET/OFI Setting provider_filter to efa".to_owned(),
            "NET/OFI Setting FI_EFA_FORK_SAFE environment variable to 1".to_owned(),
        ]
    };
    let sockets = |mut lines: Vec<String>| {
        lines.extend([
            "NET/IB : No device found.".to_owned(),
            format!("NET/IB : Using [RO]; OOB eth0:{}<0>", rank.ip),
            format!("NET/Socket : Using [0]eth0:{}<0>", rank.ip),
            "Initialized NET plugin Socket".to_owned(),
            "Assigned NET plugin Socket to comm".to_owned(),
            "Using network Socket".to_owned(),
        ]);
        lines
    };
    match (&run.network, run.aws_ofi_nccl) {
        (Network::Efa { nics, .. }, _) => {
            let mut lines = ofi_preamble();
            lines.extend([
                format!("NET/OFI Selected Provider is efa (found {nics} nics)"),
                "Initialized NET plugin Libfabric".to_owned(),
                "Assigned NET plugin Libfabric to comm".to_owned(),
                "Using network Libfabric".to_owned(),
            ]);
            lines
        }
        (Network::Socket, true) => {
            let mut lines = ofi_preamble();
            lines.extend([
                "NET/OFI No eligible providers were found".to_owned(),
                "Failed to initialize NET plugin Libfabric".to_owned(),
            ]);
            sockets(lines)
        }
        (Network::Socket, false) => sockets(vec![
            "NET/Plugin: Could not find: libnccl-net.so. ".to_owned(),
        ]),
    }
}

/// Linux gives up on an unanswered SYN after 127 s (`tcp_syn_retries` = 6).
pub(crate) const CONNECT_TIMEOUT_S: f64 = 127.0;
/// `NCCL_SOCKET_RETRY_CNT`: retries after a timed-out connect.
pub(crate) const SOCKET_RETRY_COUNT: u32 = 34;
/// `NCCL_SOCKET_RETRY_SLEEP_MSEC`: the sleep before retry `k` is `k` times this.
pub(crate) const SOCKET_RETRY_SLEEP_MS: f64 = 100.0;
/// Where NCCL 2.27.3 warns that a connect ran out of retries.
const RETRY_WARN_SITE: &str = "misc/socket.cc:577";

/// The ids a run's processes and threads show (derived from the run's seed).
pub(crate) struct Ids {
    /// The thread that initializes each rank's communicator.
    pub(crate) init_tid: Vec<u32>,
    /// The thread of each rank's proxy.
    pub(crate) proxy_tid: Vec<u32>,
    /// The bootstrap root's thread, in rank 0's process.
    pub(crate) root_tid: u32,
    /// Each rank's `ncclComm_t`.
    pub(crate) comm: Vec<u64>,
    pub(crate) comm_id: u64,
    /// The bootstrap root's port, and each rank's port for the root.
    pub(crate) root_port: u32,
    pub(crate) listen_port: Vec<u32>,
}

impl Ids {
    pub(crate) fn of(run: &NcclRun) -> Self {
        let mut seeds = SeedStream::new(run.seed() ^ 0x6E63_636C);
        let tid = |pid: u32, seeds: &mut SeedStream| {
            pid + 60 + u32::try_from(seeds.below(140)).unwrap_or(0)
        };
        let init_tid = run.ranks.iter().map(|r| tid(r.pid, &mut seeds)).collect();
        let proxy_tid: Vec<u32> = run
            .ranks
            .iter()
            .map(|r| tid(r.pid, &mut seeds) + 200)
            .collect();
        let root_tid = run.ranks.first().map_or(0, |r| tid(r.pid, &mut seeds) + 1);
        let port = |seeds: &mut SeedStream| 32768 + u32::try_from(seeds.below(28000)).unwrap_or(0);
        let comm = run
            .ranks
            .iter()
            .map(|_| 0x5500_0000_0000 | (seeds.next_u64() & 0xFF_FFFF_FFF0))
            .collect();
        Self {
            init_tid,
            proxy_tid,
            root_tid,
            comm,
            comm_id: seeds.next_u64(),
            root_port: port(&mut seeds),
            listen_port: run.ranks.iter().map(|_| port(&mut seeds)).collect(),
        }
    }
}

/// `host:pid:tid [dev] NCCL INFO msg`
pub(crate) fn info(rank: &RankInfo, tid: u32, message: &str) -> String {
    format!(
        "{}:{}:{tid} [{}] NCCL INFO {message}\n",
        rank.short_host(),
        rank.pid,
        rank.device
    )
}

/// A warning: a blank line, then `[date time] host:pid:tid [dev] file:line NCCL WARN msg`.
pub(crate) fn warn(rank: &RankInfo, tid: u32, unix_s: i64, site: &str, message: &str) -> String {
    format!(
        "\n[{}] {}:{}:{tid} [{}] {site} NCCL WARN {message}\n",
        date_time(unix_s),
        rank.short_host(),
        rank.pid,
        rank.device
    )
}

/// `2026-11-30 04:43:45` (UTC) for Unix seconds.
pub(crate) fn date_time(unix_s: i64) -> String {
    let (days, secs) = (unix_s.div_euclid(86_400), unix_s.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// What each rank logs from `ncclGetUniqueId`/`ncclCommInitRankConfig` up to its bootstrap.
pub(crate) fn init_start(run: &NcclRun, ids: &Ids) -> String {
    let mut out = String::new();
    match run.debug {
        NcclDebug::Off => {}
        NcclDebug::Warn => {
            for _ in &run.ranks {
                let _ = writeln!(out, "NCCL version {NCCL_VERSION}");
            }
        }
        NcclDebug::Info => {
            for (r, rank) in run.ranks.iter().enumerate() {
                let main = rank.pid;
                let bootstrap = format!("Bootstrap: Using eth0:{}<0>", rank.ip);
                let driver = format!("cudaDriverVersion {CUDA_DRIVER_VERSION}");
                let (first, second) = if r == 0 {
                    (&bootstrap, &driver)
                } else {
                    (&driver, &bootstrap)
                };
                out.push_str(&info(rank, main, first));
                out.push_str(&info(rank, main, second));
                out.push_str(&info(rank, main, &format!("NCCL version {NCCL_VERSION}")));
                out.push_str(&info(rank, main, "Comm config Blocking set to 1"));
                let tid = ids.init_tid[r];
                let mut lines = network_lines(run, rank);
                lines.push(format!(
                    "ncclCommInitRankConfig comm 0x{:x} rank {r} nranks {} cudaDev {} \
                         nvmlDev {} busId {:x} commId 0x{:x} - Init START",
                    ids.comm[r],
                    run.ranks.len(),
                    rank.device,
                    rank.device,
                    rank.nccl_bus_id(),
                    ids.comm_id
                ));
                for line in lines {
                    out.push_str(&info(rank, tid, &line));
                }
            }
        }
    }
    out
}

/// The rest of init, once every rank has bootstrapped: topology, channels, completion.
pub(crate) fn init_complete(run: &NcclRun, ids: &Ids) -> String {
    if run.debug != NcclDebug::Info {
        return String::new();
    }
    let mut seeds = SeedStream::new(run.seed() ^ 0x7469_6D65);
    let mut out = String::new();
    for (r, rank) in run.ranks.iter().enumerate() {
        let bootstrap = BootstrapTimings::draw(&mut seeds);
        let mut lines = topology_lines(run, ids, r, &bootstrap);
        lines.extend(tuning_lines(run, r));
        lines.extend(completion_lines(run, ids, r, bootstrap.recv, &mut seeds));
        for line in lines {
            out.push_str(&info(rank, ids.init_tid[r], &line));
        }
    }
    out
}

/// How long a rank's bootstrap took, in seconds, step by step.
struct BootstrapTimings {
    create: f64,
    send: f64,
    recv: f64,
    ring: f64,
}

impl BootstrapTimings {
    fn draw(seeds: &mut SeedStream) -> Self {
        let mut ms = |low: u64, high: u64| seeds.between(low, high) as f64 / 1e6;
        let (create, send, recv, ring) = (ms(10, 20), ms(60, 90), ms(100, 900_000), ms(9, 30));
        Self {
            create,
            send,
            recv,
            ring,
        }
    }
}

/// The hosts the run's ranks are on.
fn node_count(run: &NcclRun) -> usize {
    let mut hosts: Vec<&str> = run.ranks.iter().map(|r| r.ip.as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    hosts.len()
}

/// Rank `r`'s bootstrap timings and place in the run (its node, its channels for rank 0, its
/// trees).
fn topology_lines(run: &NcclRun, ids: &Ids, r: usize, t: &BootstrapTimings) -> Vec<String> {
    let n = run.ranks.len();
    let rank = &run.ranks[r];
    let local: Vec<usize> = (0..n).filter(|&p| run.ranks[p].ip == rank.ip).collect();
    let local_rank = local.iter().position(|&p| p == r).unwrap_or(0);
    let (create, send, recv, ring_t) = (t.create, t.send, t.recv, t.ring);
    let mut lines = vec![
        "RAS client listening socket at 127.0.0.1<28028>".to_owned(),
        format!(
            "Bootstrap timings total {:.6} (create {create:.6}, send {send:.6}, recv {recv:.6}, \
             ring {ring_t:.6}, delay 0.000000)",
            create + send + recv + ring_t
        ),
        format!(
            "comm 0x{:x} rank {r} nRanks {n} nNodes {} localRanks {} localRank {local_rank} \
             MNNVL 0",
            ids.comm[r],
            node_count(run),
            local.len()
        ),
    ];
    if r == 0 {
        let width = (n.saturating_sub(1)).to_string().len();
        let ring: String = (0..n).map(|r| format!(" {r:>width$}")).collect();
        lines.push(format!("Channel 00/02 :{ring}"));
        lines.push(format!("Channel 01/02 :{ring}"));
    }
    lines.push(trees_line(r, n));
    lines
}

/// Rank `r`'s two trees, which follow the ring down and up.
fn trees_line(r: usize, n: usize) -> String {
    let down = |c: usize| match c {
        0 if r + 1 < n => (r + 1) as i64,
        1 if r > 0 => r as i64 - 1,
        _ => -1,
    };
    let up = |c: usize| match c {
        0 if r > 0 => r as i64 - 1,
        1 if r + 1 < n => (r + 1) as i64,
        _ => -1,
    };
    format!(
        "Trees [0] {}/-1/-1->{r}->{} [1] {}/-1/-1->{r}->{}",
        down(0),
        up(0),
        down(1),
        up(1)
    )
}

/// The plugins NCCL looks for and the channels it sets up while it tunes.
fn tuning_lines(run: &NcclRun, r: usize) -> Vec<String> {
    let mut lines = vec![
        "P2P Chunksize set to 131072".to_owned(),
        "PROFILER/Plugin: Could not find: libnccl-profiler.so. ".to_owned(),
    ];
    // src/graph/tuning.cc, while it sets up the tuning, just before the channel counts:
    // INFO(NCCL_ENV, "NCCL_ALGO set by environment to %s", algoStr).
    if let Some(algorithm) = &run.algorithm {
        lines.push(format!("NCCL_ALGO set by environment to {algorithm}"));
    }
    lines.push(
        "2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, \
         2 p2p channels per peer"
            .to_owned(),
    );
    if r == 0 {
        lines.push("CC Off, workFifoBytes 1048576".to_owned());
    }
    lines.push(
        "TUNER/Plugin: Could not find: libnccl-tuner.so. Using internal tuner plugin.".to_owned(),
    );
    lines
}

/// Rank `r`'s Init COMPLETE and its init timings (`recv`: how long its bootstrap waited).
fn completion_lines(
    run: &NcclRun,
    ids: &Ids,
    r: usize,
    recv: f64,
    seeds: &mut SeedStream,
) -> [String; 2] {
    let n = run.ranks.len();
    let rank = &run.ranks[r];
    let kernels = seeds.between(8, 12) as f64 / 100.0;
    let total = kernels + recv + 0.02;
    [
        format!(
            "ncclCommInitRankConfig comm 0x{:x} rank {r} nranks {n} cudaDev {} nvmlDev {} \
             busId {:x} commId 0x{:x} - Init COMPLETE",
            ids.comm[r],
            rank.device,
            rank.device,
            rank.nccl_bus_id(),
            ids.comm_id
        ),
        format!(
            "Init timings - ncclCommInitRankConfig: rank {r} nranks {n} total {total:.2} \
             (kernels {kernels:.2}, alloc 0.00, bootstrap {:.2}, allgathers 0.00, topo 0.01, \
             graphs 0.00, connections 0.00, rest 0.01)",
            recv
        ),
    ]
}

/// The first collective connects each rank to its ring neighbours.
pub(crate) fn connect(run: &NcclRun, ids: &Ids) -> String {
    if run.debug != NcclDebug::Info || run.ranks.len() < 2 {
        return String::new();
    }
    let n = run.ranks.len();
    let mut out = String::new();
    for (r, rank) in run.ranks.iter().enumerate() {
        let (prev, next) = ((r + n - 1) % n, (r + 1) % n);
        let (p, q) = (&run.ranks[prev], &run.ranks[next]);
        for channel in 0..2 {
            let line = if p.ip == rank.ip {
                match run.local {
                    LocalPath::Shm => format!(
                        "Channel {channel:02} : {prev}[{}] -> {r}[{}] via SHM/direct/direct",
                        p.device, rank.device
                    ),
                    LocalPath::NvLink => format!(
                        "Channel {channel:02}/0 : {prev}[{}] -> {r}[{}] via P2P/CUMEM",
                        p.device, rank.device
                    ),
                }
            } else {
                format!(
                    "Channel {channel:02}/0 : {prev}[{}] -> {r}[{}] [receive] via {}",
                    p.device,
                    rank.device,
                    net_device(run, rank)
                )
            };
            out.push_str(&info(rank, ids.proxy_tid[r], &line));
            if q.ip != rank.ip {
                let line = format!(
                    "Channel {channel:02}/0 : {r}[{}] -> {next}[{}] [send] via {}",
                    rank.device,
                    q.device,
                    net_device(run, rank)
                );
                out.push_str(&info(rank, ids.proxy_tid[r], &line));
            }
        }
        let gdr = u8::from(matches!(run.network, Network::Efa { .. }));
        out.push_str(&info(
            rank,
            ids.proxy_tid[r],
            &format!("Connected all rings, use ring PXN 0 GDR {gdr}"),
        ));
    }
    out
}

/// The network device a rank's traffic to another node leaves by: the socket on `eth0`, or
/// with EFA the NIC next to its GPU, GPUDirect RDMA on (`NET/Libfabric/3/GDRDMA`).
fn net_device(run: &NcclRun, rank: &RankInfo) -> String {
    match run.network {
        Network::Socket => "NET/Socket/0".to_owned(),
        Network::Efa { .. } => format!("NET/Libfabric/{}/GDRDMA", rank.device),
    }
}

/// The warning of a rank whose EFA peer never answers the handshake, as aws-ofi-nccl's
/// connection manager and libfabric's EFA provider word it (error 4126; the form of
/// gnosia93/training-on-eks appendix/a1-karpenter-message.md, an EKS run whose security group
/// lacked the self rule), and the INFO lines NCCL unwinds with.
pub(crate) fn efa_handshake_failed(
    run: &NcclRun,
    ids: &Ids,
    host_id: &str,
    at_unix_s: i64,
) -> (String, String) {
    let Some(rank) = run.ranks.first() else {
        return (String::new(), String::new());
    };
    let mut seeds = SeedStream::new(run.seed() ^ 0x6566_6120);
    let mine = efa_addr(&mut seeds);
    let peer = efa_addr(&mut seeds);
    let request = 0x7f45_0000_0000_u64 | (seeds.next_u64() & 0xFFFF_FFF0);
    let message = format!(
        "NET/OFI Request 0x{request:x} completed with error. RC: 103. Error: 4126 (Unresponsive receiver (reachable by EFA device but handshake failed) My EFA addr: {mine} My host id: {host_id} Peer EFA addr: {peer} Peer host id: N/A). Completed length: 0"
    );
    let tid = ids.proxy_tid[0];
    let mut out = String::new();
    if run.debug != NcclDebug::Off {
        out.push_str(&warn(
            rank,
            tid,
            at_unix_s,
            "int cm_req_handle_error_entry(nccl_net_ofi_context_t*, fid_cq*, fi_cq_err_entry*, uint16_t):46",
            &message,
        ));
    }
    if run.debug == NcclDebug::Info {
        out.push_str(&info(rank, tid, "transport/net.cc:753 -> 6"));
        out.push_str(&info(rank, tid, "transport.cc:198 -> 6"));
    }
    (out, message)
}

/// An EFA endpoint address as libfabric prints it: a link-local IPv6 from the NIC's MAC, and a
/// queue pair.
fn efa_addr(seeds: &mut SeedStream) -> String {
    format!(
        "fi_addr_efa://[fe80::{:x}:{:x}ff:fe{:02x}:{:x}]:0:{}",
        seeds.below(0x10000),
        seeds.below(0x100),
        seeds.below(0x100),
        seeds.below(0x10000),
        seeds.below(1_000_000_000)
    )
}

/// `ncclCommDestroy` of the given ranks.
pub(crate) fn destroy(run: &NcclRun, ids: &Ids, ranks: impl Iterator<Item = usize>) -> String {
    if run.debug != NcclDebug::Info {
        return String::new();
    }
    ranks
        .map(|r| {
            let rank = &run.ranks[r];
            info(
                rank,
                rank.pid,
                &format!(
                    "comm 0x{:x} rank {r} nranks {} cudaDev {} busId {:x} - Destroy COMPLETE",
                    ids.comm[r],
                    run.ranks.len(),
                    rank.device,
                    rank.nccl_bus_id()
                ),
            )
        })
        .collect()
}

/// When the `k`-th connect attempt (1-based) times out, in seconds from its first try.
pub(crate) fn attempt_timeout_s(k: u32) -> f64 {
    let k = f64::from(k);
    CONNECT_TIMEOUT_S * k + SOCKET_RETRY_SLEEP_MS / 1000.0 * k * (k - 1.0) / 2.0
}

/// The message of the warning when a connect runs out of retries. `function` is
/// `socketPollConnect` for a socket that can be aborted (a rank's), `socketStartConnect` for a
/// blocking one (the bootstrap root's).
pub(crate) fn retry_exhausted(function: &str, target: &str) -> String {
    format!(
        "{function}: connect to {target} returned Connection timed out, exceeded error \
         retry count after {} attempts",
        SOCKET_RETRY_COUNT + 1
    )
}

/// One connect that is never answered: who makes it (`rank`'s thread `tid`), to what
/// (`ip<port>`), and in which NCCL function it is checked.
pub(crate) struct Connect<'a> {
    pub(crate) rank: &'a RankInfo,
    pub(crate) tid: u32,
    pub(crate) target: String,
    pub(crate) function: &'static str,
}

/// What a connect logs while it is retried for `waited_s`: one INFO line (and its time) per
/// timed-out attempt, then the warning once the retries run out (`true`).
pub(crate) fn connect_retries(
    run: &NcclRun,
    connect: &Connect<'_>,
    waited_s: u64,
) -> (Vec<(f64, String)>, bool) {
    let Connect {
        rank,
        tid,
        target,
        function,
    } = connect;
    let (rank, tid) = (*rank, *tid);
    let waited = waited_s as f64;
    let mut lines = Vec::new();
    for k in 1..=SOCKET_RETRY_COUNT {
        let at = attempt_timeout_s(k);
        if at > waited {
            return (lines, false);
        }
        if run.debug == NcclDebug::Info {
            let message = format!(
                "{function}: connect to {target} returned Connection timed out, retrying \
                 ({k}/{SOCKET_RETRY_COUNT}) after sleep for {} msec",
                f64::from(k) * SOCKET_RETRY_SLEEP_MS
            );
            lines.push((at, info(rank, tid, &message)));
        }
    }
    let at = attempt_timeout_s(SOCKET_RETRY_COUNT + 1);
    if at > waited {
        return (lines, false);
    }
    if run.debug != NcclDebug::Off {
        let when = run.started_unix_s + at as i64;
        let message = retry_exhausted(function, target);
        lines.push((at, warn(rank, tid, when, RETRY_WARN_SITE, &message)));
    }
    (lines, true)
}

#[cfg(test)]
#[path = "nccl_log_tests.rs"]
mod tests;
