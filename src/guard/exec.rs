//! The commands a `--read-only` run may still run in a pod: the GPU probes' own queries, which
//! read the GPUs, the kernel log and the EFA devices and change nothing. Every other exec is
//! refused under `--read-only`, since a command in a pod can change anything the pod can reach.

/// One argument of a command that only reads.
#[derive(Debug, Clone, Copy)]
enum Arg {
    /// Exactly this word.
    Is(&'static str),
    /// This word followed by a value (`--query-gpu=` and the fields).
    Then(&'static str),
    /// One of these words (dcgmi's diagnostic levels).
    OneOf(&'static [&'static str]),
}

use Arg::{Is, OneOf, Then};

/// The queries the GPU health checks and `stdlib/gpu.rhai` make, whole: a command passes when
/// it has exactly one of these shapes, argument for argument.
const READ_ONLY_COMMANDS: &[&[Arg]] = &[
    // nvml::query and the health check's GPU table.
    &[
        Is("nvidia-smi"),
        Then("--query-gpu="),
        Is("--format=csv,noheader,nounits"),
    ],
    // NVLink state, per GPU.
    &[Is("nvidia-smi"), Is("nvlink"), Is("-s")],
    // DCGM's diagnostic at a level, as JSON: it runs tests on the GPUs and sets nothing.
    &[
        Is("dcgmi"),
        Is("diag"),
        Is("-r"),
        OneOf(&["1", "2", "3", "4"]),
        Is("-j"),
    ],
    // The kernel log, read (no -c: that would clear it).
    &[Is("dmesg")],
    // The EFA devices libfabric sees.
    &[Is("fi_info"), Is("-p"), Is("efa")],
];

/// The read-only commands as a reader would write them, for refusals.
pub(crate) const READ_ONLY_COMMANDS_TEXT: &str = "nvidia-smi --query-gpu=FIELDS --format=csv,noheader,nounits; nvidia-smi nvlink -s; dcgmi diag -r 1|2|3|4 -j; dmesg; fi_info -p efa; one EFA device's fi_pingpong loopback as efa::check runs it";

/// Whether `argv` is one of the GPU probes' read-only queries, or one EFA device's loopback
/// exactly as efa::check writes it (traffic through the device and back; nothing set).
pub fn reads_only(argv: &[String]) -> bool {
    if crate::gpu::efa::loopback::loopback_device(argv).is_some() {
        return true;
    }
    READ_ONLY_COMMANDS.iter().any(|shape| {
        shape.len() == argv.len()
            && shape.iter().zip(argv).all(|(arg, given)| match arg {
                Is(word) => given == word,
                Then(prefix) => given.len() > prefix.len() && given.starts_with(prefix),
                OneOf(words) => words.contains(&given.as_str()),
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn the_probes_queries_read_only_and_nothing_else_does() {
        for command in [
            "nvidia-smi --query-gpu=index,uuid,temperature.gpu --format=csv,noheader,nounits",
            "nvidia-smi nvlink -s",
            "dcgmi diag -r 3 -j",
            "dmesg",
            "fi_info -p efa",
        ] {
            assert!(reads_only(&argv(command)), "{command}");
        }
        let loopback = crate::gpu::efa::loopback::loopback_command("rdmap16s27").unwrap();
        assert!(reads_only(&loopback));
        for command in [
            "nvidia-smi -r",
            "nvidia-smi -pm 1",
            "nvidia-smi --query-gpu= --format=csv,noheader,nounits",
            "nvidia-smi nvlink -s -i 0 --reset",
            "dcgmi diag -r 9 -j",
            "dcgmi config --set -a 1",
            "dmesg -c",
            "sh -c nvidia-smi",
            "fi_info -p efa -f x",
            "rm -rf /",
        ] {
            assert!(!reads_only(&argv(command)), "{command}");
        }
    }
}
