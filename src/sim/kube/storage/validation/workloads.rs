//! Deployments, ReplicaSets, DaemonSets, StatefulSets, Jobs and CronJobs: their selectors,
//! counts, strategies and pod templates.

use serde_json::Value;

use super::cron;
use super::errors::Errors;
use super::go_value::{label_selector, string_map};
use super::metadata::labels;
use super::pod::{BadQuantity, pod_spec};
use super::rollout::{daemon_set_strategy, deployment_strategy, stateful_set_strategy};
use crate::sim::kube::storage::selectors::LabelSelector;

/// The selector and the template's labels. A missing selector selects nothing, so the
/// template never matches it; a DaemonSet's is not required by name (upstream's checks).
fn selected_template(spec: &Value, kind: &str, errors: &mut Errors) {
    let selector = &spec["selector"];
    let template_labels = &spec["template"]["metadata"]["labels"];
    let mismatch = |errors: &mut Errors| {
        errors.push(
            "spec.template.metadata.labels",
            format!(
                "Invalid value: {}: `selector` does not match template `labels`",
                string_map(template_labels)
            ),
        );
    };
    if selector.is_null() {
        if kind != "DaemonSet" {
            errors.required("spec.selector");
        }
        return mismatch(errors);
    }
    let parsed = LabelSelector::from_object(selector);
    if parsed.is_empty() {
        // ReplicaSets share the Deployment's message.
        let named = if kind == "ReplicaSet" {
            "deployment".to_string()
        } else {
            kind.to_lowercase()
        };
        errors.push(
            "spec.selector",
            format!(
                "Invalid value: {}: empty selector is invalid for {named}",
                label_selector(selector)
            ),
        );
    } else if !parsed.matches(template_labels) {
        mismatch(errors);
    }
}

/// The template's labels and pod spec; its pods always restart.
fn template(spec: &Value, errors: &mut Errors) -> Result<(), BadQuantity> {
    labels(
        &spec["template"]["metadata"]["labels"],
        "spec.template.metadata.labels",
        errors,
    );
    let template_spec = &spec["template"]["spec"];
    pod_spec(template_spec, "spec.template.spec", errors)?;
    if let Some(policy) = template_spec["restartPolicy"].as_str()
        && policy != "Always"
    {
        errors.not_supported("spec.template.spec.restartPolicy", policy, &["Always"]);
    }
    Ok(())
}

pub(crate) fn replicated(
    kind: &str,
    object: &Value,
    errors: &mut Errors,
) -> Result<(), BadQuantity> {
    let spec = &object["spec"];
    selected_template(spec, kind, errors);
    if kind != "DaemonSet" {
        errors.non_negative("spec.replicas", &spec["replicas"]);
    }
    errors.non_negative("spec.minReadySeconds", &spec["minReadySeconds"]);
    errors.non_negative("spec.revisionHistoryLimit", &spec["revisionHistoryLimit"]);
    match kind {
        "Deployment" => deployment_strategy(spec, errors),
        "DaemonSet" => daemon_set_strategy(spec, errors),
        "StatefulSet" => stateful_set_strategy(spec, errors),
        _ => {}
    }
    if !spec["template"]["spec"]["activeDeadlineSeconds"].is_null() {
        // Deployments share ReplicaSets' template check, message and all.
        let owner = if kind == "Deployment" {
            "ReplicaSet"
        } else {
            kind
        };
        errors.forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            &format!("activeDeadlineSeconds in {owner} is not Supported"),
        );
    }
    template(spec, errors)
}

fn job_spec(spec: &Value, path: &str, errors: &mut Errors) -> Result<(), BadQuantity> {
    for field in [
        "parallelism",
        "completions",
        "backoffLimit",
        "activeDeadlineSeconds",
    ] {
        errors.non_negative(format!("{path}.{field}"), &spec[field]);
    }
    errors.one_of(
        format!("{path}.completionMode"),
        &spec["completionMode"],
        &["NonIndexed", "Indexed"],
    );
    if spec["completionMode"] == "Indexed" && spec["completions"].is_null() {
        errors.required_because(
            format!("{path}.completions"),
            "when completion mode is Indexed",
        );
    }
    let template_spec = &spec["template"]["spec"];
    labels(
        &spec["template"]["metadata"]["labels"],
        &format!("{path}.template.metadata.labels"),
        errors,
    );
    pod_spec(template_spec, &format!("{path}.template.spec"), errors)?;
    let restart_at = format!("{path}.template.spec.restartPolicy");
    match template_spec["restartPolicy"].as_str().unwrap_or_default() {
        "Always" | "" => {
            errors.required_because(restart_at, "valid values: \"OnFailure\", \"Never\"")
        }
        "OnFailure" | "Never" => {}
        other => errors.not_supported(restart_at, other, &["OnFailure", "Never"]),
    }
    Ok(())
}

pub(crate) fn job(object: &Value, errors: &mut Errors) -> Result<(), BadQuantity> {
    job_spec(&object["spec"], "spec", errors)
}

pub(crate) fn cron_job(object: &Value, errors: &mut Errors) -> Result<(), BadQuantity> {
    let spec = &object["spec"];
    match spec["schedule"].as_str().filter(|s| !s.is_empty()) {
        None => errors.required("spec.schedule"),
        Some(schedule) => {
            if let Some(why) = cron::parse_error(schedule) {
                errors.invalid("spec.schedule", &spec["schedule"], &why);
            }
            // A create; an update keeps a schedule that already had one (upstream's
            // allowTZInSchedule).
            if schedule.contains("TZ") {
                errors.invalid(
                    "spec.schedule",
                    &spec["schedule"],
                    "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
                );
            }
        }
    }
    time_zone(&spec["timeZone"], errors);
    errors.one_of(
        "spec.concurrencyPolicy",
        &spec["concurrencyPolicy"],
        &["Allow", "Forbid", "Replace"],
    );
    for field in [
        "startingDeadlineSeconds",
        "successfulJobsHistoryLimit",
        "failedJobsHistoryLimit",
    ] {
        errors.non_negative(format!("spec.{field}"), &spec[field]);
    }
    job_spec(
        &spec["jobTemplate"]["spec"],
        "spec.jobTemplate.spec",
        errors,
    )
}

/// IANA's zone and link names (tzdata 2025b): what Go's `time.LoadLocation` finds.
const TIME_ZONES: &str = include_str!("time_zones.txt");

/// Whether `time.LoadLocation(name)` finds a zone ("UTC" and "Local" are its own).
fn loads(name: &str) -> bool {
    name == "UTC"
        || name == "Local"
        || TIME_ZONES
            .lines()
            .filter(|line| !line.starts_with('#'))
            .any(|zone| zone == name)
}

/// `validateTimeZone`: well-formed parts, not `Local` (in any case), and a zone IANA's
/// database has, as the API server's `time.LoadLocation` answers it.
fn time_zone(zone: &Value, errors: &mut Errors) {
    let Some(name) = zone.as_str() else {
        return;
    };
    let path = "spec.timeZone";
    if name.is_empty() {
        return errors.invalid(path, zone, "timeZone must be nil or non-empty string");
    }
    let part_ok = |part: &str| {
        (1..=14).contains(&part.len())
            && part != "."
            && part != ".."
            && !part.starts_with('-')
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-+".contains(c))
    };
    if !name.split('/').all(part_ok) {
        return errors.invalid(path, zone, &format!("unknown time zone {name}"));
    }
    if name.eq_ignore_ascii_case("Local") {
        errors.invalid(
            path,
            zone,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        );
    }
    if !loads(name) {
        errors.invalid(path, zone, &format!("unknown time zone {name}"));
    }
}
