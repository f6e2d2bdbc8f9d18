//! What a GPU health check reads on each node, collected through one probe pod per node (the
//! DCGM image, privileged for the kernel log): the `--query-gpu` counters, the kernel log,
//! and `dcgmi diag` at the level asked. A node that cannot answer is reported with why, never
//! raised, so one dead node does not hide the others.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use serde::Serialize;
use serde_json::{Map, Value};

use super::pause::concurrency;
use super::probe::{self, Probe};
use crate::clients::kube::{ExecOutput, KubeClient, KubeError};
use crate::clock::Clock;
use crate::gpu::nvidia_smi::parse_csv;

/// The probe pods' kind label: `runbook/probe=gpu-health`.
pub const PROBE_KIND: &str = "gpu-health";

/// Each GPU's NVLinks and their state.
const NVLINK: [&str; 3] = ["nvidia-smi", "nvlink", "-s"];

/// nvidia-smi's exit statuses that still tell the GPU count: no GPU found (6), a GPU lost (15).
const NO_DEVICES: i64 = 6;
const GPU_LOST: i64 = 15;

pub struct HealthSpec {
    /// Which nodes: a label selector, or the names themselves.
    pub selector: Option<String>,
    pub names: Option<Vec<String>>,
    /// The `--query-gpu` fields the judgement reads.
    pub fields: Vec<String>,
    /// `dcgmi diag -r LEVEL`; 0 runs no diagnostic.
    pub level: u32,
    /// Image of the probe pod: it needs `dcgmi`, `nv-hostengine` and `dmesg`.
    pub image: String,
    pub namespace: String,
    pub concurrency: usize,
    /// For one node, probe start included.
    pub timeout: Duration,
    /// The watchdog on `dcgmi diag`: past it the diagnostic hung (see [`dcgm_watchdog`]).
    pub dcgm_timeout: Duration,
}

/// How long `dcgmi diag -r LEVEL` may take before it is called hung: several times what
/// DCGM's documentation gives its levels (1 "quick", seconds; 2 "medium", about 2 minutes;
/// 3 "long", about 15 minutes; 4 "extended", up to about 2 hours where it is run), so that a
/// slow run is not a hang.
pub fn dcgm_watchdog(level: u32) -> Duration {
    Duration::from_secs(match level {
        0 | 1 => 5 * 60,
        2 => 10 * 60,
        3 => 45 * 60,
        _ => 4 * 60 * 60,
    })
}

/// The words for a diagnostic the watchdog stopped waiting for.
fn hung(level: &str, waited: Duration) -> String {
    format!(
        "dcgmi diag -r {level} gave no answer within {} (the DCGM watchdog)",
        crate::clock::format_duration(waited)
    )
}

/// One node's outputs, each `None` when it was not collected (with the reason in `errors`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeOutputs {
    pub node: String,
    /// The probe pod (`namespace/name`).
    pub via: String,
    /// Rows of the query, keyed by field; empty when nvidia-smi found no GPU it could reach.
    pub gpus: Option<Vec<Map<String, Value>>>,
    pub kernel_log: Option<String>,
    /// The text of `dcgmi diag -j`.
    pub dcgm: Option<String>,
    /// The text of `nvidia-smi nvlink -s` (each GPU's links; only `GPU n:` lines on PCIe).
    pub nvlink: Option<String>,
    pub errors: Vec<String>,
    /// Query fields this node's driver does not know (an older driver): asked again without
    /// them, so their checks did not run there.
    pub unknown_fields: Vec<String>,
    /// The watchdog's words when `dcgmi diag` never answered: a verdict of its own, so that a
    /// hung DCGM is neither a healthy node nor a sick GPU.
    pub dcgm_hung: Option<String>,
}

fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|p| (*p).to_string()).collect()
}

/// What one command printed: its exit status and outputs, or why it could not run.
type Ran = Result<ExecOutput, String>;

/// The `--query-gpu` command the judgement reads.
fn query_command(fields: &[String]) -> Vec<String> {
    vec![
        "nvidia-smi".to_string(),
        format!("--query-gpu={}", fields.join(",")),
        "--format=csv,noheader,nounits".to_string(),
    ]
}

/// The field nvidia-smi refused by name (`Field "X" is not a valid field to query.`), when it
/// is one of `fields` and others remain to ask.
fn refused_field(ran: &Ran, fields: &[String]) -> Option<String> {
    let out = ran.as_ref().ok()?;
    if out.exit_code == 0 || fields.len() < 2 {
        return None;
    }
    let said = format!("{}{}", out.stdout, out.stderr);
    let rest = said.split_once("Field \"")?.1;
    let (field, tail) = rest.split_once('"')?;
    (tail.trim_start().starts_with("is not a valid field") && fields.iter().any(|f| f == field))
        .then(|| field.to_string())
}

