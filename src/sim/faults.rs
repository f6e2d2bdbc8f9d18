//! Faults a drill can switch on in the twin, by name: `check=NAME` (a readyz/livez check
//! fails), `nodegroup-never-joins=NAME` (that node group's new instances never become nodes),
//! `aws-throttle=RATE`, `aws-5xx=RATE` (a share of AWS calls fails, 0.0-1.0),
//! `aws-latency=DURATION` (added to every AWS call) and `kube-latency=DURATION` (added to every
//! Kubernetes API request, exec included). `NAME=off` (or `heal=NAME`) turns one off.

use super::twin::Twin;
use crate::clock::parse_duration;

pub const NAMES: &str = "check=NAME, nodegroup-never-joins=NAME, aws-throttle=RATE, aws-5xx=RATE, aws-latency=DURATION, kube-latency=DURATION";

fn rate(name: &str, value: &str) -> Result<f64, String> {
    if value == "off" {
        return Ok(0.0);
    }
    value
        .parse::<f64>()
        .ok()
        .filter(|r| (0.0..=1.0).contains(r))
        .ok_or_else(|| format!("fault {name}: the rate is a number from 0.0 to 1.0, got `{value}`"))
}

fn latency(name: &str, value: &str) -> Result<std::time::Duration, String> {
    if value == "off" {
        return Ok(std::time::Duration::ZERO);
    }
    parse_duration(value).map_err(|e| format!("fault {name}: {e}"))
}

/// Switches one fault given as `name=value`; answers what is now on, in words.
pub fn apply(twin: &Twin, spec: &str) -> Result<String, String> {
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| format!("fault `{spec}` needs a value: one of {NAMES}"))?;
    match name {
        "check" => {
            twin.kube(|s| s.failing_checks.insert(value.to_string()));
        }
        "heal" => {
            twin.kube(|s| s.failing_checks.remove(value));
            twin.aws(|s| s.failing_joins.remove(value));
        }
        "nodegroup-never-joins" => {
            twin.aws(|s| s.failing_joins.insert(value.to_string()));
        }
        "aws-throttle" => {
            let rate = rate(name, value)?;
            twin.aws(|s| s.faults.throttle_rate = rate);
        }
        "aws-5xx" => {
            let rate = rate(name, value)?;
            twin.aws(|s| s.faults.error_rate = rate);
        }
        "aws-latency" => {
            let latency = latency(name, value)?;
            twin.aws(|s| s.faults.latency = latency);
        }
        "kube-latency" => {
            let latency = latency(name, value)?;
            twin.kube(|s| s.latency = latency);
        }
        other => return Err(format!("unknown fault `{other}`; the twin knows {NAMES}")),
    }
    Ok(describe(twin))
}

/// The faults that are on, in words.
pub fn describe(twin: &Twin) -> String {
    let mut on: Vec<String> = twin.read_kube(|s| {
        let mut on: Vec<String> = s
            .failing_checks
            .iter()
            .map(|c| format!("check={c}"))
            .collect();
        if !s.latency.is_zero() {
            on.push(format!("kube-latency={}ms", s.latency.as_millis()));
        }
        on
    });
    twin.aws(|s| {
        on.extend(
            s.failing_joins
                .iter()
                .map(|n| format!("nodegroup-never-joins={n}")),
        );
        if s.faults.throttle_rate > 0.0 {
            on.push(format!("aws-throttle={}", s.faults.throttle_rate));
        }
        if s.faults.error_rate > 0.0 {
            on.push(format!("aws-5xx={}", s.faults.error_rate));
        }
        if !s.faults.latency.is_zero() {
            on.push(format!("aws-latency={}ms", s.faults.latency.as_millis()));
        }
    });
    if on.is_empty() {
        "no faults".into()
    } else {
        on.join(", ")
    }
}
