//! Watches: newline-delimited `{"type", "object"}` events over a chunked response, resuming
//! from a resourceVersion (410 Gone when history no longer reaches it), with bookmarks.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::Response;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::{Value, json};
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;

use super::handlers::error_response;
use super::routes::Query;
use super::server::Body;
use super::tables;
use crate::sim::kube::storage::resources::ResourceType;
use crate::sim::kube::storage::selectors::{FieldSelector, LabelSelector};
use crate::sim::kube::storage::state::{KubeState, store_key};
use crate::sim::kube::storage::status::ApiError;
use crate::sim::kube::storage::store::{Change, ChangeType};
use crate::sim::twin::Twin;

const BOOKMARK_EVERY: Duration = Duration::from_secs(1);
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

#[derive(Clone)]
struct Filter {
    key: String,
    namespace: Option<String>,
    labels: Option<LabelSelector>,
    fields: Option<FieldSelector>,
}

impl Filter {
    fn parse(
        resource: &ResourceType,
        namespace: Option<&str>,
        query: &Query,
    ) -> Result<Self, ApiError> {
        Ok(Filter {
            key: store_key(resource),
            namespace: namespace
                .filter(|_| resource.namespaced)
                .map(str::to_string),
            labels: query
                .get("labelSelector")
                .filter(|s| !s.is_empty())
                .map(LabelSelector::parse)
                .transpose()
                .map_err(ApiError::bad_request)?,
            fields: query
                .get("fieldSelector")
                .filter(|s| !s.is_empty())
                .map(|text| {
                    let selector = FieldSelector::parse(text)?;
                    selector.supported_by(&resource.group, &resource.kind)?;
                    Ok::<_, String>(selector)
                })
                .transpose()
                .map_err(ApiError::bad_request)?,
        })
    }

    fn matches(&self, change: &Change) -> bool {
        self.in_scope(change) && self.selects(&change.object)
    }

    fn in_scope(&self, change: &Change) -> bool {
        change.resource == self.key
            && self
                .namespace
                .as_ref()
                .is_none_or(|ns| *ns == change.namespace)
    }

    fn has_selectors(&self) -> bool {
        self.labels.is_some() || self.fields.is_some()
    }

    fn selects(&self, object: &Value) -> bool {
        self.labels
            .as_ref()
            .is_none_or(|s| s.matches(&object["metadata"]["labels"]))
            && self.fields.as_ref().is_none_or(|s| s.matches(object))
    }

    /// The event a watcher with selectors sees for `change`, as the watch cache filters it: an
    /// object that comes to match arrives ADDED, one that stops matching leaves DELETED, one
    /// that never matched is not seen. `seen` holds the objects the watcher has as present.
    fn event(&self, change: &Change, seen: &mut HashSet<String>) -> Option<&'static str> {
        if !self.in_scope(change) {
            return None;
        }
        if !self.has_selectors() {
            return Some(change.change.as_str());
        }
        let key = format!(
            "{}/{}",
            change.namespace,
            change.object["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
        );
        let now = self.selects(&change.object);
        let was = seen.contains(&key);
        match (change.change, was, now) {
            (ChangeType::Deleted, true, _) | (ChangeType::Deleted, false, true) => {
                seen.remove(&key);
                Some("DELETED")
            }
            (ChangeType::Deleted, false, false) => None,
            (_, true, true) => Some(change.change.as_str()),
            (_, false, true) => {
                seen.insert(key);
                Some("ADDED")
            }
            (_, true, false) => {
                seen.remove(&key);
                Some("DELETED")
            }
            (_, false, false) => None,
        }
    }
}

fn line(kind: &str, object: Value) -> Bytes {
    let mut text =
        serde_json::to_string(&json!({"type": kind, "object": object})).unwrap_or_default();
    text.push('\n');
    Bytes::from(text)
}

/// What a watch sends after its first events, and how it writes them.
#[derive(Clone)]
struct Live {
    twin: Arc<Twin>,
    filter: Filter,
    resource: ResourceType,
    /// `includeObject` of the Table rows, when the events are Tables.
    include: String,
    as_table: bool,
    bookmarks: bool,
}

