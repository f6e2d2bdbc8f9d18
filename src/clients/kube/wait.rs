//! Waiting for the cluster on the run's clock: an object's condition, a set of nodes, a
//! rollout. On a virtual clock time jumps from event to event; on a real one a watch wakes the
//! wait as soon as the object changes.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use kube::api::WatchParams;
use serde_json::Value;

use super::client::{KubeClient, ListOptions};
use super::error::KubeError;
use super::summaries::NodeSummary;
use crate::clock::{Clock, format_duration};

/// What `k8s::wait` waits for, in kubectl's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// `delete`: the object is gone.
    Deleted,
    /// `create`: the object exists.
    Exists,
    /// `condition=Available` or `condition=Ready=False`.
    Status { kind: String, status: String },
    /// `jsonpath={.status.phase}=Running`.
    Field { path: Vec<String>, value: String },
}

impl Condition {
    pub fn parse(text: &str) -> Result<Self, KubeError> {
        let text = text.trim();
        if text == "delete" {
            return Ok(Self::Deleted);
        }
        if text == "create" || text == "exists" {
            return Ok(Self::Exists);
        }
        if let Some(rest) = text.strip_prefix("jsonpath=") {
            let (path, value) = rest.rsplit_once('=').ok_or_else(|| {
                KubeError::Invalid(format!(
                    "`{text}`: write jsonpath={{.status.phase}}=Running"
                ))
            })?;
            let path = path
                .trim_start_matches('{')
                .trim_end_matches('}')
                .trim_start_matches('.');
            return Ok(Self::Field {
                path: path.split('.').map(str::to_string).collect(),
                value: value.to_string(),
            });
        }
        let rest = text.strip_prefix("condition=").unwrap_or(text);
        if rest.is_empty() || rest.contains(' ') {
            return Err(KubeError::Invalid(format!(
                "unknown wait condition `{text}`: use condition=Ready, condition=Ready=False, delete, create or jsonpath={{.status.phase}}=Running"
            )));
        }
        let (kind, status) = rest.split_once('=').unwrap_or((rest, "True"));
        Ok(Self::Status {
            kind: kind.to_string(),
            status: status.to_string(),
        })
    }

    pub fn holds(&self, object: Option<&Value>) -> bool {
        match (self, object) {
            (Self::Deleted, None) => true,
            (Self::Deleted, Some(_)) | (_, None) => false,
            (Self::Exists, Some(_)) => true,
            (Self::Status { kind, status }, Some(o)) => o["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| {
                    c["type"]
                        .as_str()
                        .is_some_and(|t| t.eq_ignore_ascii_case(kind))
                        && c["status"]
                            .as_str()
                            .is_some_and(|s| s.eq_ignore_ascii_case(status))
                }),
            (Self::Field { path, value }, Some(o)) => {
                let mut current = o;
                for part in path {
                    current = &current[part.as_str()];
                }
                match current {
                    Value::String(s) => s == value,
                    Value::Null => false,
                    other => other.to_string().as_str() == value.as_str(),
                }
            }
        }
    }
}

/// What `k8s::wait_nodes` waits for.
#[derive(Debug, Clone, Default)]
pub struct NodeWait {
    pub labels: Option<String>,
    pub count: usize,
    pub ready: bool,
    pub timeout: Duration,
}

fn describe_last(object: Option<&Value>) -> String {
    match object {
        None => "not found".into(),
        Some(o) => {
            let conditions: Vec<String> = o["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    format!(
                        "{}={}",
                        c["type"].as_str().unwrap_or("?"),
                        c["status"].as_str().unwrap_or("?")
                    )
                })
                .collect();
            match (o["status"]["phase"].as_str(), conditions.is_empty()) {
                (Some(phase), true) => format!("phase {phase}"),
                (Some(phase), false) => {
                    format!("phase {phase}, conditions {}", conditions.join(", "))
                }
                (None, false) => format!("conditions {}", conditions.join(", ")),
                (None, true) => "no status yet".into(),
            }
        }
    }
}

impl KubeClient {
    /// Blocks until the clock reaches the next moment the world may have changed.
    async fn pause(
        &self,
        clock: &dyn Clock,
        deadline: Duration,
        watch: Option<(&str, &str, Option<&str>)>,
    ) -> Result<(), KubeError> {
        if clock.is_virtual() {
            clock.idle_until(deadline).await;
            return Ok(());
        }
        let remaining = deadline.saturating_sub(clock.now());
        let Some((kind, name, namespace)) = watch else {
            tokio::time::sleep(remaining.min(Duration::from_secs(2))).await;
            return Ok(());
        };
        let resolved = self.kind(kind).await?;
        let api = self.api(&resolved, Some(namespace.unwrap_or("default")));
        let params = WatchParams::default()
            .fields(&format!("metadata.name={name}"))
            .timeout(remaining.as_secs().clamp(1, 290) as u32);
        let stream = api.watch(&params, "0").await?;
        let mut stream = stream.boxed();
        // The first event is the current state (ADDED); the next one is a change.
        let wait_for_change = async {
            let _ = stream.try_next().await;
            let _ = stream.try_next().await;
        };
        let _ = tokio::time::timeout(remaining, wait_for_change).await;
        Ok(())
    }

