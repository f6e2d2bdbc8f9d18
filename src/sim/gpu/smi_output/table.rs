//! `nvidia-smi` with no arguments: the summary table in the 580/590 driver layout (timestamp
//! line, version box, one block per GPU, and the Processes box).

use std::fmt::Write as _;

use super::super::gpu_model::{GpuDevice, GpuHost, GpuProcess, MigMode};

const WIDE_RULE: &str =
    "+-----------------------------------------------------------------------------------------+";
const GPU_RULE: &str =
    "+-----------------------------------------+------------------------+----------------------+";
const HEADER: [&str; 4] = [
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
    "|                                         |                        |               MIG M. |",
    "|=========================================+========================+======================|",
];
const PROCESS_HEADER: [&str; 4] = [
    "| Processes:                                                                              |",
    "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
    "|        ID   ID                                                               Usage      |",
    "|=========================================================================================|",
];
/// Widest process name that fits its column; longer ones keep their end behind `...`.
const NAME_WIDTH: usize = 37;

/// The whole table, newline-terminated, as `nvidia-smi` prints it.
pub(crate) fn render(host: &GpuHost) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}       ", host.timestamp);
    let _ = writeln!(out, "{WIDE_RULE}");
    let _ = writeln!(
        out,
        "| NVIDIA-SMI {:<23}Driver Version: {:<15}CUDA Version: {:<9}|",
        host.driver_version, host.driver_version, host.cuda_version
    );
    let _ = writeln!(out, "{GPU_RULE}");
    for line in HEADER {
        let _ = writeln!(out, "{line}");
    }
    for gpu in &host.gpus {
        for line in gpu_block(gpu) {
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(out, "{GPU_RULE}");
    }
    out.push('\n');
    let _ = writeln!(out, "{WIDE_RULE}");
    for line in PROCESS_HEADER {
        let _ = writeln!(out, "{line}");
    }
    if host.processes.is_empty() {
        let _ = writeln!(out, "|  {:<87}|", "No running processes found");
    }
    for process in &host.processes {
        let _ = writeln!(out, "{}", process_row(process));
    }
    let _ = writeln!(out, "{WIDE_RULE}");
    out
}

fn gpu_block(gpu: &GpuDevice) -> [String; 3] {
    let fan = gpu
        .fan_percent
        .map_or_else(|| "N/A".to_owned(), |f| format!("{f}%"));
    let mig = match gpu.mig_mode {
        MigMode::Unsupported => "N/A",
        MigMode::Disabled => "Disabled",
        MigMode::Enabled => "Enabled",
    };
    let ecc = if gpu.ecc_enabled {
        gpu.ecc_uncorrected_volatile.to_string()
    } else {
        "N/A".to_owned()
    };
    [
        format!(
            "| {:>3}  {:<30}{:>3}  |{:>19}{:>4} |{:>21} |",
            gpu.index,
            gpu.name,
            on_off(gpu.persistence_mode),
            gpu.bus_id(),
            "Off",
            ecc
        ),
        format!(
            "| {:>3}   {:>3}    {:<2}{:>16} / {:>5} |{:>11} / {:>9} |{:>8}{:>13} |",
            fan,
            format!("{}C", gpu.temperature_c),
            gpu.pstate(),
            format!("{}W", gpu.power_draw_w.round()),
            format!("{}W", gpu.power_cap_w),
            format!("{}MiB", gpu.memory_used_mib),
            format!("{}MiB", gpu.memory_total_mib),
            format!("{}%", gpu.utilization_percent),
            gpu.compute_mode
        ),
        format!("|{:41}|{:24}|{mig:>21} |", "", ""),
    ]
}