/// The GPUs' rows from nvidia-smi's answer; what went wrong in `errors`.
fn gpus(ran: Ran, fields: &[String], errors: &mut Vec<String>) -> Option<Vec<Map<String, Value>>> {
    let out = match ran {
        Ok(out) => out,
        Err(e) => {
            errors.push(format!("nvidia-smi: {e}"));
            return None;
        }
    };
    let names: Vec<&str> = fields.iter().map(String::as_str).collect();
    match out.exit_code {
        0 | GPU_LOST => {
            if out.exit_code == GPU_LOST {
                errors.push(format!("nvidia-smi: {}", out.stderr.trim()));
            }
            match parse_csv(&out.stdout, Some(&names)) {
                Ok(rows) => Some(rows),
                Err(e) => {
                    errors.push(format!("nvidia-smi: {e}"));
                    None
                }
            }
        }
        NO_DEVICES => {
            errors.push(format!("nvidia-smi: {}", out.stdout.trim()));
            Some(Vec::new())
        }
        code => {
            errors.push(format!(
                "nvidia-smi exited {code}: {}{}",
                out.stdout.trim(),
                out.stderr.trim()
            ));
            None
        }
    }
}

/// The stdout of `command` when it exited 0; its failure in `errors` otherwise.
fn text_of(ran: Ran, command: &[&str], errors: &mut Vec<String>) -> Option<String> {
    match ran {
        Ok(out) if out.exit_code == 0 => Some(out.stdout),
        Ok(out) => {
            errors.push(format!(
                "{} exited {}: {}",
                command.join(" "),
                out.exit_code,
                format!("{} {}", out.stdout.trim(), out.stderr.trim()).trim()
            ));
            None
        }
        Err(e) => {
            errors.push(format!("{}: {e}", command.join(" ")));
            None
        }
    }
}

async fn exec_in(kube: &KubeClient, namespace: &str, pod: &str, command: &[String]) -> Ran {
    kube.exec(pod, Some(namespace), command, None)
        .await
        .map_err(|e| e.to_string())
}

/// A node whose probe pod is up and whose quick reads are done; `pod` is `None` when the probe
/// could not start (why is in the outputs).
struct Opened {
    outputs: NodeOutputs,
    pod: Option<String>,
}

/// Starts the node's probe and reads its GPUs, NVLinks and kernel log.
async fn open(kube: &KubeClient, node: &str, spec: &HealthSpec, clock: &dyn Clock) -> Opened {
    let probe = Probe {
        kind: PROBE_KIND,
        image: &spec.image,
        namespace: &spec.namespace,
        command: &["nv-hostengine", "-n", "-b", "127.0.0.1"],
        privileged: true,
        host_network: false,
    };
    let mut outputs = NodeOutputs {
        node: node.to_string(),
        via: format!("{}/{}", spec.namespace, probe::probe_name(PROBE_KIND, node)),
        gpus: None,
        kernel_log: None,
        dcgm: None,
        nvlink: None,
        errors: Vec::new(),
        unknown_fields: Vec::new(),
        dcgm_hung: None,
    };
    let pod = match probe::start(kube, &probe, node, spec.timeout, clock).await {
        Ok(pod) => pod,
        Err(why) => {
            outputs.errors.push(why);
            return Opened { outputs, pod: None };
        }
    };
    let namespace = &spec.namespace;
    let mut fields = spec.fields.clone();
    let mut ran = exec_in(kube, namespace, &pod, &query_command(&fields)).await;
    while let Some(field) = refused_field(&ran, &fields) {
        fields.retain(|f| *f != field);
        outputs.unknown_fields.push(field);
        ran = exec_in(kube, namespace, &pod, &query_command(&fields)).await;
    }
    let errors = &mut outputs.errors;
    outputs.gpus = gpus(ran, &fields, errors);
    let ran = exec_in(kube, namespace, &pod, &argv(&NVLINK)).await;
    outputs.nvlink = text_of(ran, &NVLINK, errors);
    let ran = exec_in(kube, namespace, &pod, &argv(&["dmesg"])).await;
    outputs.kernel_log = text_of(ran, &["dmesg"], errors);
    Opened {
        outputs,
        pod: Some(pod),
    }
}

