//! What one `all_reduce_perf` run is: its ranks, the sizes it sweeps, the network it sees
//! (latency and bus bandwidth) and how it ends; and the timing model that turns those into
//! per-size times.

use super::super::gpu_model::{GpuDevice, SeedStream, seed_from_name};
use crate::lab::nccl_scale::Collective;

/// The nccl-tests release whose output format the twin prints.
pub(crate) const NCCL_TESTS_VERSION: &str = "2.17.9";
/// `NCCL_VERSION_CODE` of NCCL 2.27.3 (headers and library alike).
pub(crate) const NCCL_VERSION_CODE: u32 = 22703;
/// What NCCL logs as its version.
pub(crate) const NCCL_VERSION: &str = "2.27.3+cuda12.9";
/// `cudaDriverGetVersion` under the 580 driver (CUDA 13.0).
pub(crate) const CUDA_DRIVER_VERSION: u32 = 13000;

/// The bus bandwidth large messages reach over a g5.xlarge's socket transport (up to 10 Gbps).
pub(crate) const SOCKET_BUSBW_GBPS: f64 = 1.1;

/// One rank: the process and the GPU it drives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RankInfo {
    /// The host name as the process sees it (a pod's name in Kubernetes).
    pub(crate) host: String,
    /// The address NCCL's bootstrap and socket transport use (the pod's `eth0`).
    pub(crate) ip: String,
    pub(crate) pid: u32,
    /// CUDA device index inside the process.
    pub(crate) device: u32,
    pub(crate) pci_domain: u32,
    pub(crate) pci_bus: u32,
    pub(crate) pci_device: u32,
    pub(crate) gpu_name: String,
    /// `cudaDeviceProp::totalGlobalMem`: the framebuffer less the driver's reserve.
    pub(crate) global_mem_bytes: u64,
}

impl RankInfo {
    /// The rank that drives `gpu` from process `pid` on `host`.
    pub(crate) fn on_gpu(host: &str, ip: &str, pid: u32, gpu: &GpuDevice) -> Self {
        Self {
            host: host.to_owned(),
            ip: ip.to_owned(),
            pid,
            device: gpu.index,
            pci_domain: gpu.pci_domain,
            pci_bus: gpu.pci_bus,
            pci_device: gpu.pci_device,
            gpu_name: gpu.name.clone(),
            global_mem_bytes: gpu.memory_total_mib.saturating_sub(gpu.memory_reserved_mib) << 20,
        }
    }

    /// The name both nccl-tests and NCCL print: the host name up to its first dot.
    pub(crate) fn short_host(&self) -> &str {
        self.host.split('.').next().unwrap_or(&self.host)
    }

    /// NCCL's integer bus id (`0000:00:1e.0` is `0x1e0`).
    pub(crate) fn nccl_bus_id(&self) -> u64 {
        u64::from(self.pci_domain) << 20
            | u64::from(self.pci_bus) << 12
            | u64::from(self.pci_device) << 4
    }
}

/// `NCCL_DEBUG`: what NCCL itself writes to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NcclDebug {
    /// Unset: NCCL prints nothing.
    Off,
    /// `WARN`: the bare version line and warnings.
    Warn,
    /// `INFO`: the init, connection and teardown log.
    Info,
}

/// How ranks on different nodes talk: NCCL's socket transport over the pods' `eth0`, or
/// aws-ofi-nccl's Libfabric plugin over the EFA devices the pods were given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Network {
    Socket,
    Efa {
        /// EFA devices each node gives its pod (`vpc.amazonaws.com/efa`).
        nics: u32,
        /// The EC2 type, as aws-ofi-nccl names the platform it configures.
        instance_type: String,
    },
}

/// How ranks on one node talk: through shared host memory (PCIe GPUs on a Nitro host, where
/// NCCL finds no peer-to-peer path), or GPU to GPU over NVLink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LocalPath {
    Shm,
    NvLink,
}

/// How the run ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Every size is measured and the summary printed.
    Ok,
    /// A TCP connection to `unreachable_peer_ip` is never answered (a security group drops
    /// it). NCCL retries the connect; `waited_s` is how long the run has been going when its
    /// output is read (the caller kills it at its deadline).
    Hang {
        unreachable_peer_ip: String,
        waited_s: u64,
    },
    /// The bootstrap (over TCP) completes, but the security groups drop EFA's traffic to
    /// `peer_ip`: the first collective waits for a handshake that never comes, then fails.
    EfaUnreachable {
        peer_ip: String,
        /// The EC2 instance of the rank that reports it (aws-ofi-nccl prints it as its host id).
        host_id: String,
    },
}