fn process_row(process: &GpuProcess) -> String {
    let name = if process.name.chars().count() > NAME_WIDTH {
        let tail: String = {
            let chars: Vec<char> = process.name.chars().collect();
            chars[chars.len() - (NAME_WIDTH - 3)..].iter().collect()
        };
        format!("...{tail}")
    } else {
        process.name.clone()
    };
    format!(
        "|{:>5}{:>6}{:>5}{:>16}{:>7}   {:<NAME_WIDTH$}{:>9} |",
        process.gpu_index,
        "N/A",
        "N/A",
        process.pid,
        process.process_type,
        name,
        format!("{}MiB", process.used_memory_mib)
    )
}

fn on_off(on: bool) -> &'static str {
    if on { "On" } else { "Off" }
}

#[cfg(test)]
mod tests {
    use super::super::super::gpu_model::{GpuHost, GpuProcess, MigMode, SeedStream};
    use super::super::super::test_support::fixture;
    use super::*;

    fn a10g_like_fixture() -> GpuHost {
        let mut host = GpuHost::a10g("gpu-node", 1, "Mon Dec 22 17:29:56 2025");
        host.gpus[0].temperature_c = 17;
        host.gpus[0].power_draw_w = 11.2;
        host
    }

    /// The line lengths and the columns of every `|` and `+`.
    fn shape(text: &str) -> Vec<(usize, Vec<usize>)> {
        text.lines()
            .map(|l| {
                let marks = l
                    .char_indices()
                    .filter(|(_, c)| *c == '|' || *c == '+')
                    .map(|(i, _)| i)
                    .collect();
                (l.chars().count(), marks)
            })
            .collect()
    }

    #[test]
    fn fresh_a10g_has_the_fixture_shape() {
        let real = fixture("nvidia_smi_table_a10g_g5xlarge_580.txt");
        let host = GpuHost::a10g("ip-192-168-12-34", 99, "Mon Nov 30 04:43:45 2026");
        assert_eq!(shape(&render(&host)), shape(&real));
    }

    #[test]
    fn same_readings_give_the_fixture_byte_for_byte() {
        let real = fixture("nvidia_smi_table_a10g_g5xlarge_580.txt");
        assert_eq!(render(&a10g_like_fixture()), real);
    }

    #[test]
    fn h100_under_load_with_processes_matches_its_fixture() {
        let real = fixture("nvidia_smi_table_h100_load_590.txt");
        let mut host = GpuHost::a10g("h100", 5, "Tue Jul 14 08:12:53 2026");
        host.driver_version = "590.48.01".to_owned();
        host.cuda_version = "13.1".to_owned();
        let gpu = &mut host.gpus[0];
        *gpu = super::super::super::gpu_model::GpuDevice::a10g(0, &mut SeedStream::new(5));
        gpu.name = "NVIDIA H100 80GB HBM3".to_owned();
        gpu.pci_device = 9;
        gpu.fan_percent = None;
        gpu.temperature_c = 59;
        gpu.performance_state = 0;
        gpu.power_draw_w = 629.0;
        gpu.power_cap_w = 700;
        gpu.memory_total_mib = 81559;
        gpu.utilization_percent = 100;
        gpu.mig_mode = MigMode::Disabled;
        gpu.memory_used_mib = 20;
        for (pid, name, mib) in [
            (11327, "/root/tools/memhog", 2566),
            (11328, "/root/tools/memhog", 1542),
            (11345, "./gpu_burn", 15690),
        ] {
            host.add_process(GpuProcess {
                gpu_index: 0,
                pid,
                process_type: "C".to_owned(),
                name: name.to_owned(),
                used_memory_mib: mib,
            });
        }
        assert_eq!(render(&host), real);
    }

    #[test]
    fn long_process_names_keep_their_end() {
        let row = process_row(&GpuProcess {
            gpu_index: 0,
            pid: 7,
            process_type: "C".to_owned(),
            name: "/opt/conda/envs/pytorch/lib/python3.12/site-packages/x/bin/all_reduce_perf"
                .to_owned(),
            used_memory_mib: 1024,
        });
        assert_eq!(row.chars().count(), 91);
        assert!(row.contains("...") && row.contains("all_reduce_perf"));
    }
}