/// `dcgmi diag` at the spec's level in the node's probe, under the watchdog; `in_flight`
/// counts the diagnostics not yet answered (see [`driven`]).
async fn diagnose(
    kube: &KubeClient,
    opened: &mut Opened,
    spec: &HealthSpec,
    clock: &dyn Clock,
    in_flight: &AtomicUsize,
) {
    let (Some(pod), true) = (&opened.pod, spec.level > 0) else {
        return;
    };
    let level = spec.level.to_string();
    let command = ["dcgmi", "diag", "-r", level.as_str(), "-j"];
    in_flight.fetch_add(1, Ordering::SeqCst);
    let diag = argv(&command);
    let running = exec_in(kube, &spec.namespace, pod, &diag);
    // The watchdog runs on the run's clock: on the twin it waits in virtual time for the
    // diagnostics it watches.
    let watchdog = clock.wake_at(clock.now() + spec.dcgm_timeout);
    let answered = tokio::select! {
        ran = running => Some(ran),
        () = watchdog => None,
    };
    in_flight.fetch_sub(1, Ordering::SeqCst);
    let outputs = &mut opened.outputs;
    match answered {
        Some(ran) => outputs.dcgm = text_of(ran, &command, &mut outputs.errors),
        None => {
            let why = hung(&level, spec.dcgm_timeout);
            outputs.errors.push(why.clone());
            outputs.dcgm_hung = Some(why);
        }
    }
}

async fn close(kube: &KubeClient, opened: Opened, spec: &HealthSpec) -> NodeOutputs {
    if let Some(pod) = &opened.pod {
        probe::stop(kube, &spec.namespace, pod).await;
    }
    opened.outputs
}

/// One node from start to end: on a real clock, nodes go through this `concurrency` at a time.
async fn one(kube: &KubeClient, node: &str, spec: &HealthSpec, clock: &dyn Clock) -> NodeOutputs {
    let mut opened = open(kube, node, spec, clock).await;
    diagnose(kube, &mut opened, spec, clock, &AtomicUsize::new(0)).await;
    close(kube, opened, spec).await
}

/// Waits for `work` on a virtual clock: whenever every diagnostic in flight waits in the
/// twin for its end (parked on the clock, [`Clock::parked`]), only time can move them, so the
/// clock goes on to its next event. Diagnostics that run at once then take their time
/// together, as on real nodes: four nodes at level 3 take 15 minutes, not an hour.
async fn driven<T>(
    clock: &dyn Clock,
    in_flight: &AtomicUsize,
    work: impl std::future::Future<Output = T>,
) -> T {
    tokio::pin!(work);
    loop {
        tokio::select! {
            biased;
            out = &mut work => return out,
            () = tokio::time::sleep(Duration::from_millis(1)) => {
                let waiting = in_flight.load(Ordering::SeqCst);
                if waiting > 0 && clock.parked() >= waiting {
                    clock.idle_until(clock.now() + Duration::from_secs(24 * 3600)).await;
                }
            }
        }
    }
}

/// `command` on this machine, within `timeout` (killed past it).
async fn run_here(command: &[String], timeout: Duration) -> Ran {
    let running = tokio::process::Command::new(&command[0])
        .args(&command[1..])
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(timeout, running).await {
        Err(_) => Err(format!("no answer within {}s", timeout.as_secs())),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Err("not found on this machine's PATH".into())
        }
        Ok(Err(e)) => Err(format!("cannot run it here: {e}")),
        Ok(Ok(out)) => Ok(ExecOutput {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            exit_code: i64::from(out.status.code().unwrap_or(-1)),
        }),
    }
}

/// The same outputs read on this machine (a GPU host: a hybrid node, a Slurm prolog, a
/// DaemonSet's pod): its nvidia-smi, its kernel log, and `dcgmi diag` where DCGM is installed
/// (none is run, and none is asked for, where it is not). Each command gets `timeout`.
pub async fn collect_local(
    fields: &[String],
    level: u32,
    timeout: Duration,
    dcgm_timeout: Duration,
) -> NodeOutputs {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .unwrap_or_else(|| "localhost".into());
    let mut outputs = NodeOutputs {
        node: host,
        via: "local".into(),
        gpus: None,
        kernel_log: None,
        dcgm: None,
        nvlink: None,
        errors: Vec::new(),
        unknown_fields: Vec::new(),
        dcgm_hung: None,
    };
    let mut fields = fields.to_vec();
    let mut ran = run_here(&query_command(&fields), timeout).await;
    while let Some(field) = refused_field(&ran, &fields) {
        fields.retain(|f| *f != field);
        outputs.unknown_fields.push(field);
        ran = run_here(&query_command(&fields), timeout).await;
    }
    let errors = &mut outputs.errors;
    outputs.gpus = gpus(ran, &fields, errors);
    outputs.nvlink = text_of(run_here(&argv(&NVLINK), timeout).await, &NVLINK, errors);
    outputs.kernel_log = text_of(
        run_here(&argv(&["dmesg"]), timeout).await,
        &["dmesg"],
        errors,
    );
    if level > 0 {
        let level = level.to_string();
        let command = ["dcgmi", "diag", "-r", level.as_str(), "-j"];
        let ran = run_here(&argv(&command), dcgm_timeout).await;
        outputs.dcgm = match ran {
            Err(why) if why.starts_with("not found") => None,
            Err(why) if why.starts_with("no answer within") => {
                let why = hung(&level, dcgm_timeout);
                errors.push(why.clone());
                outputs.dcgm_hung = Some(why);
                None
            }
            ran => text_of(ran, &command, errors),
        };
    }
    outputs
}