/// One `all_reduce_perf`, `all_gather_perf` or `alltoall_perf` run (`-t 1`, float, sum for
/// the all-reduce, validation on, no graphs).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NcclRun {
    /// Which nccl-tests binary runs.
    pub(crate) collective: Collective,
    /// In rank order. Ranks that share host and pid are one process (`-g N`).
    pub(crate) ranks: Vec<RankInfo>,
    pub(crate) min_bytes: u64,
    pub(crate) max_bytes: u64,
    pub(crate) step_factor: u64,
    pub(crate) iters: u32,
    pub(crate) warmup_iters: u32,
    /// The bus bandwidth large messages reach, in GB/s.
    pub(crate) busbw_gbps: f64,
    /// The time of an empty all-reduce, in microseconds.
    pub(crate) latency_us: f64,
    /// Ranks whose GPU hands back corrupted data (uncorrectable ECC errors): every rank's
    /// result then has wrong elements once a message reaches the bad memory.
    pub(crate) corrupted_ranks: u32,
    pub(crate) debug: NcclDebug,
    /// Wall-clock start of the run (Unix seconds): NCCL stamps its warnings with it.
    pub(crate) started_unix_s: i64,
    pub(crate) network: Network,
    pub(crate) local: LocalPath,
    /// The image carries aws-ofi-nccl (AWS's NCCL images do): it logs its search for EFA
    /// even when the pod got none and NCCL falls back to sockets.
    pub(crate) aws_ofi_nccl: bool,
    /// `NCCL_ALGO` as the environment set it: NCCL acknowledges it in its INFO log (the
    /// twin's figures do not depend on it).
    pub(crate) algorithm: Option<String>,
    pub(crate) outcome: Outcome,
}

impl NcclRun {
    /// `all_reduce_perf -b 8 -e 128M -f 2 -w 5 -n 20` with `NCCL_DEBUG=INFO`, over the
    /// socket transport of a g5.xlarge (up to 10 Gbps: about 1.1 GB/s of bus bandwidth).
    pub(crate) fn new(ranks: Vec<RankInfo>, started_unix_s: i64) -> Self {
        Self {
            collective: Collective::AllReduce,
            ranks,
            min_bytes: 8,
            max_bytes: 128 << 20,
            step_factor: 2,
            iters: 20,
            warmup_iters: 5,
            busbw_gbps: SOCKET_BUSBW_GBPS,
            latency_us: 60.0,
            corrupted_ranks: 0,
            debug: NcclDebug::Info,
            started_unix_s,
            network: Network::Socket,
            local: LocalPath::Shm,
            aws_ofi_nccl: false,
            algorithm: None,
            outcome: Outcome::Ok,
        }
    }

    /// The seed of everything random-looking in the output (thread ids, pointers, jitter).
    pub(crate) fn seed(&self) -> u64 {
        let mut key = String::new();
        for rank in &self.ranks {
            key.push_str(&format!(
                "{}/{}/{}/{};",
                rank.host, rank.ip, rank.pid, rank.device
            ));
        }
        seed_from_name(&key) ^ self.started_unix_s.unsigned_abs()
    }

    /// GPUs per process: the ranks that share the first rank's host and pid.
    pub(crate) fn gpus_per_process(&self) -> usize {
        match self.ranks.first() {
            Some(first) => self
                .ranks
                .iter()
                .filter(|r| r.host == first.host && r.pid == first.pid)
                .count(),
            None => 0,
        }
    }

    /// The bus bandwidth factor of the collective (nccl-tests' `*GetBw`): `2 (n - 1) / n` for
    /// all-reduce (all_reduce.cu), `(n - 1) / n` for all-gather and alltoall (all_gather.cu,
    /// alltoall.cu), whose algbw is the whole received buffer over the time.
    pub(crate) fn bus_factor(&self) -> f64 {
        let n = self.ranks.len() as f64;
        let moved = match self.collective {
            Collective::AllReduce => 2.0,
            Collective::AllGather | Collective::AllToAll => 1.0,
        };
        if n > 0.0 { moved * (n - 1.0) / n } else { 0.0 }
    }

    /// The `size` and `count` columns of a size the loop visits: all-reduce prints its floats;
    /// all-gather and alltoall split them among the ranks in whole 16-byte units and print the
    /// buffer that many make and each rank's share (`*GetCollByteCount` of all_gather.cu and
    /// alltoall.cu; common.cu prints max(sendBytes, expectedBytes) and paramcount).
    pub(crate) fn columns(&self, size: u64) -> (u64, u64) {
        let count = size / 4;
        match self.collective {
            Collective::AllReduce => (count * 4, count),
            Collective::AllGather | Collective::AllToAll => {
                let n = self.ranks.len().max(1) as u64;
                let share = count / (4 * n) * 4;
                (share * n * 4, share)
            }
        }
    }

    /// The device memory the run can use: the smallest of its ranks' GPUs.
    pub(crate) fn global_mem_bytes(&self) -> u64 {
        self.ranks
            .iter()
            .map(|r| r.global_mem_bytes)
            .min()
            .unwrap_or(0)
    }

