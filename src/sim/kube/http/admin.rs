//! The twin's own endpoints under `/twin/`: read and advance the virtual clock, switch
//! health-check faults, count the requests served and say which kinds they were. Real clusters have no such thing; tests and the REPL use them.

use http::{Method, Response};
use serde_json::json;

use super::routes::Query;
use super::server::{Body, json_response};
use crate::clock::{Clock, parse_duration};
use crate::sim::faults;
use crate::sim::twin::Twin;

pub(crate) fn handle(twin: &Twin, method: &Method, path: &str, query: &Query) -> Response<Body> {
    match (method.as_str(), path) {
        ("GET", "requests") => requests(twin),
        ("POST", "record") if query.has("on") => {
            twin.recording.start();
            json_response(200, &json!([]))
        }
        ("POST", "record") if query.has("off") => json_response(
            200,
            &serde_json::to_value(twin.recording.stop()).unwrap_or_default(),
        ),
        ("GET", "record") => json_response(
            200,
            &serde_json::to_value(twin.recording.kept()).unwrap_or_default(),
        ),
        ("GET", "audit") => audit(twin),
        ("POST", "audit") if query.has("reset") => {
            twin.audit.clear();
            json_response(200, &json!([]))
        }
        ("GET", "clock") => clock(twin),
        ("POST", "advance") => advance(twin, query),
        ("POST", "faults") => set_faults(twin, query),
        _ => json_response(
            404,
            &json!({"error": format!("no twin endpoint {method} /twin/{path}; try GET /twin/clock, GET /twin/audit, POST /twin/advance?by=5m, POST /twin/faults?fail=etcd or ?set=aws-throttle=0.2")}),
        ),
    }
}

fn requests(twin: &Twin) -> Response<Body> {
    let (kubernetes, aws) = twin.requests.totals();
    let (kube_connections, aws_connections) = twin.requests.connections();
    json_response(
        200,
        &json!({"kubernetes": kubernetes, "aws": aws,
                "connections": {"kubernetes": kube_connections, "aws": aws_connections}}),
    )
}

fn audit(twin: &Twin) -> Response<Body> {
    let entries = twin.audit.entries().into_iter().map(|(attributes, count)| {
        let mut entry = serde_json::to_value(attributes).unwrap_or_default();
        entry["count"] = json!(count);
        entry
    });
    json_response(200, &serde_json::Value::Array(entries.collect()))
}

fn clock(twin: &Twin) -> Response<Body> {
    json_response(
        200,
        &json!({"virtual_ms": twin.clock.now().as_millis() as u64}),
    )
}

/// `POST /twin/advance?by=5m`: moves the virtual clock, answering the new time.
fn advance(twin: &Twin, query: &Query) -> Response<Body> {
    match query.get("by").map(parse_duration) {
        Some(Ok(by)) => {
            twin.clock.advance(by);
            clock(twin)
        }
        Some(Err(e)) => json_response(400, &json!({"error": e.to_string()})),
        None => json_response(
            400,
            &json!({"error": "advance needs ?by=<duration>, e.g. ?by=5m"}),
        ),
    }
}

/// `POST /twin/faults?fail=CHECK|heal=NAME|set=SPEC`: applies each, answering what fails now.
fn set_faults(twin: &Twin, query: &Query) -> Response<Body> {
    let mut changes: Vec<String> = Vec::new();
    if let Some(check) = query.get("fail") {
        changes.push(format!("check={check}"));
    }
    if let Some(name) = query.get("heal") {
        changes.push(format!("heal={name}"));
    }
    if let Some(spec) = query.get("set") {
        changes.push(spec.to_string());
    }
    for change in changes {
        if let Err(error) = faults::apply(twin, &change) {
            return json_response(400, &json!({"error": error}));
        }
    }
    let failing = twin.read_kube(|s| s.failing_checks.iter().cloned().collect::<Vec<_>>());
    json_response(
        200,
        &json!({"failing_checks": failing, "faults": faults::describe(twin)}),
    )
}