/// Collects from every node the spec names, `concurrency` at a time, ordered by node name.
pub async fn collect(
    kube: &KubeClient,
    spec: &HealthSpec,
    clock: &dyn Clock,
) -> Result<Vec<NodeOutputs>, KubeError> {
    let nodes: Vec<String> = match &spec.names {
        Some(names) => names.clone(),
        None => probe::node_names(kube, spec.selector.clone()).await?,
    };
    let mut answers: Vec<NodeOutputs> = if clock.is_virtual() {
        // Probes start one at a time (pause.rs: a deterministic clock), then the diagnostics
        // run `concurrency` at a time, as they would on real nodes, and take their time there.
        let mut opened = Vec::new();
        for node in &nodes {
            opened.push(open(kube, node, spec, clock).await);
        }
        let in_flight = AtomicUsize::new(0);
        let diagnosed: Vec<Opened> = driven(
            clock,
            &in_flight,
            futures::stream::iter(opened)
                .map(|mut o| {
                    let in_flight = &in_flight;
                    async move {
                        diagnose(kube, &mut o, spec, clock, in_flight).await;
                        o
                    }
                })
                .buffer_unordered(spec.concurrency.max(1))
                .collect(),
        )
        .await;
        let mut closed = Vec::new();
        for o in diagnosed {
            closed.push(close(kube, o, spec).await);
        }
        closed
    } else {
        futures::stream::iter(nodes.iter())
            .map(|node| one(kube, node, spec, clock))
            .buffer_unordered(concurrency(spec.concurrency, clock))
            .collect()
            .await
    };
    answers.sort_by(|a, b| a.node.cmp(&b.node));
    Ok(answers)
}

/// Deletes the probe pods a cut-short collection left behind.
pub async fn remove_health_probes(kube: &KubeClient, namespace: &str) -> Result<(), KubeError> {
    probe::remove_all(kube, namespace, PROBE_KIND).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_the_probe_runs_is_one_a_read_only_run_allows() {
        let fields: Vec<String> = ["index", "uuid"].map(String::from).into();
        assert!(crate::guard::reads_only(&query_command(&fields)));
        assert!(crate::guard::reads_only(&argv(&NVLINK)));
        assert!(crate::guard::reads_only(&argv(&["dmesg"])));
        for level in ["1", "2", "3", "4"] {
            assert!(crate::guard::reads_only(&argv(&[
                "dcgmi", "diag", "-r", level, "-j"
            ])));
        }
    }

    fn answered(stdout: &str, exit_code: i64) -> Ran {
        Ok(ExecOutput {
            stdout: stdout.into(),
            stderr: String::new(),
            exit_code,
        })
    }

    #[test]
    fn a_field_the_driver_does_not_know_is_named_by_nvidia_smi() {
        let fields: Vec<String> = ["index", "gpu_recovery_action"].map(String::from).to_vec();
        // nvidia-smi 580's own words (tests/fixtures/real/nvidia_smi_error_invalid_field_580.159.txt).
        let refused = answered(
            "Field \"gpu_recovery_action\" is not a valid field to query.\n\n",
            2,
        );
        assert_eq!(
            refused_field(&refused, &fields).as_deref(),
            Some("gpu_recovery_action")
        );
        // Not one we asked for, the last field left, or a success: nothing to drop.
        let other = answered("Field \"bogus.field\" is not a valid field to query.\n", 2);
        assert_eq!(refused_field(&other, &fields), None);
        assert_eq!(refused_field(&refused, &fields[1..]), None);
        assert_eq!(refused_field(&answered("0, None\n", 0), &fields), None);
    }
}