    /// The sizes the benchmark loop visits (`size *= factor`, or `+= factor` bytes when the
    /// factor is 1), each rounded down to whole floats as nccl-tests counts them.
    pub(crate) fn sizes(&self, max_bytes: u64) -> Vec<u64> {
        let mut sizes = Vec::new();
        let mut size = self.min_bytes;
        while size <= max_bytes {
            sizes.push(size);
            let next = if self.step_factor > 1 {
                size.saturating_mul(self.step_factor)
            } else {
                size.saturating_add(self.step_factor.max(1))
            };
            if next == size {
                break;
            }
            size = next;
        }
        sizes
    }
}

/// One measured size: out-of-place and in-place `(time_us, algbw, busbw)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Measurement {
    pub(crate) bytes: u64,
    pub(crate) count: u64,
    pub(crate) out_of_place: (f64, f64, f64),
    pub(crate) in_place: (f64, f64, f64),
}

/// Times from `latency + bytes / peak algbw`, where the peak algbw is what makes the bus
/// bandwidth reach `busbw_gbps`; each time is jittered by up to 1.5 % from the run's seed.
pub(crate) fn measure(run: &NcclRun, max_bytes: u64) -> Vec<Measurement> {
    let factor = run.bus_factor();
    // One rank moves nothing over a bus; its all-reduce is a local copy at busbw_gbps.
    let peak_algbw = if factor > 0.0 {
        run.busbw_gbps / factor
    } else {
        run.busbw_gbps
    };
    let mut seeds = SeedStream::new(run.seed());
    let mut sample = |bytes: u64| {
        let jitter = 1.0 + (seeds.below(3001) as f64 - 1500.0) / 100_000.0;
        let ideal = run.latency_us + bytes as f64 / (peak_algbw.max(1e-9) * 1e3);
        let time_us = ideal * jitter;
        let algbw = bytes as f64 / 1e3 / time_us;
        (time_us, algbw, algbw * factor)
    };
    run.sizes(max_bytes)
        .into_iter()
        .map(|size| {
            let (bytes, count) = run.columns(size);
            Measurement {
                bytes,
                count,
                out_of_place: sample(bytes),
                in_place: sample(bytes),
            }
        })
        .collect()
}

/// Two g5.xlarge workers, one rank each: the lab's usual run (for tests).
#[cfg(test)]
pub(crate) fn two_nodes() -> NcclRun {
    use super::super::gpu_model::GpuHost;
    let a = GpuHost::a10g("ip-192-168-12-34", 1, "");
    let b = GpuHost::a10g("ip-192-168-40-7", 2, "");
    NcclRun::new(
        vec![
            RankInfo::on_gpu("nccl-worker-0", "192.168.12.34", 41, &a.gpus[0]),
            RankInfo::on_gpu("nccl-worker-1", "192.168.40.7", 38, &b.gpus[0]),
        ],
        1_796_000_000,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_double_from_min_to_max() {
        let run = two_nodes();
        let sizes = run.sizes(run.max_bytes);
        assert_eq!(sizes.first(), Some(&8));
        assert_eq!(sizes.last(), Some(&(128 << 20)));
        assert_eq!(sizes.len(), 25);
    }

    #[test]
    fn large_messages_approach_the_bus_bandwidth() {
        let run = two_nodes();
        let last = *measure(&run, run.max_bytes).last().unwrap();
        assert!((last.out_of_place.2 - run.busbw_gbps).abs() / run.busbw_gbps < 0.03);
        let first = measure(&run, run.max_bytes)[0];
        assert!((first.in_place.0 - run.latency_us).abs() < run.latency_us * 0.02);
    }

    #[test]
    fn all_gather_and_alltoall_split_the_buffer_and_count_half_the_bus() {
        let mut run = two_nodes();
        run.collective = Collective::AllGather;
        // 2 ranks: 1000 floats are 500 each, rounded down to 16-byte units.
        assert_eq!(run.columns(4000), (4000, 500));
        assert_eq!(run.columns(40), (32, 4));
        assert!((run.bus_factor() - 0.5).abs() < 1e-12);
        run.collective = Collective::AllToAll;
        assert_eq!(run.columns(8), (0, 0));
        let last = *measure(&run, run.max_bytes).last().unwrap();
        assert!((last.out_of_place.2 - run.busbw_gbps).abs() / run.busbw_gbps < 0.03);
    }

    #[test]
    fn bus_id_is_ncclish() {
        let run = two_nodes();
        assert_eq!(run.ranks[0].nccl_bus_id(), 0x1e0);
        assert_eq!(run.gpus_per_process(), 1);
        assert!((run.bus_factor() - 1.0).abs() < 1e-12);
    }
}