pub(crate) fn handle(
    twin: &Arc<Twin>,
    resource: &ResourceType,
    namespace: Option<&str>,
    query: &Query,
    as_table: bool,
) -> Response<Body> {
    let filter = match Filter::parse(resource, namespace, query) {
        Ok(filter) => filter,
        Err(error) => return error_response(&error),
    };
    let requested = query.get("resourceVersion").unwrap_or_default();
    let timeout = query
        .get("timeoutSeconds")
        .and_then(|t| t.parse().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let live = Live {
        twin: twin.clone(),
        filter,
        resource: resource.clone(),
        include: query.get("includeObject").unwrap_or("Metadata").to_string(),
        as_table,
        bookmarks: query.flag("allowWatchBookmarks"),
    };
    let (mut first, receiver, now, seen) =
        twin.read_kube(|state| first_events(state, &live.filter, requested));
    if as_table {
        first = first
            .into_iter()
            .map(|bytes| to_table_line(&bytes, &live.resource, now, &live.include))
            .collect();
    }
    let deadline = tokio::time::Instant::now() + timeout;
    let later = futures::stream::unfold(
        (receiver, deadline, seen),
        move |(receiver, deadline, seen)| next_event(live.clone(), receiver, deadline, seen),
    );
    streamed(futures::stream::iter(first).chain(later))
}

/// The events before the live ones: every matching object as ADDED when the watch starts
/// from now (no resourceVersion, or 0), else the history since the version asked for (or
/// the ERROR that it is too old); the receiver of later changes; the virtual time.
fn first_events(
    state: &KubeState,
    filter: &Filter,
    requested: &str,
) -> (
    Vec<Bytes>,
    Option<Receiver<Change>>,
    Duration,
    HashSet<String>,
) {
    let current = state.store.resource_version();
    let mut first: Vec<Bytes> = Vec::new();
    // What the watcher has as present from the start: the objects its selectors match now
    // (a watch without selectors sees every change as it is, and keeps no set).
    let objects = filter
        .has_selectors()
        .then(|| state.store.list(&filter.key, filter.namespace.as_deref()));
    let mut seen: HashSet<String> = objects
        .into_iter()
        .flatten()
        .filter(|o| filter.selects(o))
        .map(|o| {
            format!(
                "{}/{}",
                o["metadata"]["namespace"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    let from = if requested.is_empty() || requested == "0" {
        first = current_objects(state, filter, current);
        current
    } else {
        requested.parse().unwrap_or(0)
    };
    match state.store.watch_from(from) {
        Ok((past, receiver)) => {
            for change in &past {
                if let Some(kind) = filter.event(change, &mut seen) {
                    first.push(line(kind, (*change.object).clone()));
                }
            }
            (first, Some(receiver), state.now, seen)
        }
        Err(_) => {
            let status = ApiError::gone(format!(
                "too old resource version: {from} ({})",
                state.store.resource_version()
            ))
            .to_status();
            (vec![line("ERROR", status)], None, state.now, seen)
        }
    }
}

/// ADDED lines of the objects the filter matches now.
fn current_objects(state: &KubeState, filter: &Filter, current: u64) -> Vec<Bytes> {
    let mut lines = Vec::new();
    for object in state.store.list(&filter.key, filter.namespace.as_deref()) {
        let change = Change {
            resource_version: current,
            change: ChangeType::Added,
            resource: filter.key.clone(),
            namespace: object["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            object: Arc::new(object.clone()),
        };
        if filter.matches(&change) {
            lines.push(line("ADDED", object.clone()));
        }
    }
    lines
}

type LiveState = (
    Option<Receiver<Change>>,
    tokio::time::Instant,
    HashSet<String>,
);

/// The next live event: a matching change, or a bookmark each second when asked for; none
/// at the deadline or when the watch fell behind.
async fn next_event(
    live: Live,
    receiver: Option<Receiver<Change>>,
    deadline: tokio::time::Instant,
    mut seen: HashSet<String>,
) -> Option<(Bytes, LiveState)> {
    let mut receiver = receiver?;
    loop {
        let tick = tokio::time::sleep(BOOKMARK_EVERY);
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => return None,
            received = receiver.recv() => match received {
                Ok(change) => {
                    let Some(kind) = live.filter.event(&change, &mut seen) else {
                        continue;
                    };
                    let mut bytes = line(kind, (*change.object).clone());
                    if live.as_table {
                        bytes = to_table_line(&bytes, &live.resource, live.twin.clock_now(), &live.include);
                    }
                    return Some((bytes, (Some(receiver), deadline, seen)));
                }
                // Fell behind or the twin is gone: end the watch; clients relist.
                Err(RecvError::Lagged(_) | RecvError::Closed) => return None,
            },
            () = tick, if live.bookmarks => {
                return Some((bookmark(&live), (Some(receiver), deadline, seen)));
            }
        }
    }
}

fn bookmark(live: &Live) -> Bytes {
    let resource = &live.resource;
    let rv = live.twin.read_kube(|s| s.store.resource_version());
    let bookmark = json!({"kind": resource.kind, "apiVersion": resource.api_version(), "metadata": {"resourceVersion": rv.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}});
    line("BOOKMARK", bookmark)
}

/// A chunked JSON response of the event lines as they come.
fn streamed(events: impl futures::Stream<Item = Bytes> + Send + Sync + 'static) -> Response<Body> {
    let stream = events.map(|bytes| Ok::<_, std::io::Error>(Frame::data(bytes)));
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .header("transfer-encoding", "chunked")
        .body(BodyExt::boxed(StreamBody::new(stream)))
        .expect("static headers are valid")
}

/// Rewrites an event line so its object is a one-row Table (what `kubectl get -w` asks for).
fn to_table_line(bytes: &Bytes, resource: &ResourceType, now: Duration, include: &str) -> Bytes {
    let Ok(event) = serde_json::from_slice::<Value>(bytes) else {
        return bytes.clone();
    };
    let kind = event["type"].as_str().unwrap_or_default();
    if kind == "ERROR" || kind == "BOOKMARK" {
        return bytes.clone();
    }
    let rv = event["object"]["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let table = tables::table(
        resource,
        std::slice::from_ref(&event["object"]),
        now,
        include,
        rv,
        true,
    );
    line(kind, table)
}