    pub async fn wait(
        &self,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        condition: &Condition,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<Option<Value>, KubeError> {
        let deadline = clock.now() + timeout;
        loop {
            let object = self.get_opt(kind, name, namespace).await?;
            if condition.holds(object.as_ref()) {
                return Ok(object);
            }
            if clock.now() >= deadline {
                return Err(KubeError::Timeout {
                    what: format!("{kind}/{name} to meet {condition:?}"),
                    waited: format_duration(timeout),
                    last: describe_last(object.as_ref()),
                });
            }
            self.pause(clock, deadline, Some((kind, name, namespace)))
                .await?;
        }
    }

    /// Waits until `count` nodes match the labels (and are Ready when asked).
    pub async fn wait_nodes(
        &self,
        wait: &NodeWait,
        clock: &dyn Clock,
    ) -> Result<Vec<NodeSummary>, KubeError> {
        let deadline = clock.now() + wait.timeout;
        let options = ListOptions {
            labels: wait.labels.clone(),
            ..Default::default()
        };
        loop {
            let nodes: Vec<NodeSummary> = self
                .list("Node", &options)
                .await?
                .iter()
                .map(NodeSummary::from_object)
                .collect();
            let matching: Vec<NodeSummary> = nodes
                .into_iter()
                .filter(|n| !wait.ready || n.ready)
                .collect();
            if matching.len() >= wait.count {
                return Ok(matching);
            }
            if clock.now() >= deadline {
                let selector = wait.labels.as_deref().unwrap_or("any labels");
                return Err(KubeError::Timeout {
                    what: format!(
                        "{} {}node(s) with {selector}",
                        wait.count,
                        if wait.ready { "Ready " } else { "" }
                    ),
                    waited: format_duration(wait.timeout),
                    last: format!("{} matching", matching.len()),
                });
            }
            self.pause(clock, deadline, None).await?;
        }
    }

    /// Waits until a Deployment, DaemonSet or StatefulSet has rolled out its current spec.
    pub async fn rollout_status(
        &self,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<Value, KubeError> {
        let deadline = clock.now() + timeout;
        loop {
            let object = self.get(kind, name, namespace).await?;
            let (done, progress) = rollout_progress(&object);
            if done {
                return Ok(object);
            }
            if clock.now() >= deadline {
                return Err(KubeError::Timeout {
                    what: format!("the rollout of {kind}/{name}"),
                    waited: format_duration(timeout),
                    last: progress,
                });
            }
            self.pause(clock, deadline, Some((kind, name, namespace)))
                .await?;
        }
    }
}

/// Whether a workload's rollout is complete, and words for where it stands.
fn rollout_progress(object: &Value) -> (bool, String) {
    let status = &object["status"];
    let int = |v: &Value| v.as_i64().unwrap_or(0);
    let observed = int(&status["observedGeneration"]) >= int(&object["metadata"]["generation"]);
    match object["kind"].as_str() {
        Some("DaemonSet") => {
            let desired = int(&status["desiredNumberScheduled"]);
            let (updated, available) = (
                int(&status["updatedNumberScheduled"]),
                int(&status["numberAvailable"]),
            );
            // kubectl's own test: at least the desired count updated and available (a pod
            // left on a node that now refuses new ones is counted apart, as misscheduled).
            (
                observed && updated >= desired && available >= desired,
                format!("{available} of {desired} updated pods are available"),
            )
        }
        _ => {
            let replicas = object["spec"]["replicas"].as_i64().unwrap_or(1);
            let (updated, available) = (
                int(&status["updatedReplicas"]),
                int(&status["availableReplicas"]),
            );
            (
                observed
                    && updated == replicas
                    && available == replicas
                    && int(&status["replicas"]) == replicas,
                format!("{available} of {replicas} updated replicas are available"),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conditions_read_like_kubectl_wait() {
        let deploy = json!({"status": {"phase": "Running", "conditions": [{"type": "Available", "status": "True"}]}});
        assert!(
            Condition::parse("condition=Available")
                .unwrap()
                .holds(Some(&deploy))
        );
        assert!(Condition::parse("available").unwrap().holds(Some(&deploy)));
        assert!(
            !Condition::parse("condition=Available=False")
                .unwrap()
                .holds(Some(&deploy))
        );
        assert!(
            Condition::parse("jsonpath={.status.phase}=Running")
                .unwrap()
                .holds(Some(&deploy))
        );
        assert!(Condition::parse("delete").unwrap().holds(None));
        assert!(Condition::parse("condition=").is_err());
    }
}
