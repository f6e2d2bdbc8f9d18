//! Who writes, and what the write does to `metadata.managedFields`, as the API server's field
//! manager does it: an apply owns exactly the fields of its configuration (a field another
//! manager owns with another value is a conflict, 409, unless forced; a field it stops applying
//! is removed when no one else owns it); any other write (create, update, patch) takes over
//! the fields it changes, as an `Update` entry of its manager.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::fieldset::{self, Path};
use crate::sim::kube::storage::status::ApiError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Operation {
    /// A server-side apply of this configuration; `force` takes conflicting fields over.
    Apply {
        force: bool,
    },
    Update,
}

#[derive(Debug, Clone)]
pub(crate) struct Manager {
    pub(crate) name: String,
    pub(crate) operation: Operation,
    /// `status` or `scale` for a write to a subresource.
    pub(crate) subresource: Option<String>,
}

impl Manager {
    /// The manager of a request: its `fieldManager`, else (not for an apply, where it is
    /// required) its User-Agent up to the first `/`, as the API server names one.
    pub(crate) fn of_request(
        field_manager: Option<&str>,
        user_agent: &str,
        operation: Operation,
        subresource: Option<&str>,
    ) -> Result<Self, ApiError> {
        let name = match (field_manager, &operation) {
            (Some(name), _) if !name.is_empty() => name.to_string(),
            (_, Operation::Apply { .. }) => {
                return Err(ApiError::bad_request(
                    "fieldManager: Required value: is required for apply patch",
                ));
            }
            _ => user_agent.split('/').next().unwrap_or_default().to_string(),
        };
        if name.len() > 128 {
            return Err(ApiError::bad_request(
                "fieldManager: Too long: may not be more than 128 bytes",
            ));
        }
        Ok(Self {
            name,
            operation,
            subresource: subresource.map(str::to_string),
        })
    }

    fn operation_name(&self) -> &'static str {
        match self.operation {
            Operation::Apply { .. } => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One `managedFields` entry.
#[derive(Debug, Clone)]
struct Entry {
    manager: String,
    operation: String,
    api_version: String,
    time: String,
    subresource: String,
    set: BTreeSet<Path>,
}

impl Entry {
    fn read(value: &Value) -> Self {
        let text = |key: &str| value[key].as_str().unwrap_or_default().to_string();
        Self {
            manager: text("manager"),
            operation: text("operation"),
            api_version: text("apiVersion"),
            time: text("time"),
            subresource: text("subresource"),
            set: fieldset::from_fields_v1(&value["fieldsV1"]),
        }
    }

    fn written(&self) -> Value {
        let mut entry = json!({
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": fieldset::to_fields_v1(&self.set),
        });
        if !self.subresource.is_empty() {
            entry["subresource"] = json!(self.subresource);
        }
        entry
    }

    fn is(&self, manager: &Manager) -> bool {
        self.manager == manager.name
            && self.operation == manager.operation_name()
            && self.subresource == manager.subresource.clone().unwrap_or_default()
    }

    /// As a conflict names it: `"helm"`, or `"kubectl" using apps/v1` for an update
    /// (printManager in the API server's field manager; the identifier it prints from never
    /// holds the time: BuildManagerIdentifier drops it, so no `at TIME` is ever printed).
    fn printed(&self) -> String {
        let mut name = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            name = format!("{name} with subresource {:?}", self.subresource);
        }
        match self.operation.as_str() {
            "Update" => format!("{name} using {}", self.api_version),
            _ => name,
        }
    }
}

fn entries_of(object: &Value) -> Vec<Entry> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(Entry::read)
        .collect()
}

