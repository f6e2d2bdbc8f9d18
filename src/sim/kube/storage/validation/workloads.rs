//! Deployments, ReplicaSets, DaemonSets, StatefulSets, Jobs and CronJobs: their selectors,
//! counts, strategies and pod templates.

use serde_json::Value;

use super::errors::Errors;
use super::go_value::{label_selector, string_map};
use super::metadata::labels;
use super::pod::{BadQuantity, pod_spec};
use crate::sim::kube::storage::selectors::LabelSelector;

const ALWAYS: [&str; 1] = ["Always"];
const JOB_RESTARTS: [&str; 2] = ["OnFailure", "Never"];

fn selected_template(spec: &Value, kind: &str, errors: &mut Errors) {
    let selector = &spec["selector"];
    if selector.is_null() {
        errors.required("spec.selector");
        return;
    }
    let parsed = LabelSelector::from_object(selector);
    let template_labels = &spec["template"]["metadata"]["labels"];
    if parsed.is_empty() {
        errors.push(
            "spec.selector",
            format!(
                "Invalid value: {}: empty selector is invalid for {kind}",
                label_selector(selector)
            ),
        );
    } else if !parsed.matches(template_labels) {
        errors.push(
            "spec.template.metadata.labels",
            format!(
                "Invalid value: {}: `selector` does not match template `labels`",
                string_map(template_labels)
            ),
        );
    }
}

fn template(spec: &Value, restart: &[&str], errors: &mut Errors) -> Result<(), BadQuantity> {
    labels(
        &spec["template"]["metadata"]["labels"],
        "spec.template.metadata.labels",
        errors,
    );
    pod_spec(
        &spec["template"]["spec"],
        "spec.template.spec",
        restart,
        errors,
    )
}

pub(crate) fn replicated(
    kind: &str,
    object: &Value,
    errors: &mut Errors,
) -> Result<(), BadQuantity> {
    let spec = &object["spec"];
    selected_template(spec, &kind.to_lowercase(), errors);
    if kind != "DaemonSet" {
        errors.non_negative("spec.replicas", &spec["replicas"]);
    }
    errors.non_negative("spec.minReadySeconds", &spec["minReadySeconds"]);
    errors.non_negative("spec.revisionHistoryLimit", &spec["revisionHistoryLimit"]);
    match kind {
        "Deployment" => {
            let strategy = &spec["strategy"];
            errors.one_of(
                "spec.strategy.type",
                &strategy["type"],
                &["Recreate", "RollingUpdate"],
            );
            if strategy["type"] == "Recreate" && !strategy["rollingUpdate"].is_null() {
                errors.forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                );
            }
        }
        "DaemonSet" => errors.one_of(
            "spec.updateStrategy.type",
            &spec["updateStrategy"]["type"],
            &["OnDelete", "RollingUpdate"],
        ),
        "StatefulSet" => {
            errors.one_of(
                "spec.podManagementPolicy",
                &spec["podManagementPolicy"],
                &["OrderedReady", "Parallel"],
            );
            errors.one_of(
                "spec.updateStrategy.type",
                &spec["updateStrategy"]["type"],
                &["OnDelete", "RollingUpdate"],
            );
        }
        _ => {}
    }
    template(spec, &ALWAYS, errors)
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
    let template_spec = &spec["template"]["spec"];
    labels(
        &spec["template"]["metadata"]["labels"],
        &format!("{path}.template.metadata.labels"),
        errors,
    );
    pod_spec(
        template_spec,
        &format!("{path}.template.spec"),
        &JOB_RESTARTS,
        errors,
    )
}

pub(crate) fn job(object: &Value, errors: &mut Errors) -> Result<(), BadQuantity> {
    job_spec(&object["spec"], "spec", errors)
}

pub(crate) fn cron_job(object: &Value, errors: &mut Errors) -> Result<(), BadQuantity> {
    let spec = &object["spec"];
    if spec["schedule"].as_str().is_none_or(str::is_empty) {
        errors.required("spec.schedule");
    }
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
