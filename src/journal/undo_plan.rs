//! From a journal to its undo plan, what `runbook recover` does (not to be confused with
//! `crate::plan`, a rehearsal's changes): the state before each change that a pending cleanup
//! was there to undo, as idempotent "make it so" steps, newest first.
//!
//! A mutation counts when the script made it (not a cleanup) while at least one cleanup was
//! registered, and the newest of those (the one guarding it) did not finish and pass. Changes
//! to one resource collapse into one step back to the state before the first of them, so a
//! rule revoked and put back by the run costs nothing, and a step is safe to repeat.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::record::Record;

/// A security-group rule as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    pub direction: String,
    pub protocol: String,
    pub from_port: i32,
    pub to_port: i32,
    /// A CIDR, a group id, or `self`.
    pub source: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// What puts one resource back; each is safe to run twice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Undo {
    /// The node group back to this desired size (after any update in flight), and to this
    /// maximum when the run raised it.
    ScaleNodegroup {
        cluster: String,
        nodegroup: String,
        desired: i32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<i32>,
    },
    /// The rule back in the group, unless it is there.
    Authorize { group: String, rule: Rule },
    /// The rule out of the group, if it is there.
    Revoke { group: String, rule: Rule },
    /// A Kubernetes object the run made: deleted (gone already is fine).
    DeleteObject {
        kind: String,
        namespace: Option<String>,
        name: String,
    },
    /// Objects a runbook call made, by label: deleted.
    DeleteLabeled {
        kinds: Vec<String>,
        namespace: String,
        selector: String,
    },
    /// A Kubernetes object the run changed or deleted: put back as it was.
    RestoreObject { object: serde_json::Value },
    /// A node the run quarantined under `key`: released (uncordoned only if the run cordoned it).
    ReleaseNode { node: String, key: String },
    /// The node group's node auto repair back to this configuration (the clients' NodeRepair as
    /// JSON).
    RestoreNodeRepair {
        cluster: String,
        nodegroup: String,
        config: serde_json::Value,
    },
}

impl Undo {
    /// Changes to the same resource share a key.
    fn key(&self) -> String {
        match self {
            Undo::ScaleNodegroup {
                cluster, nodegroup, ..
            } => format!("nodegroup {cluster}/{nodegroup}"),
            Undo::Authorize { group, rule } | Undo::Revoke { group, rule } => format!(
                "rule {group} {} {} {}-{} {}",
                rule.direction, rule.protocol, rule.from_port, rule.to_port, rule.source
            ),
            Undo::DeleteObject {
                kind,
                namespace,
                name,
            } => format!(
                "object {kind} {}/{name}",
                namespace.as_deref().unwrap_or("")
            ),
            Undo::RestoreObject { object } => format!(
                "object {} {}/{}",
                object["kind"].as_str().unwrap_or(""),
                object["metadata"]["namespace"].as_str().unwrap_or(""),
                object["metadata"]["name"].as_str().unwrap_or("")
            ),
            Undo::DeleteLabeled {
                kinds,
                namespace,
                selector,
            } => format!("labeled {} {namespace} {selector}", kinds.join(",")),
            Undo::ReleaseNode { node, key } => format!("quarantine {node} {key}"),
            Undo::RestoreNodeRepair {
                cluster, nodegroup, ..
            } => format!("node repair {cluster}/{nodegroup}"),
        }
    }

    /// In words, for the step recover prints.
    pub fn describe(&self) -> String {
        match self {
            Undo::ScaleNodegroup {
                cluster,
                nodegroup,
                desired,
                max: None,
            } => format!("node group {nodegroup} of {cluster} back to {desired}"),
            Undo::ScaleNodegroup {
                cluster,
                nodegroup,
                desired,
                max: Some(max),
            } => format!("node group {nodegroup} of {cluster} back to {desired} (max {max})"),
            Undo::Authorize { group, rule } => format!("put back {} in {group}", rule_text(rule)),
            Undo::Revoke { group, rule } => format!("take {} out of {group}", rule_text(rule)),
            Undo::DeleteObject {
                kind,
                namespace,
                name,
            } => match namespace {
                Some(ns) => format!("delete {kind} {ns}/{name}"),
                None => format!("delete {kind} {name}"),
            },
            Undo::DeleteLabeled {
                kinds,
                namespace,
                selector,
            } => format!(
                "delete {} labelled {selector} in {namespace}",
                kinds.join(", ")
            ),
            Undo::RestoreObject { object } => format!(
                "put back {} {} as it was",
                object["kind"].as_str().unwrap_or("object"),
                object["metadata"]["name"].as_str().unwrap_or("")
            ),
            Undo::ReleaseNode { node, key } => {
                format!("release node {node} from its {key} quarantine")
            }
            Undo::RestoreNodeRepair {
                cluster,
                nodegroup,
                config,
            } => format!("node repair of {nodegroup} of {cluster} back to {config}"),
        }
    }
}

fn rule_text(rule: &Rule) -> String {
    let ports = if rule.from_port == rule.to_port {
        rule.from_port.to_string()
    } else {
        format!("{}-{}", rule.from_port, rule.to_port)
    };
    format!(
        "the {} {} {ports} rule from {}",
        rule.direction, rule.protocol, rule.source
    )
}

/// What recover does for a run, and what it cannot.
#[derive(Debug, Default, PartialEq)]
pub struct UndoPlan {
    /// Newest first.
    pub steps: Vec<Undo>,
    /// Changes that a pending cleanup guarded but nothing can undo (a delete), in words.
    pub not_undoable: Vec<String>,
    /// A recover has already run for this journal.
    pub already_recovered: bool,
}