/// Sets `new`'s managedFields for a write by `manager` of `new` over `existing` (None: a
/// create); an apply's `config` is what it applied. A conflicting apply is a 409 in the API
/// server's words; a forced one takes the fields over.
pub(crate) fn record(
    existing: Option<&Value>,
    new: &mut Value,
    manager: &Manager,
    config: Option<&Value>,
    now: &str,
) -> Result<(), ApiError> {
    let mut entries = existing.map(entries_of).unwrap_or_default();
    let owned = match (&manager.operation, config) {
        (Operation::Apply { force }, Some(config)) => {
            apply(&mut entries, existing, new, manager, config, *force)?
        }
        _ => update(&mut entries, existing, new, manager),
    };
    match entries.iter_mut().find(|e| e.is(manager)) {
        Some(entry) => {
            entry.set = owned;
            entry.time = now.to_string();
        }
        None => entries.push(Entry {
            manager: manager.name.clone(),
            operation: manager.operation_name().to_string(),
            api_version: new["apiVersion"].as_str().unwrap_or_default().to_string(),
            time: now.to_string(),
            subresource: manager.subresource.clone().unwrap_or_default(),
            set: owned,
        }),
    }
    // What the object no longer has is no one's.
    for entry in &mut entries {
        entry
            .set
            .retain(|path| fieldset::value_at(new, path).is_some());
    }
    entries.retain(|e| !e.set.is_empty());
    // A manager that owns nothing has no entry (structured-merge-diff drops empty sets), and
    // an object no one owns a field of has no `managedFields` at all (omitempty).
    if entries.is_empty() {
        if let Some(metadata) = new["metadata"].as_object_mut() {
            metadata.remove("managedFields");
        }
        return Ok(());
    }
    // In the order the field manager writes them (sortEncodedManagedFields): by operation
    // (Apply before Update), then time (RFC 3339 strings of one form sort as times), manager,
    // API version and subresource.
    entries.sort_by(|p, q| {
        (
            &p.operation,
            &p.time,
            &p.manager,
            &p.api_version,
            &p.subresource,
        )
            .cmp(&(
                &q.operation,
                &q.time,
                &q.manager,
                &q.api_version,
                &q.subresource,
            ))
    });
    new["metadata"]["managedFields"] = Value::Array(entries.iter().map(Entry::written).collect());
    Ok(())
}

/// An update takes over what it changed; answers what its manager owns now.
fn update(
    entries: &mut [Entry],
    existing: Option<&Value>,
    new: &Value,
    manager: &Manager,
) -> BTreeSet<Path> {
    let changed: BTreeSet<Path> = fieldset::of_object(new)
        .into_iter()
        .filter(|path| {
            existing.is_none_or(|old| match fieldset::value_at(old, path) {
                // A list item is owned by being there: it changes hands when it is new.
                Some(_) if fieldset::is_item(path) => false,
                before => before != fieldset::value_at(new, path),
            })
        })
        .collect();
    let mut owned = BTreeSet::new();
    for entry in entries.iter_mut() {
        if entry.is(manager) {
            owned.extend(entry.set.iter().cloned());
        } else {
            entry.set.retain(|path| !changed.contains(path));
        }
    }
    owned.extend(changed);
    owned
}

/// An apply owns exactly its configuration's fields: a field another manager owns with
/// another value is a conflict unless forced; a field it applied before and no longer does
/// leaves the object unless someone else owns it.
fn apply(
    entries: &mut [Entry],
    existing: Option<&Value>,
    new: &mut Value,
    manager: &Manager,
    config: &Value,
    force: bool,
) -> Result<BTreeSet<Path>, ApiError> {
    let applied = fieldset::of_object(config);
    let mut conflicts: Vec<(String, Path)> = Vec::new();
    if let Some(live) = existing {
        for entry in entries.iter().filter(|e| !e.is(manager)) {
            // Values conflict; a list item is co-owned by being there.
            for path in entry.set.intersection(&applied) {
                if !fieldset::is_item(path)
                    && fieldset::value_at(live, path) != fieldset::value_at(config, path)
                {
                    conflicts.push((entry.printed(), path.clone()));
                }
            }
        }
    }
    if !conflicts.is_empty() && !force {
        return Err(conflict_error(&conflicts));
    }
    for entry in entries.iter_mut().filter(|e| !e.is(manager)) {
        entry
            .set
            .retain(|path| !conflicts.iter().any(|(_, lost)| lost == path));
    }
    let before = entries
        .iter()
        .find(|e| e.is(manager))
        .map(|e| e.set.clone())
        .unwrap_or_default();
    for dropped in before.difference(&applied) {
        let shared = entries
            .iter()
            .any(|e| !e.is(manager) && e.set.contains(dropped));
        if !shared {
            fieldset::remove_at(new, dropped);
        }
    }
    Ok(applied)
}

