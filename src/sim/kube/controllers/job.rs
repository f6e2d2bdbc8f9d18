//! Jobs: parallelism, completions, backoffLimit and activeDeadlineSeconds.

use std::time::Duration;

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::{events, shared};
use crate::sim::kube::storage::state::{KubeState, Timer};
use crate::sim::timestamps::rfc3339;

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    for job in dirty.touched_objects(state, "jobs") {
        if !(shared::condition_true(&job, "Complete") || shared::condition_true(&job, "Failed")) {
            reconcile(state, job);
        }
    }
}

fn reconcile(state: &mut KubeState, mut job: Value) {
    let uid = shared::uid(&job).to_string();
    let now = rfc3339(state.now);
    let spec = job["spec"].clone();
    let completions = spec["completions"].as_i64().unwrap_or(1);
    let parallelism = spec["parallelism"].as_i64().unwrap_or(1);
    let backoff_limit = spec["backoffLimit"].as_i64().unwrap_or(6);
    if job["status"]["startTime"].is_null() {
        start(state, &mut job, &now);
    }
    let pods: Vec<Value> = state.owned("pods", &uid);
    let count = |phase: &str| {
        pods.iter()
            .filter(|p| p["status"]["phase"] == phase)
            .count() as i64
    };
    let (succeeded, failed) = (count("Succeeded"), count("Failed"));
    let active: Vec<&Value> = pods.iter().filter(|p| !shared::is_terminal(p)).collect();
    let active = if succeeded >= completions {
        complete(state, &mut job, &now);
        active.len()
    } else if failed > backoff_limit {
        fail(
            state,
            &mut job,
            &active,
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        );
        0
    } else {
        let want = parallelism.min(completions - succeeded).max(0) as usize;
        create_pods(state, &job, &uid, active.len(), want)
    };
    let ready = pods.iter().filter(|p| shared::pod_ready(p)).count();
    write_status(&mut job, active, succeeded, failed, ready);
    shared::update(state, "jobs", job);
}

/// Stamps the start, and arms `activeDeadlineSeconds`.
fn start(state: &mut KubeState, job: &mut Value, now: &str) {
    job["status"]["startTime"] = json!(now);
    if let Some(seconds) = job["spec"]["activeDeadlineSeconds"].as_u64() {
        let (namespace, name) = (
            shared::namespace(job).to_string(),
            shared::name(job).to_string(),
        );
        state.schedule(
            Duration::from_secs(seconds),
            Timer::JobDeadline {
                namespace,
                name,
                uid: shared::uid(job).to_string(),
            },
        );
    }
}

fn complete(state: &mut KubeState, job: &mut Value, now: &str) {
    job["status"]["completionTime"] = json!(now);
    shared::set_condition(
        job,
        json!({"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods", "lastProbeTime": now}),
        now,
    );
    shared::set_condition(
        job,
        json!({"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods", "lastProbeTime": now}),
        now,
    );
    events::record(
        state,
        job,
        false,
        "Completed",
        "Job completed",
        "job-controller",
    );
}

/// Creates pods until `want` are active (or the API refuses one); how many are active then.
fn create_pods(state: &mut KubeState, job: &Value, uid: &str, active: usize, want: usize) -> usize {
    let mut active = active;
    while active < want {
        let name = format!("{}-{}", shared::name(job), state.next_suffix(5));
        let labels = [
            ("batch.kubernetes.io/job-name", shared::name(job)),
            ("job-name", shared::name(job)),
        ];
        let mut pod = shared::pod_from_template(job, name.clone(), &labels);
        pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] = json!(uid);
        pod["metadata"]["labels"]["controller-uid"] = json!(uid);
        if shared::create(state, "pods", pod).is_none() {
            break;
        }
        events::record(
            state,
            job,
            false,
            "SuccessfulCreate",
            &format!("Created pod: {name}"),
            "job-controller",
        );
        active += 1;
    }
    active
}

fn write_status(job: &mut Value, active: usize, succeeded: i64, failed: i64, ready: usize) {
    job["status"]["active"] = json!(active);
    job["status"]["succeeded"] = json!(succeeded);
    job["status"]["failed"] = json!(failed);
    job["status"]["ready"] = json!(ready);
    job["status"]["terminating"] = json!(0);
    job["status"]["uncountedTerminatedPods"] = json!({});
    if let Some(status) = job["status"].as_object_mut() {
        for key in ["active", "succeeded", "failed"] {
            if status[key] == 0 {
                status.remove(key);
            }
        }
    }
}

fn fail(state: &mut KubeState, job: &mut Value, active: &[&Value], reason: &str, message: &str) {
    let now = rfc3339(state.now);
    for pod in active.iter().filter(|p| !p.is_null()) {
        shared::remove(state, "pods", pod);
    }
    shared::set_condition(
        job,
        json!({"type": "FailureTarget", "status": "True", "reason": reason, "message": message, "lastProbeTime": now}),
        &now,
    );
    shared::set_condition(
        job,
        json!({"type": "Failed", "status": "True", "reason": reason, "message": message, "lastProbeTime": now}),
        &now,
    );
    events::record(state, job, true, reason, message, "job-controller");
}

/// The Job's deadline passed: fail it if it is still running.
pub(super) fn deadline_passed(state: &mut KubeState, namespace: &str, name: &str, uid: &str) {
    let Some(mut job) = state.object("jobs", namespace, name) else {
        return;
    };
    if shared::uid(&job) != uid
        || shared::condition_true(&job, "Complete")
        || shared::condition_true(&job, "Failed")
    {
        return;
    }
    let pods: Vec<Value> = state
        .owned("pods", uid)
        .into_iter()
        .filter(|p| !shared::is_terminal(p))
        .collect();
    let active: Vec<&Value> = pods.iter().collect();
    fail(
        state,
        &mut job,
        &active,
        "DeadlineExceeded",
        "Job was active longer than specified deadline",
    );
    job["status"]["active"] = json!(0);
    if let Some(status) = job["status"].as_object_mut() {
        status.remove("active");
    }
    shared::update(state, "jobs", job);
}
