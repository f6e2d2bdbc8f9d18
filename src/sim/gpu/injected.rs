//! What a drill writes into a GPU node's software from inside it, the two ways real fault drills
//! do: a value injected into DCGM's field cache (`dcgmi test --inject --gpuid G -f 230 -v XID`,
//! as the EKS node monitoring agent's own e2e suite injects faults,
//! aws/eks-node-monitoring-agent@51af549 e2e/suites/monitors/nvidia_monitor.go) and a line
//! written to the kernel log (`/dev/kmsg`, as gpud's `inject-fault` writes one,
//! leptonai/gpud pkg/kmsg/writer). Neither touches the GPU: DCGM's policies see the first, what
//! reads the kernel log sees the second, NVML and the device plugin see neither, and both are
//! gone when the node reboots.

use std::time::Duration;

/// DCGM_FI_DEV_XID_ERRORS (dcgm_fields.h): "The value is the specific XID error".
pub(crate) const XID_FIELD: u32 = 230;

/// What was injected into one node since it booted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Injected {
    /// `(gpu, xid, when)` values injected into DCGM's Xid field.
    pub(crate) dcgm_xids: Vec<(u32, u32, Duration)>,
    /// Lines written to `/dev/kmsg`, without their `<N>` priority, and when.
    pub(crate) kernel_lines: Vec<(Duration, String)>,
}

/// One injection a command makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Injection {
    /// `dcgmi test --inject --gpuid GPU -f FIELD -v VALUE`.
    DcgmField { gpu: u32, field: u32, value: i64 },
    /// `sh -c 'echo "LINE" > /dev/kmsg'`.
    KernelLine(String),
}

/// The injection `argv` makes, if it is one of the two forms.
pub(crate) fn parse(argv: &[String]) -> Option<Injection> {
    let (program, args) = argv.split_first()?;
    match program.rsplit('/').next()? {
        "dcgmi" => dcgm_field(args),
        "sh" | "bash" => match args {
            [flag, script] if flag == "-c" => kernel_line(script),
            _ => None,
        },
        _ => None,
    }
}

/// `test --inject --gpuid G -f F -v V` (flags in any order, `--field`/`--value` long forms).
fn dcgm_field(args: &[String]) -> Option<Injection> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    if args.first() != Some(&"test") || !args.contains(&"--inject") {
        return None;
    }
    let after = |names: &[&str]| {
        args.windows(2)
            .find(|w| names.contains(&w[0]))
            .map(|w| w[1])
    };
    Some(Injection::DcgmField {
        gpu: after(&["--gpuid", "-g"])?.parse().ok()?,
        field: after(&["-f", "--field"])?.parse().ok()?,
        value: after(&["-v", "--value"])?.parse().ok()?,
    })
}

/// `echo "LINE" > /dev/kmsg` or `echo 'LINE' > /dev/kmsg`, the priority prefix dropped.
fn kernel_line(script: &str) -> Option<Injection> {
    let body = script.trim().strip_prefix("echo ")?;
    let (quoted, target) = body.rsplit_once('>')?;
    if target.trim() != "/dev/kmsg" {
        return None;
    }
    let quoted = quoted.trim();
    let line = quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .or_else(|| quoted.strip_prefix('\'').and_then(|q| q.strip_suffix('\'')))?;
    Some(Injection::KernelLine(without_priority(line).to_string()))
}

/// `<3>NVRM: ...` -> `NVRM: ...`: /dev/kmsg takes the syslog priority in angle brackets.
fn without_priority(line: &str) -> &str {
    line.strip_prefix('<')
        .and_then(|rest| rest.split_once('>'))
        .filter(|(digits, _)| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .map_or(line, |(_, rest)| rest)
}

impl Injected {
    /// Keeps what `injection` wrote at `now`.
    pub(crate) fn keep(&mut self, injection: &Injection, now: Duration) {
        match injection {
            Injection::DcgmField { gpu, field, value } if *field == XID_FIELD => {
                if let Ok(xid) = u32::try_from(*value)
                    && xid > 0
                {
                    self.dcgm_xids.push((*gpu, xid, now));
                }
            }
            Injection::DcgmField { .. } => {}
            Injection::KernelLine(line) => self.kernel_lines.push((now, line.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_string()).collect()
    }

    #[test]
    fn the_dcgmi_injection_of_the_agents_e2e_suite_and_a_kmsg_write_are_read() {
        assert_eq!(
            parse(&argv(&[
                "dcgmi", "test", "--inject", "--gpuid", "3", "-f", "230", "-v", "79"
            ])),
            Some(Injection::DcgmField {
                gpu: 3,
                field: 230,
                value: 79
            })
        );
        let line = "NVRM: Xid (PCI:0000:53:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
        assert_eq!(
            parse(&argv(&[
                "sh",
                "-c",
                &format!("echo \"<3>{line}\" > /dev/kmsg")
            ])),
            Some(Injection::KernelLine(line.into()))
        );
        assert_eq!(parse(&argv(&["dcgmi", "diag", "-r", "1"])), None);
        assert_eq!(parse(&argv(&["sh", "-c", "echo hi > /tmp/x"])), None);
    }

    #[test]
    fn only_the_xid_field_counts_as_an_xid() {
        let mut injected = Injected::default();
        let at = Duration::from_secs(60);
        injected.keep(
            &Injection::DcgmField {
                gpu: 0,
                field: 319,
                value: 1,
            },
            at,
        );
        injected.keep(
            &Injection::DcgmField {
                gpu: 1,
                field: 230,
                value: 48,
            },
            at,
        );
        assert_eq!(injected.dcgm_xids, [(1, 48, at)]);
    }
}