/// The 409 of a conflicting apply (NewConflictError and getConflictMessage in the API
/// server's field manager, kubernetes/kubernetes staging/.../fieldmanager/internal/conflict.go).
fn conflict_error(conflicts: &[(String, Path)]) -> ApiError {
    let message = match conflicts {
        [(manager, path)] => format!(
            "Apply failed with 1 conflict: conflict with {manager}: {}",
            fieldset::printed(path)
        ),
        _ => {
            let mut managers: Vec<&String> = conflicts.iter().map(|(m, _)| m).collect();
            managers.sort();
            managers.dedup();
            let mut lines = Vec::new();
            for manager in managers {
                lines.push(format!("conflicts with {manager}:"));
                for (_, path) in conflicts.iter().filter(|(m, _)| m == manager) {
                    lines.push(format!("- {}", fieldset::printed(path)));
                }
            }
            format!(
                "Apply failed with {} conflicts: {}",
                conflicts.len(),
                lines.join("\n")
            )
        }
    };
    let mut error = ApiError::new(409, "Conflict", message);
    error.details = json!({
        "causes": conflicts
            .iter()
            .map(|(manager, path)| json!({
                "reason": "FieldManagerConflict",
                "message": format!("conflict with {manager}"),
                "field": fieldset::printed(path),
            }))
            .collect::<Vec<_>>(),
    });
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manager(name: &str, operation: Operation) -> Manager {
        Manager {
            name: name.into(),
            operation,
            subresource: None,
        }
    }

    fn deployment(replicas: i64, image: &str) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "app", "image": image}]}}}
        })
    }

    #[test]
    fn a_second_manager_conflicts_on_a_field_the_first_owns_with_another_value() {
        let alice = manager("alice", Operation::Apply { force: false });
        let mut live = deployment(2, "nginx:1");
        record(
            None,
            &mut live,
            &alice,
            Some(&deployment(2, "nginx:1")),
            "t1",
        )
        .expect("created");
        // The same values: shared, no conflict.
        let bob = manager("bob", Operation::Apply { force: false });
        let mut same = live.clone();
        record(
            Some(&live),
            &mut same,
            &bob,
            Some(&deployment(2, "nginx:1")),
            "t2",
        )
        .expect("shared");
        // Another replica count: a conflict, worded as the API server words it.
        let mut other = live.clone();
        other["spec"]["replicas"] = json!(3);
        let error = record(
            Some(&live),
            &mut other,
            &bob,
            Some(&deployment(3, "nginx:1")),
            "t2",
        )
        .expect_err("conflict");
        assert_eq!(error.code, 409);
        assert_eq!(
            error.message,
            "Apply failed with 1 conflict: conflict with \"alice\": .spec.replicas"
        );
        assert_eq!(error.details["causes"][0]["field"], ".spec.replicas");
        // Forced: bob owns replicas now, alice keeps the image.
        let forced = manager("bob", Operation::Apply { force: true });
        record(
            Some(&live),
            &mut other,
            &forced,
            Some(&deployment(3, "nginx:1")),
            "t3",
        )
        .expect("forced");
        let entries = entries_of(&other);
        let alice_fields: Vec<String> = entries[0]
            .set
            .iter()
            .map(|p| fieldset::printed(p))
            .collect();
        assert!(
            !alice_fields.contains(&".spec.replicas".to_string()),
            "{alice_fields:?}"
        );
        assert_eq!(entries[1].manager, "bob");
        assert!(
            entries[1]
                .set
                .iter()
                .any(|p| fieldset::printed(p) == ".spec.replicas")
        );
    }

    #[test]
    fn an_update_takes_over_what_it_changes_and_conflicts_name_it_with_its_api_version() {
        let alice = manager("alice", Operation::Apply { force: false });
        let mut live = deployment(2, "nginx:1");
        record(
            None,
            &mut live,
            &alice,
            Some(&deployment(2, "nginx:1")),
            "t1",
        )
        .expect("created");
        let mut scaled = live.clone();
        scaled["spec"]["replicas"] = json!(5);
        let kubectl = manager("kubectl", Operation::Update);
        record(
            Some(&live),
            &mut scaled,
            &kubectl,
            None,
            "2026-12-07T10:00:00Z",
        )
        .expect("updated");
        let again = record(
            Some(&scaled),
            &mut scaled.clone(),
            &alice,
            Some(&deployment(2, "nginx:1")),
            "t3",
        )
        .expect_err("the update owns replicas now");
        assert_eq!(
            again.message,
            "Apply failed with 1 conflict: conflict with \"kubectl\" using apps/v1: .spec.replicas"
        );
    }

    #[test]
    fn a_field_an_apply_stops_applying_leaves_the_object() {
        let alice = manager("alice", Operation::Apply { force: false });
        let mut with_label = deployment(2, "nginx:1");
        with_label["metadata"]["labels"] = json!({"tier": "web"});
        let mut live = with_label.clone();
        record(None, &mut live, &alice, Some(&with_label), "t1").expect("created");
        let mut next = live.clone();
        record(
            Some(&live),
            &mut next,
            &alice,
            Some(&deployment(2, "nginx:1")),
            "t2",
        )
        .expect("applied");
        assert_eq!(next["metadata"]["labels"], json!({}));
    }
}
