//! The commands a `--read-only` run may still run in a pod: the GPU probes' own queries, which
//! read the GPUs and the kernel log and change nothing. Every other exec is refused under
//! `--read-only`, since a command in a pod can change anything the pod can reach.

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
];

/// The read-only commands as a reader would write them, for refusals.
pub(crate) const READ_ONLY_COMMANDS_TEXT: &str = "nvidia-smi --query-gpu=FIELDS --format=csv,noheader,nounits; nvidia-smi nvlink -s; dcgmi diag -r 1|2|3|4 -j; dmesg";

/// Whether `argv` is one of the GPU probes' read-only queries.
pub fn reads_only(argv: &[String]) -> bool {
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
        ] {
            assert!(reads_only(&argv(command)), "{command}");
        }
        for command in [
            "nvidia-smi -r",
            "nvidia-smi -pm 1",
            "nvidia-smi --query-gpu= --format=csv,noheader,nounits",
            "nvidia-smi nvlink -s -i 0 --reset",
            "dcgmi diag -r 9 -j",
            "dcgmi config --set -a 1",
            "dmesg -c",
            "sh -c nvidia-smi",
            "rm -rf /",
        ] {
            assert!(!reads_only(&argv(command)), "{command}");
        }
    }
}
