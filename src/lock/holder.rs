//! Who holds a target's Lease: the run, its runbook, the machine and process, and since when;
//! kept in the Lease's annotations (its `holderIdentity` is the run id and host) so that
//! `kubectl get lease -o yaml` and a refused runner on another machine can both name it.

use std::collections::BTreeMap;

const RUN_ID: &str = "runbook.dev/run-id";
const RUNBOOK: &str = "runbook.dev/runbook";
const HOST: &str = "runbook.dev/host";
const PID: &str = "runbook.dev/pid";
const STARTED: &str = "runbook.dev/started";
const PROCESS_SPACE: &str = "runbook.dev/process-space";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHolder {
    pub run_id: String,
    pub runbook: String,
    pub host: String,
    pub pid: u32,
    /// RFC 3339, when the run started.
    pub started: String,
    /// The boot and pid namespace its pid belongs to ([`process_space`]): where the pid can
    /// be looked up.
    pub process_space: String,
}

impl LeaseHolder {
    /// The Lease's `spec.holderIdentity`: unique to the run, readable on its own.
    pub fn identity(&self) -> String {
        format!("{}@{}", self.run_id, self.host)
    }

    pub(super) fn annotations(&self) -> BTreeMap<String, String> {
        [
            (RUN_ID, self.run_id.clone()),
            (RUNBOOK, self.runbook.clone()),
            (HOST, self.host.clone()),
            (PID, self.pid.to_string()),
            (STARTED, self.started.clone()),
            (PROCESS_SPACE, self.process_space.clone()),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_string(), value))
        .collect()
    }

    /// The holder a Lease's annotations name; what is missing (a Lease another tool wrote)
    /// reads as `?`, with the holder identity as the run.
    pub(super) fn from_annotations(
        annotations: Option<&BTreeMap<String, String>>,
        identity: &str,
    ) -> Self {
        let get = |key: &str| annotations.and_then(|a| a.get(key)).cloned();
        Self {
            run_id: get(RUN_ID).unwrap_or_else(|| identity.to_string()),
            runbook: get(RUNBOOK).unwrap_or_else(|| "?".into()),
            host: get(HOST).unwrap_or_else(|| "?".into()),
            pid: get(PID).and_then(|p| p.parse().ok()).unwrap_or(0),
            started: get(STARTED).unwrap_or_else(|| "?".into()),
            process_space: get(PROCESS_SPACE).unwrap_or_default(),
        }
    }

    /// Whether the holder's process is gone for certain: it ran in this boot and pid
    /// namespace (this machine, this container) and its pid is no more. A holder elsewhere
    /// is never judged gone: its Lease has to expire.
    pub fn is_gone(&self) -> bool {
        !self.process_space.is_empty()
            && self.process_space == process_space()
            && !std::path::Path::new(&format!("/proc/{}", self.pid)).exists()
    }
}

impl std::fmt::Display for LeaseHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "run {} ({}, on {} pid {}, since {})",
            self.run_id, self.runbook, self.host, self.pid, self.started
        )
    }
}

/// This boot of this machine and this pid namespace: `BOOT_ID/pid:[INODE]`, empty where the
/// kernel does not say. Two containers on one host share a host name and may share pids, but
/// not a pid namespace.
pub fn process_space() -> String {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let namespace = std::fs::read_link("/proc/self/ns/pid").unwrap_or_default();
    match (boot.trim(), namespace.to_str()) {
        ("", _) | (_, None | Some("")) => String::new(),
        (boot, Some(namespace)) => format!("{boot}/{namespace}"),
    }
}

/// This machine's name, as the kernel has it (a CI runner's or a pod's name), for the holder.
pub fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown-host".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder() -> LeaseHolder {
        LeaseHolder {
            run_id: "r-1".into(),
            runbook: "gpu-lab.rhai".into(),
            host: "ci-7".into(),
            pid: 42,
            started: "2026-12-07T06:00:00Z".into(),
            process_space: "boot/pid:[1]".into(),
        }
    }

    #[test]
    fn a_holder_reads_back_from_its_annotations() {
        let annotations = holder().annotations();
        assert_eq!(
            LeaseHolder::from_annotations(Some(&annotations), "r-1@ci-7"),
            holder()
        );
        assert_eq!(
            holder().to_string(),
            "run r-1 (gpu-lab.rhai, on ci-7 pid 42, since 2026-12-07T06:00:00Z)"
        );
    }

    #[test]
    fn a_holder_is_gone_only_when_its_pid_is_gone_from_this_process_space() {
        let here = LeaseHolder {
            pid: std::process::id(),
            process_space: process_space(),
            ..holder()
        };
        assert!(!here.process_space.is_empty());
        assert!(!here.is_gone(), "this process lives");
        // No pid is this high on Linux (pid_max is at most 2^22).
        let dead = LeaseHolder {
            pid: 1 << 23,
            ..here.clone()
        };
        assert!(dead.is_gone());
        let elsewhere = LeaseHolder {
            process_space: "another-boot/pid:[4026531836]".into(),
            ..dead
        };
        assert!(
            !elsewhere.is_gone(),
            "a pid elsewhere cannot be looked up here"
        );
    }

    #[test]
    fn a_lease_another_tool_wrote_names_its_identity() {
        let read = LeaseHolder::from_annotations(None, "kube-controller-manager_abc");
        assert_eq!(read.run_id, "kube-controller-manager_abc");
        assert_eq!(read.host, "?");
    }
}