pub fn undo_plan(records: &[Record]) -> UndoPlan {
    let passed: BTreeSet<u64> = records
        .iter()
        .filter_map(|r| match r {
            Record::DeferFinished { id, passed: true } => Some(*id),
            _ => None,
        })
        .collect();
    let failed_calls: BTreeSet<u64> = records
        .iter()
        .filter_map(|r| match r {
            Record::Outcome { seq, ok: false, .. } => Some(*seq),
            _ => None,
        })
        .collect();
    let already_recovered = records
        .iter()
        .any(|r| matches!(r, Record::Recovered { .. }));
    // The first change to each resource, in journal order.
    let mut first: BTreeMap<String, (u64, Undo)> = BTreeMap::new();
    let mut not_undoable = Vec::new();
    for record in records {
        let Record::Mutation {
            seq,
            action,
            undo,
            scope,
        } = record
        else {
            continue;
        };
        let guarded = scope.in_cleanup.is_none()
            && scope.pending.last().is_some_and(|id| !passed.contains(id));
        if !guarded || failed_calls.contains(seq) {
            continue;
        }
        match undo {
            Some(undo) => {
                first.entry(undo.key()).or_insert((*seq, undo.clone()));
            }
            None => not_undoable.push(action.clone()),
        }
    }
    let mut steps: Vec<(u64, Undo)> = first.into_values().collect();
    steps.sort_by_key(|(seq, _)| std::cmp::Reverse(*seq));
    UndoPlan {
        steps: if already_recovered {
            Vec::new()
        } else {
            steps.into_iter().map(|(_, undo)| undo).collect()
        },
        not_undoable: if already_recovered {
            Vec::new()
        } else {
            not_undoable
        },
        already_recovered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Scope;

    fn rule() -> Rule {
        Rule {
            direction: "ingress".into(),
            protocol: "tcp".into(),
            from_port: 1025,
            to_port: 65535,
            source: "self".into(),
            description: None,
        }
    }

    fn mutation(seq: u64, undo: Option<Undo>, pending: &[u64], in_cleanup: Option<u64>) -> Record {
        Record::Mutation {
            seq,
            action: format!("call {seq}"),
            undo,
            scope: Scope {
                pending: pending.to_vec(),
                in_cleanup,
            },
        }
    }

    fn scale(desired: i32) -> Option<Undo> {
        Some(Undo::ScaleNodegroup {
            cluster: "myeks5w".into(),
            nodegroup: "gpu".into(),
            desired,
            max: None,
        })
    }

    #[test]
    fn changes_before_the_first_cleanup_stay_and_guarded_ones_are_undone_newest_first() {
        let records = vec![
            mutation(1, scale(9), &[], None), // the deploy, before any defer: stays
            Record::DeferRegistered {
                id: 1,
                name: "GPU node group back to 0".into(),
            },
            mutation(2, scale(0), &[1], None),
            Record::DeferRegistered {
                id: 2,
                name: "restore the NCCL rules".into(),
            },
            mutation(
                3,
                Some(Undo::Authorize {
                    group: "sg-1".into(),
                    rule: rule(),
                }),
                &[1, 2],
                None,
            ),
        ];
        let plan = undo_plan(&records);
        assert_eq!(
            plan.steps.iter().map(Undo::describe).collect::<Vec<_>>(),
            [
                "put back the ingress tcp 1025-65535 rule from self in sg-1",
                "node group gpu of myeks5w back to 0"
            ]
        );
    }

    #[test]
    fn the_first_state_of_a_resource_wins_and_repeated_changes_collapse() {
        let records = vec![
            Record::DeferRegistered {
                id: 1,
                name: "back to 0".into(),
            },
            mutation(1, scale(0), &[1], None),
            mutation(2, scale(2), &[1], None),
            mutation(3, scale(4), &[1], None),
        ];
        assert_eq!(undo_plan(&records).steps, vec![scale(0).unwrap()]);
    }

    #[test]
    fn a_passed_cleanup_covers_its_changes_and_a_cleanups_own_calls_are_never_undone() {
        let records = vec![
            Record::DeferRegistered {
                id: 1,
                name: "outer".into(),
            },
            mutation(1, scale(0), &[1], None),
            Record::DeferRegistered {
                id: 2,
                name: "rules".into(),
            },
            mutation(
                2,
                Some(Undo::Authorize {
                    group: "sg-1".into(),
                    rule: rule(),
                }),
                &[1, 2],
                None,
            ),
            // Cleanups run: "rules" puts the rule back and passes; "outer" is killed midway.
            mutation(
                3,
                Some(Undo::Revoke {
                    group: "sg-1".into(),
                    rule: rule(),
                }),
                &[1, 2],
                Some(2),
            ),
            Record::DeferFinished {
                id: 2,
                passed: true,
            },
            mutation(4, scale(2), &[1], Some(1)),
        ];
        assert_eq!(undo_plan(&records).steps, vec![scale(0).unwrap()]);
    }

    #[test]
    fn failed_calls_changed_nothing_and_deletes_are_listed_as_not_undoable() {
        let records = vec![
            Record::DeferRegistered {
                id: 1,
                name: "x".into(),
            },
            mutation(1, scale(0), &[1], None),
            Record::Outcome {
                seq: 1,
                ok: false,
                error: Some("InvalidParameterException".into()),
            },
            mutation(2, None, &[1], None),
        ];
        let plan = undo_plan(&records);
        assert!(plan.steps.is_empty());
        assert_eq!(plan.not_undoable, ["call 2"]);
    }

    #[test]
    fn a_recovered_journal_has_nothing_left_to_do() {
        let records = vec![
            Record::DeferRegistered {
                id: 1,
                name: "x".into(),
            },
            mutation(1, scale(0), &[1], None),
            Record::Recovered { at: 1 },
        ];
        let plan = undo_plan(&records);
        assert!(plan.already_recovered && plan.steps.is_empty());
    }
}
