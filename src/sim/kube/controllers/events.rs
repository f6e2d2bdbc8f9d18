//! Events the controllers record, as `kubectl get events` and `describe` show them.

use serde_json::{Value, json};

use super::shared;
use crate::sim::kube::storage::state::KubeState;
use crate::sim::timestamps::rfc3339;

pub(super) fn record(
    state: &mut KubeState,
    involved: &Value,
    warning: bool,
    reason: &str,
    message: &str,
    component: &str,
) {
    let namespace = match shared::namespace(involved) {
        "" => "default".to_string(),
        ns => ns.to_string(),
    };
    let now = rfc3339(state.now);
    let name = format!("{}.{}", shared::name(involved), state.next_suffix(8));
    let event = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {
            "apiVersion": involved["apiVersion"],
            "kind": involved["kind"],
            "name": involved["metadata"]["name"],
            "namespace": involved["metadata"]["namespace"],
            "uid": involved["metadata"]["uid"],
        },
        "reason": reason,
        "message": message,
        "type": if warning { "Warning" } else { "Normal" },
        "source": {"component": component},
        "reportingComponent": component,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    });
    shared::create(state, "events", event);
}
