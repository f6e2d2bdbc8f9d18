//! The `Priority` admission plugin (on by default): a Pod's `spec.priority` and
//! `spec.preemptionPolicy` come from its PriorityClass, or from the global default class, or
//! are 0 and `PreemptLowerPriority` when there is none (kubernetes
//! `plugin/pkg/admission/priority/admission.go`, `admitPod` and `getDefaultPriority`); an
//! update that leaves them out keeps the old Pod's. Only one PriorityClass may be the global
//! default (`validatePriorityClass`).

use serde_json::{Value, json};

use super::state::KubeState;
use super::status::ApiError;

const CLASSES: &str = "scheduling.k8s.io/priorityclasses";
const PREEMPT_LOWER: &str = "PreemptLowerPriority";

/// The classes the API server creates for itself at start (`SystemPriorityClasses`).
const SYSTEM_CLASSES: [(&str, i64); 2] = [
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

/// `admission.NewForbidden` for a Pod.
fn forbidden(name: &str, why: String) -> ApiError {
    let mut error = ApiError::new(
        403,
        "Forbidden",
        format!("pods \"{name}\" is forbidden: {why}"),
    );
    error.details = json!({"name": name, "kind": "pods"});
    error
}

/// A class's value and preemption policy (a class without one preempts lower ones, as
/// `SetDefaults_PriorityClass` sets it).
fn of_class(class: &Value) -> (i64, String) {
    let value = class["value"].as_i64().unwrap_or(0);
    let policy = class["preemptionPolicy"].as_str().unwrap_or(PREEMPT_LOWER);
    (value, policy.to_string())
}

/// `getDefaultPriority`: the global default class with the lowest value, else none, 0.
fn default_priority(state: &KubeState) -> (String, i64, String) {
    state
        .store
        .list(CLASSES, None)
        .filter(|c| c["globalDefault"] == true)
        .min_by_key(|c| c["value"].as_i64().unwrap_or(0))
        .map_or_else(
            || (String::new(), 0, PREEMPT_LOWER.to_string()),
            |c| {
                let (value, policy) = of_class(c);
                let name = c["metadata"]["name"].as_str().unwrap_or_default();
                (name.to_string(), value, policy)
            },
        )
}

fn named_priority(state: &KubeState, pod: &Value, class: &str) -> Result<(i64, String), ApiError> {
    if let Some(found) = state.store.get(CLASSES, "", class) {
        return Ok(of_class(found));
    }
    SYSTEM_CLASSES
        .iter()
        .find(|(name, _)| *name == class)
        .map(|(_, value)| (*value, PREEMPT_LOWER.to_string()))
        .ok_or_else(|| {
            forbidden(
                pod["metadata"]["name"].as_str().unwrap_or_default(),
                format!("no PriorityClass with name {class} was found"),
            )
        })
}

/// Fills a new Pod's priority and preemption policy, or refuses values that disagree with its
/// class.
pub(crate) fn admit_pod(state: &KubeState, pod: &mut Value) -> Result<(), ApiError> {
    let name = pod["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let spec = &pod["spec"];
    let (value, policy) = match spec["priorityClassName"].as_str().filter(|c| !c.is_empty()) {
        Some(class) => named_priority(state, pod, class)?,
        None => {
            let (class, value, policy) = default_priority(state);
            if !class.is_empty() {
                pod["spec"]["priorityClassName"] = json!(class);
            }
            (value, policy)
        }
    };
    let spec = &pod["spec"];
    if let Some(given) = spec["priority"].as_i64().filter(|p| *p != value) {
        return Err(forbidden(
            &name,
            format!(
                "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {value} from the given PriorityClass name"
            ),
        ));
    }
    if let Some(given) = spec["preemptionPolicy"].as_str().filter(|p| *p != policy) {
        return Err(forbidden(
            &name,
            format!(
                "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
            ),
        ));
    }
    pod["spec"]["priority"] = json!(value);
    pod["spec"]["preemptionPolicy"] = json!(policy);
    Ok(())
}

/// `admitPod` on update: a Pod written without its priority or preemption policy keeps the
/// stored one's (validation then refuses any other change of them).
pub(crate) fn keep_on_update(existing: &Value, pod: &mut Value) {
    for field in ["priority", "preemptionPolicy"] {
        if pod["spec"][field].is_null() && !existing["spec"][field].is_null() {
            pod["spec"][field] = existing["spec"][field].clone();
        }
    }
}

/// `validatePriorityClass` (a validating admission, so after the class's own validation): a
/// class marked as the global default is refused while another one is, whether it is new or
/// an existing class newly marked.
pub(crate) fn admit_class(state: &KubeState, class: &Value) -> Result<(), ApiError> {
    if class["globalDefault"] != true {
        return Ok(());
    }
    let name = class["metadata"]["name"].as_str().unwrap_or_default();
    let (default, ..) = default_priority(state);
    let is_new = state.store.get(CLASSES, "", name).is_none();
    if default.is_empty() || (!is_new && default == name) {
        return Ok(());
    }
    let mut error = ApiError::new(
        403,
        "Forbidden",
        format!(
            "priorityclasses.scheduling.k8s.io \"{name}\" is forbidden: PriorityClass {default} is already marked as default. Only one default can exist"
        ),
    );
    error.details = json!({"name": name, "group": "scheduling.k8s.io", "kind": "priorityclasses"});
    Err(error)
}
