//! A container's probes and lifecycle hooks, as Kubernetes 1.35's `validateProbe`,
//! `validateHandler` and `validateLifecycle` check them (pkg/apis/core/validation, after the
//! v1 defaults: a zero period or threshold never reaches them).

use serde_json::Value;

use super::errors::Errors;
use super::names::{http_header_name, port_name, port_number};

/// The handlers a probe may have, in the order upstream looks at them.
const PROBE_HANDLERS: [&str; 4] = ["exec", "httpGet", "tcpSocket", "grpc"];
/// A lifecycle hook's handlers (no gRPC; sleep instead).
const HOOK_HANDLERS: [&str; 4] = ["exec", "httpGet", "tcpSocket", "sleep"];

/// `ValidatePortNumOrName`: a number in range, or a port name.
fn port(value: &Value, path: &str, errors: &mut Errors) {
    let messages = match value {
        Value::String(name) => port_name(name),
        other => port_number(other.as_i64().unwrap_or(0)),
    };
    for message in messages {
        errors.invalid(path, value, &message);
    }
}

fn handler_action(name: &str, action: &Value, at: &str, grace: Option<i64>, errors: &mut Errors) {
    match name {
        "exec" if action["command"].as_array().is_none_or(Vec::is_empty) => {
            errors.required(format!("{at}.command"));
        }
        "httpGet" => {
            if action["path"].as_str().is_none_or(str::is_empty) {
                errors.required(format!("{at}.path"));
            }
            port(&action["port"], &format!("{at}.port"), errors);
            errors.one_of(
                format!("{at}.scheme"),
                &action["scheme"],
                &["HTTP", "HTTPS"],
            );
            for header in action["httpHeaders"].as_array().into_iter().flatten() {
                let name = header["name"].as_str().unwrap_or_default();
                for message in http_header_name(name) {
                    errors.invalid(format!("{at}.httpHeaders"), &header["name"], &message);
                }
            }
        }
        "tcpSocket" | "grpc" => port(&action["port"], &format!("{at}.port"), errors),
        "sleep" => {
            let seconds = action["seconds"].as_i64().unwrap_or(0);
            if let Some(grace) = grace
                && (seconds <= 0 || seconds > grace)
            {
                errors.invalid(
                    at,
                    &action["seconds"],
                    &format!(
                        "must be greater than 0 and less than terminationGracePeriodSeconds ({grace}). Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep."
                    ),
                );
            }
        }
        _ => {}
    }
}

/// `validateHandler`: exactly one handler; the first is checked, any other is forbidden.
fn handler(handler: &Value, path: &str, kinds: &[&str], grace: Option<i64>, errors: &mut Errors) {
    let mut found = false;
    for name in kinds {
        let action = &handler[*name];
        if action.is_null() {
            continue;
        }
        let at = format!("{path}.{name}");
        if found {
            errors.forbidden(at, "may not specify more than 1 handler type");
        } else {
            found = true;
            handler_action(name, action, &at, grace, errors);
        }
    }
    if !found {
        errors.required_because(path, "must specify a handler type");
    }
}

/// `validateProbe` and what liveness, readiness and startup probes add to it.
fn probe(probe: &Value, path: &str, kind: &str, grace: Option<i64>, errors: &mut Errors) {
    handler(probe, path, &PROBE_HANDLERS, grace, errors);
    for field in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        errors.non_negative(format!("{path}.{field}"), &probe[field]);
    }
    let own_grace = &probe["terminationGracePeriodSeconds"];
    if own_grace.as_i64().is_some_and(|g| g <= 0) {
        errors.invalid(
            format!("{path}.terminationGracePeriodSeconds"),
            own_grace,
            "must be greater than 0",
        );
    }
    match kind {
        "readinessProbe" if !own_grace.is_null() => errors.invalid(
            format!("{path}.terminationGracePeriodSeconds"),
            own_grace,
            "must not be set for readinessProbes",
        ),
        "livenessProbe" | "startupProbe" if probe["successThreshold"].as_i64() != Some(1) => {
            errors.invalid(
                format!("{path}.successThreshold"),
                &probe["successThreshold"],
                "must be 1",
            );
        }
        _ => {}
    }
}

/// A container's lifecycle hooks and probes. An init container that is not a sidecar
/// (`restartPolicy: Always`) may have none of them.
pub(crate) fn container_probes(
    container: &Value,
    path: &str,
    init: bool,
    grace: Option<i64>,
    errors: &mut Errors,
) {
    let hooks_and_probes = [
        "lifecycle",
        "livenessProbe",
        "readinessProbe",
        "startupProbe",
    ];
    if init && container["restartPolicy"] != "Always" {
        for field in hooks_and_probes {
            if !container[field].is_null() {
                errors.forbidden(
                    format!("{path}.{field}"),
                    "may not be set for init containers without restartPolicy=Always",
                );
            }
        }
        return;
    }
    for hook in ["postStart", "preStop"] {
        let value = &container["lifecycle"][hook];
        if !value.is_null() {
            let at = format!("{path}.lifecycle.{hook}");
            handler(value, &at, &HOOK_HANDLERS, grace, errors);
        }
    }
    for kind in &hooks_and_probes[1..] {
        let value = &container[*kind];
        if !value.is_null() {
            probe(value, &format!("{path}.{kind}"), kind, grace, errors);
        }
    }
}
