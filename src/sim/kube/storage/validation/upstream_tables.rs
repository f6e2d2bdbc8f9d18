//! Kubernetes' own validation test tables, ported as data (`tests/fixtures/upstream/`, each
//! case named by its upstream test and case): every case is created (or, with `old`, updated)
//! through the twin's storage, defaults and all, and must be refused with exactly the causes
//! upstream expects (type and field, and the detail where the table or the code fixes it).

use serde_json::{Value, json};

use crate::sim::kube::storage::api;
use crate::sim::kube::storage::patch::merge;
use crate::sim::kube::storage::state::KubeState;

/// The tables, by file (their sources in `tests/fixtures/upstream/SOURCES.md`).
const TABLES: [(&str, &str); 5] = [
    (
        "containers.jsonl",
        include_str!("../../../../../tests/fixtures/upstream/containers.jsonl"),
    ),
    (
        "pod-spec.jsonl",
        include_str!("../../../../../tests/fixtures/upstream/pod-spec.jsonl"),
    ),
    (
        "probes.jsonl",
        include_str!("../../../../../tests/fixtures/upstream/probes.jsonl"),
    ),
    (
        "services.jsonl",
        include_str!("../../../../../tests/fixtures/upstream/services.jsonl"),
    ),
    (
        "workloads-meta.jsonl",
        include_str!("../../../../../tests/fixtures/upstream/workloads-meta.jsonl"),
    ),
];

/// What the twin answered: the causes of a 422, or another error's code and message.
fn answer(case: &Value) -> Result<(), Result<Vec<Value>, String>> {
    let mut state = KubeState::default();
    let namespace_type = state.resource("v1", "Namespace").expect("namespaces");
    api::create(
        &mut state,
        &namespace_type,
        "",
        json!({"metadata": {"name": "default"}}),
        false,
    )
    .expect("the default namespace");
    let object = &case["object"];
    let api_version = object["apiVersion"].as_str().unwrap_or("v1");
    let kind = object["kind"].as_str().unwrap_or_default();
    let Some(resource) = state.resource(api_version, kind) else {
        return Err(Err(format!("no resource {api_version} {kind}")));
    };
    let result = match case.get("old") {
        Some(old) => api::create(&mut state, &resource, "default", old.clone(), false)
            .map_err(|e| Err(format!("the old object was refused: {}", e.message)))
            .and_then(|stored| {
                // As a client updates: the stored object, changed as the case changes it.
                let new = merge(&stored, &changes(old, object));
                let name = new["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                api::replace(&mut state, &resource, "default", &name, new, None).map_err(refusal)
            }),
        None => {
            api::create(&mut state, &resource, "default", object.clone(), false).map_err(refusal)
        }
    };
    result.map(drop)
}

/// The JSON merge patch that turns `old` into `new`.
fn changes(old: &Value, new: &Value) -> Value {
    match (old, new) {
        (Value::Object(before), Value::Object(after)) => {
            let mut patch = serde_json::Map::new();
            for (key, value) in after {
                match before.get(key) {
                    Some(previous) if previous == value => {}
                    Some(previous) => {
                        patch.insert(key.clone(), changes(previous, value));
                    }
                    None => {
                        patch.insert(key.clone(), value.clone());
                    }
                }
            }
            for key in before.keys().filter(|k| !after.contains_key(*k)) {
                patch.insert(key.clone(), Value::Null);
            }
            Value::Object(patch)
        }
        _ => new.clone(),
    }
}

fn refusal(error: crate::sim::kube::storage::status::ApiError) -> Result<Vec<Value>, String> {
    if error.code == 422 {
        Ok(error.details["causes"]
            .as_array()
            .cloned()
            .unwrap_or_default())
    } else {
        Err(format!("{} {}", error.code, error.message))
    }
}

/// What the API server answers where that is not what validation alone says (`apiserver`:
/// the registry allocates before it validates, and its strategy adjusts updates): accepted
/// (status 200), another error (500 and its message), or other causes.
enum Whole {
    Accepted,
    Error(String),
}

fn whole_request(case: &Value) -> Option<Whole> {
    let apiserver = case.get("apiserver")?;
    match apiserver["status"].as_u64() {
        Some(200) => Some(Whole::Accepted),
        Some(500) => Some(Whole::Error(format!(
            "500 {}",
            apiserver["message"].as_str().unwrap_or_default()
        ))),
        _ => None,
    }
}

/// Why a case's answer is not upstream's, if it is not.
fn mismatch(case: &Value) -> Option<String> {
    let answered = answer(case);
    match (whole_request(case), &answered) {
        (Some(Whole::Accepted), Ok(())) => return None,
        (Some(Whole::Accepted), _) => {
            return Some(format!("refused; the API server accepts it: {answered:?}"));
        }
        (Some(Whole::Error(message)), Err(Err(other))) if *other == message => return None,
        (Some(Whole::Error(message)), _) => {
            return Some(format!(
                "the API server answers {message}; the twin {answered:?}"
            ));
        }
        (None, _) => {}
    }
    let overridden = case["apiserver"].get("expect");
    let expected = overridden
        .or(case.get("expect"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let count = if overridden.is_some() {
        None
    } else {
        case["count"].as_u64()
    };
    let causes = match answered {
        Ok(()) if expected.is_empty() && count.unwrap_or(0) == 0 => return None,
        Ok(()) => return Some(format!("accepted; upstream refuses it with {expected:?}")),
        Err(Err(other)) => return Some(format!("answered {other}")),
        Err(Ok(causes)) => causes,
    };
    let shown: Vec<String> = causes
        .iter()
        .map(|c| format!("{} {}: {}", c["reason"], c["field"], c["message"]))
        .collect();
    if expected.is_empty() && count.unwrap_or(0) == 0 {
        return Some(format!("refused; upstream accepts it: {shown:?}"));
    }
    if let Some(count) = count
        && causes.len() as u64 != count
    {
        return Some(format!(
            "{} causes, upstream {count}: {shown:?}",
            causes.len()
        ));
    }
    for want in &expected {
        let found = causes.iter().any(|c| {
            c["reason"] == want["type"]
                && c["field"] == want["field"]
                && want["detail"]
                    .as_str()
                    .is_none_or(|d| c["message"].as_str().is_some_and(|m| m.ends_with(d)))
        });
        if !found {
            return Some(format!("missing {want}; the twin said {shown:?}"));
        }
    }
    if count.is_none() && causes.len() != expected.len() {
        return Some(format!("more causes than upstream's: {shown:?}"));
    }
    None
}

#[test]
fn the_twin_answers_upstreams_validation_tables_as_the_api_server_does() {
    let mut failures = Vec::new();
    let mut cases = 0;
    for (file, text) in TABLES {
        for (line, case) in text.lines().enumerate() {
            // `#` lines name the upstream file and commit the cases below come from.
            if case.trim().is_empty() || case.starts_with('#') {
                continue;
            }
            let case: Value = serde_json::from_str(case)
                .unwrap_or_else(|e| panic!("{file}:{}: not JSON: {e}", line + 1));
            cases += 1;
            if let Some(why) = mismatch(&case) {
                failures.push(format!("{file}:{} {}: {why}", line + 1, case["source"]));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} upstream cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
