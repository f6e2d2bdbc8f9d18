//! Pod logs: `container`, `tailLines`, `sinceSeconds`, `timestamps`, and `follow` until the
//! pod ends.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::Response;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::Value;

use super::handlers::error_response;
use super::routes::Query;
use super::server::{Body, text_response};
use crate::sim::kube::storage::state::KubeState;
use crate::sim::kube::storage::status::ApiError;
use crate::sim::timestamps::rfc3339;
use crate::sim::twin::Twin;

const FOLLOW_POLL: Duration = Duration::from_millis(50);

/// The container a log request means, or the apiserver's error.
fn choose_container(
    state: &KubeState,
    namespace: &str,
    pod_name: &str,
    wanted: Option<&str>,
) -> Result<(Value, String), ApiError> {
    let pods = state.built_in("pods");
    let pod = state
        .object("pods", namespace, pod_name)
        .ok_or_else(|| ApiError::not_found(&pods, pod_name))?;
    let names: Vec<String> = pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect();
    let container = match wanted {
        Some(name) if names.iter().any(|n| n == name) => name.to_string(),
        Some(name) => {
            return Err(ApiError::bad_request(format!(
                "container {name} is not valid for pod {pod_name}"
            )));
        }
        None if names.len() == 1 => names[0].clone(),
        None => {
            return Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {pod_name}, choose one of: [{}]",
                names.join(" ")
            )));
        }
    };
    if pod["status"]["phase"] == "Pending" && pod["status"]["containerStatuses"].is_null() {
        return Err(ApiError::bad_request(format!(
            "container \"{container}\" in pod \"{pod_name}\" is waiting to start: ContainerCreating"
        )));
    }
    Ok((pod, container))
}

fn render(lines: &[(Duration, String)], timestamps: bool) -> String {
    lines
        .iter()
        .map(|(at, text)| {
            if timestamps {
                format!("{} {text}\n", rfc3339(*at))
            } else {
                format!("{text}\n")
            }
        })
        .collect()
}

type Lines = Vec<(Duration, String)>;
/// A container's log by (namespace, pod, container).
type LogKey = (String, String, String);

pub(crate) async fn handle(
    twin: Arc<Twin>,
    namespace: &str,
    pod_name: &str,
    query: &Query,
) -> Response<Body> {
    let timestamps = query.flag("timestamps");
    let picked = twin.read_kube(|state| pick_lines(state, namespace, pod_name, query));
    let (container, lines) = match picked {
        Ok(found) => found,
        Err(error) => return error_response(&error),
    };
    if !query.flag("follow") {
        return text_response(200, render(&lines, timestamps));
    }
    let key = (namespace.to_string(), pod_name.to_string(), container);
    let sent = twin.read_kube(|s| {
        s.logs
            .get(&key)
            .map_or(0, |l| l.lines.iter().filter(|(at, _)| *at <= s.now).count())
    });
    let first = Bytes::from(render(&lines, timestamps));
    let follow = futures::stream::unfold((twin, key, sent), move |(twin, key, sent)| {
        next_lines(twin, key, sent, timestamps)
    });
    let stream = futures::stream::iter([first])
        .chain(follow)
        .map(|b| Ok::<_, std::io::Error>(Frame::data(b)));
    Response::builder()
        .status(200)
        .header("content-type", "text/plain")
        .body(BodyExt::boxed(StreamBody::new(stream)))
        .expect("static headers are valid")
}

/// The container's lines written by now, within `sinceSeconds` and the last `tailLines`.
fn pick_lines(
    state: &KubeState,
    namespace: &str,
    pod_name: &str,
    query: &Query,
) -> Result<(String, Lines), ApiError> {
    let tail: Option<usize> = query.get("tailLines").and_then(|t| t.parse().ok());
    let since: Option<u64> = query.get("sinceSeconds").and_then(|t| t.parse().ok());
    let (_, container) = choose_container(state, namespace, pod_name, query.get("container"))?;
    let key = (
        namespace.to_string(),
        pod_name.to_string(),
        container.clone(),
    );
    let mut lines = state
        .logs
        .get(&key)
        .map(|l| l.lines.clone())
        .unwrap_or_default();
    lines.retain(|(at, _)| *at <= state.now);
    if let Some(seconds) = since {
        let from = state.now.saturating_sub(Duration::from_secs(seconds));
        lines.retain(|(at, _)| *at >= from);
    }
    if let Some(n) = tail {
        let skip = lines.len().saturating_sub(n);
        lines.drain(..skip);
    }
    Ok((container, lines))
}

/// The lines written after the `sent` first ones, polled until there are some; none once
/// the pod has ended (or is gone) with nothing new.
async fn next_lines(
    twin: Arc<Twin>,
    key: LogKey,
    sent: usize,
    timestamps: bool,
) -> Option<(Bytes, (Arc<Twin>, LogKey, usize))> {
    loop {
        let (new, done) = twin.read_kube(|s| unsent_lines(s, &key, sent));
        if !new.is_empty() {
            let count = sent + new.len();
            return Some((Bytes::from(render(&new, timestamps)), (twin, key, count)));
        }
        if done {
            return None;
        }
        tokio::time::sleep(FOLLOW_POLL).await;
    }
}

/// The lines written by now past the `sent` first ones, and whether the pod has ended.
fn unsent_lines(s: &KubeState, key: &LogKey, sent: usize) -> (Lines, bool) {
    let all: Lines = s
        .logs
        .get(key)
        .map(|l| {
            l.lines
                .iter()
                .filter(|(at, _)| *at <= s.now)
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let pod = s.object("pods", &key.0, &key.1);
    let done =
        pod.is_none_or(|p| matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed")));
    (all.get(sent..).map(<[_]>::to_vec).unwrap_or_default(), done)
}
